// The CUDA executable: gpu_common's GraphExecutable (plans, the table, one CUDA graph
// per device partition, the upload, submission; graph_executable.h) over this
// backend's driver (driver.cpp), plus what is CUDA's own: native conditional nodes
// (command_buffer.cpp), executable updates with cuGraphNodeSetEnabled, per-node
// timestamps in eager mode and pooled completion events (submit.cpp). Not installed.
//
// The slot/param table (device memory, u64 entries):
//   [0, slots)                 base address of each slot of graph() for this submission
//   [slots, slots + params)    parameter value bits, then one int64 per stored
//                              expression (Graph::exprs; "params" counts both)
//   [slots + params, ...)      executable-owned buffers (fill patterns)
// Kernel launches never change after instantiation: they carry the table's address and
// slot/param indices only. What does change per submission: the table (one upload when
// it differs from the last), and nd-ranges that depend on parameters or expressions
// (node update of just those nodes, so new shapes cost O(changed nodes)). Executable
// updates (rt::NodeUpdate) re-plan the node and set it with
// cuGraphExecKernelNodeSetParams / cuGraphNodeSetEnabled.
//
// Conditional nodes (replay; nativeConditionals() says when): CUDA conditional nodes,
// so a whole `while` loop runs on the GPU with no host round trip. Each body is lifted
// into the executable (its nodes get plan indices after graph()'s, their slots and
// parameters renumbered to graph()'s table entries) and built into the body graph the
// conditional node owns. A one-thread set-condition kernel (device/set_condition.cu)
// before the node reads the u32 condition from the table's slot and sets the handle;
// for `while` another one ends each trip, counts trips and, when the maximum is
// reached with the condition still nonzero, stops the loop and raises a flag that the
// submission's event turns into its error. Eager mode runs conditionals runtime-driven
// (rt::finalizeStaged), as do graphs whose bodies hold host tasks, stored expressions
// or nd-ranges that read parameters.
#pragma once

#include "internal.h"

#include "cgraph/backends/gpu_common/graph_executable.h"
#include "cgraph/runtime/communicator.h"

