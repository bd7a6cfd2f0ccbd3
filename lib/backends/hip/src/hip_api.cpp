// dlopen of libamdhip64.so and the symbol table (see hip_api.h).
#include "hip_api.h"

#include <dlfcn.h>

#include <mutex>
#include <string>

namespace cgraph::hip {

namespace {

Expected<const HipApi *> load() {
  const char *names[] = {"libamdhip64.so", "libamdhip64.so.5"};
  void *h = nullptr;
  const char *found = nullptr;
  for (const char *n : names)
    if ((h = dlopen(n, RTLD_NOW | RTLD_LOCAL))) {
      found = n;
      break;
    }
  if (!h) return makeError("libamdhip64.so not found (no ROCm HIP runtime installed)");
  static HipApi api;
  api.library = found;
  std::string missing;
#define CGRAPH_HIP_LOAD(name)                                                                      \
  api.name = reinterpret_cast<decltype(api.name)>(dlsym(h, #name));                                \
  if (!api.name && missing.empty()) missing = #name;
  CGRAPH_HIP_FUNCTIONS(CGRAPH_HIP_LOAD)
  CGRAPH_HIP_LOAD(hipMalloc)
  CGRAPH_HIP_LOAD(hipHostMalloc)
  CGRAPH_HIP_LOAD(hipEventRecord)
#undef CGRAPH_HIP_LOAD
  if (!missing.empty())
    return makeError(std::string(found) + " has no " + missing + " (HIP 5.2 or newer needed)");
  hipError_t rc = api.hipInit(0);
  // Without an AMD GPU (no /dev/kfd) HIP 5.2's hipInit fails with hipErrorInvalidDevice
  // or hipErrorNoDevice: that is "no device", not a broken runtime.
  if (rc == hipErrorNoDevice || rc == hipErrorInvalidDevice)
    return makeError(std::string("no HIP device (") + found + " found; hipInit: " +
                     (rc == hipErrorNoDevice ? "hipErrorNoDevice" : "hipErrorInvalidDevice") + ")");
  if (rc != hipSuccess) return hipError(api, "hipInit", rc);
  (void)api.hipRuntimeGetVersion(&api.runtimeVersion);
  return &api;
}

} // namespace

Expected<const HipApi *> loadHipApi() {
  static std::once_flag once;
  static Expected<const HipApi *> result = makeError("not loaded");
  std::call_once(once, [] { result = load(); });
  return result;
}

Error hipError(const HipApi &api, const char *call, hipError_t rc) {
  const char *name = api.hipGetErrorName ? api.hipGetErrorName(rc) : nullptr;
  const char *text = api.hipGetErrorString ? api.hipGetErrorString(rc) : nullptr;
  std::string s = std::string(call) + ": " + (name ? name : "HIP error " + std::to_string(int(rc)));
  if (text) s += std::string(" (") + text + ")";
  return makeError(s);
}

} // namespace cgraph::hip
