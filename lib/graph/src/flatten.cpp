#include <cgraph/graph/flatten.h>

#include <cgraph/expr.h>
#include <cgraph/graph/order.h>

#include "graph_util.h"

#include <algorithm>
#include <set>
#include <tuple>
#include <unordered_set>

namespace cgraph {
namespace {

using detail::s;

Error remapSlot(uint32_t &slot, const std::vector<uint32_t> &binding, const std::string &where) {
  if (slot >= binding.size())
    return makeError(where + " refers to slot " + s(slot) + " but the subgraph binds " +
                     s(binding.size()) + " slots");
  slot = binding[slot];
  return Error::success();
}

Error remapParam(uint32_t &param, const std::vector<uint32_t> &map, const std::string &where) {
  if (param == kNone) return Error::success();
  if (param >= map.size())
    return makeError(where + " refers to param " + s(param) + " but the subgraph has " +
                     s(map.size()) + " params");
  param = map[param];
  return Error::success();
}

// Rewrites one node of an already flat child into parent index space.
Error remapNode(Node &c, const std::vector<uint32_t> &binding, const std::vector<uint32_t> &params,
                uint32_t kernelBase) {
  std::string where = "node '" + c.name + "'";
  if (c.kind == NodeKind::Kernel && c.kernel != kNone) c.kernel += kernelBase;
  for (uint32_t &k : c.alternatives) k += kernelBase;
  for (size_t i = 0; i < c.args.size(); ++i) {
    Arg &a = c.args[i];
    if (a.kind == ArgKind::Slot)
      CGRAPH_RETURN_IF_ERROR(remapSlot(a.index, binding, where + " arg " + s(i)));
    if (a.kind == ArgKind::Param)
      CGRAPH_RETURN_IF_ERROR(remapParam(a.index, params, where + " arg " + s(i)));
  }
  if (c.kind == NodeKind::Kernel)
    for (int d = 0; d < 3; ++d) {
      CGRAPH_RETURN_IF_ERROR(remapParam(c.range.global[d].param, params, where + " global"));
      CGRAPH_RETURN_IF_ERROR(remapParam(c.range.local[d].param, params, where + " local"));
      CGRAPH_RETURN_IF_ERROR(remapParam(c.range.offset[d].param, params, where + " offset"));
    }
  if (c.kind == NodeKind::Copy || c.kind == NodeKind::CopyRect) {
    CGRAPH_RETURN_IF_ERROR(remapSlot(c.copy.srcSlot, binding, where + " copy source"));
    CGRAPH_RETURN_IF_ERROR(remapSlot(c.copy.dstSlot, binding, where + " copy destination"));
  }
  if (c.kind == NodeKind::Fill) CGRAPH_RETURN_IF_ERROR(remapSlot(c.fill.slot, binding, where + " fill"));
  if (c.kind == NodeKind::Collective) {
    if (c.coll.sendSlot != kNone)
      CGRAPH_RETURN_IF_ERROR(remapSlot(c.coll.sendSlot, binding, where + " send side"));
    if (c.coll.recvSlot != kNone)
      CGRAPH_RETURN_IF_ERROR(remapSlot(c.coll.recvSlot, binding, where + " receive side"));
  }
  if (c.kind == NodeKind::Conditional) {
    CGRAPH_RETURN_IF_ERROR(remapSlot(c.cond.slot, binding, where + " condition"));
    for (size_t k = 0; k < c.subgraphSlots.size(); ++k)
      CGRAPH_RETURN_IF_ERROR(remapSlot(c.subgraphSlots[k], binding, where + " body slot " + s(k)));
  }
  return Error::success();
}

// The parts of `g` that flattening keeps as they are (children add modules and kernels).
Graph sameHeader(const Graph &g) {
  Graph out;
  out.name = g.name;
  out.slots = g.slots;
  out.params = g.params;
  out.modules = g.modules;
  out.kernels = g.kernels;
  out.metadata = g.metadata;
  return out;
}

// `g` (no Subgraph nodes) made what alreadyFlat returns, in place: nothing is copied
// but the conditional bodies in use.
Error flattenInPlace(Graph &g) {
  const size_t n = g.nodes.size();
  std::vector<Graph> bodies;
  for (uint32_t i = 0; i < n; ++i) {
    Node &node = g.nodes[i];
    if (node.kind != NodeKind::Conditional) continue;
    if (node.subgraph >= g.subgraphs.size())
      return makeError(nodeLabel(g, i) + ": body subgraph index " + s(node.subgraph) +
                       " but the graph has " + s(g.subgraphs.size()) + " subgraphs");
    bodies.push_back(g.subgraphs[node.subgraph]);
    node.subgraph = uint32_t(bodies.size() - 1);
  }
  g.subgraphs = std::move(bodies);
  // Duplicate edges dropped through an open-addressing set of (from, to) keys: one
  // allocation, not one per edge (no key is all ones: both ends are below n).
  size_t cap = 16;
  while (cap < 2 * g.edges.size()) cap <<= 1;
  std::vector<uint64_t> seen(cap, ~uint64_t(0));
  size_t kept = 0;
  for (size_t k = 0; k < g.edges.size(); ++k) {
    const Edge e = g.edges[k];
    if (e.from >= n || e.to >= n)
      return makeError("edge " + s(k) + " (" + s(e.from) + " -> " + s(e.to) +
                       ") points past the node table (" + s(n) + " nodes)");
    const uint64_t key = uint64_t(e.from) << 32 | e.to;
    size_t h = size_t((key * 0x9E3779B97F4A7C15ull) >> 20) & (cap - 1);
    while (seen[h] != ~uint64_t(0) && seen[h] != key) h = (h + 1) & (cap - 1);
    if (seen[h] == key) continue;
    seen[h] = key;
    g.edges[kept++] = e;
  }
  g.edges.resize(kept);
  if (!isTopologicalOrder(g, g.order)) {
    Expected<std::vector<uint32_t>> o = executionOrder(g);
    if (!o) return o.error();
    g.order = std::move(*o);
  }
  for (const FieldExpr &e : g.exprs)
    if (e.field != ExprField::SlotSize && e.node >= n)
      return makeError("expression of node #" + s(e.node) + ": not a kernel node");
  std::stable_sort(g.exprs.begin(), g.exprs.end(), [](const FieldExpr &a, const FieldExpr &b) {
    return std::make_tuple(a.node, uint16_t(a.field), a.arg) <
           std::make_tuple(b.node, uint16_t(b.field), b.arg);
  });
  if (g.partitions.empty() || checkPartitions(g)) g.partitions = computePartitions(g, g.order);
  return Error::success();
}

// A graph without Subgraph nodes: the same graph, conditional bodies renumbered in
// order of use, edges deduplicated, order and partitions as flattenRec gives them.
Expected<Graph> alreadyFlat(const Graph &g) {
  Graph out = g;
  CGRAPH_RETURN_IF_ERROR(flattenInPlace(out));
  return out;
}

// `g` with every Subgraph node replaced by its child's nodes, recursively (`depth`:
// g's nesting level); defined below, called for each child by inlineSubgraph.
Expected<Graph> flattenRec(const Graph &g, int depth);

// The flattened graph being built from a parent graph `g`, and per node of `g` the
// flattened nodes that enter it (no predecessor inside it), that leave it (no
// successor inside it), and all of them in the child's execution order.
struct Flattening {
  explicit Flattening(const Graph &g)
      : out(sameHeader(g)), entries(g.nodes.size()), exits(g.nodes.size()), ordered(g.nodes.size()) {}
  Graph out;
  std::vector<std::vector<uint32_t>> entries, exits;
  std::vector<std::vector<uint32_t>> ordered;
  bool inlined = false; // some Subgraph node was replaced by its child's nodes
  std::set<std::pair<uint32_t, uint32_t>> edgeSet;
  void addEdge(uint32_t a, uint32_t b) {
    if (edgeSet.insert({a, b}).second) out.edges.push_back(Edge{a, b});
  }
};

// Parent node `i` (not a Subgraph node) copied as it is into the flattened graph.
Error copyNode(const Graph &g, uint32_t i, Flattening &fl) {
  const Node &node = g.nodes[i];
  Graph &out = fl.out;
  uint32_t x = uint32_t(out.nodes.size());
  out.nodes.push_back(node);
  // A conditional's body stays a subgraph (it runs zero or more times); the
  // runtime flattens it when it builds the body.
  if (node.kind == NodeKind::Conditional) {
    if (node.subgraph >= g.subgraphs.size())
      return makeError(nodeLabel(g, i) + ": body subgraph index " + s(node.subgraph) +
                       " but the graph has " + s(g.subgraphs.size()) + " subgraphs");
    out.nodes.back().subgraph = uint32_t(out.subgraphs.size());
    out.subgraphs.push_back(g.subgraphs[node.subgraph]);
  }
  fl.entries[i] = fl.exits[i] = fl.ordered[i] = {x};
  return Error::success();
}

// The flat, non-empty `child` of Subgraph node `i` appended to the flattened graph in
// parent index space: its modules, kernels, conditional bodies, nodes (named
// "<subgraph node>/<child node>"), stored expressions and edges.
Error appendChild(const Graph &g, uint32_t i, Graph &child, const std::vector<uint32_t> &paramMap,
                  const std::string &where, Flattening &fl) {
  const Node &node = g.nodes[i];
  Graph &out = fl.out;
  uint32_t moduleBase = uint32_t(out.modules.size());
  uint32_t kernelBase = uint32_t(out.kernels.size());
  for (KernelModule &m : child.modules) out.modules.push_back(std::move(m));
  for (Kernel &k : child.kernels) {
    if (k.module != kNone) k.module += moduleBase;
    out.kernels.push_back(std::move(k));
  }
  uint32_t base = uint32_t(out.nodes.size());
  const uint32_t subgraphBase = uint32_t(out.subgraphs.size());
  for (Graph &body : child.subgraphs) out.subgraphs.push_back(std::move(body));
  for (Node &c : child.nodes) {
    CGRAPH_RETURN_IF_ERROR(remapNode(c, node.subgraphSlots, paramMap, kernelBase).withContext(where));
    if (c.kind == NodeKind::Conditional) c.subgraph += subgraphBase;
    if (c.device == 0) c.device = node.device; // a subgraph node's placement covers its nodes
    c.name = node.name + "/" + c.name;
    out.nodes.push_back(std::move(c));
  }
  // The child's stored expressions: its nodes move to base + c, its parameters to the
  // parent's of the same name.
  for (const FieldExpr &e : child.exprs) {
    // A child slot is one of the parent's slots: its size is the parent's.
    if (e.field == ExprField::SlotSize) continue;
    auto prog = expr::decode(e.code.data(), e.code.size(), uint32_t(child.params.size()));
    if (!prog) return prog.error().withContext(where + ": expression of node #" + s(e.node));
    auto mapped = expr::remapVariables(*prog, paramMap);
    if (!mapped) return mapped.error().withContext(where);
    FieldExpr x = e;
    x.node = base + e.node;
    x.code = expr::encode(*mapped);
    out.exprs.push_back(std::move(x));
  }
  std::vector<uint8_t> hasPred(child.nodes.size(), 0), hasSucc(child.nodes.size(), 0);
  for (const Edge &e : child.edges) {
    if (e.from >= child.nodes.size() || e.to >= child.nodes.size())
      return makeError(where + ": subgraph edge (" + s(e.from) + " -> " + s(e.to) +
                       ") points past its node table");
    hasSucc[e.from] = hasPred[e.to] = 1;
    fl.addEdge(base + e.from, base + e.to);
  }
  for (uint32_t c = 0; c < child.nodes.size(); ++c) {
    if (!hasPred[c]) fl.entries[i].push_back(base + c);
    if (!hasSucc[c]) fl.exits[i].push_back(base + c);
  }
  for (uint32_t c : child.order) fl.ordered[i].push_back(base + c);
  return Error::success();
}

// Subgraph node `i` replaced by its child, flattened first (`depth`: the child's
// nesting level): its slot bindings and parameters checked, an empty child made one
// barrier node.
Error inlineSubgraph(const Graph &g, uint32_t i, int depth, Flattening &fl) {
  const Node &node = g.nodes[i];
  Graph &out = fl.out;
  fl.inlined = true;
  std::string where = nodeLabel(g, i);
  if (node.subgraph >= g.subgraphs.size())
    return makeError(where + ": subgraph index " + s(node.subgraph) + " but the graph has " +
                     s(g.subgraphs.size()) + " subgraphs");
  const Graph &rawChild = g.subgraphs[node.subgraph];
  if (node.subgraphSlots.size() != rawChild.slots.size())
    return makeError(where + ": subgraph has " + s(rawChild.slots.size()) +
                     " slots but the node binds " + s(node.subgraphSlots.size()));
  for (size_t k = 0; k < node.subgraphSlots.size(); ++k)
    if (node.subgraphSlots[k] >= g.slots.size())
      return makeError(where + ": subgraph slot binding " + s(k) + " refers to slot " +
                       s(node.subgraphSlots[k]) + " but the graph has " + s(g.slots.size()) +
                       " slots");
  Expected<Graph> flat = flattenRec(rawChild, depth + 1);
  if (!flat) return flat.error().withContext(where);
  Graph &child = *flat;
  std::vector<uint32_t> paramMap;
  for (const Param &p : child.params) {
    uint32_t pp = g.findParam(p.name);
    if (pp == kNone)
      return makeError(where + ": subgraph param '" + p.name + "' has no parent param of that name");
    paramMap.push_back(pp);
  }
  if (child.nodes.empty()) {
    Node b;
    b.name = node.name;
    b.kind = NodeKind::Barrier;
    uint32_t x = uint32_t(out.nodes.size());
    out.nodes.push_back(std::move(b));
    fl.entries[i] = fl.exits[i] = fl.ordered[i] = {x};
    return Error::success();
  }
  return appendChild(g, i, child, paramMap, where, fl);
}

// The parent's edges between the flattened nodes: from every node that leaves the
// edge's source to every node that enters its target.
Error addParentEdges(const Graph &g, Flattening &fl) {
  const size_t n = g.nodes.size();
  for (size_t k = 0; k < g.edges.size(); ++k) {
    const Edge &e = g.edges[k];
    if (e.from >= n || e.to >= n)
      return makeError("edge " + s(k) + " (" + s(e.from) + " -> " + s(e.to) +
                       ") points past the node table (" + s(n) + " nodes)");
    for (uint32_t a : fl.exits[e.from])
      for (uint32_t b : fl.entries[e.to]) fl.addEdge(a, b);
  }
  return Error::success();
}

// The parent's stored expressions moved onto the flattened nodes (a node's onto the
// first node that enters it), then all of them sorted by node, field and argument.
Error remapParentExprs(const Graph &g, Flattening &fl) {
  const size_t n = g.nodes.size();
  Graph &out = fl.out;
  for (const FieldExpr &e : g.exprs) {
    if (e.field == ExprField::SlotSize) { // slots keep their indices
      out.exprs.push_back(e);
      continue;
    }
    if (e.node >= n || g.nodes[e.node].kind == NodeKind::Subgraph)
      return makeError("expression of node #" + s(e.node) + ": not a kernel node");
    FieldExpr x = e;
    x.node = fl.entries[e.node][0];
    out.exprs.push_back(std::move(x));
  }
  std::stable_sort(out.exprs.begin(), out.exprs.end(), [](const FieldExpr &a, const FieldExpr &b) {
    return std::make_tuple(a.node, uint16_t(a.field), a.arg) <
           std::make_tuple(b.node, uint16_t(b.field), b.arg);
  });
  return Error::success();
}

Expected<Graph> flattenRec(const Graph &g, int depth) {
  if (depth > 64) return makeError("subgraphs nested deeper than 64 levels");
  if (std::none_of(g.nodes.begin(), g.nodes.end(), [](const Node &x) { return x.kind == NodeKind::Subgraph; }))
    return alreadyFlat(g);
  Flattening fl(g);
  Graph &out = fl.out;
  size_t n = g.nodes.size();
  for (uint32_t i = 0; i < n; ++i) {
    if (g.nodes[i].kind != NodeKind::Subgraph) {
      CGRAPH_RETURN_IF_ERROR(copyNode(g, i, fl));
      continue;
    }
    CGRAPH_RETURN_IF_ERROR(inlineSubgraph(g, i, depth, fl));
  }
  CGRAPH_RETURN_IF_ERROR(addParentEdges(g, fl));
  // The parent's order (as stored, e.g. cgc --order breadth-first) with each subgraph
  // node replaced by its child's order, so flattening keeps the order the user chose.
  std::vector<uint32_t> parentOrder = g.order;
  if (!isTopologicalOrder(g, parentOrder)) {
    Expected<std::vector<uint32_t>> o = executionOrder(g);
    if (!o) return o.error();
    parentOrder = std::move(*o);
  }
  CGRAPH_RETURN_IF_ERROR(remapParentExprs(g, fl));
  out.order.reserve(out.nodes.size());
  for (uint32_t i : parentOrder)
    out.order.insert(out.order.end(), fl.ordered[i].begin(), fl.ordered[i].end());
  // Stored partitions are kept when nothing was inlined and they are sound; otherwise
  // they are computed from the flattened order (the same algorithm cgc ran).
  if (!fl.inlined && !g.partitions.empty() && !checkPartitions(g)) {
    out.partitions = g.partitions;
  } else {
    out.partitions = computePartitions(out, out.order);
  }
  return std::move(fl.out);
}

} // namespace

Expected<Graph> flattenSubgraphs(const Graph &graph) { return flattenRec(graph, 0); }

Expected<Graph> flattenSubgraphs(Graph &&graph) {
  if (std::any_of(graph.nodes.begin(), graph.nodes.end(), [](const Node &x) { return x.kind == NodeKind::Subgraph; }))
    return flattenRec(graph, 0);
  CGRAPH_RETURN_IF_ERROR(flattenInPlace(graph));
  return std::move(graph);
}

} // namespace cgraph
