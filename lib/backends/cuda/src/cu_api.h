// The CUDA driver API, loaded with dlopen("libcuda.so.1") (docs/architecture.md decision 4).
// cuda.h supplies types, constants and the versioned names (cuMemAlloc -> cuMemAlloc_v2)
// only; nothing links against libcuda. Not installed.
#pragma once

#include "cgraph/error.h"

#include <cuda.h>

namespace cgraph::cuda {

// Every entry point the backend calls. The member names go through cuda.h's macros, so
// `api.cuMemAlloc` is the cuMemAlloc_v2 symbol, looked up under that name.
#define CGRAPH_CU_FUNCTIONS(X)                                                           \
  X(cuInit) X(cuDriverGetVersion) X(cuDeviceGetCount) X(cuDeviceGet) X(cuDeviceGetName)  \
  X(cuDeviceGetAttribute) X(cuDeviceTotalMem) X(cuDevicePrimaryCtxRetain)                \
  X(cuDevicePrimaryCtxRelease) X(cuCtxSetCurrent) X(cuStreamCreate) X(cuStreamDestroy)   \
  X(cuStreamSynchronize) X(cuMemAlloc) X(cuMemFree) X(cuMemcpyHtoDAsync)                 \
  X(cuMemcpyDtoHAsync) X(cuMemcpy3DAsync) X(cuMemsetD8Async)       \
  X(cuMemsetD16Async) X(cuMemsetD32Async) X(cuModuleLoadData) X(cuModuleUnload)          \
  X(cuModuleGetFunction) X(cuLaunchKernel) X(cuLinkCreate) X(cuLinkAddData)              \
  X(cuLinkComplete) X(cuLinkDestroy) X(cuGraphCreate) X(cuGraphDestroy)                  \
  X(cuGraphAddKernelNode) X(cuGraphAddMemcpyNode) X(cuGraphAddMemsetNode)                \
  X(cuGraphAddEmptyNode) X(cuGraphAddChildGraphNode) X(cuGraphInstantiate) X(cuGraphUpload) X(cuGraphLaunch)         \
  X(cuGraphExecDestroy) X(cuGraphExecKernelNodeSetParams) X(cuGraphNodeSetEnabled) X(cuEventCreate)               \
  X(cuEventDestroy) X(cuEventRecord) X(cuEventSynchronize) X(cuEventQuery)               \
  X(cuEventElapsedTime) X(cuGetErrorName) X(cuGetErrorString) X(cuMemAllocHost) X(cuMemFreeHost)  \
  X(cuMemHostGetDevicePointer) X(cuStreamQuery) X(cuStreamWaitEvent) X(cuMemcpyPeerAsync)    \
  X(cuStreamIsCapturing) X(cuStreamBeginCapture)

// Entry points of newer drivers that the backend can do without: null when the driver
// lacks them (CUDA 12.3: conditional nodes, without which conditionals run
// runtime-driven; edges with data, without which no edge is programmatic; the address
// range query, without which a wrapped caller pointer is not checked; capture into an
// existing graph, without which collective nodes run in eager mode only; peer access,
// without which peer copies take the driver's slower path; launches with attributes,
// without which a captured run has no programmatic edges).
#define CGRAPH_CU_OPTIONAL_FUNCTIONS(X) \
  X(cuGraphConditionalHandleCreate) X(cuGraphAddNode) X(cuGraphAddDependencies) X(cuMemGetAddressRange) \
  X(cuStreamBeginCaptureToGraph) X(cuStreamGetCaptureInfo) X(cuStreamEndCapture) X(cuDeviceCanAccessPeer) \
  X(cuCtxEnablePeerAccess) X(cuLaunchKernelEx)

struct CuApi {
#define CGRAPH_CU_MEMBER(name) decltype(&::name) name = nullptr;
  CGRAPH_CU_FUNCTIONS(CGRAPH_CU_MEMBER)
  CGRAPH_CU_OPTIONAL_FUNCTIONS(CGRAPH_CU_MEMBER)
#undef CGRAPH_CU_MEMBER
  int driverVersion = 0; // cuDriverGetVersion, e.g. 13000
};

// Loads the library once per process and calls cuInit(0). Errors say why: library not
// found, a missing entry point or a driver older than 12.0 ("driver too old"), cuInit
// failing (e.g. CUDA_ERROR_NO_DEVICE). The same result is returned on every call.
Expected<const CuApi *> loadCuApi();

// "cuLaunchKernel: CUDA_ERROR_LAUNCH_FAILED (unspecified launch failure)".
Error cuError(const CuApi &api, const char *call, CUresult rc);
// The ErrorCode of a failed driver call: out of memory, unsupported, invalid input, else
// device lost (faults, a lost context, hardware errors).
ErrorCode cuErrorCode(CUresult rc);

// Evaluates `expr` once; on failure returns cuError(api, call, rc) from the caller.
#define CGRAPH_CU_CHECK(api, call, expr)                                                  \
  do {                                                                                   \
    CUresult cgraphCuRc_ = (expr);                                                       \
    if (cgraphCuRc_ != CUDA_SUCCESS) return ::cgraph::cuda::cuError((api), (call), cgraphCuRc_); \
  } while (0)

} // namespace cgraph::cuda
