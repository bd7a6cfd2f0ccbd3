// Device: the primary context, one stream, buffers and synchronous transfers.
#include "exec.h"

#include "cgraph/backends/gpu_common/graph_executable.h"
#include "cgraph/runtime/communicator.h"
#include "cgraph/graph/flatten.h"
#include "cgraph/graph/validate.h"
#include "cgraph/runtime/staged.h"

namespace cgraph::cuda {

Expected<rt::DeviceInfo> describeCudaDevice(const CuApi &api, int ordinal);

CudaBuffer::~CudaBuffer() {
  if (owns_ && ptr_ && device_->makeCurrent().failed() == false) device_->api().cuMemFree(ptr_);
}

const rt::Device *CudaBuffer::device() const { return device_; }

Expected<std::unique_ptr<CudaDevice>> CudaDevice::open(const CuApi &api, int ordinal,
                                                       const CudaBackendOptions &opts) {
  std::unique_ptr<CudaDevice> d(new CudaDevice(api, opts));
  d->driver_ = makeCudaDriver(*d);
  auto info = describeCudaDevice(api, ordinal);
  if (!info) return info.error();
  d->info_ = std::move(*info);
  const std::string where = "cuda device " + std::to_string(ordinal) + " '" + d->info_.name + "'";
  CGRAPH_RETURN_IF_ERROR(([&]() -> Error {
    CGRAPH_CU_CHECK(api, "cuDeviceGet", api.cuDeviceGet(&d->dev_, ordinal));
    CGRAPH_CU_CHECK(api, "cuDeviceGetAttribute",
                    api.cuDeviceGetAttribute(&d->ccMajor_, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, d->dev_));
    CGRAPH_CU_CHECK(api, "cuDeviceGetAttribute",
                    api.cuDeviceGetAttribute(&d->ccMinor_, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, d->dev_));
    CGRAPH_CU_CHECK(api, "cuDevicePrimaryCtxRetain", api.cuDevicePrimaryCtxRetain(&d->ctx_, d->dev_));
    CGRAPH_CU_CHECK(api, "cuCtxSetCurrent", api.cuCtxSetCurrent(d->ctx_));
    CGRAPH_CU_CHECK(api, "cuStreamCreate", api.cuStreamCreate(&d->stream_, CU_STREAM_NON_BLOCKING));
    return Error::success();
  }()).withContext(where));
  {
    auto sc = d->setConditionKernel();
    d->info_.replay = sc ? "cuda-graph; conditional nodes native"
                         : "cuda-graph; conditional nodes runtime-driven (" + sc.error().message() + ")";
  }
  d->sm_ = ptxTargetFor(unsigned(d->ccMajor_), unsigned(d->ccMinor_));
  if (d->sm_ == 0) return makeError(where + ": compute capability " + std::to_string(d->ccMajor_) + "." +
                                    std::to_string(d->ccMinor_) + " is older than sm_35");
  return d;
}

CudaDevice::~CudaDevice() {
  if (ctx_) {
    api_->cuCtxSetCurrent(ctx_);
    if (stream_) {
      api_->cuStreamSynchronize(stream_);
      api_->cuStreamDestroy(stream_);
    }
    for (CUevent e : freeEvents_) api_->cuEventDestroy(e);
    freeEvents_.clear();
    driver_.reset(); // its pinned pool goes back while the context is alive
    builtins_.reset();
    modules_.reset();
    api_->cuDevicePrimaryCtxRelease(dev_);
  }
}

Expected<CUevent> CudaDevice::takeEvent() const {
  {
    std::lock_guard<std::mutex> lock(eventsMutex_);
    if (!freeEvents_.empty()) {
      CUevent e = freeEvents_.back();
      freeEvents_.pop_back();
      return e;
    }
  }
  // An empty pool gets a batch: a program that keeps a few submissions in flight then
  // creates no event on its submission path (cuEventCreate costs about a microsecond).
  constexpr int kBatch = 32;
  std::vector<CUevent> made;
  for (int i = 0; i < kBatch; ++i) {
    CUevent e = nullptr;
    CUresult rc = api_->cuEventCreate(&e, CU_EVENT_DISABLE_TIMING);
    if (rc != CUDA_SUCCESS) {
      if (made.empty()) return cuError(*api_, "cuEventCreate", rc);
      break;
    }
    made.push_back(e);
  }
  CUevent first = made.back();
  made.pop_back();
  std::lock_guard<std::mutex> lock(eventsMutex_);
  freeEvents_.insert(freeEvents_.end(), made.begin(), made.end());
  return first;
}

void CudaDevice::returnEvent(CUevent e) const {
  std::lock_guard<std::mutex> lock(eventsMutex_);
  freeEvents_.push_back(e);
}

Error CudaDevice::makeCurrent() const {
  CGRAPH_CU_CHECK(*api_, "cuCtxSetCurrent", api_->cuCtxSetCurrent(ctx_));
  return Error::success();
}

Expected<std::unique_ptr<rt::Buffer>> CudaDevice::allocate(uint64_t bytes, uint32_t alignment) {
  if (bytes == 0) return makeError("cuda: cannot allocate a 0-byte buffer");
  // cuMemAlloc returns 256-byte aligned memory (CUDA programming guide).
  if (alignment > 256 || (alignment & (alignment - 1)) != 0)
    return makeError("cuda: alignment " + std::to_string(alignment) + " is not a power of two up to 256");
  CGRAPH_RETURN_IF_ERROR(makeCurrent());
  CUdeviceptr p = 0;
  CUresult rc = api_->cuMemAlloc(&p, bytes);
  if (rc != CUDA_SUCCESS)
    return cuError(*api_, "cuMemAlloc", rc).withContext("cuda: allocating " + std::to_string(bytes) + " bytes");
  return std::unique_ptr<rt::Buffer>(new CudaBuffer(*this, p, bytes));
}

static Error checkRange(const char *what, const rt::Buffer &b, uint64_t offset, uint64_t bytes) {
  if (offset > b.size() || bytes > b.size() - offset)
    return makeError(std::string("cuda: ") + what + " of [" + std::to_string(offset) + ", +" +
                     std::to_string(bytes) + ") is outside the " + std::to_string(b.size()) + "-byte buffer");
  return Error::success();
}

// Both transfers go through the device's stream, so they order after submitted work.
Error CudaDevice::write(rt::Buffer &dst, uint64_t offset, const void *src, uint64_t bytes) {
  auto *b = dynamic_cast<CudaBuffer *>(&dst);
  if (!b || b->device() != this) return makeError("cuda: write to a buffer of another device");
  CGRAPH_RETURN_IF_ERROR(checkRange("write", dst, offset, bytes));
  if (bytes == 0) return Error::success();
  CGRAPH_RETURN_IF_ERROR(makeCurrent());
  CGRAPH_CU_CHECK(*api_, "cuMemcpyHtoDAsync", api_->cuMemcpyHtoDAsync(b->ptr() + offset, src, bytes, stream_));
  CGRAPH_CU_CHECK(*api_, "cuStreamSynchronize", api_->cuStreamSynchronize(stream_));
  return Error::success();
}

Error CudaDevice::read(rt::Buffer &src, uint64_t offset, void *dst, uint64_t bytes) {
  auto *b = dynamic_cast<CudaBuffer *>(&src);
  if (!b || b->device() != this) return makeError("cuda: read from a buffer of another device");
  CGRAPH_RETURN_IF_ERROR(checkRange("read", src, offset, bytes));
  if (bytes == 0) return Error::success();
  CGRAPH_RETURN_IF_ERROR(makeCurrent());
  CGRAPH_CU_CHECK(*api_, "cuMemcpyDtoHAsync", api_->cuMemcpyDtoHAsync(dst, b->ptr() + offset, bytes, stream_));
  CGRAPH_CU_CHECK(*api_, "cuStreamSynchronize", api_->cuStreamSynchronize(stream_));
  return Error::success();
}

// Where the two GPUs can reach each other (NVLink, PCIe P2P), this context maps the
// source's memory once, so peer copies go GPU to GPU; otherwise (or on an older
// driver) the copy still works, through the driver's own staging.
void CudaDevice::enablePeerAccess(const CudaDevice &source) {
  if (&source == this || !api_->cuDeviceCanAccessPeer || !api_->cuCtxEnablePeerAccess) return;
  std::lock_guard<std::mutex> lock(peersMutex_);
  for (CUcontext c : peers_)
    if (c == source.context()) return;
  peers_.push_back(source.context());
  int can = 0;
  if (api_->cuDeviceCanAccessPeer(&can, dev_, source.dev_) != CUDA_SUCCESS || !can) return;
  (void)api_->cuCtxEnablePeerAccess(source.context(), 0); // already enabled: fine either way
}

Error CudaDevice::copyFromDevice(rt::Device &from, rt::Buffer &src, uint64_t srcOffset, rt::Buffer &dst,
                                 uint64_t dstOffset, uint64_t bytes) {
  auto *s = dynamic_cast<CudaBuffer *>(&src);
  auto *d = dynamic_cast<CudaBuffer *>(&dst);
  auto *source = dynamic_cast<CudaDevice *>(&from);
  if (!s || !d || !source || s->device() != source || d->device() != this)
    return rt::Device::copyFromDevice(from, src, srcOffset, dst, dstOffset, bytes);
  CGRAPH_RETURN_IF_ERROR(checkRange("peer copy from", src, srcOffset, bytes));
  CGRAPH_RETURN_IF_ERROR(checkRange("peer copy to", dst, dstOffset, bytes));
  if (bytes == 0) return Error::success();
  CGRAPH_RETURN_IF_ERROR(makeCurrent());
  enablePeerAccess(*source);
  CGRAPH_CU_CHECK(*api_, "cuMemcpyPeerAsync",
                  api_->cuMemcpyPeerAsync(d->ptr() + dstOffset, ctx_, s->ptr() + srcOffset, source->context(), bytes,
                                          stream_));
  CGRAPH_CU_CHECK(*api_, "cuStreamSynchronize", api_->cuStreamSynchronize(stream_));
  return Error::success();
}

Error CudaDevice::runsConditionalsNatively(const Graph &flat, const rt::FinalizeOptions &opts) {
  CGRAPH_RETURN_IF_ERROR(makeCurrent());
  return cuda::nativeConditionals(*this, flat, opts.mode);
}

Expected<std::unique_ptr<rt::Executable>> CudaDevice::finalizeFlat(FlatGraph flat, const rt::FinalizeOptions &opts) {
  CGRAPH_RETURN_IF_ERROR(makeCurrent());
  return makeExecutable(*this, flat.original, std::move(flat.graph), opts, flat.flattenUs);
}

} // namespace cgraph::cuda
