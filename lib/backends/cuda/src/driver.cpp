// gpu::Driver over the CUDA driver table (cu_api.h): one driver call per method, for the
// shared executable (gpu_common/graph_executable.h).
#include "internal.h"

#include "cgraph/backends/gpu_common/pinned_pool.h"

#include <cstring>

namespace cgraph::cuda {

CUDA_KERNEL_NODE_PARAMS kernelNodeParams(gpu::Launch &l) {
  CUDA_KERNEL_NODE_PARAMS kp;
  std::memset(&kp, 0, sizeof(kp));
  kp.func = CUfunction(l.fn);
  kp.gridDimX = l.grid[0];
  kp.gridDimY = l.grid[1];
  kp.gridDimZ = l.grid[2];
  kp.blockDimX = l.block[0];
  kp.blockDimY = l.block[1];
  kp.blockDimZ = l.block[2];
  kp.sharedMemBytes = l.smem;
  kp.kernelParams = l.ptrs.data();
  return kp;
}

namespace {

CUDA_MEMCPY3D memcpyParams(const gpu::Copy3D &c) {
  CUDA_MEMCPY3D m;
  std::memset(&m, 0, sizeof(m));
  m.srcMemoryType = CU_MEMORYTYPE_DEVICE;
  m.dstMemoryType = CU_MEMORYTYPE_DEVICE;
  m.srcDevice = c.src;
  m.dstDevice = c.dst;
  m.WidthInBytes = c.width;
  m.Height = c.height;
  m.Depth = c.depth;
  m.srcPitch = c.srcPitch;
  m.dstPitch = c.dstPitch;
  m.srcHeight = c.srcHeight;
  m.dstHeight = c.dstHeight;
  return m;
}

#define CU_OK(call, expr) CGRAPH_CU_CHECK(*api_, call, expr); return Error::success()

class CudaDriver final : public gpu::DeviceDriver<CudaDevice, LoadedModule> {
public:
  explicit CudaDriver(CudaDevice &dev)
      : DeviceDriver(dev), api_(&dev.api()),
        pool_([this](void **p, size_t bytes) { return pinnedAlloc(p, bytes); },
              [this](void *p) { api_->cuMemFreeHost(p); }) {}
  // The pool's chunks go back with the context current (CudaDevice destroys its
  // driver before it releases the context).
  ~CudaDriver() override {
    (void)makeCurrent();
    pool_.releaseAll();
    for (CUevent e : {joinEvent_, signalEvent_})
      if (e) api_->cuEventDestroy(e);
  }
  const char *apiName() const override { return "CUDA"; }
  uint64_t maxSharedMemory() const override { return 48 * 1024; }
  size_t stagingSlots() const override { return 4; }
  uint64_t address(const rt::Buffer &b) const override { return static_cast<const CudaBuffer &>(b).ptr(); }

