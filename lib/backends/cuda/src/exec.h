// The CUDA executable graph (command_buffer.cpp: plan, launches, CUDA graphs;
// submit.cpp: the table upload and the replay and eager paths). Not installed.
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

#include "cgraph/runtime/host_tasks.h"

#include <deque>

namespace cgraph::cuda {

struct Launch {
  CUfunction fn = nullptr;
  std::vector<uint64_t> vals; // one 8-byte cell per wrapper argument
  std::vector<void *> ptrs;   // kernelParams: pointers into vals
  unsigned grid[3] = {1, 1, 1}, block[3] = {1, 1, 1};
  unsigned smem = 0;
  void bind() {
    ptrs.resize(vals.size());
    for (size_t i = 0; i < vals.size(); ++i) ptrs[i] = &vals[i];
  }
};

struct NodePlan {
  enum Kind { Kernel, Memcpy, Memset, Nop, Host, Cond } kind = Nop;
  uint32_t cond = kNone;  // Cond: index into CudaExecutable::conds_
  Launch launch;          // Kernel (also copies/fills run as the builtin kernels)
  bool paramRange = false; // the nd-range depends on a parameter
  CUDA_MEMCPY3D copy{};   // Memcpy: addresses resolved per submission in eager mode
  CUDA_MEMSET_NODE_PARAMS memset{};
};

// A copy node as cuMemcpy3D parameters / a fill as cuMemset parameters, with the slots'
// base addresses; false where they cannot express it (command_buffer.cpp).
bool cudaMemcpyFor(const Node &node, CUdeviceptr src, CUdeviceptr dst, CUDA_MEMCPY3D &m);
bool cudaMemsetFor(const FillOp &f, CUdeviceptr base, CUDA_MEMSET_NODE_PARAMS &m);

struct PartGraph {
  std::vector<uint32_t> nodes;
  bool host = false;
  CUgraph graph = nullptr;
  CUgraphExec exec = nullptr;
  std::vector<std::pair<uint32_t, CUgraphNode>> kernelNodes; // node -> graph node
};

// Where a node of graph() lives in the replay graphs (updates reach it there).
struct GraphNodeRef {
  uint32_t part = kNone;
  CUgraphNode node = nullptr;
  bool kernel = false;    // a kernel node (cuGraphExecKernelNodeSetParams)
  bool enableable = false; // kernel, memcpy or memset node (cuGraphNodeSetEnabled)
};

// Whether `flattened` (with Conditional nodes) can run its conditionals as CUDA
// conditional nodes on `device` in `mode`; the error says why not.
Error nativeConditionals(CudaDevice &device, const Graph &flattened, rt::ExecMode mode);

// A body node lifted into the executable: graph()'s slot and parameter numbering.
struct LiftedNode {
  Node node;
  const Kernel *kernel = nullptr; // Kernel nodes: its kernel in the body's graph
  std::string label;              // "node 'inner' (body of node 'loop')"
};

// Pinned host blocks of one size for per-submission readbacks (a submission's event
// holds its block until it is destroyed, so blocks may outlive the executable).
struct PinnedPool : std::enable_shared_from_this<PinnedPool> {
  PinnedPool(CudaDevice &device, size_t bytes) : dev(&device), bytes(bytes) {}
  ~PinnedPool();
  Expected<std::shared_ptr<void>> take();
  CudaDevice *dev;
  size_t bytes;
  std::mutex mutex;
  std::vector<void *> free;
};

struct CondPlan {
  uint32_t node = kNone;      // plan index of the conditional node
  CondOp op;                  // slot in graph()'s numbering
  std::vector<uint32_t> body; // plan indices of the body's nodes, in execution order
  Launch pre, post;           // the set-condition launches (post: while only)
  CUgraphConditionalHandle handle = 0;
};

class CudaExecutable final : public rt::Executable {
public:
  CudaExecutable(CudaDevice &device, Graph flattened, const rt::FinalizeOptions &opts)
      : rt::Executable(device, std::move(flattened), opts.mode), dev_(&device), api_(&device.api()),
        host_(opts.host) {}
  ~CudaExecutable() override;
  Error prepare(const rt::FinalizeOptions &opts);
  Error updateEveryKernelNode();

protected:
  Expected<rt::EventPtr> submit(const std::vector<ResolvedSlot> &slots, const std::vector<uint64_t> &params,
                                const rt::SubmitOptions &opts) override;
  // Node updates: the node's launch re-planned, then cuGraphExecKernelNodeSetParams /
  // cuGraphNodeSetEnabled on the instantiated graph (replay); eager reads the plans.
  Error applyUpdate(const std::vector<uint32_t> &nodes) override;

private:
  std::string nodeLabel(uint32_t n) const;
  // Plan index -> node: graph()'s nodes first, then the lifted body nodes.
  const Node &nodeAt(uint32_t p) const {
    return p < graph_.nodes.size() ? graph_.nodes[p] : lifted_[p - graph_.nodes.size()].node;
  }
  const Kernel &kernelAt(uint32_t p) const {
    return p < graph_.nodes.size() ? graph_.kernels[graph_.nodes[p].kernel] : *lifted_[p - graph_.nodes.size()].kernel;
  }
  // Lifts the body of conditional plan `p` (a node of `owner`, whose slots/params map
  // to graph()'s through slotMap/paramMap), recursively for nested conditionals.
  Error liftConditional(uint32_t p, const Graph &owner, const std::vector<uint32_t> &slotMap,
                        const std::vector<uint32_t> &paramMap);
  Error planSetCondition(CondPlan &c, uint32_t mode, Launch &l);
  // Adds plan `p` to `g` after `deps`; conditionals add their set-condition kernel,
  // the node and its body graph. `part` is the replay partition (kNone inside bodies).
  Expected<CUgraphNode> addGraphNode(CUgraph g, uint32_t p, const std::vector<CUgraphNode> &deps, uint32_t part);
  // `paramRange`: the nd-range reads parameters; a range that does not resolve with
  // `params` is left for submit to compute (it does before the first launch).
  Error planKernel(uint32_t n, const std::vector<uint64_t> &params, Launch &l, bool paramRange = false);
  // The function of kernel `k` (its module loaded through the cache on first use).
  Expected<CUfunction> kernelFunction(uint32_t k, bool useCache);
  Error rangeOf(uint32_t n, const std::vector<uint64_t> &params, Launch &l) const;
  Error planCopyOrFill(uint32_t n);
  Error buildGraphs();
  Error uploadTable(const std::vector<uint64_t> &params);
  Error runNodeEager(uint32_t n, const std::vector<uint64_t> &params);
  Error runHost(uint32_t n, const std::vector<uint64_t> &params);
  Error updateParamRanges(const std::vector<uint64_t> &params);
  bool slotOwned(uint32_t s) const { return s < owned_.size() && owned_[s] != nullptr; }
  CUdeviceptr slotBase(uint32_t s) const { return s < table_.size() ? CUdeviceptr(table_[s]) : 0; }

