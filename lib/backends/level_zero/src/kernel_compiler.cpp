// Modules: validated SPIR-V to zeModuleCreate, and the device's native binaries kept in
// lib/cache's KernelCache (memory per device, binaries on disk across processes).
#include "internal.h"

#include "cgraph/kernel/spirv.h"

namespace cgraph::level_zero {

namespace {
// Part of the cache key: bump it when the way modules are built changes.
constexpr const char *kModuleCacheVersion = "cgraph-level-zero 1";
} // namespace

Expected<std::shared_ptr<Module>> LevelZeroDevice::createModule(const KernelModule &m,
                                                                ze_module_format_t format,
                                                                const uint8_t *bytes, size_t size) {
  const std::string where = "module '" + m.name + "'";
  ze_module_desc_t md{};
  md.stype = ZE_STRUCTURE_TYPE_MODULE_DESC;
  md.format = format;
  md.inputSize = size;
  md.pInputModule = bytes;
  md.pBuildFlags = "";
  md.pConstants = nullptr;
  auto mod = std::make_shared<Module>();
  mod->ze = ze_;
  ze_module_build_log_handle_t log = nullptr;
  ze_result_t rc = ze_->zeModuleCreate(context_, props_.device, &md, &mod->module, &log);
  std::string text;
  if (log) {
    size_t n = 0;
    if (ze_->zeModuleBuildLogGetString(log, &n, nullptr) == ZE_RESULT_SUCCESS && n > 1) {
      text.resize(n);
      if (ze_->zeModuleBuildLogGetString(log, &n, text.data()) != ZE_RESULT_SUCCESS) text.clear();
      while (!text.empty() && (text.back() == '\0' || text.back() == '\n'))
        text.pop_back();
    }
    ze_->zeModuleBuildLogDestroy(log);
  }
  if (rc != ZE_RESULT_SUCCESS) {
    mod->module = nullptr;
    Error e = zeError("zeModuleCreate", rc).withContext(where);
    return text.empty() ? e : makeError(e.message() + ": " + text);
  }
  return mod;
}

Expected<std::shared_ptr<const Module>> LevelZeroDevice::buildModule(const KernelModule &m,
                                                                     bool useCache) {
  const KernelForm *spv = nullptr;
  for (const KernelForm &f : m.forms)
    if (f.kind == FormKind::SpirV) {
      spv = &f;
      break;
    }
  if (!spv)
    return makeError("module '" + m.name +
                     "': no SPIR-V form (the level_zero backend builds SPIR-V only)");
  // Never hand the driver an unvalidated module (docs/architecture.md decision 2), even
  // where its native binary is cached: the binary stands for exactly these bytes.
  CGRAPH_RETURN_IF_ERROR(validateSpirv(spv->bytes.data(), spv->bytes.size(), m.name));
  auto fromSpirv = [&] {
    return createModule(m, ZE_MODULE_FORMAT_IL_SPIRV, spv->bytes.data(), spv->bytes.size());
  };
  if (!useCache) {
    Expected<std::shared_ptr<Module>> built = fromSpirv();
    if (!built) return built.error();
    return std::shared_ptr<const Module>(std::move(*built));
  }
  std::call_once(cacheOnce_, [&] {
    modules_ = ModuleCache::fromEnvironment(opts_.cache.dir, opts_.cache.persistent);
  });
  cache::CacheKey key;
  key.backend = "level_zero";
  key.deviceName = info_.name;
  key.driverVersion = info_.driverVersion;
  key.compilerVersion = kModuleCacheVersion;
  return modules_->getOrBuild(
      key, spv->bytes.data(), spv->bytes.size(), "level-zero-native-binary",
      [&](const std::vector<uint8_t> &binary) -> Expected<std::shared_ptr<const Module>> {
        Expected<std::shared_ptr<Module>> loaded =
            createModule(m, ZE_MODULE_FORMAT_NATIVE, binary.data(), binary.size());
        if (!loaded) return loaded.error().withContext("cached native binary");
        return std::shared_ptr<const Module>(std::move(*loaded));
      },
      [&]() -> Expected<ModuleCache::Built> {
        Expected<std::shared_ptr<Module>> built = fromSpirv();
        if (!built) return built.error();
        // The native binary (kept on disk); a driver that gives none just is not cached.
        std::vector<uint8_t> binary;
        size_t n = 0;
        if (ze_->zeModuleGetNativeBinary((*built)->module, &n, nullptr) == ZE_RESULT_SUCCESS && n) {
          binary.resize(n);
          if (ze_->zeModuleGetNativeBinary((*built)->module, &n, binary.data()) !=
              ZE_RESULT_SUCCESS)
            binary.clear();
          binary.resize(binary.empty() ? 0 : n);
        }
        return ModuleCache::Built{std::shared_ptr<const Module>(std::move(*built)),
                                  std::move(binary)};
      });
}

} // namespace cgraph::level_zero
