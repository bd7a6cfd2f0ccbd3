// The executable both GPU backends run (cuda and hip derive from it): node plans
// (table-ABI launches from launch_plan.h), the slot/param table, one driver graph per
// device partition (replay_steps.h), the table upload, parameter-range node updates,
// host tasks between graphs, and eager mode (the same launches one by one), all over
// the Driver interface (driver.h).
//
// The table (device memory, u64 entries):
//   [0, slots)                 base address of each slot of graph() for this submission
//   [slots, slots + params)    parameter bits, then one int64 per stored expression
//   [slots + params, ...)      executable-owned fill patterns
// Launches never change after instantiation: they carry the table's address and
// slot/param indices only. Per submission: the table goes up once when it differs from
// what the device holds, as a copy from pinned staging, unless the backend loads it
// another way (the table-delivery hooks below: cuda's loader nodes); nd-ranges that
// read parameters are set on just the nodes whose launch changed.
//
// Plan indices: graph()'s nodes first, then nodes a backend lifts into the executable
// (lifted_: cuda's conditional bodies), so plans_/preds_ cover both.
//
// Extension points (virtual, default: none): plans of kind Extension (built by
// addExtensionNode: cuda's conditional nodes), extra preparation after the node plans,
// the submission's checks, per-node hooks in eager mode, the completion event, and the
// table's way to the device (a loader node, a completion node, the captured load).
//
// Ownership: owns its plans, owned slots, table buffers, driver graphs and staging
// memory; the Driver and device must outlive it. Thread-safety: as rt::Executable (one
// enqueue/update at a time). Failure modes: Errors naming the driver call and the node
// (`node 'k': hipGraphAddKernelNode: ...`); prepare() errors leave the object to be
// destroyed.
#pragma once

#include "cgraph/backends/gpu_common/driver.h"
#include "cgraph/runtime/finalize_progress.h"
#include "cgraph/runtime/host_tasks.h"
#include "cgraph/runtime/runtime.h"

#include <deque>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

namespace cgraph::gpu {

// `flattened`: the validated, flat graph rt::Device::finalize hands the backend.
// Stored expressions of every kind are taken: nd-ranges and kernel scalars read the
// table, copy/fill fields are patched per submission (updateTransfers), host task
// scalars are parameters the task reads, expression-sized slots come as bound slots
// (the runtime allocates runtime-owned ones for the largest size seen).
class GraphExecutable : public rt::Executable {
public:
  GraphExecutable(rt::Device &device, Driver &driver, Graph flattened, const rt::FinalizeOptions &opts);
  ~GraphExecutable() override;
  // Call once after construction: plans, owned slots, the table and (replay) the graphs.
  // `original`: the graph before flattenSubgraphs (null: none kept); its top-level
  // Subgraph nodes become child graph nodes where they can (see ChildGroup).
  // `flattenUs` >= 0: flattenForGpu's time, the first of finalizePhases.
  Error prepare(const rt::FinalizeOptions &opts, const Graph *original = nullptr, double flattenUs = -1);

protected:
  struct NodePlan {
    enum Kind { Kernel, Nop, Host, Extension } kind = Nop;
    uint32_t ext = kNone;    // Extension: the backend's index
    Launch launch;           // kernels, and copies/fills as the builtin kernels
    bool paramRange = false; // the nd-range reads a parameter
    // A copy/fill whose offsets or size are stored expressions (.cgf 2.2): always the
    // builtin kernel on a fixed grid, its offset/size cells patched per submission
    // (updateTransfers).
    bool exprTransfer = false;
  };
  struct PartGraph {
    std::vector<uint32_t> nodes;
    bool host = false;
    GraphHandle graph = nullptr;
    GraphExecHandle exec = nullptr;
    std::vector<std::pair<uint32_t, GraphNodeHandle>> kernelNodes; // node -> graph node
  };
  // Where a node of graph() lives in the replay graphs (updates reach it there).
  struct GraphNodeRef {
    uint32_t part = kNone;
    GraphNodeHandle node = nullptr;
    bool kernel = false;     // a kernel node (exec kernel-node set-params)
    bool enableable = false; // kernel, memcpy or memset node
  };
  // A node lifted into the executable with graph()'s slot and parameter numbering.
  struct LiftedNode {
    Node node;
    const Kernel *kernel = nullptr; // Kernel nodes: its kernel in the body's graph
    std::string label;              // "node 'inner' (body of node 'loop')"
  };

