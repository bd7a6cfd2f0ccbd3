// The driver interface the shared GPU executable (graph_executable.h) runs on: the
// operations CUDA and HIP graphs have in common, in one shape. Each backend implements
// it once over its typed, dlopen'ed table (cuda: cu_api.h's CuApi, hip: hip_api.h's
// HipApi), one call of the vendor API per method, so the executable, graph building,
// launch planning, the table upload and the submission loop are one implementation.
//
// Handles are the vendor's opaque pointer types passed as void * (CUgraph / hipGraph_t,
// CUgraphNode / hipGraphNode_t, CUgraphExec / hipGraphExec_t, CUfunction /
// hipFunction_t, CUevent / hipEvent_t); device addresses are uint64_t. Stream work goes
// to the device's one stream.
//
// Ownership: a Driver belongs to its device and lives as long as it; the executable
// holds a plain pointer. Objects a method creates (graphs, executable graphs, events,
// pinned host memory) belong to the caller, which destroys them with the matching
// method. Modules are shared (ModuleRef keeps one loaded).
// Thread-safety: as the vendor API with the device's context current on the calling
// thread (makeCurrent); an executable calls its driver from one thread at a time.
// Failure modes: every fallible method returns an Error naming the vendor call and its
// result ("cuGraphAddKernelNode: CUDA_ERROR_INVALID_VALUE (invalid argument)",
// "hipGraphInstantiate: hipErrorInvalidValue (...)"); destroy/free methods ignore errors.
#pragma once

