// Enqueue's checks of a submission that are not the binding table's own (runtime.cpp):
// overlapping bindings of written slots, nd-ranges against the device's limits, and
// the copy and fill ranges that stored expressions give.
#include "cgraph/runtime/runtime.h"

#include "cgraph/graph/labels.h"
#include "cgraph/runtime/slot_init.h"
#include "executable_internal.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <string>

namespace cgraph::rt {

using detail::checkNodeRange;

Error Executable::checkOverlaps() {
  // Sorted by (buffer, begin): a range can only overlap those that start before it ends.
  scratchRanges_.clear();
  for (uint32_t j = 0; j < scratchSlots_.size(); ++j) {
    const ResolvedSlot &r = scratchSlots_[j];
    if (!r.buffer || inArena_[j]) continue; // planned slots share the arena by design
    const uint64_t need = needs_[j].minSize;
    const uint64_t extent = need ? std::min(r.length, need) : r.length;
    if (extent) scratchRanges_.push_back({r.buffer, r.offset, r.offset + extent, j});
  }
  if (scratchRanges_.size() < 2) return Error::success();
  std::sort(scratchRanges_.begin(), scratchRanges_.end(),
            [](const BoundRange &a, const BoundRange &b) {
              return a.buffer != b.buffer ? std::less<const Buffer *>()(a.buffer, b.buffer)
                                          : a.begin < b.begin;
            });
  for (size_t i = 0; i < scratchRanges_.size(); ++i) {
    const BoundRange &a = scratchRanges_[i];
    for (size_t k = i + 1; k < scratchRanges_.size(); ++k) {
      const BoundRange &b = scratchRanges_[k];
      if (b.buffer != a.buffer || b.begin >= a.end) break;
      if (!written_[a.slot] && !written_[b.slot]) continue;
      const uint32_t first = std::min(a.slot, b.slot), second = std::max(a.slot, b.slot);
      return makeError(slotLabel(graph_, first) + " and " + slotLabel(graph_, second) +
                       " are bound to overlapping ranges of one buffer ([" +
                       std::to_string(a.begin) + ", " + std::to_string(a.end) + ") and [" +
                       std::to_string(b.begin) + ", " + std::to_string(b.end) + ")) and " +
                       (written_[a.slot] && written_[b.slot] ? "both are" : "one is") +
                       " written; hazards are tracked per slot, so bind disjoint ranges");
    }
  }
  return Error::success();
}

Error Executable::checkRanges(bool all) {
  const Capabilities &caps = device_->info().caps;
  auto value = [&](const Dim &d) { return d.param == kNone ? d.value : scratchParams_[d.param]; };
  auto check = [&](uint32_t n) { return checkNodeRange(graph_, n, caps, value); };
  if (all) {
    for (uint32_t n = 0; n < graph_.nodes.size(); ++n)
      if (graph_.nodes[n].kind == NodeKind::Kernel) CGRAPH_RETURN_IF_ERROR(check(n));
    return Error::success();
  }
  for (uint32_t n : paramRangeNodes_)
    CGRAPH_RETURN_IF_ERROR(check(n));
  return Error::success();
}

// The copy and fill nodes with stored expressions: every range inside its slot's size
// for this submission, and a copy's source and destination apart within one slot.
Error Executable::checkTransfers() {
  if (transferIndex_.empty()) return Error::success();
  const size_t nParams = graph_.params.size();
  auto slotBytes = [&](uint32_t slot) -> uint64_t {
    if (!slotSizeExpr_.empty() && slotSizeExpr_[slot] != kNone)
      return scratchParams_[nParams + slotSizeExpr_[slot]];
    if (graph_.slots[slot].size) return graph_.slots[slot].size;
    if (scratchSlots_[slot].buffer) return scratchSlots_[slot].length;
    return ownedSlotBytes(graph_.slots[slot], needs_[slot].minSize);
  };
  for (const std::array<uint32_t, 4> &x : transferParams_) { // O(copy/fill nodes with expressions)
    const uint32_t n = x[3];
    const Node &node = graph_.nodes[n];
    const Transfer t = transfer(n, scratchParams_);
    const bool fill = node.kind == NodeKind::Fill;
    // "dst offset 96 (= $i * 32)": the field's value and, when stored, its expression.
    auto field = [&](int k, ExprField f, uint64_t v) {
      std::string out = exprFieldName(f, 0) + " " + std::to_string(v);
      if (x[k] != kNone) out += " (= " + exprCode_[x[k] - nParams].text + ")";
      return out;
    };
    auto side = [&](int k, ExprField f, uint32_t slot, uint64_t offset) -> Error {
      const uint64_t size = slotBytes(slot);
      if (offset <= size && t.bytes <= size - offset) return Error::success();
      return makeError(nodeLabel(graph_, n) + ": " + field(k, f, offset) + " + " +
                       field(2, fill ? ExprField::FillBytes : ExprField::CopyBytes, t.bytes) +
                       " is past the end of " + slotLabel(graph_, slot) + " (" +
                       std::to_string(size) + " bytes in this submission)");
    };
    if (fill) {
      CGRAPH_RETURN_IF_ERROR(side(1, ExprField::FillOffset, node.fill.slot, t.dstOffset));
      continue;
    }
    CGRAPH_RETURN_IF_ERROR(side(0, ExprField::CopySrcOffset, node.copy.srcSlot, t.srcOffset));
    CGRAPH_RETURN_IF_ERROR(side(1, ExprField::CopyDstOffset, node.copy.dstSlot, t.dstOffset));
    if (node.copy.srcSlot == node.copy.dstSlot && t.bytes && t.srcOffset < t.dstOffset + t.bytes &&
        t.dstOffset < t.srcOffset + t.bytes)
      return makeError(nodeLabel(graph_, n) + ": " +
                       field(0, ExprField::CopySrcOffset, t.srcOffset) + " and " +
                       field(1, ExprField::CopyDstOffset, t.dstOffset) + " with " +
                       field(2, ExprField::CopyBytes, t.bytes) + " overlap in " +
                       slotLabel(graph_, node.copy.srcSlot));
  }
  return Error::success();
}

} // namespace cgraph::rt