  // The nodes of graph() that one top-level Subgraph node of the original graph
  // flattened into, built as one child graph node (cuGraphAddChildGraphNode /
  // hipGraphAddChildGraphNode) with the edges among them inside it. A group stays
  // flattened into its partition's graph (flatten = true) where a child graph cannot be
  // used: a member that is a host task, a conditional or a kernel whose nd-range reads
  // parameters (it needs per-node exec updates, which reach no node inside a child
  // graph), members in different partitions, an external predecessor of a member that
  // comes after the group's first member in the partition's order, eager mode, nesting
  // below the top level (nested subgraphs are flattened inside their top-level child),
  // and after an executable update of one of its nodes (flattenGroupOf).
  struct ChildGroup {
    std::vector<uint32_t> nodes; // graph() node indices, ascending
    uint32_t part = kNone;
    bool flatten = false;
  };

  // ---- extension points ----
  // After the node plans, before the table's first upload and the graphs.
  virtual Error prepareExtensions() { return Error::success(); }
  // Adds plan `p` of kind Extension to `g` after `deps` (`part`: kNone inside bodies).
  virtual Expected<GraphNodeHandle> addExtensionNode(GraphHandle g, uint32_t p,
                                                     const std::vector<GraphNodeHandle> &deps, uint32_t part);
  // Before anything of a submission runs (refuse options the backend lacks).
  virtual Error checkSubmit(const rt::SubmitOptions &opts) = 0;
  // Whether `e` is a submission of this backend (ordered on the device's stream: no
  // host wait needed).
  virtual bool ownEvent(const rt::Event &e) const = 0;
  // After the table upload; around each node in eager mode.
  virtual Error submissionStarted(const rt::SubmitOptions &) { return Error::success(); }
  virtual Error eagerNodeStarting(uint32_t, const rt::SubmitOptions &) { return Error::success(); }
  virtual Error eagerNodeDone(uint32_t, const rt::SubmitOptions &) { return Error::success(); }
  // The submission's completion event, recorded after its last work.
  virtual Expected<rt::EventPtr> finishSubmission(const rt::SubmitOptions &opts) = 0;
  // After partition `pi`'s graph was rebuilt and instantiated again: state set on the
  // old executable graph (disabled nodes) set on the new one.
  virtual Error partitionRebuilt(uint32_t) { return Error::success(); }
  // Eager mode: runs Extension plan `p` on the stream (collective nodes).
  virtual Error runExtensionEager(uint32_t p, const std::vector<uint64_t> &params);
  // Replay: the submission's slots or values differ from the last one's (table_ and
  // slotLength_ hold the new ones); before any graph launches. A backend whose graph
  // nodes bake addresses (captured collectives) rebuilds their partitions here.
  virtual Error bindingsChanged(const std::vector<uint64_t> &) { return Error::success(); }
  // Adds plan `p`'s kernel node (a kernel, or a copy or fill as the builtin kernel) with
  // launch `l` to `g` after `deps`; by default the driver's addKernelNode. A backend with
  // other kinds of edge between kernel nodes (cuda's programmatic edges) adds them here.
  virtual Error addKernelGraphNode(GraphNodeHandle *n, GraphHandle g, uint32_t /*p*/,
                                   const std::vector<GraphNodeHandle> &deps, Launch &l) {
    return driver_->addKernelNode(n, g, deps, l);
  }
  // Partition `pi`'s driver graph is about to be built (again, after a rebuild): node
  // handles of graphs built before may come back from the driver.
  virtual void partitionBuildStarting(uint32_t) {}
  // Eager mode: launches plan `p`'s kernel `l` on the stream; by default the driver's
  // launchKernel. capturing_ says whether the launch records into a caller's capture.
  virtual Error launchEager(uint32_t /*p*/, Launch &l) { return driver_->launchKernel(l); }

