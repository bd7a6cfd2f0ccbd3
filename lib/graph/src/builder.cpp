#include <cgraph/graph/builder.h>

#include <algorithm>

namespace cgraph {

namespace {
NDRange makeRange(uint32_t dims, const uint64_t g[3], const uint64_t l[3]) {
  NDRange r;
  r.dims = dims;
  for (int i = 0; i < 3; ++i) {
    r.global[i].value = i < int(dims) ? g[i] : 1;
    r.local[i].value = i < int(dims) ? l[i] : 0;
  }
  // A partly given local size makes no sense; treat "any dim 0" as "runtime chooses".
  bool anyZero = false;
  for (uint32_t i = 0; i < dims; ++i) anyZero |= r.local[i].value == 0;
  if (anyZero)
    for (auto &d : r.local) d.value = 0;
  else
    for (uint32_t i = dims; i < 3; ++i) r.local[i].value = 1;
  return r;
}
} // namespace

NDRange range1D(uint64_t global, uint64_t local) {
  uint64_t g[3] = {global, 1, 1}, l[3] = {local, 0, 0};
  return makeRange(1, g, l);
}
NDRange range2D(uint64_t g0, uint64_t g1, uint64_t l0, uint64_t l1) {
  uint64_t g[3] = {g0, g1, 1}, l[3] = {l0, l1, 0};
  return makeRange(2, g, l);
}
NDRange range3D(uint64_t g0, uint64_t g1, uint64_t g2, uint64_t l0, uint64_t l1, uint64_t l2) {
  uint64_t g[3] = {g0, g1, g2}, l[3] = {l0, l1, l2};
  return makeRange(3, g, l);
}
Dim paramDim(uint32_t param) {
  Dim d;
  d.param = param;
  return d;
}

CopyOp copyOp(uint32_t srcSlot, uint64_t srcOffset, uint32_t dstSlot, uint64_t dstOffset,
              uint64_t bytes) {
  CopyOp c;
  c.srcSlot = srcSlot;
  c.srcOffset = srcOffset;
  c.dstSlot = dstSlot;
  c.dstOffset = dstOffset;
  c.bytes = bytes;
  return c;
}

FillOp fillOp(uint32_t slot, uint64_t offset, uint64_t bytes, std::vector<uint8_t> pattern) {
  FillOp f;
  f.slot = slot;
  f.offset = offset;
  f.bytes = bytes;
  f.pattern = std::move(pattern);
  return f;
}

namespace {
// Appends and returns the new element's index.
template <typename T> uint32_t append(std::vector<T> &v, T value) {
  v.push_back(std::move(value));
  return uint32_t(v.size() - 1);
}
Node namedNode(std::string name, NodeKind kind) {
  Node n;
  n.name = std::move(name);
  n.kind = kind;
  return n;
}
} // namespace

GraphBuilder::GraphBuilder(std::string graphName) { graph_.name = std::move(graphName); }

uint32_t GraphBuilder::addSlot(Slot slot) {
  return append(graph_.slots, std::move(slot));
}
uint32_t GraphBuilder::addParam(Param param) {
  return append(graph_.params, std::move(param));
}
uint32_t GraphBuilder::addModule(KernelModule module) {
  return append(graph_.modules, std::move(module));
}
uint32_t GraphBuilder::addKernel(Kernel kernel) {
  return append(graph_.kernels, std::move(kernel));
}
uint32_t GraphBuilder::addSubgraphGraph(Graph child) {
  return append(graph_.subgraphs, std::move(child));
}

uint32_t GraphBuilder::addNode(Node node) {
  return append(graph_.nodes, std::move(node));
}

uint32_t GraphBuilder::addKernelNode(std::string name, uint32_t kernel, NDRange range,
                                     std::vector<Arg> args) {
  Node n = namedNode(std::move(name), NodeKind::Kernel);
  n.kernel = kernel;
  n.range = range;
  n.args = std::move(args);
  return addNode(std::move(n));
}

uint32_t GraphBuilder::addCopy(std::string name, CopyOp op) {
  Node n = namedNode(std::move(name), NodeKind::Copy);
  n.copy = op;
  return addNode(std::move(n));
}

uint32_t GraphBuilder::addCopyRect(std::string name, CopyOp op) {
  Node n = namedNode(std::move(name), NodeKind::CopyRect);
  n.copy = op;
  return addNode(std::move(n));
}

uint32_t GraphBuilder::addFill(std::string name, FillOp op) {
  Node n = namedNode(std::move(name), NodeKind::Fill);
  n.fill = std::move(op);
  return addNode(std::move(n));
}

uint32_t GraphBuilder::addHost(std::string name, HostOp op, std::vector<Arg> args) {
  Node n = namedNode(std::move(name), NodeKind::Host);
  n.host = std::move(op);
  n.args = std::move(args);
  return addNode(std::move(n));
}

uint32_t GraphBuilder::addCollective(std::string name, CollectiveOp op) {
  Node n = namedNode(std::move(name), NodeKind::Collective);
  n.coll = op;
  return addNode(std::move(n));
}

uint32_t GraphBuilder::addBarrier(std::string name) {
  Node n = namedNode(std::move(name), NodeKind::Barrier);
  return addNode(std::move(n));
}

uint32_t GraphBuilder::addSubgraph(std::string name, Graph child,
                                   std::vector<uint32_t> slotBinding) {
  Node n = namedNode(std::move(name), NodeKind::Subgraph);
  n.subgraph = addSubgraphGraph(std::move(child));
  n.subgraphSlots = std::move(slotBinding);
  return addNode(std::move(n));
}

void GraphBuilder::addEdge(uint32_t from, uint32_t to) {
  // graph() lends the Graph mutably, so re-index when someone edited the edges directly.
  if (edgesIndexed_ > graph_.edges.size()) {
    edgeKeys_.clear();
    edgesIndexed_ = 0;
  }
  for (; edgesIndexed_ < graph_.edges.size(); ++edgesIndexed_) {
    const Edge &e = graph_.edges[edgesIndexed_];
    uint64_t k = uint64_t(e.from) << 32 | e.to;
    edgeKeys_.insert(std::lower_bound(edgeKeys_.begin(), edgeKeys_.end(), k), k);
  }
  uint64_t key = uint64_t(from) << 32 | to;
  auto it = std::lower_bound(edgeKeys_.begin(), edgeKeys_.end(), key);
  if (it != edgeKeys_.end() && *it == key) return;
  edgeKeys_.insert(it, key);
  graph_.edges.push_back(Edge{from, to});
  ++edgesIndexed_;
}

Graph GraphBuilder::take() {
  Graph g = std::move(graph_);
  graph_ = Graph();
  edgeKeys_.clear();
  edgesIndexed_ = 0;
  return g;
}

} // namespace cgraph
