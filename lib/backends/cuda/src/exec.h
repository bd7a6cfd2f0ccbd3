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
#pragma once

#include "internal.h"

#include "cgraph/runtime/host_tasks.h"

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
  enum Kind { Kernel, Memcpy, Memset, Nop, Host } kind = Nop;
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
  std::vector<std::vector<uint32_t>> preds_;
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
