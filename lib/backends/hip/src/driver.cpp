// gpu::Driver over the HIP table (hip_api.h): one HIP call per method, for the shared
// executable (gpu_common/graph_executable.h).
#include "internal.h"

#include <cstring>

namespace cgraph::hip {

namespace {

hipKernelNodeParams kernelParams(gpu::Launch &l) {
  hipKernelNodeParams kp{};
  kp.func = l.fn;
  kp.gridDim = dim3(l.grid[0], l.grid[1], l.grid[2]);
  kp.blockDim = dim3(l.block[0], l.block[1], l.block[2]);
  kp.sharedMemBytes = l.smem;
  kp.kernelParams = l.ptrs.data();
  kp.extra = nullptr;
  return kp;
}

hipMemcpy3DParms memcpyParams(const gpu::Copy3D &c) {
  hipMemcpy3DParms m;
  std::memset(&m, 0, sizeof(m));
  m.srcPtr = make_hipPitchedPtr(reinterpret_cast<void *>(uintptr_t(c.src)), c.srcPitch, c.width, c.srcHeight);
  m.dstPtr = make_hipPitchedPtr(reinterpret_cast<void *>(uintptr_t(c.dst)), c.dstPitch, c.width, c.dstHeight);
  m.extent = make_hipExtent(c.width, c.height, c.depth);
  m.kind = hipMemcpyDeviceToDevice;
  return m;
}

void *ptr(uint64_t a) { return reinterpret_cast<void *>(uintptr_t(a)); }

#define HIP_OK(call, expr) CGRAPH_HIP_CHECK(*api_, call, expr); return Error::success()

class HipDriver final : public gpu::DeviceDriver<HipDevice, LoadedModule> {
public:
  explicit HipDriver(HipDevice &dev) : DeviceDriver(dev), api_(&dev.api()) {}
  const char *apiName() const override { return "HIP"; }
  uint64_t maxSharedMemory() const override { return 64 * 1024; }
  size_t stagingSlots() const override { return 1; }
  uint64_t address(const rt::Buffer &b) const override { return static_cast<const HipBuffer &>(b).address(); }

  Error graphCreate(gpu::GraphHandle *g) override {
    hipGraph_t x = nullptr;
    CGRAPH_HIP_CHECK(*api_, "hipGraphCreate", api_->hipGraphCreate(&x, 0));
    *g = x;
    return Error::success();
  }
  void graphDestroy(gpu::GraphHandle g) override { (void)api_->hipGraphDestroy(hipGraph_t(g)); }
  Error addKernelNode(gpu::GraphNodeHandle *n, gpu::GraphHandle g, const std::vector<gpu::GraphNodeHandle> &deps,
                      gpu::Launch &l) override {
    hipKernelNodeParams kp = kernelParams(l);
    HIP_OK("hipGraphAddKernelNode", api_->hipGraphAddKernelNode(out<hipGraphNode_t>(n), hipGraph_t(g), list<hipGraphNode_t>(deps), deps.size(), &kp));
  }
  Error addMemcpyNode(gpu::GraphNodeHandle *n, gpu::GraphHandle g, const std::vector<gpu::GraphNodeHandle> &deps,
                      const gpu::Copy3D &c) override {
    hipMemcpy3DParms m = memcpyParams(c);
    HIP_OK("hipGraphAddMemcpyNode", api_->hipGraphAddMemcpyNode(out<hipGraphNode_t>(n), hipGraph_t(g), list<hipGraphNode_t>(deps), deps.size(), &m));
  }
  Error addMemsetNode(gpu::GraphNodeHandle *n, gpu::GraphHandle g, const std::vector<gpu::GraphNodeHandle> &deps,
                      const gpu::Memset &s, uint64_t pitch) override {
    hipMemsetParams m;
    std::memset(&m, 0, sizeof(m));
    m.dst = ptr(s.dst);
    m.elementSize = s.elementSize;
    m.width = s.width;
    m.height = 1;
    m.pitch = pitch;
    m.value = s.value;
    HIP_OK("hipGraphAddMemsetNode", api_->hipGraphAddMemsetNode(out<hipGraphNode_t>(n), hipGraph_t(g), list<hipGraphNode_t>(deps), deps.size(), &m));
  }
  Error addEmptyNode(gpu::GraphNodeHandle *n, gpu::GraphHandle g,
                     const std::vector<gpu::GraphNodeHandle> &deps) override {
    HIP_OK("hipGraphAddEmptyNode", api_->hipGraphAddEmptyNode(out<hipGraphNode_t>(n), hipGraph_t(g), list<hipGraphNode_t>(deps), deps.size()));
  }
  Error addChildGraphNode(gpu::GraphNodeHandle *n, gpu::GraphHandle g, const std::vector<gpu::GraphNodeHandle> &deps,
                          gpu::GraphHandle child) override {
    if (!api_->hipGraphAddChildGraphNode) return makeError("hipGraphAddChildGraphNode: not in this HIP runtime");
    HIP_OK("hipGraphAddChildGraphNode",
           api_->hipGraphAddChildGraphNode(out<hipGraphNode_t>(n), hipGraph_t(g), list<hipGraphNode_t>(deps), deps.size(), hipGraph_t(child)));
  }
  Error instantiate(gpu::GraphExecHandle *e, gpu::GraphHandle g) override {
    hipGraphExec_t x = nullptr;
    char log[1024] = {0};
    hipError_t rc = api_->hipGraphInstantiate(&x, hipGraph_t(g), nullptr, log, sizeof(log) - 1);
    if (rc != hipSuccess) return hipError(*api_, "hipGraphInstantiate", rc).withContext(log[0] ? log : "partition");
    *e = x;
    return Error::success();
  }
  void execDestroy(gpu::GraphExecHandle e) override { (void)api_->hipGraphExecDestroy(hipGraphExec_t(e)); }
  Error graphLaunch(gpu::GraphExecHandle e) override {
    HIP_OK("hipGraphLaunch", api_->hipGraphLaunch(hipGraphExec_t(e), device_->stream()));
  }
  Error execKernelNodeSetParams(gpu::GraphExecHandle e, gpu::GraphNodeHandle n, gpu::Launch &l) override {
    hipKernelNodeParams kp = kernelParams(l);
    HIP_OK("hipGraphExecKernelNodeSetParams",
           api_->hipGraphExecKernelNodeSetParams(hipGraphExec_t(e), hipGraphNode_t(n), &kp));
  }

