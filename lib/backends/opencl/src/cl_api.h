// The OpenCL entry points, resolved with dlopen/dlsym (no link against libOpenCL).
//
// One process-wide table, loaded once on first use and never unloaded (unloading an ICD
// loader while drivers hold threads is not safe). Thread-safety: loadClApi() may be
// called from any thread; the returned table is immutable.
// Failure modes: loadClApi() reports a missing library or a missing core entry point;
// optional entry points (clCreateProgramWithIL, clCreateCommandQueueWithProperties) are
// left null.
#pragma once

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 300
#endif
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#include <CL/cl.h>
#include <CL/cl_ext.h>

#include "cgraph/error.h"

#include <string>

namespace cgraph::opencl {

#define CGRAPH_CL_CORE_FUNCTIONS(X)                                                      \
  X(clGetPlatformIDs)                                                                    \
  X(clGetPlatformInfo)                                                                   \
  X(clGetDeviceIDs)                                                                      \
  X(clGetDeviceInfo)                                                                     \
  X(clCreateContext)                                                                     \
  X(clReleaseContext)                                                                    \
  X(clCreateCommandQueue)                                                                \
  X(clReleaseCommandQueue)                                                               \
  X(clCreateBuffer)                                                                      \
  X(clCreateSubBuffer)                                                                   \
  X(clRetainMemObject)                                                                   \
  X(clReleaseMemObject)                                                                  \
  X(clEnqueueReadBuffer)                                                                 \
  X(clEnqueueWriteBuffer)                                                                \
  X(clEnqueueCopyBuffer)                                                                 \
  X(clEnqueueCopyBufferRect)                                                             \
  X(clEnqueueFillBuffer)                                                                 \
  X(clEnqueueMapBuffer)                                                                  \
  X(clEnqueueUnmapMemObject)                                                             \
  X(clEnqueueNDRangeKernel)                                                              \
  X(clEnqueueMarkerWithWaitList)                                                         \
  X(clCreateProgramWithSource)                                                           \
  X(clCreateProgramWithBinary)                                                           \
  X(clBuildProgram)                                                                      \
  X(clGetProgramBuildInfo)                                                               \
  X(clGetProgramInfo)                                                                    \
  X(clReleaseProgram)                                                                    \
  X(clCreateKernel)                                                                      \
  X(clSetKernelArg)                                                                      \
  X(clReleaseKernel)                                                                     \
  X(clWaitForEvents)                                                                     \
  X(clGetEventInfo)                                                                      \
  X(clGetEventProfilingInfo)                                                             \
  X(clRetainEvent)                                                                       \
  X(clReleaseEvent)                                                                      \
  X(clFlush)                                                                             \
  X(clFinish)                                                                            \
  X(clGetExtensionFunctionAddressForPlatform)

#define CGRAPH_CL_OPTIONAL_FUNCTIONS(X)                                                  \
  X(clCreateProgramWithIL)                                                               \
  X(clCreateCommandQueueWithProperties)

// cl_khr_command_buffer (0.9, the signatures of the installed CL/cl_ext.h).
struct ClCommandBufferApi {
  clCreateCommandBufferKHR_fn create = nullptr;
  clFinalizeCommandBufferKHR_fn finalize = nullptr;
  clReleaseCommandBufferKHR_fn release = nullptr;
  clEnqueueCommandBufferKHR_fn enqueue = nullptr;
  clCommandNDRangeKernelKHR_fn ndrange = nullptr;
  clCommandCopyBufferKHR_fn copy = nullptr;
  clCommandCopyBufferRectKHR_fn copyRect = nullptr;
  clCommandFillBufferKHR_fn fill = nullptr;
  bool complete() const {
    return create && finalize && release && enqueue && ndrange && copy && copyRect && fill;
  }
};

struct ClApi {
#define CGRAPH_CL_MEMBER(name) decltype(&::name) name = nullptr;
  CGRAPH_CL_CORE_FUNCTIONS(CGRAPH_CL_MEMBER)
  CGRAPH_CL_OPTIONAL_FUNCTIONS(CGRAPH_CL_MEMBER)
#undef CGRAPH_CL_MEMBER
  std::string libraryPath; // what dlopen opened
};

// The table, or why it could not be loaded (the same answer on every call).
Expected<const ClApi *> loadClApi();

// The extension's entry points for `platform`; complete() is false when missing.
ClCommandBufferApi loadCommandBufferApi(const ClApi &api, cl_platform_id platform);

// "CL_INVALID_VALUE" or "OpenCL error -30".
std::string clErrorName(cl_int code);
// `call: CL_INVALID_VALUE`.
Error clError(const char *call, cl_int code);

} // namespace cgraph::opencl

// Returns a cgraph::Error from the enclosing function when an OpenCL call fails.
// Evaluates `expr` once.
#define CGRAPH_CL_CHECK(call, expr)                                                      \
  do {                                                                                   \
    cl_int cgraph_cl_rc_ = (expr);                                                       \
    if (cgraph_cl_rc_ != CL_SUCCESS) return ::cgraph::opencl::clError(call, cgraph_cl_rc_); \
  } while (0)
