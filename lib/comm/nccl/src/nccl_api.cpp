// dlopen of libnccl.so.2 and libcuda.so.1 (nccl_api.h).
#include "nccl_api.h"

#include <dlfcn.h>

#include <mutex>
#include <utility>
#include <string>

namespace cgraph::comm::nccl {

namespace {

template <typename F> bool bind(void *lib, const char *name, F &fn) {
  fn = reinterpret_cast<F>(dlsym(lib, name));
  return fn != nullptr;
}

Expected<const NcclApi *> load() {
  static NcclApi api;
  // The CUDA runtime's libnccl beside a framework (pip's nvidia-nccl) is found through
  // LD_LIBRARY_PATH, like the system's.
  void *lib = dlopen("libnccl.so.2", RTLD_NOW | RTLD_LOCAL);
  if (!lib)
    return makeError(ErrorCode::Unsupported, "libnccl.so.2 not found (install NCCL, or put the directory "
                                             "holding it on LD_LIBRARY_PATH): " + std::string(dlerror()));
  void *cu = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!cu) return makeError(ErrorCode::Unsupported, "libcuda.so.1 not found (no NVIDIA driver installed)");
  std::string missing;
#define CGRAPH_NCCL_BIND(h, name) \
  if (!bind(h, #name, api.name) && missing.empty()) missing = #name;
  CGRAPH_NCCL_BIND(lib, ncclGetVersion)
  CGRAPH_NCCL_BIND(lib, ncclGetUniqueId)
  CGRAPH_NCCL_BIND(lib, ncclCommInitRankConfig)
  CGRAPH_NCCL_BIND(lib, ncclCommDestroy)
  CGRAPH_NCCL_BIND(lib, ncclCommAbort)
  CGRAPH_NCCL_BIND(lib, ncclCommGetAsyncError)
  CGRAPH_NCCL_BIND(lib, ncclCommCount)
  CGRAPH_NCCL_BIND(lib, ncclCommUserRank)
  CGRAPH_NCCL_BIND(lib, ncclCommCuDevice)
  CGRAPH_NCCL_BIND(lib, ncclGetErrorString)
  CGRAPH_NCCL_BIND(lib, ncclAllReduce)
  CGRAPH_NCCL_BIND(lib, ncclAllGather)
  CGRAPH_NCCL_BIND(lib, ncclReduceScatter)
  CGRAPH_NCCL_BIND(lib, ncclBroadcast)
  CGRAPH_NCCL_BIND(lib, ncclSend)
  CGRAPH_NCCL_BIND(lib, ncclRecv)
  CGRAPH_NCCL_BIND(cu, cuInit)
  CGRAPH_NCCL_BIND(cu, cuDeviceGet)
  CGRAPH_NCCL_BIND(cu, cuCtxSetCurrent)
  CGRAPH_NCCL_BIND(cu, cuCtxGetCurrent)
  CGRAPH_NCCL_BIND(cu, cuStreamCreate)
  CGRAPH_NCCL_BIND(cu, cuStreamQuery)
#undef CGRAPH_NCCL_BIND
  // Versioned driver names (cuda.h maps these to their _v2 symbols).
  const std::pair<const char *, void **> versioned[] = {
      {"cuMemAlloc_v2", reinterpret_cast<void **>(&api.cuMemAlloc)},
      {"cuMemFree_v2", reinterpret_cast<void **>(&api.cuMemFree)},
      {"cuMemcpyHtoDAsync_v2", reinterpret_cast<void **>(&api.cuMemcpyHtoDAsync)},
      {"cuMemcpyDtoH_v2", reinterpret_cast<void **>(&api.cuMemcpyDtoH)},
      {"cuStreamDestroy_v2", reinterpret_cast<void **>(&api.cuStreamDestroy)}};
  for (const auto &[name, slot] : versioned) {
    *slot = dlsym(cu, name);
    if (!*slot && missing.empty()) missing = name;
  }
  if (!bind(cu, "cuDevicePrimaryCtxRetain", api.cuDevicePrimaryCtxRetain) && missing.empty())
    missing = "cuDevicePrimaryCtxRetain";
  if (!bind(cu, "cuDevicePrimaryCtxRelease_v2", api.cuDevicePrimaryCtxRelease) && missing.empty())
    missing = "cuDevicePrimaryCtxRelease_v2";
  bind(lib, "ncclGetLastError", api.ncclGetLastError);
  if (!missing.empty()) return makeError(ErrorCode::Unsupported, "libnccl.so.2 / libcuda.so.1 lack " + missing);
  if (api.ncclGetVersion(&api.version) != ncclSuccess || api.version < 21400)
    return makeError(ErrorCode::Unsupported, "NCCL " + std::to_string(api.version) +
                                                 " is too old: non-blocking communicators need 2.14 or newer");
  if (api.cuInit(0) != 0) return makeError(ErrorCode::Unsupported, "cuInit failed (no usable CUDA device)");
  return &api;
}

} // namespace

Expected<const NcclApi *> loadNccl() {
  static std::once_flag once;
  static Expected<const NcclApi *> result = makeError("not loaded");
  std::call_once(once, [] { result = load(); });
  return result;
}

Error ncclError(const NcclApi &api, const char *call, ncclResult_t rc, ncclComm_t comm) {
  std::string s = std::string(call) + ": " + (api.ncclGetErrorString ? api.ncclGetErrorString(rc) : "NCCL error");
  if (api.ncclGetLastError) {
    const char *last = api.ncclGetLastError(comm);
    if (last && *last) s += std::string(" (") + last + ")";
  }
  // 1: a CUDA error, 2: system, 3: internal, 4: invalid argument, 5: invalid usage,
  // 6: a remote peer failed.
  ErrorCode code = rc == 4 || rc == 5 ? ErrorCode::Invalid : ErrorCode::DeviceLost;
  return makeError(code, s);
}

} // namespace cgraph::comm::nccl
