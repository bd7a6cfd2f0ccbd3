// Recorder: the SYCL record-and-replay style API. Nodes are submitted in program order
// and their edges are inferred from read/write hazards on slots with respect to the
// earlier submissions (rules and access convention: hazards.h). There is no addEdge.
//
// Recording the same program as an explicit GraphBuilder program that adds exactly the
// hazard edges produces an identical Graph (nodes, edges in the same order).
// Ownership: owns the Graph it records (graph() lends, take() moves it out and resets
// the recorder). Thread-safety: none. Failure modes: none at record time; a submission
// naming out-of-range indices gets no edges for them; run validateGraph() afterwards.
#pragma once

#include <cgraph/graph/builder.h>
#include <cgraph/graph/hazards.h>

namespace cgraph {

class Recorder {
public:
  Recorder() = default;
  explicit Recorder(std::string graphName) : builder_(std::move(graphName)) {}

  uint32_t addSlot(Slot slot) { return builder_.addSlot(std::move(slot)); }
  uint32_t addParam(Param param) { return builder_.addParam(std::move(param)); }
  uint32_t addModule(KernelModule module) { return builder_.addModule(std::move(module)); }
  uint32_t addKernel(Kernel kernel) { return builder_.addKernel(std::move(kernel)); }

  uint32_t addKernelNode(std::string name, uint32_t kernel, NDRange range,
                         std::vector<Arg> args);
  uint32_t addCopy(std::string name, CopyOp op);
  uint32_t addCopyRect(std::string name, CopyOp op);
  uint32_t addFill(std::string name, FillOp op);
  uint32_t addHost(std::string name, HostOp op, std::vector<Arg> args);
  // Depends on every node since the previous barrier; later nodes depend on it.
  uint32_t addBarrier(std::string name);
  uint32_t addSubgraph(std::string name, Graph child, std::vector<uint32_t> slotBinding);

  // Predecessors inferred for the most recent submission.
  const std::vector<uint32_t> &lastDependencies() const { return lastDeps_; }

  Graph &graph() { return builder_.graph(); }
  const Graph &graph() const { return builder_.graph(); }
  Graph take();

private:
  uint32_t record(uint32_t node);

  GraphBuilder builder_;
  HazardTracker tracker_;
  std::vector<uint32_t> lastDeps_;
};

} // namespace cgraph
