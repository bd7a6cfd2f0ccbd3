// Interval assignment of transient slots to shared blocks (memory_plan.h).
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

struct Block {
  uint32_t last = kNone; // the slot placed last
  uint64_t bytes = 0;    // the largest slot so far
  uint32_t slots = 0;
};

// The block for slot s: a block whose last occupant's users all precede every user
// of s, the best fit by size; kNone when there is none.
uint32_t chooseBlock(const std::vector<Block> &blocks, const SlotUses &u, const Reach &reach, uint32_t s,
                     uint64_t bytes) {
  uint32_t best = kNone;
  auto better = [&](const Block &a, const Block &b) { // a fits s better than b
    const bool aHolds = a.bytes >= bytes, bHolds = b.bytes >= bytes;
    if (aHolds != bHolds) return aHolds;
    return aHolds ? a.bytes < b.bytes : a.bytes > b.bytes;
  };
  for (uint32_t b = 0; b < blocks.size(); ++b) {
    if (best != kNone && !better(blocks[b], blocks[best])) continue;
    const std::vector<uint32_t> &prev = u.users[blocks[b].last];
    bool ok = true;
    for (uint32_t n : u.users[s])
      if (!(ok = reach.allBefore(prev, n))) break;
    if (ok) best = b;
  }
  return best;
}

} // namespace

MemoryPlan planMemory(const Graph &g, const std::vector<uint64_t> &slotBytes) {
  MemoryPlan plan;
  plan.block.assign(g.slots.size(), kNone);
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
  std::vector<uint32_t> slots; // eligible, by first use
  std::vector<uint32_t> position(g.nodes.size());
  for (uint32_t i = 0; i < order.size(); ++i)
    position[order[i]] = i;
  for (uint32_t s = 0; s < g.slots.size(); ++s)
    if (u.eligible[s]) slots.push_back(s);
  if (slots.size() < 2) {
    plan.skipped = slots.empty() ? "no transient slots to plan" : "one transient slot";
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
  std::vector<Block> blocks;
  std::vector<uint32_t> blockOf(g.slots.size(), kNone);
  for (uint32_t s : slots) {
    const uint64_t bytes = slotBytes[s];
    uint32_t b = chooseBlock(blocks, u, reach, s, bytes);
    if (b == kNone) {
      b = uint32_t(blocks.size());
      blocks.push_back(Block{});
    }
    blocks[b].last = s;
    blocks[b].bytes = std::max(blocks[b].bytes, bytes);
    ++blocks[b].slots;
    blockOf[s] = b;
  }
  // Blocks of one slot are no plan; number the others densely.
  std::vector<uint32_t> renumber(blocks.size(), kNone);
  for (uint32_t s : slots) {
    const uint32_t b = blockOf[s];
    if (blocks[b].slots < 2) continue;
    if (renumber[b] == kNone) {
      renumber[b] = plan.blocks++;
      plan.bytesAfter += blocks[b].bytes;
    }
    plan.block[s] = renumber[b];
    plan.bytesBefore += slotBytes[s];
  }
  if (plan.blocks == 0) plan.skipped = "no two transient slots have disjoint lifetimes";
  return plan;
}

} // namespace cgraph
