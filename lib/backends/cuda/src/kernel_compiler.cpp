// Kernel modules: form choice, SPIR-V -> PTX (lowering.cpp), PTX -> cubin through the
// driver's linker (cuLinkCreate/AddData/Complete). Loaded modules live in lib/cache's
// KernelCache (memory, keyed by the full input bytes) with the cubin on disk, so a
// warm start neither lowers nor JITs. Cache key: backend "cuda", device name + compute
// capability, driver version, the lowering version, which input (SPIR-V, a PTX form,
// a cubin form) and its bytes.
#include "internal.h"

#include "cgraph/backends/gpu_common/launch_plan.h"

#include "cgraph/cache/kernel_cache.h"
#include "cgraph/cache/key.h"
#include "cgraph/kernel/opencl_compiler.h"

#include <cstring>

namespace cgraph::cuda {

LoadedModule::~LoadedModule() {
  if (module && api->cuCtxSetCurrent(ctx) == CUDA_SUCCESS) api->cuModuleUnload(module);
}

Expected<CUfunction> LoadedModule::function(const std::string &name) const {
  CUfunction f = nullptr;
  CUresult rc = api->cuModuleGetFunction(&f, module, name.c_str());
  if (rc != CUDA_SUCCESS)
    return cuError(*api, "cuModuleGetFunction", rc).withContext("kernel '" + name + "'");
  return f;
}

namespace {
// "nvptx64-sm_80" -> 80; 0 when the target names no sm.
unsigned formSm(const std::string &target) {
  size_t p = target.find("sm_");
  if (p == std::string::npos) return 0;
  return unsigned(std::strtoul(target.c_str() + p + 3, nullptr, 10));
}
} // namespace

Expected<std::vector<uint8_t>> CudaDevice::ptxToCubin(const std::string &ptx,
                                                      const std::string &what) {
  ++counters_.ptxJits;
  CUlinkState link = nullptr;
  char errLog[8192] = {0};
  CUjit_option o[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void *v[] = {errLog, reinterpret_cast<void *>(uintptr_t(sizeof(errLog) - 1))};
  CGRAPH_CU_CHECK(*api_, "cuLinkCreate", api_->cuLinkCreate(2, o, v, &link));
  struct Guard {
    const CuApi *api;
    CUlinkState s;
    ~Guard() { api->cuLinkDestroy(s); }
  } guard{api_, link};
  CUresult rc = api_->cuLinkAddData(link, CU_JIT_INPUT_PTX, const_cast<char *>(ptx.c_str()),
                                    ptx.size() + 1, what.c_str(), 0, nullptr, nullptr);
  if (rc != CUDA_SUCCESS)
    return cuError(*api_, "cuLinkAddData", rc)
        .withContext(what + (errLog[0] ? std::string(": ") + errLog : ""));
  void *cubin = nullptr;
  size_t size = 0;
  rc = api_->cuLinkComplete(link, &cubin, &size);
  if (rc != CUDA_SUCCESS)
    return cuError(*api_, "cuLinkComplete", rc)
        .withContext(what + (errLog[0] ? std::string(": ") + errLog : ""));
  const uint8_t *b = static_cast<const uint8_t *>(cubin);
  return std::vector<uint8_t>(b, b + size); // copied before cuLinkDestroy frees it
}

Expected<std::shared_ptr<const LoadedModule>>
CudaDevice::moduleFromCubin(const std::vector<uint8_t> &cubin, bool gridWait, const std::string &from) const {
  auto lm = std::make_shared<LoadedModule>();
  lm->api = api_;
  lm->ctx = ctx_;
  lm->from = from;
  lm->gridWait = gridWait;
  CUresult rc = api_->cuModuleLoadData(&lm->module, cubin.data());
  if (rc != CUDA_SUCCESS) return cuError(*api_, "cuModuleLoadData", rc).withContext(from);
  return std::shared_ptr<const LoadedModule>(std::move(lm));
}

cache::KernelCache<LoadedModule> &CudaDevice::cubinCache() {
  if (!modules_) modules_ = cache::KernelCache<LoadedModule>::fromEnvironment(opts_.cache.dir, opts_.cache.persistent);
  return *modules_;
}

cache::CacheKey CudaDevice::cubinKey(const std::string &input, const std::string &names) const {
  cache::CacheKey key;
  key.backend = "cuda";
  key.deviceName = info_.name + " sm_" + std::to_string(cc());
  key.driverVersion = std::to_string(api_->driverVersion);
  key.compilerVersion = ptxLoweringVersion();
  key.buildOptions = input;
  key.kernelNames = names;
  return key;
}

Expected<std::shared_ptr<const LoadedModule>> CudaDevice::loadModule(const KernelModule &m,
                                                                     bool useCache) {
  const std::string where = "module '" + m.name + "'";
  if (m.forms.empty() || m.forms[0].kind != FormKind::SpirV)
    return makeError(where + ": forms[0] is not SPIR-V");
  const std::vector<uint8_t> &spirv = m.forms[0].bytes;
  std::lock_guard<std::mutex> lock(mutex_);
  // 1. a cubin form for exactly this compute capability; 2. the newest PTX form the
  // device can JIT; 3. lower the SPIR-V. The cache key names the input the cubin is
  // built from (its bytes in memory, their hash on disk), so a warm start with only
  // SPIR-V does neither the lowering nor the PTX JIT.
  const KernelForm *cubinForm = nullptr, *ptxForm = nullptr;
  if (!opts_.ignoreEmbeddedForms)
    for (const KernelForm &f : m.forms) {
      const unsigned s = formSm(f.target);
      if (f.kind == FormKind::Cubin && s == cc()) cubinForm = &f;
      if (f.kind == FormKind::PTX && s != 0 && s <= cc() &&
          (!ptxForm || s > formSm(ptxForm->target)))
        ptxForm = &f;
    }
  // Kernels wait for their grid dependencies when this lowering made them for sm_90 or
  // newer (a form of another lowering version may lack the prologue: no programmatic
  // edge into its kernels).
  auto ours = [&](const KernelForm &f) {
    return f.options == ptxLoweringVersion() && waitsForGridDependencies(formSm(f.target));
  };
  const bool gridWait = cubinForm ? ours(*cubinForm) : ptxForm ? ours(*ptxForm) : waitsForGridDependencies(sm_);
  using Cache = cache::KernelCache<LoadedModule>;
  const std::vector<uint8_t> *image = &spirv;
  std::string input = "spir-v lowered for sm_" + std::to_string(sm_);
  Cache::BuildFn build;
  if (cubinForm) {
    image = &cubinForm->bytes;
    input = "cubin form " + cubinForm->target;
    build = [&]() -> Expected<Cache::Built> {
      ++counters_.cubinForms;
      auto lm = moduleFromCubin(cubinForm->bytes, gridWait, input);
      if (!lm) return lm.error();
      return Cache::Built{std::move(*lm), {}}; // already in the file: nothing to keep
    };
  } else {
    if (ptxForm) {
      image = &ptxForm->bytes;
      input = "ptx form " + ptxForm->target;
    }
    build = [&]() -> Expected<Cache::Built> {
      std::string ptx;
      if (ptxForm) {
        ptx.assign(ptxForm->bytes.begin(), ptxForm->bytes.end());
      } else {
        ++counters_.lowerings;
        auto p = lowerSpirvToPtx(spirv.data(), spirv.size(), m.name, sm_);
        if (!p) return p.error();
        ptx = std::move(p->ptx);
      }
      auto cubin = ptxToCubin(ptx, m.name);
      if (!cubin) return cubin.error();
      auto lm = moduleFromCubin(*cubin, gridWait, input);
      if (!lm) return lm.error();
      return Cache::Built{std::move(*lm), std::move(*cubin)};
    };
  }
  if (!useCache) {
    auto built = build();
    if (!built) return built.error().withContext(where);
    return built->value;
  }
  // `input` says which input the image is: spir-v, ptx or cubin form.
  auto mod = cubinCache().getOrBuild(
      cubinKey(input, m.name), image->data(), image->size(), "cubin",
      [&](const std::vector<uint8_t> &cubin) {
        return moduleFromCubin(cubin, gridWait, input + " (cached cubin)");
      },
      build);
  if (!mod) return mod.error().withContext(where);
  return *mod;
}

Expected<std::shared_ptr<const LoadedModule>> CudaDevice::builtinModule() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (builtins_) return builtins_;
  }
  auto m = gpu::builtinKernelModule("cgraph_cuda_builtins.cl");
  if (!m) return m.error().withContext("cuda builtin kernels");
  auto lm = loadModule(*m, true);
  if (!lm) return lm.error();
  std::lock_guard<std::mutex> lock(mutex_);
  builtins_ = *lm;
  return builtins_;
}