  // ---- the table's way to the device (default: a copy from pinned staging when it
  // changed, ordered on the stream before the submission's work) ----
  // Adds the backend's table loader node to `g`, partition 0's graph, as a root ahead
  // of the others (every other root then depends on it); null: none.
  virtual Expected<GraphNodeHandle> addTableLoaderNode(GraphHandle) { return GraphNodeHandle(nullptr); }
  // Replay, partition 0 a graph: sends this submission's table (table_) through the
  // loader; false when the executable has none (the copy is made then). May set
  // uploading_ to a Staging the submission's event then holds.
  virtual Expected<bool> loadTable() { return false; }
  // Partition `pi`'s graph was launched.
  virtual void partitionLaunched(uint32_t) {}
  // Whether the last partition's graph ends with a completion node after all its sinks
  // (addCompletionNode; its sinks include the loader node when nothing depends on it).
  virtual bool hasCompletionNode() const { return false; }
  virtual Error addCompletionNode(GraphHandle, const std::vector<GraphNodeHandle> &) { return Error::success(); }
  // A submission recorded into a caller's stream capture (captureInto) loads its table
  // by value: the loader's launch `l`, whose kernel parameters point into `values`
  // (sized here; the table is copied into its first entries afterwards). Unsupported
  // (with the reason) where the backend has no such loader or the table is too large.
  virtual Error capturedTableLoad(Launch &, std::vector<uint64_t> &) {
    return makeError(ErrorCode::Unsupported, "the device has no table loader to record");
  }

