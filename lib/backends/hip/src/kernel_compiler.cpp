// Code objects: SPIR-V lowered by lib/codegen (amdgcn.h) and loaded with
// hipModuleLoadData, through the kernel cache; the builtin copy/fill kernels.
#include "internal.h"

#include "cgraph/backends/gpu_common/launch_plan.h"
#include "cgraph/cache/key.h"
#include "cgraph/kernel/opencl_compiler.h"

namespace cgraph::hip {

LoadedModule::~LoadedModule() {
  if (module && api->hipSetDevice(device) == hipSuccess) (void)api->hipModuleUnload(module);
}

Expected<hipFunction_t> LoadedModule::function(const std::string &name) const {
  hipFunction_t f = nullptr;
  hipError_t rc = api->hipModuleGetFunction(&f, module, name.c_str());
  if (rc != hipSuccess)
    return hipError(*api, "hipModuleGetFunction", rc).withContext("kernel '" + name + "'");
  return f;
}

Expected<std::shared_ptr<const LoadedModule>>
HipDevice::moduleFromImage(const std::vector<uint8_t> &image) const {
  auto lm = std::make_shared<LoadedModule>();
  lm->api = api_;
  lm->device = ordinal_;
  CGRAPH_HIP_CHECK(*api_, "hipModuleLoadData", api_->hipModuleLoadData(&lm->module, image.data()));
  return std::shared_ptr<const LoadedModule>(std::move(lm));
}

Expected<std::shared_ptr<const LoadedModule>> HipDevice::loadModule(const KernelModule &m,
                                                                    bool useCache) {
  const std::string where = "module '" + m.name + "'";
  if (m.forms.empty() || m.forms[0].kind != FormKind::SpirV)
    return makeError(where + ": forms[0] is not SPIR-V");
  const std::vector<uint8_t> &spirv = m.forms[0].bytes;
  std::lock_guard<std::mutex> lock(mutex_);
  using Cache = cache::KernelCache<LoadedModule>;
  Cache::BuildFn build = [&]() -> Expected<Cache::Built> {
    ++counters_.lowerings;
    auto co = lowerSpirvToAmdgcn(spirv.data(), spirv.size(), m.name, gfx_);
    if (!co) return co.error();
    auto lm = moduleFromImage(co->codeObject);
    if (!lm) return lm.error();
    return Cache::Built{std::move(*lm), std::move(co->codeObject)};
  };
  if (!useCache || !opts_.useCache) {
    auto built = build();
    if (!built) return built.error().withContext(where);
    return built->value;
  }
  if (!modules_) modules_ = Cache::fromEnvironment(opts_.cache.dir, opts_.cache.persistent);
  cache::CacheKey key;
  key.backend = "hip";
  key.deviceName = info_.name + " " + gfx_;
  key.driverVersion = std::to_string(api_->runtimeVersion);
  key.compilerVersion = amdgcnLoweringVersion();
  key.buildOptions = "spir-v lowered for " + gfx_;
  key.kernelNames = m.name;
  auto mod = modules_->getOrBuild(
      key, spirv.data(), spirv.size(), "hsaco",
      [&](const std::vector<uint8_t> &image) { return moduleFromImage(image); }, build);
  if (!mod) return mod.error().withContext(where);
  return *mod;
}

Expected<std::shared_ptr<const LoadedModule>> HipDevice::builtinModule() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (builtins_) return builtins_;
  }
  auto m = gpu::builtinKernelModule("cgraph_hip_builtins.cl");
  if (!m) return m.error().withContext("hip builtin kernels");
  auto lm = loadModule(*m, true);
  if (!lm) return lm.error();
  std::lock_guard<std::mutex> lock(mutex_);
  builtins_ = *lm;
  return builtins_;
}

} // namespace cgraph::hip
