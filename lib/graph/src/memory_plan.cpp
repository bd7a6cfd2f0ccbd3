// Conflicts of transient slots and their packing into one arena (memory_plan.h).
#include <cgraph/graph/memory_plan.h>

#include <cgraph/graph/hazards.h>
#include <cgraph/graph/order.h>

#include "graph_util.h"

#include <algorithm>

namespace cgraph {

namespace {

// Per slot: the nodes that touch it, in execution order; whether it may be planned.
struct SlotUses {
  std::vector<std::vector<uint32_t>> users;
  std::vector<uint8_t> eligible;
};

bool plannableKind(NodeKind k) {
  return k == NodeKind::Kernel || k == NodeKind::Copy || k == NodeKind::CopyRect || k == NodeKind::Fill;
}

SlotUses collectUses(const Graph &g, const std::vector<uint32_t> &order) {
  SlotUses u;
  u.users.resize(g.slots.size());
  u.eligible.resize(g.slots.size());
  for (size_t s = 0; s < g.slots.size(); ++s)
    u.eligible[s] = g.slots[s].init == SlotInit::Transient;
  AccessInfo acc;
  for (uint32_t n : order) {
    const Node &node = g.nodes[n];
    nodeAccesses(g, n, acc);
    const bool ok = plannableKind(node.kind) && node.device == 0;
    for (const SlotAccess &a : acc.accesses) {
      if (a.slot >= g.slots.size()) continue;
      if (!ok) u.eligible[a.slot] = 0;
      std::vector<uint32_t> &list = u.users[a.slot];
      if (list.empty() || list.back() != n) list.push_back(n);
    }
    for (uint32_t s : node.subgraphSlots)
      if (s < g.slots.size()) u.eligible[s] = 0;
  }
  for (size_t s = 0; s < g.slots.size(); ++s)
    if (u.users[s].empty()) u.eligible[s] = 0;
  return u;
}

// Ancestor sets over the "interesting" nodes (those that touch an eligible slot), one
// bitset per node, built in execution order.
class Reach {
public:
  Reach(const Graph &g, const std::vector<uint32_t> &order, const std::vector<uint32_t> &index, uint32_t count)
      : words_((count + 63) / 64), bits_(size_t(g.nodes.size()) * words_, 0), index_(index) {
    const detail::Adjacency preds = detail::predecessors(g);
    for (uint32_t n : order) {
      uint64_t *mine = row(n);
      for (uint32_t p : preds[n]) {
        const uint64_t *theirs = row(p);
        for (size_t w = 0; w < words_; ++w)
          mine[w] |= theirs[w];
        if (index_[p] != kNone) mine[index_[p] / 64] |= uint64_t(1) << (index_[p] % 64);
      }
    }
  }
  // Whether every node of `before` is a strict ancestor of node `n`.
  bool allBefore(const std::vector<uint32_t> &before, uint32_t n) const {
    const uint64_t *anc = row(n);
    for (uint32_t b : before) {
      const uint32_t i = index_[b];
      if (!(anc[i / 64] >> (i % 64) & 1)) return false;
    }
    return true;
  }

private:
  uint64_t *row(uint32_t n) { return bits_.data() + size_t(n) * words_; }
  const uint64_t *row(uint32_t n) const { return bits_.data() + size_t(n) * words_; }
  size_t words_;
  std::vector<uint64_t> bits_;
  const std::vector<uint32_t> &index_;
};

// Whether slots a and b (a's first use not after b's) may not share bytes: their uses
// interleave in the execution order, or some use of a does not reach every use of b.
bool conflict(const SlotUses &u, const Reach &reach, const std::vector<uint32_t> &position, uint32_t a,
              uint32_t b) {
  if (position[u.users[a].back()] >= position[u.users[b].front()]) return true;
  for (uint32_t n : u.users[b])
    if (!reach.allBefore(u.users[a], n)) return true;
  return false;
}

uint64_t alignUp(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

} // namespace

MemoryPlan planMemory(const Graph &g, const std::vector<uint64_t> &slotBytes) {
  MemoryPlan plan;
  plan.planned.assign(g.slots.size(), 0);
  plan.conflicts.resize(g.slots.size());
  std::vector<uint32_t> order = g.order;
  if (!isTopologicalOrder(g, order)) {
    auto o = executionOrder(g);
    if (!o) {
      plan.skipped = "the graph has no execution order: " + o.error().message();
      return plan;
    }
    order = std::move(*o);
  }
  const SlotUses u = collectUses(g, order);
  std::vector<uint32_t> position(g.nodes.size());
  for (uint32_t i = 0; i < order.size(); ++i)
    position[order[i]] = i;
  std::vector<uint32_t> slots; // eligible, by first use
  for (uint32_t s = 0; s < g.slots.size(); ++s)
    if (u.eligible[s]) slots.push_back(s);
  if (slots.size() < 2) {
    plan.skipped = slots.empty() ? "no transient slots to plan" : "one transient slot";
    return plan;
  }
  if (slots.size() > kMaxPlannedSlots) {
    plan.skipped = std::to_string(slots.size()) + " transient slots, more than the planner takes (" +
                   std::to_string(kMaxPlannedSlots) + ")";
    return plan;
  }
  std::sort(slots.begin(), slots.end(), [&](uint32_t a, uint32_t b) {
    const uint32_t pa = position[u.users[a].front()], pb = position[u.users[b].front()];
    return pa != pb ? pa < pb : a < b;
  });
  std::vector<uint8_t> touches(g.nodes.size(), 0);
  for (uint32_t s : slots)
    for (uint32_t n : u.users[s])
      touches[n] = 1;
  std::vector<uint32_t> index(g.nodes.size(), kNone);
  uint32_t count = 0;
  for (uint32_t n : order)
    if (touches[n]) index[n] = count++;
  if (uint64_t(g.nodes.size()) * ((count + 63) / 64) * 64 > kMaxPlanBits) {
    plan.skipped = "the graph is too large for the planner (" + std::to_string(g.nodes.size()) + " nodes, " +
                   std::to_string(count) + " touching transient slots)";
    return plan;
  }
  const Reach reach(g, order, index, count);
  std::vector<std::vector<uint32_t>> conflicts(g.slots.size());
  for (size_t i = 0; i < slots.size(); ++i)
    for (size_t j = i + 1; j < slots.size(); ++j)
      if (conflict(u, reach, position, slots[i], slots[j])) {
        conflicts[slots[i]].push_back(slots[j]);
        conflicts[slots[j]].push_back(slots[i]);
      }
  // A slot that conflicts with every other gains nothing: it keeps its own memory.
  for (uint32_t s : slots)
    if (conflicts[s].size() + 1 < slots.size()) plan.planned[s] = 1;
  for (uint32_t s : slots) {
    if (!plan.planned[s]) continue;
    ++plan.slots;
    plan.bytesBefore += slotBytes[s];
    for (uint32_t c : conflicts[s])
      if (plan.planned[c]) plan.conflicts[s].push_back(c);
    std::sort(plan.conflicts[s].begin(), plan.conflicts[s].end());
  }
  if (plan.slots < 2) {
    plan = MemoryPlan{};
    plan.planned.assign(g.slots.size(), 0);
    plan.conflicts.resize(g.slots.size());
    plan.skipped = "no two transient slots have disjoint lifetimes";
    return plan;
  }
  std::vector<uint64_t> offsets;
  plan.bytesAfter = packMemory(plan, slotBytes, 1, &offsets);
  return plan;
}

uint64_t packMemory(const MemoryPlan &plan, const std::vector<uint64_t> &slotBytes, uint32_t alignment,
                    std::vector<uint64_t> *offsets) {
  const uint64_t align = std::max<uint64_t>(alignment, kPlanAlignment);
  offsets->assign(plan.planned.size(), 0);
  std::vector<uint32_t> bySize;
  for (uint32_t s = 0; s < plan.planned.size(); ++s)
    if (plan.planned[s]) bySize.push_back(s);
  std::sort(bySize.begin(), bySize.end(), [&](uint32_t a, uint32_t b) {
    return slotBytes[a] != slotBytes[b] ? slotBytes[a] > slotBytes[b] : a < b;
  });
  std::vector<uint8_t> placed(plan.planned.size(), 0);
  std::vector<std::pair<uint64_t, uint64_t>> taken; // [begin, end) of placed conflicting slots
  uint64_t arena = 0;
  for (uint32_t s : bySize) {
    taken.clear();
    for (uint32_t c : plan.conflicts[s])
      if (placed[c]) taken.emplace_back((*offsets)[c], (*offsets)[c] + slotBytes[c]);
    std::sort(taken.begin(), taken.end());
    uint64_t at = 0;
    for (const auto &[begin, end] : taken) {
      if (at + slotBytes[s] <= begin) break;
      at = std::max(at, alignUp(end, align));
    }
    (*offsets)[s] = at;
    placed[s] = 1;
    arena = std::max(arena, at + slotBytes[s]);
  }
  return arena;
}

} // namespace cgraph