namespace {
// Table loaders with room for 8, 16, 32, 64, 128, 256 and 496 values (kernel
// parameters stay within 4 KiB; the driver moves the whole array on every update).
// Thread t copies values t, t + ntid, ... of its by-value array; a kernel parameter's
// address is taken with mov and read with ld.param (PTX ISA, kernel function
// parameters).
constexpr size_t kLoaderSizes[] = {8, 16, 32, 64, 128, 256, 496};
} // namespace

std::string tableLoaderPtx() {
  std::string s = ".version 7.0\n.target sm_52\n.address_size 64\n";
  for (size_t n : kLoaderSizes) {
    const std::string k = "cgraph_load_table_" + std::to_string(n);
    s += ".visible .entry " + k + "(.param .u64 " + k + "_dst, .param .u32 " + k +
         "_n, .param .align 8 .b8 " + k + "_values[" + std::to_string(8 * n) + "])\n{\n" +
         "  .reg .pred %p;\n  .reg .b32 %r<4>;\n  .reg .b64 %rd<8>;\n" +
         "  ld.param.u64 %rd1, [" + k + "_dst];\n  cvta.to.global.u64 %rd1, %rd1;\n" +
         "  ld.param.u32 %r1, [" + k + "_n];\n  mov.u32 %r2, %tid.x;\n  mov.u32 %r3, %ntid.x;\n" +
         "  mov.u64 %rd2, " + k + "_values;\nLOOP:\n  setp.ge.u32 %p, %r2, %r1;\n  @%p bra DONE;\n" +
         "  mul.wide.u32 %rd3, %r2, 8;\n  add.s64 %rd4, %rd2, %rd3;\n  ld.param.u64 %rd5, [%rd4];\n" +
         "  add.s64 %rd6, %rd1, %rd3;\n  st.global.u64 [%rd6], %rd5;\n  add.u32 %r2, %r2, %r3;\n" +
         "  bra LOOP;\nDONE:\n  ret;\n}\n";
  }
  // The ring loader (CudaDevice::ringLoader). Every thread reads the launch number c
  // before the barrier, thread 0 stores c + 1 after it, to the device counter and,
  // after a system-wide fence, to the host's copy. The ring is host memory the host
  // rewrites between launches: volatile loads, never a cached copy.
  s += R"(.visible .entry cgraph_load_ring(.param .u64 dst, .param .u32 n, .param .u64 ring,
    .param .u32 depth, .param .u64 counter, .param .u64 loaded)
{
  .reg .pred %p;
  .reg .b32 %r<8>;
  .reg .b64 %rd<10>;
  ld.param.u64 %rd1, [dst];
  cvta.to.global.u64 %rd1, %rd1;
  ld.param.u32 %r1, [n];
  ld.param.u64 %rd2, [ring];
  cvta.to.global.u64 %rd2, %rd2;
  ld.param.u32 %r2, [depth];
  ld.param.u64 %rd3, [counter];
  cvta.to.global.u64 %rd3, %rd3;
  ld.volatile.global.u32 %r3, [%rd3];
  rem.u32 %r4, %r3, %r2;
  mul.wide.u32 %rd4, %r4, %r1;
  shl.b64 %rd4, %rd4, 3;
  add.s64 %rd5, %rd2, %rd4;
  mov.u32 %r5, %tid.x;
  mov.u32 %r6, %ntid.x;
RLOOP:
  setp.ge.u32 %p, %r5, %r1;
  @%p bra RDONE;
  mul.wide.u32 %rd6, %r5, 8;
  add.s64 %rd7, %rd5, %rd6;
  ld.volatile.global.u64 %rd8, [%rd7];
  add.s64 %rd9, %rd1, %rd6;
  st.global.u64 [%rd9], %rd8;
  add.u32 %r5, %r5, %r6;
  bra RLOOP;
RDONE:
  bar.sync 0;
  mov.u32 %r5, %tid.x;
  setp.ne.u32 %p, %r5, 0;
  @%p bra REND;
  add.u32 %r3, %r3, 1;
  st.volatile.global.u32 [%rd3], %r3;
  ld.param.u64 %rd4, [loaded];
  cvta.to.global.u64 %rd4, %rd4;
  membar.sys;
  st.volatile.global.u32 [%rd4], %r3;
REND:
  ret;
}
)";
  // The done marker (CudaDevice::doneMarker): one thread, after every other node of
  // the submission. The count is the one this submission's ring loader stored.
  s += R"(.visible .entry cgraph_mark_done(.param .u64 counter, .param .u64 done)
{
  .reg .b32 %r<2>;
  .reg .b64 %rd<3>;
  ld.param.u64 %rd1, [counter];
  cvta.to.global.u64 %rd1, %rd1;
  ld.volatile.global.u32 %r1, [%rd1];
  ld.param.u64 %rd2, [done];
  cvta.to.global.u64 %rd2, %rd2;
  membar.sys;
  st.volatile.global.u32 [%rd2], %r1;
  ret;
}
)";
  return s;
}

