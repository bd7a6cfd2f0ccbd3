// The recording fake of the HIP runtime table (see fake_hip.h). TEST-ONLY.
#include "fake_hip.h"

#include <algorithm>
#include <cstring>
#include <memory>

namespace cgraph::hip::fake {

namespace {

struct State {
  Recorder rec;
  uintptr_t nextHandle = 0x1000;
  std::map<uintptr_t, std::vector<uint8_t>> modules; // module -> code object
  std::map<uintptr_t, int> events;                   // event -> recorded count
  std::vector<std::unique_ptr<uint8_t[]>> host;      // hipHostMalloc blocks
};

State &state() {
  static State s;
  return s;
}

uintptr_t handle() {
  return state().nextHandle += 0x10;
}

void call(const char *name) {
  state().rec.calls.push_back(name);
}

hipError_t violation(const std::string &what) {
  state().rec.violations.push_back(what);
  return hipErrorInvalidValue;
}

// The allocation holding [p, p + bytes), or null.
uint8_t *deviceRange(const void *p, size_t bytes) {
  const uintptr_t a = reinterpret_cast<uintptr_t>(p);
  auto &mem = state().rec.memory;
  auto it = mem.upper_bound(a);
  if (it == mem.begin()) return nullptr;
  --it;
  if (a < it->first || a + bytes > it->first + it->second.size()) return nullptr;
  return it->second.data() + (a - it->first);
}

hipError_t fInit(unsigned int flags) {
  call("hipInit");
  return flags == 0 ? hipSuccess : violation("hipInit: flags must be 0");
}
hipError_t fDriverGetVersion(int *v) {
  call("hipDriverGetVersion");
  *v = 50221921;
  return hipSuccess;
}
hipError_t fRuntimeGetVersion(int *v) {
  call("hipRuntimeGetVersion");
  *v = 50221921;
  return hipSuccess;
}
hipError_t fGetDeviceCount(int *n) {
  call("hipGetDeviceCount");
  *n = 1;
  return hipSuccess;
}
hipError_t fGetDeviceProperties(hipDeviceProp_t *p, int dev) {
  call("hipGetDeviceProperties");
  if (dev != 0) return violation("hipGetDeviceProperties: no device " + std::to_string(dev));
  std::memset(p, 0, sizeof(*p));
  std::strcpy(p->name, "cgraph fake MI210");
  std::strcpy(p->gcnArchName, "gfx90a:sramecc+:xnack-");
  p->multiProcessorCount = 104;
  p->totalGlobalMem = size_t(64) << 30;
  p->maxThreadsPerBlock = 1024;
  return hipSuccess;
}
hipError_t fDeviceGetAttribute(int *v, hipDeviceAttribute_t, int) {
  call("hipDeviceGetAttribute");
  *v = 0;
  return hipSuccess;
}
hipError_t fSetDevice(int dev) {
  call("hipSetDevice");
  return dev == 0 ? hipSuccess : violation("hipSetDevice: no device " + std::to_string(dev));
}
hipError_t fStreamCreateWithFlags(hipStream_t *s, unsigned int) {
  call("hipStreamCreateWithFlags");
  *s = reinterpret_cast<hipStream_t>(handle());
  return hipSuccess;
}
hipError_t fStreamDestroy(hipStream_t) {
  call("hipStreamDestroy");
  return hipSuccess;
}
hipError_t fStreamSynchronize(hipStream_t) {
  call("hipStreamSynchronize");
  return hipSuccess;
}
hipError_t fMalloc(void **p, size_t bytes) {
  call("hipMalloc");
  if (bytes == 0) return violation("hipMalloc: 0 bytes");
  // 256-byte aligned, as the runtime's.
  static uintptr_t next = 0x7f0000000000;
  next = (next + 255) & ~uintptr_t(255);
  state().rec.memory[next] = std::vector<uint8_t>(bytes, 0);
  *p = reinterpret_cast<void *>(next);
  next += bytes + 256;
  return hipSuccess;
}
hipError_t fFree(void *p) {
  call("hipFree");
  auto &mem = state().rec.memory;
  auto it = mem.find(reinterpret_cast<uintptr_t>(p));
  if (it == mem.end()) return violation("hipFree of an unknown pointer");
  mem.erase(it);
  return hipSuccess;
}
hipError_t fHostMalloc(void **p, size_t bytes, unsigned int) {
  call("hipHostMalloc");
  state().host.emplace_back(new uint8_t[bytes]());
  *p = state().host.back().get();
  return hipSuccess;
}
hipError_t fHostFree(void *) {
  call("hipHostFree");
  return hipSuccess;
}
hipError_t fMemcpyHtoDAsync(hipDeviceptr_t dst, void *src, size_t bytes, hipStream_t) {
  call("hipMemcpyHtoDAsync");
  uint8_t *d = deviceRange(dst, bytes);
  if (!d) return violation("hipMemcpyHtoDAsync: destination outside every allocation");
  std::memcpy(d, src, bytes);
  state().rec.uploads.push_back({reinterpret_cast<uintptr_t>(dst), bytes});
  return hipSuccess;
}
hipError_t fMemcpyDtoHAsync(void *dst, hipDeviceptr_t src, size_t bytes, hipStream_t) {
  call("hipMemcpyDtoHAsync");
  const uint8_t *s = deviceRange(src, bytes);
  if (!s) return violation("hipMemcpyDtoHAsync: source outside every allocation");
  std::memcpy(dst, s, bytes);
  return hipSuccess;
}
hipError_t fMemcpy3DAsync(const hipMemcpy3DParms *, hipStream_t) {
  call("hipMemcpy3DAsync");
  return hipSuccess;
}
hipError_t fMemsetD8Async(hipDeviceptr_t, unsigned char, size_t, hipStream_t) {
  call("hipMemsetD8Async");
  return hipSuccess;
}
hipError_t fMemsetD16Async(hipDeviceptr_t, unsigned short, size_t, hipStream_t) {
  call("hipMemsetD16Async");
  return hipSuccess;
}
hipError_t fMemsetD32Async(hipDeviceptr_t, int, size_t, hipStream_t) {
  call("hipMemsetD32Async");
  return hipSuccess;
}
hipError_t fModuleLoadData(hipModule_t *m, const void *image) {
  call("hipModuleLoadData");
  const uint8_t *b = static_cast<const uint8_t *>(image);
  // ELF64, little-endian, ET_DYN (3), EM_AMDGPU (224).
  if (!b ||
      std::memcmp(b,
                  "\x7f"
                  "ELF",
                  4) != 0 ||
      b[4] != 2 || b[5] != 1)
    return violation("hipModuleLoadData: not an ELF64 little-endian image");
  uint16_t type = 0, machine = 0;
  std::memcpy(&type, b + 16, 2);
  std::memcpy(&machine, b + 18, 2);
  if (type != 3 || machine != 224)
    return violation("hipModuleLoadData: not an AMDGPU shared object (e_type " +
                     std::to_string(type) + ", e_machine " + std::to_string(machine) + ")");
  // The size: the section header table ends the file (ld.lld's layout).
  uint64_t shoff = 0;
  uint16_t shentsize = 0, shnum = 0;
  std::memcpy(&shoff, b + 40, 8);
  std::memcpy(&shentsize, b + 58, 2);
  std::memcpy(&shnum, b + 60, 2);
  const uintptr_t h = handle();
  state().modules[h] = std::vector<uint8_t>(b, b + shoff + uint64_t(shentsize) * shnum);
  *m = reinterpret_cast<hipModule_t>(h);
  return hipSuccess;
}
hipError_t fModuleUnload(hipModule_t m) {
  call("hipModuleUnload");
  return state().modules.erase(reinterpret_cast<uintptr_t>(m))
             ? hipSuccess
             : violation("hipModuleUnload: unknown");
}
hipError_t fModuleGetFunction(hipFunction_t *f, hipModule_t m, const char *name) {
  call("hipModuleGetFunction");
  auto it = state().modules.find(reinterpret_cast<uintptr_t>(m));
  if (it == state().modules.end()) return violation("hipModuleGetFunction: unknown module");
  // The kernel descriptor symbol `<name>.kd` must be in the string table.
  const std::string kd = std::string(name) + ".kd";
  const std::vector<uint8_t> &img = it->second;
  bool found = false;
  for (size_t i = 0; i + kd.size() < img.size() && !found; ++i)
    found =
        (i == 0 || img[i - 1] == 0) && std::memcmp(img.data() + i, kd.c_str(), kd.size() + 1) == 0;
  if (!found) {
    state().rec.violations.push_back(std::string("hipModuleGetFunction: no ") + kd +
                                     " in the code object");
    return hipErrorNotFound;
  }
  const uintptr_t h = handle();
  state().rec.functions[h] = name;
  *f = reinterpret_cast<hipFunction_t>(h);
  return hipSuccess;
}
hipError_t checkLaunch(const char *what, const void *func, dim3 grid, dim3 block, void **params,
                       void **extra) {
  if (!state().rec.functions.count(reinterpret_cast<uintptr_t>(func)))
    return violation(std::string(what) + ": unknown function");
  if (uint64_t(block.x) * block.y * block.z > 1024 || block.x == 0 || block.y == 0 || block.z == 0)
    return violation(std::string(what) + ": work-group of more than 1024 (or 0) work-items");
  if (grid.x == 0 || grid.y == 0 || grid.z == 0)
    return violation(std::string(what) + ": empty grid");
  if (!params || extra)
    return violation(std::string(what) + ": kernelParams must be given, extra not");
  return hipSuccess;
}
hipError_t fModuleLaunchKernel(hipFunction_t f, unsigned int gx, unsigned int gy, unsigned int gz,
                               unsigned int bx, unsigned int by, unsigned int bz, unsigned int smem,
                               hipStream_t, void **params, void **extra) {
  call("hipModuleLaunchKernel");
  if (hipError_t rc = checkLaunch("hipModuleLaunchKernel", f, dim3(gx, gy, gz), dim3(bx, by, bz),
                                  params, extra))
    return rc;
  hipKernelNodeParams kp{};
  kp.func = f;
  kp.gridDim = dim3(gx, gy, gz);
  kp.blockDim = dim3(bx, by, bz);
  kp.sharedMemBytes = smem;
  kp.kernelParams = params;
  state().rec.eagerLaunches.push_back({state().rec.functions[reinterpret_cast<uintptr_t>(f)], kp});
  return hipSuccess;
}
hipError_t fGraphCreate(hipGraph_t *g, unsigned int flags) {
  call("hipGraphCreate");
  if (flags != 0) return violation("hipGraphCreate: flags must be 0");
  const uintptr_t h = handle();
  state().rec.graphNodes[h] = {};
  *g = reinterpret_cast<hipGraph_t>(h);
  return hipSuccess;
}
hipError_t fGraphDestroy(hipGraph_t g) {
  call("hipGraphDestroy");
  return state().rec.graphNodes.count(reinterpret_cast<uintptr_t>(g))
             ? hipSuccess
             : violation("hipGraphDestroy: unknown");
}
hipError_t addNode(const char *what, hipGraphNode_t *out, hipGraph_t g, const hipGraphNode_t *deps,
                   size_t n, GraphNodeRec rec) {
  const uintptr_t gh = reinterpret_cast<uintptr_t>(g);
  auto git = state().rec.graphNodes.find(gh);
  if (git == state().rec.graphNodes.end()) return violation(std::string(what) + ": unknown graph");
  if (n > 0 && !deps)
    return violation(std::string(what) + ": numDependencies without pDependencies");
  rec.graph = gh;
  for (size_t i = 0; i < n; ++i) {
    const uintptr_t d = reinterpret_cast<uintptr_t>(deps[i]);
    auto it = state().rec.nodes.find(d);
    if (it == state().rec.nodes.end() || it->second.graph != gh)
      return violation(std::string(what) + ": a dependency that is not a node of this graph");
    rec.deps.push_back(d);
  }
  const uintptr_t h = handle();
  state().rec.nodes[h] = rec;
  git->second.push_back(h);
  *out = reinterpret_cast<hipGraphNode_t>(h);
  return hipSuccess;
}
hipError_t fGraphAddKernelNode(hipGraphNode_t *out, hipGraph_t g, const hipGraphNode_t *deps,
                               size_t n, const hipKernelNodeParams *p) {
  call("hipGraphAddKernelNode");
  if (!p) return violation("hipGraphAddKernelNode: no parameters");
  if (hipError_t rc = checkLaunch("hipGraphAddKernelNode", p->func, p->gridDim, p->blockDim,
                                  p->kernelParams, p->extra))
    return rc;
  GraphNodeRec r;
  r.kind = GraphNodeRec::Kernel;
  r.kernel = *p;
  r.function = state().rec.functions[reinterpret_cast<uintptr_t>(p->func)];
  return addNode("hipGraphAddKernelNode", out, g, deps, n, r);
}
hipError_t fGraphAddMemcpyNode(hipGraphNode_t *out, hipGraph_t g, const hipGraphNode_t *deps,
                               size_t n, const hipMemcpy3DParms *p) {
  call("hipGraphAddMemcpyNode");
  if (!p || p->kind != hipMemcpyDeviceToDevice || p->srcArray || p->dstArray)
    return violation("hipGraphAddMemcpyNode: expected a device-to-device pitched copy");
  const uint64_t span =
      p->extent.width + uint64_t(p->srcPtr.pitch) *
                            (p->srcPtr.ysize * (p->extent.depth - 1) + (p->extent.height - 1));
  if (!deviceRange(p->srcPtr.ptr, span) || !deviceRange(p->dstPtr.ptr, p->extent.width))
    return violation("hipGraphAddMemcpyNode: addresses outside every allocation");
  GraphNodeRec r;
  r.kind = GraphNodeRec::Memcpy;
  r.memcpy = *p;
  return addNode("hipGraphAddMemcpyNode", out, g, deps, n, r);
}
hipError_t fGraphAddMemsetNode(hipGraphNode_t *out, hipGraph_t g, const hipGraphNode_t *deps,
                               size_t n, const hipMemsetParams *p) {
  call("hipGraphAddMemsetNode");
  if (!p || (p->elementSize != 1 && p->elementSize != 2 && p->elementSize != 4) || p->height != 1)
    return violation("hipGraphAddMemsetNode: element size 1, 2 or 4 and one row expected");
  if (!deviceRange(p->dst, p->width * p->elementSize))
    return violation("hipGraphAddMemsetNode: destination outside every allocation");
  GraphNodeRec r;
  r.kind = GraphNodeRec::Memset;
  r.memset = *p;
  return addNode("hipGraphAddMemsetNode", out, g, deps, n, r);
}
hipError_t fGraphAddEmptyNode(hipGraphNode_t *out, hipGraph_t g, const hipGraphNode_t *deps,
                              size_t n) {
  call("hipGraphAddEmptyNode");
  return addNode("hipGraphAddEmptyNode", out, g, deps, n, GraphNodeRec{});
}
hipError_t fGraphAddChildGraphNode(hipGraphNode_t *out, hipGraph_t g, const hipGraphNode_t *deps,
                                   size_t n, hipGraph_t child) {
  call("hipGraphAddChildGraphNode");
  const uintptr_t ch = reinterpret_cast<uintptr_t>(child);
  if (!state().rec.graphNodes.count(ch) || child == g)
    return violation("hipGraphAddChildGraphNode: unknown child graph");
  GraphNodeRec r;
  r.kind = GraphNodeRec::Child;
  r.child = ch;
  return addNode("hipGraphAddChildGraphNode", out, g, deps, n, r);
}
hipError_t fGraphInstantiate(hipGraphExec_t *e, hipGraph_t g, hipGraphNode_t *, char *, size_t) {
  call("hipGraphInstantiate");
  if (!state().rec.graphNodes.count(reinterpret_cast<uintptr_t>(g)))
    return violation("hipGraphInstantiate: unknown graph");
  const uintptr_t h = handle();
  state().rec.execs[h] = reinterpret_cast<uintptr_t>(g);
  *e = reinterpret_cast<hipGraphExec_t>(h);
  return hipSuccess;
}
hipError_t fGraphLaunch(hipGraphExec_t e, hipStream_t) {
  call("hipGraphLaunch");
  if (!state().rec.execs.count(reinterpret_cast<uintptr_t>(e)))
    return violation("hipGraphLaunch: unknown exec");
  state().rec.graphLaunches.push_back(reinterpret_cast<uintptr_t>(e));
  return hipSuccess;
}
hipError_t fGraphExecDestroy(hipGraphExec_t e) {
  call("hipGraphExecDestroy");
  return state().rec.execs.erase(reinterpret_cast<uintptr_t>(e))
             ? hipSuccess
             : violation("hipGraphExecDestroy: unknown");
}
hipError_t fGraphExecKernelNodeSetParams(hipGraphExec_t e, hipGraphNode_t node,
                                         const hipKernelNodeParams *p) {
  call("hipGraphExecKernelNodeSetParams");
  auto ex = state().rec.execs.find(reinterpret_cast<uintptr_t>(e));
  if (ex == state().rec.execs.end())
    return violation("hipGraphExecKernelNodeSetParams: unknown exec");
  auto it = state().rec.nodes.find(reinterpret_cast<uintptr_t>(node));
  if (it == state().rec.nodes.end() || it->second.graph != ex->second ||
      it->second.kind != GraphNodeRec::Kernel)
    return violation("hipGraphExecKernelNodeSetParams: not a kernel node of the exec's graph");
  if (hipError_t rc = checkLaunch("hipGraphExecKernelNodeSetParams", p->func, p->gridDim,
                                  p->blockDim, p->kernelParams, p->extra))
    return rc;
  state().rec.execUpdates.push_back({reinterpret_cast<uintptr_t>(node), *p});
  return hipSuccess;
}
hipError_t fEventCreateWithFlags(hipEvent_t *e, unsigned) {
  call("hipEventCreateWithFlags");
  const uintptr_t h = handle();
  state().events[h] = 0;
  *e = reinterpret_cast<hipEvent_t>(h);
  return hipSuccess;
}
hipError_t fEventDestroy(hipEvent_t e) {
  call("hipEventDestroy");
  return state().events.erase(reinterpret_cast<uintptr_t>(e))
             ? hipSuccess
             : violation("hipEventDestroy: unknown");
}
hipError_t fEventRecord(hipEvent_t e, hipStream_t) {
  call("hipEventRecord");
  auto it = state().events.find(reinterpret_cast<uintptr_t>(e));
  if (it == state().events.end()) return violation("hipEventRecord: unknown event");
  ++it->second;
  return hipSuccess;
}
hipError_t fEventSynchronize(hipEvent_t e) {
  call("hipEventSynchronize");
  auto it = state().events.find(reinterpret_cast<uintptr_t>(e));
  if (it == state().events.end() || it->second == 0)
    return violation("hipEventSynchronize: event never recorded");
  return hipSuccess;
}
hipError_t fEventQuery(hipEvent_t) {
  call("hipEventQuery");
  return hipSuccess;
}
hipError_t fEventElapsedTime(float *ms, hipEvent_t, hipEvent_t) {
  call("hipEventElapsedTime");
  *ms = 0;
  return hipSuccess;
}
const char *fGetErrorName(hipError_t rc) {
  return rc == hipErrorInvalidValue ? "hipErrorInvalidValue" : "hipError";
}
const char *fGetErrorString(hipError_t) {
  return "fake";
}

HipApi makeApi() {
  HipApi a;
  a.hipInit = fInit;
  a.hipDriverGetVersion = fDriverGetVersion;
  a.hipRuntimeGetVersion = fRuntimeGetVersion;
  a.hipGetDeviceCount = fGetDeviceCount;
  a.hipGetDeviceProperties = fGetDeviceProperties;
  a.hipDeviceGetAttribute = fDeviceGetAttribute;
  a.hipSetDevice = fSetDevice;
  a.hipStreamCreateWithFlags = fStreamCreateWithFlags;
  a.hipStreamDestroy = fStreamDestroy;
  a.hipStreamSynchronize = fStreamSynchronize;
  a.hipFree = fFree;
  a.hipHostFree = fHostFree;
  a.hipMemcpyHtoDAsync = fMemcpyHtoDAsync;
  a.hipMemcpyDtoHAsync = fMemcpyDtoHAsync;
  a.hipMemcpy3DAsync = fMemcpy3DAsync;
  a.hipMemsetD8Async = fMemsetD8Async;
  a.hipMemsetD16Async = fMemsetD16Async;
  a.hipMemsetD32Async = fMemsetD32Async;
  a.hipModuleLoadData = fModuleLoadData;
  a.hipModuleUnload = fModuleUnload;
  a.hipModuleGetFunction = fModuleGetFunction;
  a.hipModuleLaunchKernel = fModuleLaunchKernel;
  a.hipGraphCreate = fGraphCreate;
  a.hipGraphDestroy = fGraphDestroy;
  a.hipGraphAddKernelNode = fGraphAddKernelNode;
  a.hipGraphAddMemcpyNode = fGraphAddMemcpyNode;
  a.hipGraphAddMemsetNode = fGraphAddMemsetNode;
  a.hipGraphAddEmptyNode = fGraphAddEmptyNode;
  a.hipGraphAddChildGraphNode = fGraphAddChildGraphNode;
  a.hipGraphInstantiate = fGraphInstantiate;
  a.hipGraphLaunch = fGraphLaunch;
  a.hipGraphExecDestroy = fGraphExecDestroy;
  a.hipGraphExecKernelNodeSetParams = fGraphExecKernelNodeSetParams;
  a.hipEventCreateWithFlags = fEventCreateWithFlags;
  a.hipEventDestroy = fEventDestroy;
  a.hipEventSynchronize = fEventSynchronize;
  a.hipEventQuery = fEventQuery;
  a.hipEventElapsedTime = fEventElapsedTime;
  a.hipGetErrorName = fGetErrorName;
  a.hipGetErrorString = fGetErrorString;
  a.hipMalloc = fMalloc;
  a.hipHostMalloc = fHostMalloc;
  a.hipEventRecord = fEventRecord;
  a.runtimeVersion = 50221921;
  return a;
}

} // namespace

size_t Recorder::count(const std::string &c) const {
  return size_t(std::count(calls.begin(), calls.end(), c));
}

Recorder &recorder() {
  return state().rec;
}

void reset() {
  // The call log only: handles (memory, modules, graphs) of live objects stay valid.
  Recorder &r = state().rec;
  r.calls.clear();
  r.violations.clear();
  r.execUpdates.clear();
  r.graphLaunches.clear();
  r.eagerLaunches.clear();
  r.uploads.clear();
}

const HipApi &api() {
  static const HipApi a = makeApi();
  return a;
}

const uint8_t *deviceBytes(uint64_t address) {
  return deviceRange(reinterpret_cast<void *>(uintptr_t(address)), 1);
}

} // namespace cgraph::hip::fake