  Error graphCreate(gpu::GraphHandle *g) override {
    CUgraph x = nullptr;
    CGRAPH_CU_CHECK(*api_, "cuGraphCreate", api_->cuGraphCreate(&x, 0));
    *g = x;
    return Error::success();
  }
  void graphDestroy(gpu::GraphHandle g) override { api_->cuGraphDestroy(CUgraph(g)); }
  Error addKernelNode(gpu::GraphNodeHandle *n, gpu::GraphHandle g, const std::vector<gpu::GraphNodeHandle> &deps,
                      gpu::Launch &l) override {
    CUDA_KERNEL_NODE_PARAMS kp = kernelNodeParams(l);
    CU_OK("cuGraphAddKernelNode", api_->cuGraphAddKernelNode(out<CUgraphNode>(n), CUgraph(g), list<CUgraphNode>(deps), deps.size(), &kp));
  }
  Error addMemcpyNode(gpu::GraphNodeHandle *n, gpu::GraphHandle g, const std::vector<gpu::GraphNodeHandle> &deps,
                      const gpu::Copy3D &c) override {
    CUDA_MEMCPY3D m = memcpyParams(c);
    CU_OK("cuGraphAddMemcpyNode",
          api_->cuGraphAddMemcpyNode(out<CUgraphNode>(n), CUgraph(g), list<CUgraphNode>(deps), deps.size(), &m, device_->context()));
  }
  Error addMemsetNode(gpu::GraphNodeHandle *n, gpu::GraphHandle g, const std::vector<gpu::GraphNodeHandle> &deps,
                      const gpu::Memset &s, uint64_t pitch) override {
    CUDA_MEMSET_NODE_PARAMS m;
    std::memset(&m, 0, sizeof(m));
    m.dst = s.dst;
    m.elementSize = s.elementSize;
    m.width = s.width;
    m.height = 1;
    m.pitch = pitch;
    m.value = s.value;
    CU_OK("cuGraphAddMemsetNode",
          api_->cuGraphAddMemsetNode(out<CUgraphNode>(n), CUgraph(g), list<CUgraphNode>(deps), deps.size(), &m, device_->context()));
  }
  Error addEmptyNode(gpu::GraphNodeHandle *n, gpu::GraphHandle g,
                     const std::vector<gpu::GraphNodeHandle> &deps) override {
    CU_OK("cuGraphAddEmptyNode", api_->cuGraphAddEmptyNode(out<CUgraphNode>(n), CUgraph(g), list<CUgraphNode>(deps), deps.size()));
  }
  Error addChildGraphNode(gpu::GraphNodeHandle *n, gpu::GraphHandle g, const std::vector<gpu::GraphNodeHandle> &deps,
                          gpu::GraphHandle child) override {
    CU_OK("cuGraphAddChildGraphNode",
          api_->cuGraphAddChildGraphNode(out<CUgraphNode>(n), CUgraph(g), list<CUgraphNode>(deps), deps.size(), CUgraph(child)));
  }
  uint64_t coarsenMinItems() const override { return device_->coarsenMinItems(); }
  Error instantiate(gpu::GraphExecHandle *e, gpu::GraphHandle g) override {
    CUgraphExec x = nullptr;
    CGRAPH_CU_CHECK(*api_, "cuGraphInstantiate", api_->cuGraphInstantiate(&x, CUgraph(g), 0));
    *e = x;
    CU_OK("cuGraphUpload", api_->cuGraphUpload(x, device_->stream()));
  }
  void execDestroy(gpu::GraphExecHandle e) override { api_->cuGraphExecDestroy(CUgraphExec(e)); }
  Error graphLaunch(gpu::GraphExecHandle e) override {
    CU_OK("cuGraphLaunch", api_->cuGraphLaunch(CUgraphExec(e), device_->stream()));
  }
  Error execKernelNodeSetParams(gpu::GraphExecHandle e, gpu::GraphNodeHandle n, gpu::Launch &l) override {
    CUDA_KERNEL_NODE_PARAMS kp = kernelNodeParams(l);
    CU_OK("cuGraphExecKernelNodeSetParams",
          api_->cuGraphExecKernelNodeSetParams(CUgraphExec(e), CUgraphNode(n), &kp));
  }

  Error launchKernel(gpu::Launch &l) override {
    CU_OK("cuLaunchKernel", api_->cuLaunchKernel(CUfunction(l.fn), l.grid[0], l.grid[1], l.grid[2], l.block[0],
                                                 l.block[1], l.block[2], l.smem, device_->stream(), l.ptrs.data(),
                                                 nullptr));
  }
  Error memcpy3D(const gpu::Copy3D &c) override {
    CUDA_MEMCPY3D m = memcpyParams(c);
    CU_OK("cuMemcpy3DAsync", api_->cuMemcpy3DAsync(&m, device_->stream()));
  }
  Error memset(const gpu::Memset &m) override {
    if (m.elementSize == 1) {
      CU_OK("cuMemsetD8Async", api_->cuMemsetD8Async(m.dst, uint8_t(m.value), m.width, device_->stream()));
    } else if (m.elementSize == 2) {
      CU_OK("cuMemsetD16Async", api_->cuMemsetD16Async(m.dst, uint16_t(m.value), m.width, device_->stream()));
    }
    CU_OK("cuMemsetD32Async", api_->cuMemsetD32Async(m.dst, m.value, m.width, device_->stream()));
  }
  Error copyToDevice(uint64_t dst, const void *src, size_t bytes) override {
    CU_OK("cuMemcpyHtoDAsync", api_->cuMemcpyHtoDAsync(dst, src, bytes, device_->stream()));
  }
  Error copyToHost(void *dst, uint64_t src, size_t bytes) override {
    CU_OK("cuMemcpyDtoHAsync", api_->cuMemcpyDtoHAsync(dst, src, bytes, device_->stream()));
  }
  Error streamSynchronize() override { CU_OK("cuStreamSynchronize", api_->cuStreamSynchronize(device_->stream())); }

