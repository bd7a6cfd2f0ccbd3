// Device: one stream, buffers, synchronous transfers, finalize (kernel_compiler.cpp:
// code objects; event.cpp: completion events).
#include "internal.h"

#include "cgraph/backends/gpu_common/launch_plan.h"
#include "cgraph/runtime/communicator.h"
#include "cgraph/cache/key.h"
#include "cgraph/backends/gpu_common/graph_executable.h"
#include "cgraph/graph/flatten.h"
#include "cgraph/graph/validate.h"
#include "cgraph/kernel/opencl_compiler.h"
#include "cgraph/runtime/staged.h"

namespace cgraph::hip {

Expected<rt::DeviceInfo> describeHipDevice(const HipApi &api, int ordinal) {
  hipDeviceProp_t prop{};
  CGRAPH_HIP_CHECK(api, "hipGetDeviceProperties", api.hipGetDeviceProperties(&prop, ordinal));
  rt::DeviceInfo info;
  info.backend = "hip";
  info.name = prop.name;
  info.vendor = "AMD";
  const std::string arch = prop.gcnArchName;
  const std::string gfx = amdgcnTargetFor(arch);
  info.driverVersion =
      "HIP runtime " + std::to_string(api.runtimeVersion) + ", " + arch + ", code object " +
      (gfx.empty() ? std::string("none (LLVM 14 does not know this processor)") : gfx);
  info.update = "";
  info.replay = "hip-graph; conditional nodes runtime-driven (HIP 5.2 has none)";
  rt::Capabilities &c = info.caps;
  c.nativeCommandBuffer = true;
  c.rebindWithoutRerecord = true;
  c.updatableParams = true;
  c.inOrder = false;
  c.concurrentNodes = true;
  c.profiling = false;
  c.profilingReplay = false;
  c.hostPointerBuffers = false;
  c.storedExpressions = true; // evaluated by the runtime, read from the slot/param table
  c.nodeUpdate = false;
  c.kernelForms = {FormKind::SpirV};
  c.computeUnits = uint32_t(prop.multiProcessorCount);
  c.globalMemoryBytes = uint64_t(prop.totalGlobalMem);
  c.maxWorkGroupSize = uint64_t(prop.maxThreadsPerBlock);
  return info;
}

HipBuffer::~HipBuffer() {
  if (ptr_ && !device_->makeCurrent()) (void)device_->api().hipFree(ptr_);
}

const rt::Device *HipBuffer::device() const {
  return device_;
}

Expected<std::unique_ptr<HipDevice>> HipDevice::open(const HipApi &api, int ordinal,
                                                     const HipBackendOptions &opts) {
  std::unique_ptr<HipDevice> d(new HipDevice(api, opts));
  d->driver_ = makeHipDriver(*d);
  auto info = describeHipDevice(api, ordinal);
  if (!info) return info.error();
  d->info_ = std::move(*info);
  d->ordinal_ = ordinal;
  const std::string where = "hip device " + std::to_string(ordinal) + " '" + d->info_.name + "'";
  hipDeviceProp_t prop{};
  CGRAPH_RETURN_IF_ERROR(
      ([&]() -> Error {
        CGRAPH_HIP_CHECK(api, "hipGetDeviceProperties", api.hipGetDeviceProperties(&prop, ordinal));
        CGRAPH_HIP_CHECK(api, "hipSetDevice", api.hipSetDevice(ordinal));
        CGRAPH_HIP_CHECK(api, "hipStreamCreateWithFlags",
                         api.hipStreamCreateWithFlags(&d->stream_, hipStreamNonBlocking));
        return Error::success();
      }())
          .withContext(where));
  d->gfx_ = amdgcnTargetFor(prop.gcnArchName);
  if (d->gfx_.empty())
    return makeError(where + ": LLVM 14's amdgcn target does not know '" +
                     std::string(prop.gcnArchName) + "'");
  return d;
}

HipDevice::~HipDevice() {
  if (stream_ && !makeCurrent()) {
    (void)api_->hipStreamSynchronize(stream_);
    builtins_.reset();
    modules_.reset();
    (void)api_->hipStreamDestroy(stream_);
  }
}

Error HipDevice::makeCurrent() const {
  CGRAPH_HIP_CHECK(*api_, "hipSetDevice", api_->hipSetDevice(ordinal_));
  return Error::success();
}

Expected<std::unique_ptr<rt::Buffer>> HipDevice::allocate(uint64_t bytes, uint32_t alignment) {
  if (bytes == 0) return makeError("hip: cannot allocate a 0-byte buffer");
  // hipMalloc returns 256-byte aligned memory.
  if (alignment > 256 || (alignment & (alignment - 1)) != 0)
    return makeError("hip: alignment " + std::to_string(alignment) +
                     " is not a power of two up to 256");
  CGRAPH_RETURN_IF_ERROR(makeCurrent());
  void *p = nullptr;
  hipError_t rc = api_->hipMalloc(&p, bytes);
  if (rc != hipSuccess)
    return hipError(*api_, "hipMalloc", rc)
        .withContext("hip: allocating " + std::to_string(bytes) + " bytes");
  return std::unique_ptr<rt::Buffer>(new HipBuffer(*this, p, bytes));
}

static Error checkRange(const char *what, const rt::Buffer &b, uint64_t offset, uint64_t bytes) {
  if (offset > b.size() || bytes > b.size() - offset)
    return makeError(std::string("hip: ") + what + " of [" + std::to_string(offset) + ", +" +
                     std::to_string(bytes) + ") is outside the " + std::to_string(b.size()) +
                     "-byte buffer");
  return Error::success();
}

// Both transfers go through the device's stream, so they order after submitted work.
Error HipDevice::write(rt::Buffer &dst, uint64_t offset, const void *src, uint64_t bytes) {
  auto *b = dynamic_cast<HipBuffer *>(&dst);
  if (!b || b->device() != this) return makeError("hip: write to a buffer of another device");
  CGRAPH_RETURN_IF_ERROR(checkRange("write", dst, offset, bytes));
  if (bytes == 0) return Error::success();
  CGRAPH_RETURN_IF_ERROR(makeCurrent());
  CGRAPH_HIP_CHECK(*api_, "hipMemcpyHtoDAsync",
                   api_->hipMemcpyHtoDAsync(static_cast<char *>(b->ptr()) + offset,
                                            const_cast<void *>(src), bytes, stream_));
  CGRAPH_HIP_CHECK(*api_, "hipStreamSynchronize", api_->hipStreamSynchronize(stream_));
  return Error::success();
}

Error HipDevice::read(rt::Buffer &src, uint64_t offset, void *dst, uint64_t bytes) {
  auto *b = dynamic_cast<HipBuffer *>(&src);
  if (!b || b->device() != this) return makeError("hip: read from a buffer of another device");
  CGRAPH_RETURN_IF_ERROR(checkRange("read", src, offset, bytes));
  if (bytes == 0) return Error::success();
  CGRAPH_RETURN_IF_ERROR(makeCurrent());
  CGRAPH_HIP_CHECK(
      *api_, "hipMemcpyDtoHAsync",
      api_->hipMemcpyDtoHAsync(dst, static_cast<char *>(b->ptr()) + offset, bytes, stream_));
  CGRAPH_HIP_CHECK(*api_, "hipStreamSynchronize", api_->hipStreamSynchronize(stream_));
  return Error::success();
}

// HIP 5.2 has no conditional nodes: they run runtime-driven (the default).
Expected<std::unique_ptr<rt::Executable>> HipDevice::finalizeFlat(FlatGraph flat, const rt::FinalizeOptions &opts) {
  CGRAPH_RETURN_IF_ERROR(makeCurrent());
  return makeExecutable(*this, flat.original, std::move(flat.graph), opts);
}

} // namespace cgraph::hip
