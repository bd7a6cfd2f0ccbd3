// Discovery: devices through the dlopen'ed driver; probe() says why there is none.
#include "internal.h"

#include "cgraph/runtime/listed_backend.h"

#include <string>

namespace cgraph::cuda {

namespace {

Expected<rt::DeviceInfo> describe(const CuApi &api, int ordinal) {
  CUdevice d = 0;
  CGRAPH_CU_CHECK(api, "cuDeviceGet", api.cuDeviceGet(&d, ordinal));
  char name[256] = {0};
  CGRAPH_CU_CHECK(api, "cuDeviceGetName", api.cuDeviceGetName(name, sizeof(name) - 1, d));
  auto attr = [&](CUdevice_attribute a) {
    int v = 0;
    api.cuDeviceGetAttribute(&v, a, d);
    return v;
  };
  rt::DeviceInfo info;
  info.backend = "cuda";
  info.name = name;
  info.vendor = "NVIDIA";
  const int major = attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
  const int minor = attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
  info.driverVersion = "CUDA " + std::to_string(api.driverVersion / 1000) + "." +
                       std::to_string(api.driverVersion % 1000 / 10) + ", sm_" +
                       std::to_string(major) + std::to_string(minor) + ", PTX target sm_" +
                       std::to_string(ptxTargetFor(unsigned(major), unsigned(minor)));
  info.update = "node-params";
#ifdef CGRAPH_CUDA_SETCOND
  info.replay = api.cuGraphConditionalHandleCreate && api.cuGraphAddNode
                    ? "cuda-graph; conditional nodes native"
                    : "cuda-graph; conditional nodes runtime-driven (the driver has no conditional nodes)";
#else
  info.replay = "cuda-graph; conditional nodes runtime-driven (built without nvcc)";
#endif
  rt::Capabilities &c = info.caps;
  c.nativeCommandBuffer = true;
  c.rebindWithoutRerecord = true;
  c.updatableParams = true;
  c.inOrder = false; // a partition's graph runs independent nodes concurrently
  c.concurrentNodes = true;
  c.profiling = true;
  c.profilingReplay = false;
  c.hostPointerBuffers = false;
  c.storedExpressions = true; // evaluated by the runtime, read from the slot/param table
  c.nodeUpdate = true;        // cuGraphExecKernelNodeSetParams / cuGraphNodeSetEnabled
  c.callerStreams = true;     // SubmitOptions::stream: cuStreamWaitEvent both ways
  c.kernelForms = {FormKind::Cubin, FormKind::PTX, FormKind::SpirV};
  c.computeUnits = uint32_t(attr(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT));
  size_t mem = 0;
  api.cuDeviceTotalMem(&mem, d);
  c.globalMemoryBytes = mem;
  c.maxWorkGroupSize = uint64_t(attr(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK));
  return info;
}

// The devices the driver lists (rt::ListedDeviceBackend: probe() says why there is
// none; each device is opened once).
class CudaBackend final : public rt::ListedDeviceBackend<CudaBackend, CudaDevice> {
public:
  explicit CudaBackend(Expected<CudaBackendOptions> opts) : opts_(std::move(opts)) {}
  const char *name() const override { return "cuda"; }

  // rt::ListedDeviceBackend's driver hooks. A bad environment variable is the probe's
  // reason and every device()'s error.
  Expected<const CuApi *> loadApi() {
    if (!opts_) return opts_.error();
    return loadCuApi();
  }
  Expected<std::vector<int>> enumerate(const CuApi &api) {
    int n = 0;
    CGRAPH_CU_CHECK(api, "cuDeviceGetCount", api.cuDeviceGetCount(&n));
    if (n == 0) return makeError("no CUDA device");
    return rt::ordinals(n);
  }
  Expected<std::pair<rt::DeviceInfo, int>> describe(const CuApi &api, int ordinal) {
    auto info = cuda::describe(api, ordinal);
    if (!info) return info.error();
    return std::make_pair(std::move(*info), ordinal);
  }
  Expected<std::unique_ptr<CudaDevice>> open(const CuApi &api, const std::pair<rt::DeviceInfo, int> &d) {
    return CudaDevice::open(api, d.second, *opts_);
  }

private:
  Expected<CudaBackendOptions> opts_;
};

} // namespace

Expected<rt::DeviceInfo> describeCudaDevice(const CuApi &api, int ordinal) { return describe(api, ordinal); }

Expected<CudaBackendOptions> resolveOptions(const CudaBackendOptions &opts) {
  CudaBackendOptions o = opts;
  CGRAPH_RETURN_IF_ERROR(rt::env::fillCount(o.coarsenMinItems, "CGRAPH_CUDA_COARSEN_MIN"));
  CGRAPH_RETURN_IF_ERROR(rt::env::fillFlag(o.tableRing, "CGRAPH_CUDA_TABLE_RING"));
  CGRAPH_RETURN_IF_ERROR(rt::env::fillChoice(o.nativeConditionals, "CGRAPH_CUDA_CONDITIONALS",
                                             {{"native", true}, {"staged", false}}));
  if (!o.coarsenMinItems) o.coarsenMinItems = uint64_t(1) << 20;
  if (!o.tableRing) o.tableRing = true;
  if (!o.completionWord) o.completionWord = true;
  if (!o.pinnedPool) o.pinnedPool = true;
  if (!o.nativeConditionals) o.nativeConditionals = true;
  return o;
}

std::unique_ptr<rt::Backend> makeCudaBackend(const CudaBackendOptions &opts) {
  return std::make_unique<CudaBackend>(resolveOptions(opts));
}

CudaCounters counters(const rt::Device &device) {
  CudaCounters c;
  auto *d = dynamic_cast<const CudaDevice *>(&device);
  if (!d) return c;
  auto &a = const_cast<CudaDevice *>(d)->counters();
  c.lowerings = a.lowerings;
  c.ptxJits = a.ptxJits;
  c.cubinForms = a.cubinForms;
  c.graphsInstantiated = a.graphsInstantiated;
  c.tableUploads = a.tableUploads;
  c.nodeUpdates = a.nodeUpdates;
  c.conditionalNodes = a.conditionalNodes;
  c.coarsePlans = a.coarsePlans;
  c.tableCopies = a.tableCopies;
  c.programmaticEdges = a.programmaticEdges;
  c.ringLaunches = a.ringLaunches;
  c.ringGrowths = a.ringGrowths;
  c.wordCompletions = a.wordCompletions;
  c.pinnedAllocations = a.pinnedAllocations;
  return c;
}

} // namespace cgraph::cuda