#include "cgraph/backends/gpu_common/launch_plan.h"
#include "cgraph/error.h"
#include "cgraph/model.h"
#include "cgraph/runtime/runtime.h"

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace cgraph::gpu {

using GraphHandle = void *;
using GraphNodeHandle = void *;
using GraphExecHandle = void *;
using FunctionHandle = void *;
using EventHandle = void *;
// A loaded module (the backend's own record, type-erased); keeps it loaded.
using ModuleRef = std::shared_ptr<const void>;

// One table-ABI kernel launch: launch_plan.h fills vals, grid, block and smem; bind()
// points ptrs (the kernelParams array) at vals. Copyable; bind() again after a copy.
struct Launch {
  FunctionHandle fn = nullptr;
  std::vector<uint64_t> vals; // one 8-byte cell per wrapper argument
  std::vector<void *> ptrs;   // kernelParams: pointers into vals
  unsigned grid[3] = {1, 1, 1}, block[3] = {1, 1, 1};
  unsigned smem = 0;
  void bind() {
    ptrs.resize(vals.size());
    for (size_t i = 0; i < vals.size(); ++i)
      ptrs[i] = &vals[i];
  }
};

// The counters both backends report (cuda_backend.h / hip_backend.h counters()).
struct ReplayCounters {
  std::atomic<uint64_t> graphsInstantiated{0}, tableUploads{0}, nodeUpdates{0};
  std::atomic<uint64_t> coarsePlans{0};       // kernel launches planned on a coarse entry
  std::atomic<uint64_t> tableCopies{0};       // table uploads copied from pinned staging (no loader)
  std::atomic<uint64_t> ringLaunches{0};      // replay launches whose table came through the ring
  std::atomic<uint64_t> ringGrowths{0};       // rings doubled (every entry was in flight)
  std::atomic<uint64_t> wordCompletions{0};   // submissions completed through the done word
  std::atomic<uint64_t> pinnedAllocations{0}; // vendor pinned host allocations (pool chunks included)
};

class Driver {
public:
  virtual ~Driver() = default;

  // "CUDA" / "HIP": names the grid limit in launch errors.
  virtual const char *apiName() const = 0;
  // Dynamic shared memory a launch may use (CUDA 48 KiB without opt-in, HIP 64 KiB).
  virtual uint64_t maxSharedMemory() const = 0;
  // Pinned staging buffers of the table upload, used round robin (each reused only after
  // the submission that read it completed).
  virtual size_t stagingSlots() const = 0;
  virtual ReplayCounters &counters() = 0;
  // The device address of a buffer of this driver's device.
  virtual uint64_t address(const rt::Buffer &buffer) const = 0;
  // Makes the device current on the calling thread.
  virtual Error makeCurrent() = 0;

  // Modules: a graph's kernel module (lowered/cached by the backend) and the builtin
  // fill/copy kernels (launch_plan.h builtinKernelSource), and a kernel of one.
  virtual Expected<ModuleRef> loadModule(const KernelModule &m, bool useCache) = 0;
  virtual Expected<ModuleRef> builtinModule() = 0;
  virtual Expected<FunctionHandle> function(const ModuleRef &module, const std::string &name) = 0;

  // Graphs. `deps` are nodes of `g`. A child graph is copied into the node (the caller
  // still owns and destroys `child`).
  virtual Error graphCreate(GraphHandle *g) = 0;
  virtual void graphDestroy(GraphHandle g) = 0;
  virtual Error addKernelNode(GraphNodeHandle *n, GraphHandle g, const std::vector<GraphNodeHandle> &deps,
                              Launch &l) = 0;
  virtual Error addMemcpyNode(GraphNodeHandle *n, GraphHandle g, const std::vector<GraphNodeHandle> &deps,
                              const Copy3D &c) = 0;
  // `pitch`: the memset's row pitch (one row: the fill's bytes).
  virtual Error addMemsetNode(GraphNodeHandle *n, GraphHandle g, const std::vector<GraphNodeHandle> &deps,
                              const Memset &m, uint64_t pitch) = 0;
  virtual Error addEmptyNode(GraphNodeHandle *n, GraphHandle g, const std::vector<GraphNodeHandle> &deps) = 0;
  virtual Error addChildGraphNode(GraphNodeHandle *n, GraphHandle g, const std::vector<GraphNodeHandle> &deps,
                                  GraphHandle child) = 0;
  // Kernel nodes with a fixed 1-D range of at least this many work-items run their
  // kernel's coarse entry where it has one (codegen/table_abi.h `coarsen`); 0: never.
  virtual uint64_t coarsenMinItems() const { return 0; }
  // Instantiates `g` (cuda also uploads it to the device).
  virtual Error instantiate(GraphExecHandle *e, GraphHandle g) = 0;
  virtual void execDestroy(GraphExecHandle e) = 0;
  virtual Error graphLaunch(GraphExecHandle e) = 0;
  virtual Error execKernelNodeSetParams(GraphExecHandle e, GraphNodeHandle n, Launch &l) = 0;

  // Work on the device's stream.
  virtual Error launchKernel(Launch &l) = 0;
  virtual Error memcpy3D(const Copy3D &c) = 0;
  virtual Error memset(const Memset &m) = 0;
  virtual Error copyToDevice(uint64_t dst, const void *src, size_t bytes) = 0;
  virtual Error copyToHost(void *dst, uint64_t src, size_t bytes) = 0;
  virtual Error streamSynchronize() = 0;
  // A caller's stream (rt::SubmitOptions::stream) and the device's stream, ordered
  // without the host waiting: streamJoin makes the device's stream wait for the work
  // queued on `stream` so far, streamSignal makes `stream` wait for the work queued on
  // the device's stream so far. Default: Unsupported (the device does not set
  // Capabilities::callerStreams).
  virtual Error streamJoin(void *stream) {
    (void)stream;
    return makeError(ErrorCode::Unsupported, "caller streams are not supported on this device");
  }
  virtual Error streamSignal(void *stream) {
    (void)stream;
    return makeError(ErrorCode::Unsupported, "caller streams are not supported on this device");
  }
  // Whether the caller's `stream` is being captured into a graph (cuStreamIsCapturing):
  // a submission on it is then recorded into the caller's graph (GraphExecutable's
  // captureInto) instead of launched. Default: never.
  virtual Expected<bool> streamCapturing(void *stream) {
    (void)stream;
    return false;
  }

  // Pinned host memory and events (no timing).
  virtual Error hostAlloc(void **p, size_t bytes) = 0;
  virtual void hostFree(void *p) = 0;
  virtual Error eventCreate(EventHandle *e) = 0;
  virtual Error eventRecord(EventHandle e) = 0;
  virtual Error eventSynchronize(EventHandle e) = 0;
  virtual void eventDestroy(EventHandle e) = 0;
};

// The part of a Driver that only forwards to its device: `Dev` has makeCurrent(),
// counters() (a ReplayCounters), loadModule(m, useCache) and builtinModule() returning
// Expected<std::shared_ptr<const Mod>>, and Mod::function(name) returns
// Expected<handle> (cuda: CudaDevice / LoadedModule; hip: HipDevice / LoadedModule).
// `device` must outlive the driver.
template <class Dev, class Mod> class DeviceDriver : public Driver {
public:
  explicit DeviceDriver(Dev &device) : device_(&device) {}
  ReplayCounters &counters() override { return device_->counters(); }
  Error makeCurrent() override { return device_->makeCurrent(); }
  Expected<ModuleRef> loadModule(const KernelModule &m, bool useCache) override {
    return erase(device_->loadModule(m, useCache));
  }
  Expected<ModuleRef> builtinModule() override { return erase(device_->builtinModule()); }
  Expected<FunctionHandle> function(const ModuleRef &m, const std::string &name) override {
    auto f = static_cast<const Mod *>(m.get())->function(name);
    if (!f) return f.error();
    return static_cast<FunctionHandle>(*f);
  }

protected:
  // The vendor's node handle type H (a pointer type) over the type-erased ones.
  template <class H> static H *out(GraphNodeHandle *n) { return reinterpret_cast<H *>(n); }
  template <class H> static const H *list(const std::vector<GraphNodeHandle> &deps) {
    static_assert(sizeof(H) == sizeof(GraphNodeHandle), "node handles are pointers");
    return reinterpret_cast<const H *>(deps.data());
  }
  static Expected<ModuleRef> erase(Expected<std::shared_ptr<const Mod>> m) {
    if (!m) return m.error();
    return ModuleRef(std::move(*m));
  }
  Dev *device_;
};

} // namespace cgraph::gpu