namespace cgraph::cuda {

using gpu::Launch;

// Whether `flattened` (with Conditional nodes) can run its conditionals as CUDA
// conditional nodes on `device` in `mode`: success, or ErrorCode::Unsupported saying why
// not (the caller then runs them as runtime-driven stages); any other code is an error
// of the graph itself.
Error nativeConditionals(CudaDevice &device, const Graph &flattened, rt::ExecMode mode);

// The kernel nodes of a graph being built: an open-addressing set of handles, one
// allocation per partition instead of one per node.
class KernelHandleSet {
public:
  void reset(size_t expected);
  void insert(gpu::GraphNodeHandle h);
  bool contains(gpu::GraphNodeHandle h) const;

private:
  size_t at(gpu::GraphNodeHandle h) const;
  void grow();
  std::vector<gpu::GraphNodeHandle> slots_;
  size_t count_ = 0;
};

struct CondPlan {
  uint32_t node = kNone;      // plan index of the conditional node
  CondOp op;                  // slot in graph()'s numbering
  std::vector<uint32_t> body; // plan indices of the body's nodes, in execution order
  Launch pre, post;           // the set-condition launches (post: while only)
  CUgraphConditionalHandle handle = 0;
};

// A collective node (collective.cpp): in replay the communicator's call (NCCL) is
// captured into the partition's CUDA graph with the addresses and counts of the
// submission that built it; a submission whose call differs (other buffers bound,
// other parameter values) rebuilds that partition first. In eager mode the call is
// enqueued on the device's stream.
struct CollPlan {
  uint32_t node = kNone;
  uint32_t part = kNone;     // its partition (replay)
  rt::CollectiveCall built;  // the call its graph holds
  bool haveBuilt = false;
};

class CudaExecutable final : public gpu::GraphExecutable {
public:
  CudaExecutable(CudaDevice &device, Graph flattened, const rt::FinalizeOptions &opts)
      : gpu::GraphExecutable(device, device.driver(), std::move(flattened), opts), dev_(&device),
        api_(&device.api()), comm_(opts.communicator), collectiveTimeout_(opts.collectiveTimeout) {}
  ~CudaExecutable() override;
  Error updateEveryKernelNode();
  Error launchGraphsOnly();

protected:
  // Node updates: the node's launch re-planned, then cuGraphExecKernelNodeSetParams /
  // cuGraphNodeSetEnabled on the instantiated graph (replay); eager reads the plans.
  Error applyUpdate(const std::vector<uint32_t> &nodes) override;
  // Conditional nodes: bodies lifted, set-condition launches planned.
  Error prepareExtensions() override;
  // A conditional plan: its set-condition kernel, the node and its body graph.
  Expected<gpu::GraphNodeHandle> addExtensionNode(gpu::GraphHandle g, uint32_t p,
                                                  const std::vector<gpu::GraphNodeHandle> &deps,
                                                  uint32_t part) override;
  Error checkSubmit(const rt::SubmitOptions &opts) override;
  bool ownEvent(const rt::Event &e) const override {
    const rt::Event &inner = rt::unwrapWatched(e);
    return dynamic_cast<const CudaEvent *>(&inner) != nullptr || dynamic_cast<const WordEvent *>(&inner) != nullptr;
  }
  Error submissionStarted(const rt::SubmitOptions &opts) override;
  Error eagerNodeStarting(uint32_t n, const rt::SubmitOptions &opts) override;
  Error eagerNodeDone(uint32_t n, const rt::SubmitOptions &opts) override;
  Expected<rt::EventPtr> finishSubmission(const rt::SubmitOptions &opts) override;
  Error partitionRebuilt(uint32_t pi) override;
  Error runExtensionEager(uint32_t p, const std::vector<uint64_t> &params) override;
  Error bindingsChanged(const std::vector<uint64_t> &params) override;
  // The table's way to the device (table_loader.cpp).
  Expected<gpu::GraphNodeHandle> addTableLoaderNode(gpu::GraphHandle g) override;
  Expected<bool> loadTable() override;
  void partitionLaunched(uint32_t pi) override;
  bool hasCompletionNode() const override { return ringMode_; }
  Error addCompletionNode(gpu::GraphHandle g, const std::vector<gpu::GraphNodeHandle> &sinks) override;
  Error capturedTableLoad(Launch &l, std::vector<uint64_t> &values) override;
  Error addKernelGraphNode(gpu::GraphNodeHandle *n, gpu::GraphHandle g, uint32_t p,
                           const std::vector<gpu::GraphNodeHandle> &deps, Launch &l) override;
  void partitionBuildStarting(uint32_t pi) override;
  Error launchEager(uint32_t p, Launch &l) override;

private:
  // ---- table_loader.cpp: the table loader node at the root of partition 0's graph.
  // Ring mode (CudaDevice::ringLoader; the default): the loader reads entry c % depth of
  // a ring of pinned host memory, c its launch count, so a submission's table costs the
  // host one memcpy into the next entry and no driver call; the last graph ends with the
  // done marker (CudaDevice::doneMarker), which copies the count into the done word, so
  // a submission is complete once the word reaches its count (WordEvent), without an
  // event per submission. Else the parameter loader (CudaDevice::tableLoader): the table
  // by value in the node's parameters, set when it changed. Else (no loader, or the
  // table too large for it) gpu_common's copy.
  Error prepareRing();
  Error allocateRing(size_t depth);
  bool ringEntryFree();
  Error writeRing();
  Expected<uint64_t> hostDeviceAddress(void *p);
  // Frees the rings (after releaseDriverObjects: the stream drained, the graphs gone).
  void releaseRing();
  // Whether this submission's work ends with the done marker: a replay whose last
  // partition with nodes is a graph, in ring mode. It is then complete once doneWord()
  // (a u32 in pinned host memory; shared, so events keep it past the executable)
  // reaches doneTarget(), compared modulo 2^32.
  bool doneCovers() const { return doneNode_ != nullptr && mode_ == rt::ExecMode::Replay; }
  uint32_t doneTarget() const { return uint32_t(ringSeq_); }
  const std::shared_ptr<void> &doneWord() const { return doneWord_; }