  Error launchKernel(gpu::Launch &l) override {
    HIP_OK("hipModuleLaunchKernel",
           api_->hipModuleLaunchKernel(hipFunction_t(l.fn), l.grid[0], l.grid[1], l.grid[2], l.block[0], l.block[1],
                                       l.block[2], l.smem, device_->stream(), l.ptrs.data(), nullptr));
  }
  Error memcpy3D(const gpu::Copy3D &c) override {
    hipMemcpy3DParms m = memcpyParams(c);
    HIP_OK("hipMemcpy3DAsync", api_->hipMemcpy3DAsync(&m, device_->stream()));
  }
  Error memset(const gpu::Memset &m) override {
    hipDeviceptr_t dst = ptr(m.dst);
    if (m.elementSize == 1) {
      HIP_OK("hipMemsetD8Async", api_->hipMemsetD8Async(dst, uint8_t(m.value), m.width, device_->stream()));
    } else if (m.elementSize == 2) {
      HIP_OK("hipMemsetD16Async", api_->hipMemsetD16Async(dst, uint16_t(m.value), m.width, device_->stream()));
    }
    HIP_OK("hipMemsetD32Async", api_->hipMemsetD32Async(dst, int(m.value), m.width, device_->stream()));
  }
  Error copyToDevice(uint64_t dst, const void *src, size_t bytes) override {
    HIP_OK("hipMemcpyHtoDAsync", api_->hipMemcpyHtoDAsync(ptr(dst), const_cast<void *>(src), bytes, device_->stream()));
  }
  Error copyToHost(void *dst, uint64_t src, size_t bytes) override {
    HIP_OK("hipMemcpyDtoHAsync", api_->hipMemcpyDtoHAsync(dst, ptr(src), bytes, device_->stream()));
  }
  Error streamSynchronize() override { HIP_OK("hipStreamSynchronize", api_->hipStreamSynchronize(device_->stream())); }

  Error hostAlloc(void **p, size_t bytes) override { HIP_OK("hipHostMalloc", api_->hipHostMalloc(p, bytes, 0)); }
  void hostFree(void *p) override { (void)api_->hipHostFree(p); }
  Error eventCreate(gpu::EventHandle *e) override {
    hipEvent_t x = nullptr;
    CGRAPH_HIP_CHECK(*api_, "hipEventCreateWithFlags", api_->hipEventCreateWithFlags(&x, hipEventDisableTiming));
    *e = x;
    return Error::success();
  }
  Error eventRecord(gpu::EventHandle e) override {
    HIP_OK("hipEventRecord", api_->hipEventRecord(hipEvent_t(e), device_->stream()));
  }
  Error eventSynchronize(gpu::EventHandle e) override {
    HIP_OK("hipEventSynchronize", api_->hipEventSynchronize(hipEvent_t(e)));
  }
  void eventDestroy(gpu::EventHandle e) override { (void)api_->hipEventDestroy(hipEvent_t(e)); }

private:
  const HipApi *api_;
};

#undef HIP_OK

} // namespace

std::unique_ptr<gpu::Driver> makeHipDriver(HipDevice &device) { return std::make_unique<HipDriver>(device); }

} // namespace cgraph::hip