  CudaDevice *dev_;
  const CuApi *api_;
  rt::HostPolicy host_;
  std::vector<std::unique_ptr<rt::Buffer>> owned_;
  std::vector<std::shared_ptr<const LoadedModule>> modules_;
  std::shared_ptr<const LoadedModule> builtins_;
  std::unique_ptr<rt::HostTasks> hostTasks_;
  std::vector<NodePlan> plans_;
  std::vector<PartGraph> parts_;
  std::vector<GraphNodeRef> graphNodes_; // per node of graph() (replay)
  std::vector<CUfunction> fns_;          // per kernel of graph(); null until loaded
  std::vector<std::shared_ptr<const LoadedModule>> byModule_; // per module of graph()
  bool useCache_ = true;
  std::vector<std::vector<uint32_t>> preds_; // per plan index
  std::deque<Graph> bodies_;                  // flattened conditional bodies (lifted_ points in)
  std::vector<LiftedNode> lifted_;
  std::vector<CondPlan> conds_;
  std::unique_ptr<rt::Buffer> condState_;     // {trips, exceeded} u32 pair per conditional
  std::shared_ptr<struct PinnedPool> pinned_; // readbacks of condState_ per submission
  std::unique_ptr<rt::Buffer> tableBuf_;   // device copy of the table
  std::vector<std::unique_ptr<rt::Buffer>> patterns_; // fill patterns for the fill kernel
  std::vector<uint64_t> table_;            // host copy: the current submission's table
  std::vector<uint64_t> uploaded_;         // what the device table holds
  // Pinned staging slots for the table upload: an async copy from pinned memory costs
  // a few microseconds, one from pageable memory is staged by the driver (~17 us on an
  // H100). A slot is reused only after the event of its previous copy completed.
  struct Staging {
    void *host = nullptr;
    CUevent copied = nullptr;
    bool pending = false;
  };
  std::vector<Staging> staging_;
  size_t nextStaging_ = 0;
  std::vector<uint64_t> slotLength_;       // bound length per slot, this submission
  std::vector<uint64_t> rangeParams_;      // parameter values the graphs' nd-ranges use
  bool rangesResolved_ = false;            // a submission has computed them once
  uint32_t nSlots_ = 0, nParams_ = 0;
};

} // namespace cgraph::cuda