  // ---- shared steps ----
  Expected<rt::EventPtr> submit(const std::vector<ResolvedSlot> &slots, const std::vector<uint64_t> &params,
                                const rt::SubmitOptions &opts) final;
  // How messages name plan p: its node (nodeLabel) or a lifted body node.
  std::string planLabel(uint32_t p) const;
  const Node &nodeAt(uint32_t p) const {
    return p < graph_.nodes.size() ? graph_.nodes[p] : lifted_[p - graph_.nodes.size()].node;
  }
  const Kernel &kernelAt(uint32_t p) const {
    return p < graph_.nodes.size() ? graph_.kernels[graph_.nodes[p].kernel]
                                   : *lifted_[p - graph_.nodes.size()].kernel;
  }
  static bool readsParams(const Node &node);
  Expected<FunctionHandle> kernelFunction(uint32_t k, bool useCache);
  Error rangeOf(uint32_t p, const std::vector<uint64_t> &params, Launch &l) const;
  // `paramRange`: a range that does not resolve with `params` is left for submit.
  Error planKernel(uint32_t p, const std::vector<uint64_t> &params, Launch &l, bool paramRange);
  // Switches the planned launch `l` of kernel node `p` (a fixed 1-D range) to its
  // kernel's coarse entry (codegen/table_abi.h `coarsen`) where the driver coarsens
  // ranges of that many work-items and the module has the entry.
  void coarsen(uint32_t p, Launch &l);
  Error planCopyOrFill(uint32_t p);
  // Plans node `p` by its kind (kernels with function `fn`); conditionals are left to
  // the backend's extension.
  Error planNode(uint32_t p, FunctionHandle fn, bool paramRange);
  Error ensureBuiltins();
  // Adds plan `p` to `g`: memcpy/memset node where every slot is runtime-owned and the
  // driver can express it, kernel node, empty node, or the backend's extension node.
  // Kernel nodes go through addKernelGraphNode.
  Expected<GraphNodeHandle> addGraphNode(GraphHandle g, uint32_t p, const std::vector<GraphNodeHandle> &deps,
                                         uint32_t part);
  Error buildGraphs();
  // Builds partition `pi`'s graph and instantiates it (buildGraphs, per partition).
  Error buildPartition(uint32_t pi);
  // If node `n` is in a child graph group built as one, flattens that group for good
  // and rebuilds its partition's graph (its other nodes' GraphNodeRefs change; state
  // set on the old executable graph, such as disabled nodes, must be set again: the
  // partition's index goes to *rebuilt, else kNone). Used before an executable update.
  Error flattenGroupOf(uint32_t n, uint32_t *rebuilt);
  // Waits for the stream, destroys partition `pi`'s graphs and builds them again
  // (its nodes' GraphNodeRefs change; partitionRebuilt(pi) is the caller's).
  Error rebuildPartition(uint32_t pi);
  // Which partition node `n` is in (kNone in eager mode or for a lifted body node).
  uint32_t partitionOf(uint32_t n) const { return n < graphNodes_.size() ? graphNodes_[n].part : kNone; }
  Error uploadTable();
  // Sets table_ and slotLength_ from a submission's slots and parameters.
  void setTable(const std::vector<ResolvedSlot> &slots, const std::vector<uint64_t> &params);
  // A submission on a caller's stream that is being captured (Driver::streamCapturing):
  // the table loader with this submission's table by value, then every node in the
  // partitions' order, launched on the device's stream joined to the capture, so the
  // caller's graph holds them as its own nodes (ordered on one stream) and replays them
  // with these bindings and values. Refused (Unsupported) for host tasks, the backend's
  // extension nodes (conditionals, collectives), per-node callbacks and tables too large
  // for the loader. The returned event is complete: the work runs when the caller's
  // graph does. Afterwards the device table is shared with the caller's graph, so table
  // copies are never skipped again (tableShared_).
  Expected<rt::EventPtr> captureInto(const std::vector<ResolvedSlot> &slots, const std::vector<uint64_t> &params,
                                     const rt::SubmitOptions &opts);
  Error updateParamRanges(const std::vector<uint64_t> &params);
  // Copies/fills with expression fields: their launch cells for this submission's
  // values (rt::Executable::transfer); in replay, exec kernel-node set-params on just
  // the nodes whose cells changed since the last submission (no driver call else).
  Error updateTransfers(const std::vector<uint64_t> &params);
  // Sets the offset/size cells of copy/fill plan `n` from `t`; true if any changed.
  bool patchTransfer(uint32_t n, const Transfer &t);
  Error runHost(uint32_t n, const std::vector<uint64_t> &params);
  Error runNodeEager(uint32_t n, const std::vector<uint64_t> &params);
  // Waits for the stream and destroys the graphs and staging memory (idempotent;
  // derived destructors call it before their own members go).
  void releaseDriverObjects();
  bool slotOwned(uint32_t s) const { return s < owned_.size() && owned_[s] != nullptr; }
  uint64_t slotBase(uint32_t s) const { return s < table_.size() ? table_[s] : 0; }
  uint64_t ownedBase(uint32_t s) const { return s < ownedAddress_.size() ? ownedAddress_[s] : 0; }
  // Whether a copy or fill of runtime-owned slots becomes a driver memcpy/memset node
  // whose addresses are fixed when the graph is built (directTransfers_, and the
  // slots all owned); records those slots in directSlots_.
  bool directTransfer(std::initializer_list<uint32_t> slots);
  // A submission that binds a runtime-owned slot over its own storage
  // (BindingTable::overrideInternal) would leave the driver memcpy/memset nodes of
  // that slot writing the owned storage while kernels, through the table, use the
  // bound buffer: the first such submission rebuilds the graphs with those copies and
  // fills as table-ABI kernels (directTransfers_ off for good).
  Error checkDirectTransfers();
  uint64_t tableAddress() const { return driver_->address(*tableBuf_); }