Expected<CUfunction> CudaDevice::tableLoader(size_t entries, size_t *capacity) {
  size_t cap = 0;
  for (size_t n : kLoaderSizes)
    if (n >= entries) {
      cap = n;
      break;
    }
  if (cap == 0)
    return makeError("a table of " + std::to_string(entries) + " values is larger than the table loader takes");
  std::lock_guard<std::mutex> lock(mutex_);
  auto lm = loaderModule();
  if (!lm) return lm.error();
  *capacity = cap;
  return (*lm)->function("cgraph_load_table_" + std::to_string(cap));
}

Expected<CUfunction> CudaDevice::ringLoader() {
  if (!*opts_.tableRing) return makeError("the ring table loader is off (CudaBackendOptions::tableRing)");
  std::lock_guard<std::mutex> lock(mutex_);
  auto lm = loaderModule();
  if (!lm) return lm.error();
  return (*lm)->function("cgraph_load_ring");
}

Expected<CUfunction> CudaDevice::doneMarker() {
  if (!*opts_.tableRing || !*opts_.completionWord)
    return makeError("the done marker is off (CudaBackendOptions::tableRing / completionWord)");
  std::lock_guard<std::mutex> lock(mutex_);
  auto lm = loaderModule();
  if (!lm) return lm.error();
  return (*lm)->function("cgraph_mark_done");
}

