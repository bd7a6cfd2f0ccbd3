// Internal to lib/runtime: pieces shared by the executables the runtime builds out of
// backend executables (staged.cpp: conditional nodes; multi_device.cpp: placement).
#pragma once

#include "cgraph/graph/labels.h"
#include "cgraph/runtime/runtime.h"
#include "cgraph/runtime/wait_once_event.h"

#include <algorithm>
#include <tuple>

namespace cgraph::rt::detail {

// Every slot bound by the caller of the stage: the staged executable owns the memory.
inline void makeExternal(std::vector<Slot> &slots) {
  for (Slot &s : slots) {
    s.init = SlotInit::External;
    s.data.clear();
    s.path.clear();
  }
}

// The ordinary nodes `nodes` (in execution order) of `g` as a graph of their own over
// g's parameters and kernels, and over all of g's slots (usedSlots null) or only the
// ones the nodes name (usedSlots set: stage slot i is g's slot (*usedSlots)[i]).
inline Graph stageGraph(const Graph &g, const std::vector<uint32_t> &nodes,
                        std::vector<uint32_t> *usedSlots = nullptr) {
  Graph s;
  s.name = g.name;
  s.params = g.params;
  s.modules = g.modules;
  s.kernels = g.kernels;
  std::vector<uint32_t> local(g.nodes.size(), kNone);
  for (uint32_t i = 0; i < nodes.size(); ++i) {
    local[nodes[i]] = i;
    s.nodes.push_back(g.nodes[nodes[i]]);
    s.nodes.back().device = 0;
    s.order.push_back(i);
  }
  if (!usedSlots) {
    s.slots = g.slots;
  } else {
    std::vector<uint32_t> map(g.slots.size(), kNone);
    usedSlots->clear();
    auto use = [&](uint32_t &slot) {
      if (slot >= map.size()) return;
      if (map[slot] == kNone) {
        map[slot] = uint32_t(usedSlots->size());
        usedSlots->push_back(slot);
      }
      slot = map[slot];
    };
    for (Node &n : s.nodes) {
      for (Arg &a : n.args)
        if (a.kind == ArgKind::Slot) use(a.index);
      if (n.kind == NodeKind::Copy || n.kind == NodeKind::CopyRect) {
        use(n.copy.srcSlot);
        use(n.copy.dstSlot);
      }
      if (n.kind == NodeKind::Fill) use(n.fill.slot);
      if (n.kind == NodeKind::Conditional) use(n.cond.slot);
      for (uint32_t &b : n.subgraphSlots) use(b);
    }
    for (uint32_t old : *usedSlots) s.slots.push_back(g.slots[old]);
  }
  makeExternal(s.slots);
  // Bodies of conditional nodes come along (each node's `subgraph` renumbered).
  for (Node &n : s.nodes)
    if (n.kind == NodeKind::Conditional && n.subgraph < g.subgraphs.size()) {
      s.subgraphs.push_back(g.subgraphs[n.subgraph]);
      n.subgraph = uint32_t(s.subgraphs.size() - 1);
    }
  for (const Edge &e : g.edges)
    if (local[e.from] != kNone && local[e.to] != kNone) s.edges.push_back({local[e.from], local[e.to]});
  for (const FieldExpr &fe : g.exprs) {
    if (fe.field == ExprField::SlotSize) {
      // The stage's slots are bound by the executable that owns the graph, which
      // evaluates the size; the stage takes whatever range it is given.
      uint32_t slot = fe.arg;
      if (usedSlots) {
        auto it = std::find(usedSlots->begin(), usedSlots->end(), fe.arg);
        slot = it == usedSlots->end() ? kNone : uint32_t(it - usedSlots->begin());
      }
      if (slot < s.slots.size()) s.slots[slot].size = 0;
      continue;
    }
    if (fe.node < local.size() && local[fe.node] != kNone) {
      FieldExpr x = fe;
      x.node = local[fe.node];
      s.exprs.push_back(std::move(x));
    }
  }
  std::stable_sort(s.exprs.begin(), s.exprs.end(), [](const FieldExpr &a, const FieldExpr &b) {
    return std::make_tuple(a.node, uint16_t(a.field), a.arg) < std::make_tuple(b.node, uint16_t(b.field), b.arg);
  });
  return s;
}

// The update that brings node `local` of a stage built by stageGraph from `plan` (the
// flattened graph as finalized) to the state of node n of `current` (the runtime's
// Executable::graph() after an update): its arguments (not the ones that are stored
// expressions, which the stage evaluates itself), its literal nd-range, its kernel and
// its enable state. `slotOf` maps plan slots to stage slots (null: the same); a slot the
// stage does not bind is an error.
inline Expected<NodeUpdate> forwardedUpdate(const Graph &plan, const Graph &current, uint32_t n, uint32_t local,
                                            bool enabled, const std::vector<uint32_t> *slotOf) {
  const Node &node = current.nodes[n];
  NodeUpdate u;
  u.node = local;
  u.enabled = enabled ? 1 : 0;
  if (node.kind != NodeKind::Kernel) return u;
  bool rangeExpr = false;
  std::vector<uint8_t> argExpr(node.args.size(), 0);
  for (const FieldExpr &fe : plan.exprs) {
    if (fe.node != n) continue;
    if (fe.field == ExprField::ScalarArg && fe.arg < argExpr.size()) argExpr[fe.arg] = 1;
    if (uint16_t(fe.field) < 9) rangeExpr = true;
  }
  for (uint32_t a = 0; a < node.args.size(); ++a) {
    if (argExpr[a]) continue;
    Arg arg = node.args[a];
    if (arg.kind == ArgKind::Slot && slotOf) {
      const uint32_t s = arg.index < slotOf->size() ? (*slotOf)[arg.index] : kNone;
      if (s == kNone)
        return makeError(nodeLabel(current, n) + ": the update makes it use slot '" + current.slots[arg.index].name +
                         "', which its device's segment does not bind");
      arg.index = s;
    }
    u.args.emplace_back(a, arg);
  }
  bool literal = !rangeExpr;
  for (int d = 0; d < 3 && literal; ++d)
    literal = node.range.global[d].param == kNone && node.range.local[d].param == kNone &&
              node.range.offset[d].param == kNone;
  if (literal) {
    u.setRange = true;
    u.range = node.range;
  }
  if (!node.alternatives.empty()) u.kernel = node.kernel;
  return u;
}

// A submission that already completed (executables that run on the calling thread).
class DoneEvent : public WaitOnceEvent {
public:
  DoneEvent(Error e, std::vector<NodeTiming> t) : error_(std::move(e)) { timings_ = std::move(t); }
  bool isComplete() const override { return true; }

private:
  Error waitOnce() override { return error_; }

  Error error_;
};


} // namespace cgraph::rt::detail
