// Device: context, one in-order queue, buffers and synchronous transfers.
#include "internal.h"

#include "cgraph/graph/flatten.h"
#include "cgraph/runtime/communicator.h"
#include "cgraph/graph/validate.h"
#include "cgraph/runtime/staged.h"

namespace cgraph::opencl {

OpenCLBuffer::OpenCLBuffer(OpenCLDevice &device, cl_mem mem, uint64_t size)
    : device_(&device), mem_(mem), size_(size) {}

OpenCLBuffer::~OpenCLBuffer() {
  if (mem_) device_->api().clReleaseMemObject(mem_);
}

const rt::Device *OpenCLBuffer::device() const { return device_; }

OpenCLDevice::OpenCLDevice(const ClApi &api, rt::DeviceInfo info, DeviceProps props,
                           const OpenCLBackendOptions &opts)
    : api_(&api), info_(std::move(info)), props_(props), opts_(opts) {}

OpenCLDevice::~OpenCLDevice() {
  programs_.reset(); // cached programs are released before their context

  if (queue_) {
    api_->clFinish(queue_);
    api_->clReleaseCommandQueue(queue_);
  }
  if (context_) api_->clReleaseContext(context_);
}

Expected<std::unique_ptr<OpenCLDevice>> OpenCLDevice::open(const ClApi &api, rt::DeviceInfo info,
                                                           DeviceProps props,
                                                           const OpenCLBackendOptions &opts) {
  std::unique_ptr<OpenCLDevice> d(new OpenCLDevice(api, std::move(info), props, opts));
  const std::string where = "opencl device '" + d->info_.name + "'";
  if (!opts.forcePath.empty() && opts.forcePath != "il" && opts.forcePath != "spir" &&
      opts.forcePath != "source")
    return makeError(where + ": forcePath '" + opts.forcePath +
                     "' is not one of il, spir, source");
  cl_int rc = CL_SUCCESS;
  cl_context_properties cprops[] = {CL_CONTEXT_PLATFORM,
                                    reinterpret_cast<cl_context_properties>(props.platform), 0};
  d->context_ = api.clCreateContext(cprops, 1, &props.device, nullptr, nullptr, &rc);
  if (rc != CL_SUCCESS) return clError("clCreateContext", rc).withContext(where);
  // One in-order queue with profiling on: per-node timestamps need it and a queue's
  // properties cannot change later. Command buffers are recorded for the same queue.
  cl_command_queue_properties qprops = props.queueProfiling ? CL_QUEUE_PROFILING_ENABLE : 0;
  if (api.clCreateCommandQueueWithProperties) {
    cl_queue_properties qp[] = {CL_QUEUE_PROPERTIES, qprops, 0};
    d->queue_ = api.clCreateCommandQueueWithProperties(d->context_, props.device, qp, &rc);
  } else {
    d->queue_ = api.clCreateCommandQueue(d->context_, props.device, qprops, &rc);
  }
  if (rc != CL_SUCCESS) return clError("clCreateCommandQueue", rc).withContext(where);
  if (props.commandBuffer) d->cb_ = loadCommandBufferApi(api, props.platform);
  return d;
}

Expected<std::unique_ptr<rt::Buffer>> OpenCLDevice::allocate(uint64_t bytes, uint32_t alignment) {
  if (bytes == 0) return makeError("opencl: cannot allocate a 0-byte buffer");
  // OpenCL buffers are aligned to CL_DEVICE_MEM_BASE_ADDR_ALIGN, at least 128 bytes on
  // every implementation we know; a stricter request cannot be honoured.
  if (alignment > props_.baseAddrAlign && props_.baseAddrAlign % alignment != 0)
    return makeError("opencl: alignment " + std::to_string(alignment) +
                     " exceeds the device's base address alignment " +
                     std::to_string(props_.baseAddrAlign));
  cl_int rc = CL_SUCCESS;
  cl_mem mem = api_->clCreateBuffer(context_, CL_MEM_READ_WRITE, bytes, nullptr, &rc);
  if (rc != CL_SUCCESS)
    return clError("clCreateBuffer", rc).withContext("opencl: allocating " + std::to_string(bytes) + " bytes");
  return std::unique_ptr<rt::Buffer>(new OpenCLBuffer(*this, mem, bytes));
}

static Error checkRange(const char *what, const rt::Buffer &b, uint64_t offset, uint64_t bytes) {
  if (offset > b.size() || bytes > b.size() - offset)
    return makeError(std::string("opencl: ") + what + " of [" + std::to_string(offset) + ", +" +
                     std::to_string(bytes) + ") is outside the " + std::to_string(b.size()) +
                     "-byte buffer");
  return Error::success();
}

Error OpenCLDevice::write(rt::Buffer &dst, uint64_t offset, const void *src, uint64_t bytes) {
  auto *b = dynamic_cast<OpenCLBuffer *>(&dst);
  if (!b || b->device() != this) return makeError("opencl: write to a buffer of another device");
  CGRAPH_RETURN_IF_ERROR(checkRange("write", dst, offset, bytes));
  if (bytes == 0) return Error::success();
  CGRAPH_CL_CHECK("clEnqueueWriteBuffer", api_->clEnqueueWriteBuffer(queue_, b->mem(), CL_TRUE, offset,
                                                                    bytes, src, 0, nullptr, nullptr));
  return Error::success();
}

Error OpenCLDevice::read(rt::Buffer &src, uint64_t offset, void *dst, uint64_t bytes) {
  auto *b = dynamic_cast<OpenCLBuffer *>(&src);
  if (!b || b->device() != this) return makeError("opencl: read from a buffer of another device");
  CGRAPH_RETURN_IF_ERROR(checkRange("read", src, offset, bytes));
  if (bytes == 0) return Error::success();
  CGRAPH_CL_CHECK("clEnqueueReadBuffer", api_->clEnqueueReadBuffer(queue_, b->mem(), CL_TRUE, offset,
                                                                  bytes, dst, 0, nullptr, nullptr));
  return Error::success();
}

Expected<std::unique_ptr<rt::Executable>> OpenCLDevice::finalizeFlat(FlatGraph flat, const rt::FinalizeOptions &opts) {
  return makeExecutable(*this, std::move(flat.graph), opts);
}

} // namespace cgraph::opencl
