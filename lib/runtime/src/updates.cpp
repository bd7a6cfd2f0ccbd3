// Executable updates (Executable::update): one node's arguments, nd-range, kernel or
// enabled state, or every node's from a graph of the same topology; checked on the
// updated graph before anything changes, restored when the backend refuses.
#include "cgraph/runtime/runtime.h"

#include "cgraph/graph/flatten.h"
#include "cgraph/graph/hazards.h"
#include "cgraph/graph/labels.h"
#include "executable_internal.h"

#include <algorithm>
#include <cstdint>
#include <string>

namespace cgraph::rt {

using detail::checkNodeRange;
using detail::deviceLabel;

namespace {

const char *argKindName(ArgKind k) {
  switch (k) {
  case ArgKind::Scalar: return "scalar";
  case ArgKind::Slot: return "slot";
  case ArgKind::Param: return "parameter";
  case ArgKind::LocalMem: return "__local size";
  case ArgKind::String: return "string";
  }
  return "argument";
}

bool overlaps(const SlotAccess &a, const SlotAccess &b) {
  return a.slot == b.slot && (a.write || b.write) && a.offset < b.end() && b.offset < a.end();
}

// Is there a path from `from` to `to` over `succ`? (Depth-first, O(nodes + edges).)
bool reaches(const std::vector<std::vector<uint32_t>> &succ, uint32_t from, uint32_t to) {
  std::vector<uint8_t> seen(succ.size(), 0);
  std::vector<uint32_t> work{from};
  while (!work.empty()) {
    const uint32_t n = work.back();
    work.pop_back();
    if (n == to) return true;
    if (seen[n]) continue;
    seen[n] = 1;
    for (uint32_t s : succ[n])
      if (!seen[s]) work.push_back(s);
  }
  return false;
}

// Every access of node `n` in `g` that conflicts with another node's access to the same
// bytes must be ordered by g's edges, one way or the other.
Error checkOrdered(const Graph &g, uint32_t n) {
  const AccessInfo mine = nodeAccesses(g, n);
  if (mine.accesses.empty()) return Error::success();
  std::vector<std::vector<uint32_t>> succ(g.nodes.size());
  for (const Edge &e : g.edges)
    succ[e.from].push_back(e.to);
  for (uint32_t j = 0; j < g.nodes.size(); ++j) {
    if (j == n) continue;
    for (const SlotAccess &other : nodeAccesses(g, j).accesses) {
      bool conflict = false;
      for (const SlotAccess &a : mine.accesses)
        conflict = conflict || overlaps(a, other);
      if (!conflict) continue;
      if (reaches(succ, n, j) || reaches(succ, j, n)) break;
      return makeError(nodeLabel(g, n) + ": the update makes it access slot '" +
                       g.slots[other.slot].name + "', which " + nodeLabel(g, j) +
                       " also accesses, and no edge orders the two");
    }
  }
  return Error::success();
}

} // namespace

uint32_t Executable::findNode(const std::string &name) const {
  for (uint32_t n = 0; n < graph_.nodes.size(); ++n)
    if (graph_.nodes[n].name == name) return n;
  return kNone;
}

Error Executable::applyUpdate(const std::vector<uint32_t> &) {
  return makeError("device " + deviceLabel(*device_) + " does not support executable updates");
}

Error Executable::checkUpdate(const NodeUpdate &u, Node &changed) const {
  if (u.node >= graph_.nodes.size())
    return makeError("update: node index " + std::to_string(u.node) + " is out of range (the graph has " +
                     std::to_string(graph_.nodes.size()) + " nodes)");
  const std::string where = nodeLabel(graph_, u.node);
  changed = graph_.nodes[u.node];
  if (u.enabled < -1 || u.enabled > 1)
    return makeError(where + ": enabled must be 0 or 1");
  if ((!u.args.empty() || u.setRange || u.kernel != kNone) && changed.kind != NodeKind::Kernel)
    return makeError(where + ": only kernel nodes have arguments, nd-ranges and kernels to update");
  if (u.kernel != kNone) {
    bool listed = false;
    std::string names;
    for (uint32_t k : changed.alternatives) {
      listed = listed || k == u.kernel;
      names += (names.empty() ? "" : ", ") + graph_.kernels[k].name;
    }
    const std::string name = u.kernel < graph_.kernels.size() ? "'" + graph_.kernels[u.kernel].name + "'"
                                                               : std::to_string(u.kernel);
    if (!listed)
      return makeError(where + ": kernel " + name + " is not one of its alternatives" +
                       (names.empty() ? std::string(" (it has none)") : " (" + names + ")"));
    changed.kernel = u.kernel;
  }
  auto isExpr = [&](ExprField f, uint32_t arg) {
    for (const FieldExpr &fe : graph_.exprs)
      if (fe.node == u.node && fe.field == f && (f != ExprField::ScalarArg || fe.arg == arg))
        return true;
    return false;
  };
  for (const auto &[i, a] : u.args) {
    if (i >= changed.args.size())
      return makeError(where + ": argument " + std::to_string(i) + " is out of range (the kernel takes " +
                       std::to_string(changed.args.size()) + ")");
    Arg &old = changed.args[i];
    const std::string arg = where + ": argument " + std::to_string(i);
    if (isExpr(ExprField::ScalarArg, i))
      return makeError(arg + " is an expression over parameters; set the parameters instead");
    if (a.kind != old.kind)
      return makeError(arg + " is a " + argKindName(old.kind) + ", not a " + argKindName(a.kind));
    switch (a.kind) {
    case ArgKind::Scalar:
      if (a.type != old.type)
        return makeError(arg + " is " + scalarName(old.type) + ", not " + scalarName(a.type));
      break;
    case ArgKind::Slot:
      if (a.index >= graph_.slots.size())
        return makeError(arg + ": slot index " + std::to_string(a.index) + " is out of range (the graph has " +
                         std::to_string(graph_.slots.size()) + " slots)");
      break;
    case ArgKind::Param:
      if (a.index >= graph_.params.size())
        return makeError(arg + ": parameter index " + std::to_string(a.index) + " is out of range");
      if (graph_.params[a.index].type != graph_.params[old.index].type)
        return makeError(arg + " reads a " + scalarName(graph_.params[old.index].type) +
                         " parameter, not a " + scalarName(graph_.params[a.index].type) + " one");
      break;
    case ArgKind::LocalMem:
      if (a.value == 0) return makeError(arg + ": a __local size must be at least 1 byte");
      break;
    case ArgKind::String: return makeError(arg + ": kernel arguments are never strings");
    }
    old = a;
  }
  if (u.setRange) {
    for (uint32_t f = 0; f < 9; ++f)
      if (isExpr(ExprField(f), 0))
        return makeError(where + ": its nd-range has expressions over parameters; set the parameters instead");
    const NDRange &r = u.range;
    if (r.dims < 1 || r.dims > 3)
      return makeError(where + ": an nd-range has 1 to 3 dimensions, not " + std::to_string(r.dims));
    for (int d = 0; d < 3; ++d)
      if (r.global[d].param != kNone || r.local[d].param != kNone || r.offset[d].param != kNone)
        return makeError(where + ": an updated nd-range takes literal sizes");
    bool anyLocal = false, allLocal = true;
    for (uint32_t d = 0; d < r.dims; ++d) {
      anyLocal = anyLocal || r.local[d].value != 0;
      allLocal = allLocal && r.local[d].value != 0;
    }
    if (anyLocal && !allLocal)
      return makeError(where + ": a local size must be given in every dimension or in none");
    changed.range = r;
    for (uint32_t d = r.dims; d < 3; ++d) {
      changed.range.global[d].value = 1;
      changed.range.local[d].value = anyLocal ? 1 : 0;
      changed.range.offset[d].value = 0;
    }
  }
  return Error::success();
}

Error Executable::commitUpdates(std::vector<std::pair<uint32_t, Node>> changed,
                                const std::vector<std::pair<uint32_t, int>> &enabled) {
  if (!device_->info().caps.nodeUpdate)
    return makeError("device " + deviceLabel(*device_) + " does not support executable updates");
  // Checks on the updated graph, before anything changes: ranges, slot hazards.
  Graph next;
  bool slotsChanged = false;
  for (const auto &[n, node] : changed) {
    const Node &old = graph_.nodes[n];
    for (size_t a = 0; a < node.args.size(); ++a)
      slotsChanged = slotsChanged || (node.args[a].kind == ArgKind::Slot &&
                                      (node.args[a].index != old.args[a].index ||
                                       node.args[a].value != old.args[a].value));
  }
  if (slotsChanged) {
    next = graph_;
    for (const auto &[n, node] : changed)
      next.nodes[n] = node;
  }
  const Capabilities &caps = device_->info().caps;
  for (const auto &[n, node] : changed) {
    if (node.kind != NodeKind::Kernel) continue;
    Graph one;
    one.nodes.push_back(node);
    one.nodes.back().name = graph_.nodes[n].name;
    bool literal = true;
    for (int d = 0; d < 3; ++d)
      literal = literal && node.range.global[d].param == kNone && node.range.local[d].param == kNone &&
                node.range.offset[d].param == kNone;
    if (literal)
      CGRAPH_RETURN_IF_ERROR(checkNodeRange(one, 0, caps, [](const Dim &d) { return d.value; }));
    if (slotsChanged) CGRAPH_RETURN_IF_ERROR(checkOrdered(next, n));
  }
  // Submissions in flight keep the values they were enqueued with.
  if (last_) {
    Error e = last_->wait();
    (void)e; // its failure was (or will be) reported through its own event
  }
  std::vector<std::pair<uint32_t, Node>> saved;
  std::vector<uint8_t> savedDisabled = disabled_;
  std::vector<uint32_t> touched;
  for (auto &[n, node] : changed) {
    saved.emplace_back(n, graph_.nodes[n]);
    graph_.nodes[n] = std::move(node);
    touched.push_back(n);
  }
  for (const auto &[n, on] : enabled) {
    if (on < 0) continue;
    disabled_[n] = on ? 0 : 1;
    touched.push_back(n);
  }
  std::sort(touched.begin(), touched.end());
  touched.erase(std::unique(touched.begin(), touched.end()), touched.end());
  if (touched.empty()) return Error::success(); // nothing differs
  checked_ = false; // the checks read the nodes (needs_, nd-ranges)
  if (slotsChanged) computeNeeds();
  Error err = applyUpdate(touched);
  if (!err) {
    if (slotsChanged) replanOwnedSlots();
    return Error::success();
  }
  for (auto &[n, node] : saved)
    graph_.nodes[n] = std::move(node);
  disabled_ = std::move(savedDisabled);
  if (slotsChanged) computeNeeds();
  (void)applyUpdate(touched);
  return err;
}

Error Executable::update(const NodeUpdate &u) {
  Node changed;
  CGRAPH_RETURN_IF_ERROR(checkUpdate(u, changed));
  std::vector<std::pair<uint32_t, Node>> nodes;
  if (!u.args.empty() || u.setRange || u.kernel != kNone) nodes.emplace_back(u.node, std::move(changed));
  return commitUpdates(std::move(nodes), {{u.node, u.enabled}});
}

Error Executable::update(const Graph &unflattened) {
  // Flattened as finalize flattens (the same edges, order and partitions for the same
  // topology).
  auto flat = flattenSubgraphs(unflattened);
  if (!flat) return makeError("whole-graph update: " + flat.error().message());
  const Graph &source = *flat;
  auto label = [&](uint32_t n) {
    return "node " + std::to_string(n) + (graph_.nodes[n].name.empty() ? "" : " '" + graph_.nodes[n].name + "'");
  };
  if (source.nodes.size() != graph_.nodes.size())
    return makeError("whole-graph update: the source graph has " + std::to_string(source.nodes.size()) +
                     " nodes, this executable " + std::to_string(graph_.nodes.size()));
  if (source.slots.size() != graph_.slots.size())
    return makeError("whole-graph update: the source graph has " + std::to_string(source.slots.size()) +
                     " slots, this executable " + std::to_string(graph_.slots.size()));
  if (source.params.size() != graph_.params.size())
    return makeError("whole-graph update: the source graph has " + std::to_string(source.params.size()) +
                     " parameters, this executable " + std::to_string(graph_.params.size()));
  std::vector<std::pair<uint32_t, Node>> changed;
  for (uint32_t n = 0; n < graph_.nodes.size(); ++n) {
    const Node &mine = graph_.nodes[n], &theirs = source.nodes[n];
    if (mine.kind != theirs.kind)
      return makeError("whole-graph update: " + label(n) + ": kind differs");
    if (mine.name != theirs.name)
      return makeError("whole-graph update: " + label(n) + ": name differs ('" + mine.name + "' vs '" +
                       theirs.name + "')");
    if (mine.kind != NodeKind::Kernel) continue;
    const std::string &k1 = graph_.kernels[mine.kernel].name;
    const std::string k2 = theirs.kernel < source.kernels.size() ? source.kernels[theirs.kernel].name : "?";
    // A different kernel is an update when it is one of the node's alternatives.
    uint32_t kernel = kNone;
    if (k1 != k2) {
      for (uint32_t k : mine.alternatives)
        if (graph_.kernels[k].name == k2) kernel = k;
      if (kernel == kNone)
        return makeError("whole-graph update: " + label(n) + ": kernel differs (" + k1 + " vs " + k2 +
                         (mine.alternatives.empty() ? std::string(")") : ", not one of its alternatives)"));
    }
    if (mine.args.size() != theirs.args.size())
      return makeError("whole-graph update: " + label(n) + ": " + std::to_string(theirs.args.size()) +
                       " arguments instead of " + std::to_string(mine.args.size()));
    // Fields that are stored expressions follow the parameters, not the source.
    bool exprRange = false;
    std::vector<uint8_t> exprArg(mine.args.size(), 0);
    for (const FieldExpr &fe : graph_.exprs) {
      if (fe.node != n) continue;
      if (fe.field == ExprField::ScalarArg && fe.arg < exprArg.size()) exprArg[fe.arg] = 1;
      if (uint16_t(fe.field) < 9) exprRange = true;
    }
    NodeUpdate u;
    u.node = n;
    u.kernel = kernel;
    for (uint32_t a = 0; a < theirs.args.size(); ++a) {
      if (exprArg[a]) continue;
      const Arg &x = mine.args[a], &y = theirs.args[a];
      if (x.kind == y.kind && x.type == y.type && x.index == y.index && x.value == y.value) continue;
      u.args.emplace_back(a, y);
    }
    bool sameRange = mine.range.dims == theirs.range.dims;
    for (int d = 0; d < 3 && sameRange && !exprRange; ++d)
      sameRange = mine.range.global[d].value == theirs.range.global[d].value &&
                  mine.range.local[d].value == theirs.range.local[d].value &&
                  mine.range.offset[d].value == theirs.range.offset[d].value &&
                  mine.range.global[d].param == theirs.range.global[d].param &&
                  mine.range.local[d].param == theirs.range.local[d].param &&
                  mine.range.offset[d].param == theirs.range.offset[d].param;
    if (!sameRange && !exprRange) {
      u.setRange = true;
      u.range = theirs.range;
    }
    if (u.args.empty() && !u.setRange && u.kernel == kNone) continue;
    Node node;
    if (Error e = checkUpdate(u, node)) return makeError("whole-graph update: " + e.message());
    changed.emplace_back(n, std::move(node));
  }
  if (graph_.edges.size() != source.edges.size())
    return makeError("whole-graph update: the source graph has " + std::to_string(source.edges.size()) +
                     " edges, this executable " + std::to_string(graph_.edges.size()));
  for (size_t e = 0; e < graph_.edges.size(); ++e)
    if (graph_.edges[e].from != source.edges[e].from || graph_.edges[e].to != source.edges[e].to)
      return makeError("whole-graph update: edge " + std::to_string(e) + " differs (" +
                       std::to_string(graph_.edges[e].from) + "->" + std::to_string(graph_.edges[e].to) +
                       " vs " + std::to_string(source.edges[e].from) + "->" +
                       std::to_string(source.edges[e].to) + ")");
  return commitUpdates(std::move(changed), {});
}

} // namespace cgraph::rt
