// Runtime-owned memory of an executable: the memory plan made at finalize and the arena
// that enqueue places planned transient slots in (runtime.h, memory_plan.h).
#include "cgraph/runtime/runtime.h"
#include "cgraph/runtime/slot_init.h"

#include <algorithm>

namespace cgraph::rt {

// The bytes the plan's figures are given for: a slot whose size is an expression counts
// with its size at the parameters' defaults (1 when they do not evaluate).
std::vector<uint64_t> Executable::plannedSizes() {
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
      if (slotSizeExpr_[s] != kNone) bytes[s] = ok ? scratchParams_[nParams + slotSizeExpr_[s]] : 1;
  }
  return bytes;
}

void Executable::resetArena() {
  arena_.reset();
  planBytes_.assign(graph_.slots.size(), 0);
  packedBytes_.clear();
  planOffsets_.assign(graph_.slots.size(), 0);
}

void Executable::planOwnedSlots(bool enabled) {
  plan_ = MemoryPlan{};
  plan_.planned.assign(graph_.slots.size(), 0);
  plan_.conflicts.resize(graph_.slots.size());
  resetArena();
  if (!enabled) {
    plan_.skipped = "memory planning is off";
    return;
  }
  plan_ = planMemory(graph_, plannedSizes());
  planAlign_ = arenaAlignment();
}

// Offsets and the arena honour the backend's owned-slot alignment, a bound range's
// (Capabilities::bindingOffsetAlignment) and every planned slot's own.
uint32_t Executable::arenaAlignment() const {
  uint32_t align = std::max<uint32_t>({ownedAlignment_, 64, device_->info().caps.bindingOffsetAlignment});
  for (uint32_t s = 0; s < graph_.slots.size(); ++s)
    if (plan_.planned[s]) align = std::max(align, needs_[s].alignment);
  return align;
}

// Called by enqueue for a planned slot that this submission does not bind: the slot
// gets `bytes` of the arena (placePlanned gives the offset).
void Executable::notePlanned(uint32_t slot, uint64_t bytes) {
  planBytes_[slot] = bytes;
  inArena_[slot] = 1;
  ++inArenaCount_;
  scratchSlots_[slot] = ResolvedSlot{nullptr, 0, bytes};
}

// Packs the noted slots again when their sizes changed, grows the arena to the packing
// (a new zeroed buffer, after the previous submission, which may still use the old one,
// completed) and resolves every noted slot to its range of the arena. Submissions of
// one executable run in order, so a new packing never meets an earlier one's ranges.
Error Executable::placePlanned() {
  if (inArenaCount_ == 0) return Error::success();
  if (planBytes_ != packedBytes_) {
    arenaNeed_ = packMemory(plan_, planBytes_, planAlign_, &planOffsets_);
    packedBytes_ = planBytes_;
  }
  if (!arena_ || arena_->size() < arenaNeed_) {
    Slot arena;
    arena.name = "memory plan arena";
    arena.init = SlotInit::Transient;
    arena.size = arenaNeed_;
    Expected<std::unique_ptr<Buffer>> buf =
        setUpOwnedSlot(*device_, arena, arenaNeed_, planAlign_, ownedPolicy_);
    if (!buf) return buf.error();
    if (last_) (void)last_->wait();
    arena_ = std::move(*buf);
  }
  for (uint32_t s = 0; s < inArena_.size(); ++s)
    if (inArena_[s]) scratchSlots_[s] = ResolvedSlot{arena_.get(), planOffsets_[s], planBytes_[s]};
  return Error::success();
}

// After an update changed which slots nodes touch: the planned slots stay the ones the
// backend left to enqueue (it allocated the others); two of them may share bytes only
// when a fresh plan lets them, so a slot the fresh plan leaves out conflicts with all.
void Executable::replanOwnedSlots() {
  if (plan_.slots == 0) return;
  const MemoryPlan fresh = planMemory(graph_, plannedSizes());
  MemoryPlan next = plan_;
  for (uint32_t s = 0; s < next.planned.size(); ++s) {
    if (!next.planned[s]) continue;
    next.conflicts[s].clear();
    for (uint32_t t = 0; t < next.planned.size(); ++t) {
      if (t == s || !next.planned[t]) continue;
      const bool freshConflict = fresh.isPlanned(s) && fresh.isPlanned(t) &&
                         std::binary_search(fresh.conflicts[s].begin(), fresh.conflicts[s].end(), t);
      if (freshConflict || !fresh.isPlanned(s) || !fresh.isPlanned(t)) next.conflicts[s].push_back(t);
    }
  }
  next.bytesAfter = fresh.bytesAfter; // the fresh plan's figure, for information
  plan_ = std::move(next);
  resetArena();
  planAlign_ = arenaAlignment();
}

uint64_t Executable::ownedBytes() const {
  uint64_t total = finalizeOwnedBytes_;
  for (const auto &b : grown_)
    if (b) total += b->size();
  if (arena_) total += arena_->size();
  return total;
}

} // namespace cgraph::rt
