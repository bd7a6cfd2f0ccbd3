// NCCL and the few CUDA driver calls the communicator needs, loaded with dlopen
// (libnccl.so.2, libcuda.so.1; docs/architecture.md decision 4). The types and values
// below are NCCL's stable C ABI (nccl.h, unchanged since 2.x): no header is needed at
// build time. Not installed.
#pragma once

#include "cgraph/error.h"

#include <cstddef>

namespace cgraph::comm::nccl {

using ncclComm_t = struct ncclComm *;
struct ncclUniqueId {
  char internal[128];
};
using ncclResult_t = int;
constexpr ncclResult_t ncclSuccess = 0, ncclInProgress = 7;
using ncclDataType_t = int;
constexpr ncclDataType_t ncclInt8 = 0, ncclUint8 = 1, ncclInt32 = 2, ncclUint32 = 3, ncclInt64 = 4,
                         ncclUint64 = 5, ncclFloat16 = 6, ncclFloat32 = 7, ncclFloat64 = 8;
using ncclRedOp_t = int;
constexpr ncclRedOp_t ncclSum = 0, ncclProd = 1, ncclMax = 2, ncclMin = 3;
constexpr int kCudaErrorNotReady = 600; // CUDA_ERROR_NOT_READY
constexpr unsigned kStreamNonBlocking = 1; // CU_STREAM_NON_BLOCKING
using cudaStream_t = void *;

// ncclConfig_t as NCCL 2.14 laid it out: NCCL reads `size` bytes and gives the fields
// later versions added their defaults (the struct is versioned and append-only).
struct ncclConfig214 {
  size_t size = sizeof(ncclConfig214);
  unsigned magic = 0xcafebeef; // NCCL_API_MAGIC
  unsigned version = 21400;    // NCCL_VERSION(2, 14, 0)
  int blocking = kConfigUndef;
  int cgaClusterSize = kConfigUndef;
  int minCTAs = kConfigUndef;
  int maxCTAs = kConfigUndef;
  const char *netName = nullptr;
  static constexpr int kConfigUndef = -2147483647 - 1; // NCCL_CONFIG_UNDEF_INT
};

struct NcclApi {
  ncclResult_t (*ncclGetVersion)(int *) = nullptr;
  ncclResult_t (*ncclGetUniqueId)(ncclUniqueId *) = nullptr;
  ncclResult_t (*ncclCommInitRankConfig)(ncclComm_t *, int, ncclUniqueId, int, ncclConfig214 *) = nullptr;
  ncclResult_t (*ncclCommDestroy)(ncclComm_t) = nullptr;
  ncclResult_t (*ncclCommAbort)(ncclComm_t) = nullptr;
  ncclResult_t (*ncclCommGetAsyncError)(ncclComm_t, ncclResult_t *) = nullptr;
  ncclResult_t (*ncclCommCount)(ncclComm_t, int *) = nullptr;
  ncclResult_t (*ncclCommUserRank)(ncclComm_t, int *) = nullptr;
  ncclResult_t (*ncclCommCuDevice)(ncclComm_t, int *) = nullptr;
  const char *(*ncclGetErrorString)(ncclResult_t) = nullptr;
  const char *(*ncclGetLastError)(ncclComm_t) = nullptr; // optional (2.13+)
  ncclResult_t (*ncclAllReduce)(const void *, void *, size_t, ncclDataType_t, ncclRedOp_t, ncclComm_t,
                                cudaStream_t) = nullptr;
  ncclResult_t (*ncclAllGather)(const void *, void *, size_t, ncclDataType_t, ncclComm_t, cudaStream_t) = nullptr;
  ncclResult_t (*ncclReduceScatter)(const void *, void *, size_t, ncclDataType_t, ncclRedOp_t, ncclComm_t,
                                    cudaStream_t) = nullptr;
  ncclResult_t (*ncclBroadcast)(const void *, void *, size_t, ncclDataType_t, int, ncclComm_t,
                                cudaStream_t) = nullptr;
  ncclResult_t (*ncclSend)(const void *, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t) = nullptr;
  ncclResult_t (*ncclRecv)(void *, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t) = nullptr;
  // The driver: a device's primary context made current (the one CUDA's runtime, and
  // so NCCL, uses).
  int (*cuInit)(unsigned) = nullptr;
  int (*cuDeviceGet)(int *, int) = nullptr;
  int (*cuDevicePrimaryCtxRetain)(void **, int) = nullptr;
  int (*cuDevicePrimaryCtxRelease)(int) = nullptr;
  int (*cuCtxSetCurrent)(void *) = nullptr;
  int (*cuCtxGetCurrent)(void **) = nullptr;
  // Host exchanges outside graphs (allGatherHost): a small device buffer and a stream.
  int (*cuMemAlloc)(unsigned long long *, size_t) = nullptr;
  int (*cuMemFree)(unsigned long long) = nullptr;
  int (*cuMemcpyHtoDAsync)(unsigned long long, const void *, size_t, void *) = nullptr;
  int (*cuMemcpyDtoH)(void *, unsigned long long, size_t) = nullptr;
  int (*cuStreamCreate)(void **, unsigned) = nullptr;
  int (*cuStreamDestroy)(void *) = nullptr;
  int (*cuStreamQuery)(void *) = nullptr;
  int version = 0; // ncclGetVersion: 22703 for 2.27.3
};

// Loads both libraries once per process (thread-safe); the same result every call.
// Errors: "libnccl.so.2 not found ..." (ErrorCode::Unsupported), a missing symbol.
Expected<const NcclApi *> loadNccl();

// "ncclAllReduce: unhandled cuda error (run with NCCL_DEBUG=WARN for details)".
Error ncclError(const NcclApi &api, const char *call, ncclResult_t rc, ncclComm_t comm = nullptr);

} // namespace cgraph::comm::nccl
