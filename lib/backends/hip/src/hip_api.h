// The HIP runtime API, loaded with dlopen("libamdhip64.so", then ".so.5"): HIP 5.2's
// hip_runtime_api.h (Debian 12: libamdhip64-dev) supplies the types and prototypes
// only; nothing links against libamdhip64. Every member has the exact type of the
// header's prototype (decltype), so a table built elsewhere (the recording fake of
// tests/hip) is checked against the real API by the compiler. Not installed.
#pragma once

#include "cgraph/error.h"

#ifndef __HIP_PLATFORM_AMD__
#define __HIP_PLATFORM_AMD__ 1
#endif
#include <hip/hip_runtime_api.h>

#include <memory>

namespace cgraph::rt {
class Backend;
}

namespace cgraph::hip {

// Entry points with one prototype in the header (decltype(&::name) is their type).
#define CGRAPH_HIP_FUNCTIONS(X)                                                                    \
  X(hipInit)                                                                                       \
  X(hipDriverGetVersion) X(hipRuntimeGetVersion) X(hipGetDeviceCount) X(hipGetDeviceProperties)    \
      X(hipDeviceGetAttribute) X(hipSetDevice) X(hipStreamCreateWithFlags) X(hipStreamDestroy)     \
          X(hipStreamSynchronize) X(hipFree) X(hipHostFree) X(hipMemcpyHtoDAsync)                  \
              X(hipMemcpyDtoHAsync) X(hipMemcpy3DAsync) X(hipMemsetD8Async) X(hipMemsetD16Async)   \
                  X(hipMemsetD32Async) X(hipModuleLoadData) X(hipModuleUnload)                     \
                      X(hipModuleGetFunction) X(hipModuleLaunchKernel) X(hipGraphCreate)           \
                          X(hipGraphDestroy) X(hipGraphAddKernelNode) X(hipGraphAddMemcpyNode)     \
                              X(hipGraphAddMemsetNode) X(hipGraphAddEmptyNode) X(hipGraphAddChildGraphNode) \
                                  X(hipGraphInstantiate) X(hipGraphLaunch) X(hipGraphExecDestroy)  \
                                      X(hipGraphExecKernelNodeSetParams)                           \
                                          X(hipEventCreateWithFlags) X(hipEventDestroy)            \
                                              X(hipEventSynchronize) X(hipEventQuery)              \
                                                  X(hipEventElapsedTime) X(hipGetErrorName)        \
                                                      X(hipGetErrorString)

// hipMalloc, hipHostMalloc (C++ template overloads) and hipEventRecord (a default
// argument in C++) are named by their C prototypes.
using HipMallocFn = hipError_t (*)(void **, size_t);
using HipHostMallocFn = hipError_t (*)(void **, size_t, unsigned int);
using HipEventRecordFn = hipError_t (*)(hipEvent_t, hipStream_t);

struct HipApi {
#define CGRAPH_HIP_MEMBER(name) decltype(&::name) name = nullptr;
  CGRAPH_HIP_FUNCTIONS(CGRAPH_HIP_MEMBER)
#undef CGRAPH_HIP_MEMBER
  HipMallocFn hipMalloc = nullptr;
  HipHostMallocFn hipHostMalloc = nullptr;
  HipEventRecordFn hipEventRecord = nullptr;
  int runtimeVersion = 0; // hipRuntimeGetVersion, e.g. 50221921
  std::string library;    // the file dlopen found ("" for a table built in a test)
};

// Loads the library once per process and calls hipInit(0). Errors say why: library not
// found ("libamdhip64.so not found"), a missing entry point, no device ("no HIP device
// (libamdhip64.so found; hipInit: hipErrorInvalidDevice)"), hipInit failing otherwise.
// The same result is returned on every call.
Expected<const HipApi *> loadHipApi();

// "hipModuleLaunchKernel: hipErrorLaunchFailure (unspecified launch failure)".
Error hipError(const HipApi &api, const char *call, hipError_t rc);

// Evaluates `expr` once; on failure returns hipError(api, call, rc) from the caller.
#define CGRAPH_HIP_CHECK(api, call, expr)                                                          \
  do {                                                                                             \
    hipError_t cgraphHipRc_ = (expr);                                                              \
    if (cgraphHipRc_ != hipSuccess) return ::cgraph::hip::hipError((api), (call), cgraphHipRc_);   \
  } while (0)

struct HipBackendOptions;
// The backend over a given table (tests: the recording fake). `api` must outlive it.
std::unique_ptr<rt::Backend> makeHipBackendWithApi(const HipApi &api,
                                                   const HipBackendOptions &opts);

} // namespace cgraph::hip