  gpu::GraphNodeHandle loaderNode_ = nullptr;
  Launch loader_;
  std::vector<uint64_t> loaderValues_; // the parameter loader's by-value table (capacity entries)
  // Ring mode: entry i of the ring is ring_[i] (host pointers into one pinned
  // allocation, ringHost_, that the device reads at ringDevice_; a power of two
  // entries, so the u32 counter wraps cleanly); ringSeq_ counts partition 0's launches,
  // as the loader's device counter does (ringCounter_, zero at the start).
  bool ringMode_ = false;
  std::vector<Staging> ring_;
  void *ringHost_ = nullptr;
  uint64_t ringDevice_ = 0;
  uint64_t ringSeq_ = 0;
  size_t ringEntries_ = 0;           // values per entry: table_.size() when the ring was made
  std::vector<void *> retiredRings_; // outgrown rings, freed with the executable
  // Pinned host memory the loader writes its count to after each load (u32): how far
  // the device has read the ring, without a driver call.
  void *ringLoaded_ = nullptr;
  uint64_t ringLoadedDevice_ = 0;
  uint32_t ringLoadedSeen_ = 0; // the count as last read
  std::unique_ptr<rt::Buffer> ringCounter_;
  static constexpr size_t kRingStartDepth = 16;
  static constexpr size_t kRingMaxBytes = size_t(4) << 20;
  // The done marker node of the last graph, after its sinks.
  gpu::GraphNodeHandle doneNode_ = nullptr;
  Launch doneLaunch_;
  std::shared_ptr<void> doneWord_;

  // ---- programmatic.cpp: programmatic edges (sm_90 and newer; CudaDevice::
  // programmaticEdges). A kernel whose module waits for its grid dependencies
  // (LoadedModule::gridWait) may start before the kernel nodes it depends on complete:
  // edges into it from kernel nodes of the same graph are programmatic, and during a
  // capture (capturing_) its stream launch allows programmatic serialization, so the
  // caller's graph gets the same edges.
  void prepareProgrammatic();
  // Whether plan `p`'s kernel node, and every kernel an update may switch it to, waits.
  bool programmaticInto(uint32_t p) const;
  // A kernel node after `ordinary` and `programmatic` dependencies.
  Error addKernelNodeWithEdges(gpu::GraphNodeHandle *n, gpu::GraphHandle g,
                               const std::vector<gpu::GraphNodeHandle> &ordinary,
                               const std::vector<gpu::GraphNodeHandle> &programmatic, Launch &l);
  Error addProgrammaticEdge(gpu::GraphHandle g, gpu::GraphNodeHandle from, gpu::GraphNodeHandle to);
  Error launchProgrammatic(Launch &l);
  std::vector<char> fnWaits_; // per kernel of graph(): its module waits for grid dependencies
  bool builtinsWait_ = false; // the same for the builtin copy/fill kernels
  // The kernel nodes of the graph being built, and addKernelGraphNode's dependencies
  // split into ordinary and programmatic ones (reused: no allocation per node).
  KernelHandleSet kernelHandles_;
  std::vector<gpu::GraphNodeHandle> ordinaryDeps_, programmaticDeps_;
  std::vector<CUgraphNode> edgeFrom_; // addKernelNodeWithEdges' cuGraphAddNode arguments
  std::vector<CUgraphEdgeData> edgeData_;

  // Lifts the body of conditional plan `p` (a node of `owner`, whose parameters map to
  // graph()'s through paramMap; its subgraphSlots are graph()'s slots already),
  // recursively for nested conditionals.
  Error liftConditional(uint32_t p, const Graph &owner, const std::vector<uint32_t> &paramMap);
  Error planSetCondition(CondPlan &c, uint32_t mode, Launch &l);
  void dropSubmissionEvents();
  // collective.cpp
  Error prepareCollectives();
  Expected<rt::CollectiveCall> collectiveCall(uint32_t n, const std::vector<uint64_t> &params) const;
  Expected<gpu::GraphNodeHandle> addCollectiveNode(CUgraph g, uint32_t p, const std::vector<gpu::GraphNodeHandle> &deps,
                                                   uint32_t part);
  // The completion event watched for the communicator's timeout and asynchronous errors
  // (rt::watchCollectives) when the executable has collectives.
  rt::EventPtr watched(rt::EventPtr e) const;

  CudaDevice *dev_;
  const CuApi *api_;
  std::vector<CondPlan> conds_;
  std::vector<CollPlan> colls_;
  rt::Communicator *comm_ = nullptr;  // FinalizeOptions::communicator, not owned
  std::chrono::milliseconds collectiveTimeout_{60000};
  std::string collNames_;             // "node 'a', node 'b'" for the watch's messages
  CUstream captureStream_ = nullptr;  // collective captures (replay)
  std::unique_ptr<rt::Buffer> condState_;     // {trips, exceeded} u32 pair per conditional
  // The submission being enqueued: profiling events (destroyed unless handed to its
  // CudaEvent).
  std::vector<CUevent> events_;
  CUevent start_ = nullptr, nodeStart_ = nullptr;
  std::vector<std::pair<uint32_t, std::pair<CUevent, CUevent>>> timed_;
};

} // namespace cgraph::cuda
