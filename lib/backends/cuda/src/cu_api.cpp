// dlopen of libcuda.so.1 and the symbol table (see cu_api.h).
#include "cu_api.h"

#include <dlfcn.h>

#include <mutex>
#include <string>

namespace cgraph::cuda {

namespace {
#define CGRAPH_CU_STR2(x) #x
#define CGRAPH_CU_STR(x) CGRAPH_CU_STR2(x) // expands cuda.h's version macros first

Expected<const CuApi *> load() {
  const char *lib = "libcuda.so.1";
  void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
  if (!h) return makeError(std::string(lib) + " not found (no NVIDIA driver installed)");
  static CuApi api;
  std::string missing;
#define CGRAPH_CU_LOAD(name)                                                             \
  api.name = reinterpret_cast<decltype(api.name)>(dlsym(h, CGRAPH_CU_STR(name)));        \
  if (!api.name && missing.empty()) missing = CGRAPH_CU_STR(name);
  CGRAPH_CU_FUNCTIONS(CGRAPH_CU_LOAD)
#undef CGRAPH_CU_LOAD
#define CGRAPH_CU_LOAD_OPTIONAL(name) api.name = reinterpret_cast<decltype(api.name)>(dlsym(h, CGRAPH_CU_STR(name)));
  CGRAPH_CU_OPTIONAL_FUNCTIONS(CGRAPH_CU_LOAD_OPTIONAL)
#undef CGRAPH_CU_LOAD_OPTIONAL
  if (api.cuDriverGetVersion && api.cuDriverGetVersion(&api.driverVersion) == CUDA_SUCCESS &&
      api.driverVersion < 12000)
    return makeError("driver too old: CUDA " + std::to_string(api.driverVersion / 1000) + "." +
                     std::to_string(api.driverVersion % 1000 / 10) + ", the cuda backend needs 12.0 or newer");
  if (!missing.empty())
    return makeError("driver too old: " + std::string(lib) + " has no " + missing);
  CUresult rc = api.cuInit(0);
  if (rc == CUDA_ERROR_NO_DEVICE) return makeError("no CUDA device (cuInit: CUDA_ERROR_NO_DEVICE)");
  if (rc != CUDA_SUCCESS) return cuError(api, "cuInit", rc);
  return &api;
}
} // namespace

Expected<const CuApi *> loadCuApi() {
  static std::once_flag once;
  static Expected<const CuApi *> result = makeError("not loaded");
  std::call_once(once, [] { result = load(); });
  return result;
}

Error cuError(const CuApi &api, const char *call, CUresult rc) {
  const char *name = nullptr, *text = nullptr;
  if (api.cuGetErrorName) api.cuGetErrorName(rc, &name);
  if (api.cuGetErrorString) api.cuGetErrorString(rc, &text);
  std::string s = std::string(call) + ": " + (name ? name : "CUDA error " + std::to_string(int(rc)));
  if (text) s += std::string(" (") + text + ")";
  return makeError(cuErrorCode(rc), s);
}

ErrorCode cuErrorCode(CUresult rc) {
  switch (rc) {
  case CUDA_ERROR_OUT_OF_MEMORY:
    return ErrorCode::OutOfMemory;
  case CUDA_ERROR_NOT_SUPPORTED:
  case CUDA_ERROR_NO_DEVICE:
  case CUDA_ERROR_NO_BINARY_FOR_GPU:
  case CUDA_ERROR_UNSUPPORTED_PTX_VERSION:
    return ErrorCode::Unsupported;
  case CUDA_ERROR_INVALID_VALUE:
  case CUDA_ERROR_INVALID_HANDLE:
  case CUDA_ERROR_INVALID_IMAGE:
  case CUDA_ERROR_INVALID_PTX:
  case CUDA_ERROR_NOT_FOUND:
    return ErrorCode::Invalid;
  default:
    // Faults (illegal address, launch failure), a lost or uninitialized context, ECC and
    // hardware errors: the device or driver failed.
    return ErrorCode::DeviceLost;
  }
}

} // namespace cgraph::cuda
