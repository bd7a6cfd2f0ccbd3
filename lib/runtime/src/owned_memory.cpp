// Runtime-owned memory of an executable: the memory plan made at finalize and the shared
// blocks that enqueue places planned transient slots in (runtime.h, memory_plan.h).
#include "cgraph/runtime/runtime.h"
#include "cgraph/runtime/slot_init.h"

#include <algorithm>

namespace cgraph::rt {

// Sizes steer the planner's best fit only: a slot whose size is an expression counts
// with its size at the parameters' defaults (0 when they do not evaluate).
void Executable::planOwnedSlots(bool enabled) {
  plan_ = MemoryPlan{};
  blocks_.clear();
  if (!enabled) {
    plan_.skipped = "memory planning is off";
    return;
  }
  std::vector<uint64_t> bytes(graph_.slots.size());
  for (size_t s = 0; s < bytes.size(); ++s)
    bytes[s] = ownedSlotBytes(graph_.slots[s], needs_[s].minSize);
  if (!slotSizeExpr_.empty() && exprError_.empty()) {
    const size_t nParams = graph_.params.size();
    scratchParams_.resize(nParams);
    for (size_t p = 0; p < nParams; ++p)
      scratchParams_[p] = graph_.params[p].defaultBits;
    const bool ok = !evaluateExprs();
    for (size_t s = 0; s < bytes.size(); ++s)
      if (slotSizeExpr_[s] != kNone) bytes[s] = ok ? scratchParams_[nParams + slotSizeExpr_[s]] : 0;
  }
  plan_ = planMemory(graph_, bytes);
  blocks_.resize(plan_.blocks);
  blockNeed_.assign(plan_.blocks, 0);
}

// Called by enqueue for a planned slot that this submission does not bind: the slot
// gets `bytes` of its block.
void Executable::notePlanned(uint32_t slot, uint64_t bytes) {
  const uint32_t b = plan_.block[slot];
  blockNeed_[b] = std::max(blockNeed_[b], bytes);
  inBlock_[slot] = 1;
  scratchSlots_[slot] = ResolvedSlot{nullptr, 0, bytes};
}

// Grows every block to this submission's largest need (a new zeroed buffer, after the
// previous submission, which may still use the old one, completed) and resolves the
// slots noted in it.
Error Executable::placePlanned() {
  for (uint32_t b = 0; b < blocks_.size(); ++b) {
    const uint64_t need = blockNeed_[b];
    if (!need || (blocks_[b] && blocks_[b]->size() >= need)) continue;
    Slot block;
    block.name = "memory block " + std::to_string(b);
    block.init = SlotInit::Transient;
    block.size = need;
    uint32_t align = std::max<uint32_t>(ownedAlignment_, 64);
    for (uint32_t s = 0; s < graph_.slots.size(); ++s)
      if (plan_.block[s] == b) align = std::max(align, needs_[s].alignment);
    Expected<std::unique_ptr<Buffer>> buf = setUpOwnedSlot(*device_, block, need, align, ownedPolicy_);
    if (!buf) return buf.error();
    if (last_) (void)last_->wait();
    blocks_[b] = std::move(*buf);
  }
  for (uint32_t s = 0; s < inBlock_.size(); ++s)
    if (inBlock_[s]) scratchSlots_[s].buffer = blocks_[plan_.block[s]].get();
  std::fill(blockNeed_.begin(), blockNeed_.end(), 0);
  return Error::success();
}

// After an update changed which slots nodes touch: the planned slots stay the ones the
// backend left to enqueue (it allocated the others), grouped by a fresh plan; a slot
// the fresh plan leaves alone gets a block of its own. Dropping slots from a valid
// group keeps it valid (the order between the others goes through the dropped slot's
// nodes, which stay).
void Executable::replanOwnedSlots() {
  if (plan_.blocks == 0) return;
  const MemoryPlan old = plan_;
  planOwnedSlots(true);
  MemoryPlan next;
  next.block.assign(old.block.size(), kNone);
  std::vector<uint32_t> renumber(plan_.blocks, kNone);
  for (uint32_t s = 0; s < old.block.size(); ++s) {
    if (old.block[s] == kNone) continue;
    const uint32_t b = plan_.block[s];
    if (b == kNone) {
      next.block[s] = next.blocks++;
      continue;
    }
    if (renumber[b] == kNone) renumber[b] = next.blocks++;
    next.block[s] = renumber[b];
  }
  next.bytesBefore = old.bytesBefore;
  next.bytesAfter = plan_.bytesAfter; // the fresh plan's figure, for information
  plan_ = std::move(next);
  blocks_.clear();
  blocks_.resize(plan_.blocks);
  blockNeed_.assign(plan_.blocks, 0);
}

uint64_t Executable::ownedBytes() const {
  uint64_t total = finalizeOwnedBytes_;
  for (const auto &b : grown_)
    if (b) total += b->size();
  for (const auto &b : blocks_)
    if (b) total += b->size();
  return total;
}

} // namespace cgraph::rt