Expected<std::shared_ptr<const LoadedModule>> CudaDevice::loaderModule() {
  if (!loader_) {
    const std::string ptx = tableLoaderPtx();
    using Cache = cache::KernelCache<LoadedModule>;
    auto mod = cubinCache().getOrBuild(
        cubinKey("table loader", "cgraph_load_table"), reinterpret_cast<const uint8_t *>(ptx.data()), ptx.size(), "cubin",
        [&](const std::vector<uint8_t> &cubin) { return moduleFromCubin(cubin, false, "table loader (cached cubin)"); },
        [&]() -> Expected<Cache::Built> {
          auto cubin = ptxToCubin(ptx, "cgraph table loader");
          if (!cubin) return cubin.error();
          auto lm = moduleFromCubin(*cubin, false, "table loader");
          if (!lm) return lm.error();
          return Cache::Built{std::move(*lm), std::move(*cubin)};
        });
    if (!mod) return mod.error().withContext("cuda table loader");
    loader_ = *mod;
  }
  return loader_;
}

#ifdef CGRAPH_CUDA_SETCOND
extern const uint8_t *const kSetConditionFatbin;
extern const size_t kSetConditionFatbinSize;
#endif

Expected<CUfunction> CudaDevice::setConditionKernel() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!setCondTried_) {
    setCondTried_ = true;
    setCondError_ = [&]() -> Error {
#ifndef CGRAPH_CUDA_SETCOND
      return makeError("built without nvcc (no set-condition kernel)");
#else
      if (!api_->cuGraphConditionalHandleCreate || !api_->cuGraphAddNode)
        return makeError("the driver has no conditional nodes (CUDA 12.3 or newer needed)");
      auto lm = std::make_shared<LoadedModule>();
      lm->api = api_;
      lm->ctx = ctx_;
      lm->from = "set-condition fatbin";
      CUresult rc = api_->cuModuleLoadData(&lm->module, kSetConditionFatbin);
      if (rc != CUDA_SUCCESS)
        return cuError(*api_, "cuModuleLoadData", rc)
            .withContext("set-condition kernel for sm_" + std::to_string(cc()));
      setCond_ = std::move(lm);
      return Error::success();
#endif
    }();
  }
  if (setCondError_) return setCondError_;
  return setCond_->function("cgraph_set_condition");
}

} // namespace cgraph::cuda