  Error hostAlloc(void **p, size_t bytes) override {
    if (!device_->pinnedPool()) return pinnedAlloc(p, bytes);
    return pool_.allocate(p, bytes);
  }
  void hostFree(void *p) override {
    if (!device_->pinnedPool()) api_->cuMemFreeHost(p);
    else pool_.release(p);
  }
  Error eventCreate(gpu::EventHandle *e) override {
    CUevent x = nullptr;
    CGRAPH_CU_CHECK(*api_, "cuEventCreate", api_->cuEventCreate(&x, CU_EVENT_DISABLE_TIMING));
    *e = x;
    return Error::success();
  }
  Error eventRecord(gpu::EventHandle e) override {
    CU_OK("cuEventRecord", api_->cuEventRecord(CUevent(e), device_->stream()));
  }
  Error eventSynchronize(gpu::EventHandle e) override {
    CU_OK("cuEventSynchronize", api_->cuEventSynchronize(CUevent(e)));
  }
  void eventDestroy(gpu::EventHandle e) override { api_->cuEventDestroy(CUevent(e)); }

  // One event each way, recorded again per submission: cuStreamWaitEvent waits for the
  // event's state when it is called, so reusing it is safe.
  Error streamJoin(void *stream) override {
    CGRAPH_RETURN_IF_ERROR(orderingEvent(&joinEvent_));
    CGRAPH_CU_CHECK(*api_, "cuEventRecord (caller's stream)", api_->cuEventRecord(joinEvent_, CUstream(stream)));
    CU_OK("cuStreamWaitEvent", api_->cuStreamWaitEvent(device_->stream(), joinEvent_, 0));
  }
  Error streamSignal(void *stream) override {
    CGRAPH_RETURN_IF_ERROR(orderingEvent(&signalEvent_));
    CGRAPH_CU_CHECK(*api_, "cuEventRecord", api_->cuEventRecord(signalEvent_, device_->stream()));
    CU_OK("cuStreamWaitEvent (caller's stream)", api_->cuStreamWaitEvent(CUstream(stream), signalEvent_, 0));
  }
  Expected<bool> streamCapturing(void *stream) override {
    CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
    CGRAPH_CU_CHECK(*api_, "cuStreamIsCapturing (caller's stream)", api_->cuStreamIsCapturing(CUstream(stream), &status));
    if (status == CU_STREAM_CAPTURE_STATUS_INVALIDATED)
      return makeError(ErrorCode::Invalid, "the caller's stream is in a capture that was invalidated by an earlier error");
    return status == CU_STREAM_CAPTURE_STATUS_ACTIVE;
  }

private:
  Error orderingEvent(CUevent *e) {
    if (*e) return Error::success();
    CU_OK("cuEventCreate", api_->cuEventCreate(e, CU_EVENT_DISABLE_TIMING));
  }
  CUevent joinEvent_ = nullptr, signalEvent_ = nullptr;
  Error pinnedAlloc(void **p, size_t bytes) {
    ++device_->counters().pinnedAllocations;
    CU_OK("cuMemAllocHost", api_->cuMemAllocHost(p, bytes));
  }
  const CuApi *api_;
  gpu::PinnedPool pool_;
};

#undef CU_OK

} // namespace

std::unique_ptr<gpu::Driver> makeCudaDriver(CudaDevice &device) { return std::make_unique<CudaDriver>(device); }

} // namespace cgraph::cuda
