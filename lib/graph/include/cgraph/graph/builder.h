// GraphBuilder: the explicit graph-construction API (nodes + edges you name yourself).
//
// Ownership: a GraphBuilder owns the Graph it builds; graph() lends a reference valid
// while the builder lives, take() moves the graph out (the builder is then empty and
// may be reused). Thread-safety: none; one builder per thread.
// Failure modes: the builder never fails and never checks semantics. Indices passed in
// (kernel, slots, params, node ids) are stored as given; run validateGraph()
// (validate.h) to get diagnostics. Every add* returns the index of the new element in
// the corresponding Graph vector.
#pragma once

#include <cgraph/model.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace cgraph {

// nd-range helpers. `local` 0 = let the runtime choose. Unused dimensions are 1 (global)
// and 0 (local), offsets 0.
NDRange range1D(uint64_t global, uint64_t local = 0);
NDRange range2D(uint64_t g0, uint64_t g1, uint64_t l0 = 0, uint64_t l1 = 0);
NDRange range3D(uint64_t g0, uint64_t g1, uint64_t g2, uint64_t l0 = 0, uint64_t l1 = 0,
                uint64_t l2 = 0);
// A dimension whose value comes from graph parameter `param` (an integer param).
Dim paramDim(uint32_t param);

class GraphBuilder {
public:
  GraphBuilder() = default;
  explicit GraphBuilder(std::string graphName);

  uint32_t addSlot(Slot slot);
  uint32_t addParam(Param param);
  uint32_t addModule(KernelModule module);
  uint32_t addKernel(Kernel kernel);
  uint32_t addSubgraphGraph(Graph child); // appends to Graph::subgraphs, no node

  uint32_t addKernelNode(std::string name, uint32_t kernel, NDRange range,
                         std::vector<Arg> args);
  uint32_t addCopy(std::string name, CopyOp op);     // NodeKind::Copy
  uint32_t addCopyRect(std::string name, CopyOp op); // NodeKind::CopyRect
  uint32_t addFill(std::string name, FillOp op);
  uint32_t addHost(std::string name, HostOp op, std::vector<Arg> args);
  uint32_t addBarrier(std::string name);
  // NodeKind::Collective; fields that are expressions go to Graph::exprs like any other
  // (ExprField::CollSendOffset..CollPeer).
  uint32_t addCollective(std::string name, CollectiveOp op);
  // Appends `child` to Graph::subgraphs and a Subgraph node binding child slot i to
  // parent slot slotBinding[i].
  uint32_t addSubgraph(std::string name, Graph child, std::vector<uint32_t> slotBinding);
  // Appends a fully formed node as is.
  uint32_t addNode(Node node);

  // `from` must complete before `to` starts. Duplicate edges are ignored.
  void addEdge(uint32_t from, uint32_t to);

  Graph &graph() { return graph_; }
  const Graph &graph() const { return graph_; }
  Graph take();

private:
  Graph graph_;
  std::vector<uint64_t> edgeKeys_; // sorted (from << 32 | to) of graph_.edges
  size_t edgesIndexed_ = 0;        // graph_.edges entries reflected in edgeKeys_
};

// Convenience constructors for node payloads.
CopyOp copyOp(uint32_t srcSlot, uint64_t srcOffset, uint32_t dstSlot, uint64_t dstOffset,
              uint64_t bytes);
FillOp fillOp(uint32_t slot, uint64_t offset, uint64_t bytes, std::vector<uint8_t> pattern);

} // namespace cgraph