  Driver *driver_;
  bool useCache_ = true;
  rt::ModuleProgress progress_; // during prepare only: modules loaded (FinalizeOptions::progress)
  std::vector<std::unique_ptr<rt::Buffer>> owned_;
  std::vector<uint64_t> ownedAddress_; // per slot: the owned storage's address, else 0
  bool directTransfers_ = true;
  std::vector<char> directSlots_; // per slot: a driver memcpy/memset node addresses it
  std::vector<ModuleRef> modules_;  // every module a plan uses
  std::vector<ModuleRef> byModule_; // per module of graph()
  ModuleRef builtins_;
  std::vector<FunctionHandle> fns_; // per kernel of graph(); null until loaded
  std::vector<FunctionHandle> coarseFns_; // per kernel: its coarse entry, null if none
  std::vector<char> coarseLooked_;        // per kernel: coarseFns_ is known
  std::unique_ptr<rt::HostTasks> hostTasks_;
  std::unique_ptr<rt::HostStaging> hostStaging_; // host tasks' copies (pinned), from the first host task
  std::vector<NodePlan> plans_;              // per plan index
  std::vector<uint32_t> exprTransferNodes_; // nodes with exprTransfer, in order (updateTransfers)
  std::vector<std::vector<uint32_t>> preds_; // per plan index
  std::deque<Graph> bodies_;                 // graphs lifted_ points into
  std::vector<LiftedNode> lifted_;
  std::vector<PartGraph> parts_;
  std::vector<GraphNodeRef> graphNodes_; // per node of graph() (replay)
  std::vector<ChildGroup> groups_;       // subgraphs built as child graphs
  std::vector<uint32_t> groupOf_;        // per node of graph(): index into groups_ or kNone
  std::unique_ptr<rt::Buffer> tableBuf_;
  std::vector<std::unique_ptr<rt::Buffer>> patterns_; // fill patterns for the fill kernel
  std::vector<uint64_t> table_;      // host copy: the current submission's table
  std::vector<uint64_t> uploaded_;   // what the device table holds
  bool tableShared_ = false;          // a caller's captured graph writes the table too
  // During captureInto: eager launches record into the caller's stream capture.
  bool capturing_ = false;
  std::vector<uint64_t> slotLength_; // bound length per slot, this submission
  std::vector<uint64_t> rangeParams_; // parameter values the graphs' nd-ranges use
  bool rangesResolved_ = false;
  double buildUs_ = 0, instantiateUs_ = 0; // buildGraphs' finalizePhases
  // Launches partition `pi`'s graph (partitionLaunched after).
  Error launchPartition(uint32_t pi);
  // launchGraphsOnly's body: the replay graphs with the current table. No event: the
  // staging buffer the table went through is reused after a stream synchronize.
  Error launchReplayGraphsOnly();
  uint32_t nSlots_ = 0, nParams_ = 0;
  // `bytes` of pinned host memory (Driver::hostAlloc), freed when the last holder lets
  // go: a submission's event may hold it past the executable (the driver outlives both).
  Expected<std::shared_ptr<void>> sharedPinned(size_t bytes);

  // Pinned copies of uploaded tables. A staging buffer is reused once the submission
  // that read it (its event; the stream orders the copy before that submission's
  // work) completed: no event of its own per upload.
  struct Staging {
    void *host = nullptr;
    rt::EventPtr readBy;
    bool unsynced = false; // read by launches without an event: synchronize before reuse
  };
  // Frees a staging buffer for reuse (waits for its reader).
  Error reclaim(Staging &st);
  Staging *uploading_ = nullptr; // the buffer this submission's upload used, if any

private:
  std::vector<Staging> staging_;
  size_t nextStaging_ = 0;
  bool released_ = false;
  bool lastSubmitDone_ = false; // the last submit() returned an event (every step ran)
};

} // namespace cgraph::gpu
