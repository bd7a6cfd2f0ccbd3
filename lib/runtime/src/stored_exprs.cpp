// Stored parameter expressions (.cgf 2.0, format/SPEC.md section 4a) at enqueue: their
// values for one submission, the copy, fill and collective fields they give, and the
// runtime-owned slots whose size is one. The constructor (runtime.cpp) decodes them.
#include "cgraph/runtime/runtime.h"

#include "cgraph/expr.h"
#include "cgraph/graph/labels.h"
#include "cgraph/runtime/slot_init.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>

namespace cgraph::rt {

// Appends one value per stored expression to scratchParams_ and range-checks it.
Error Executable::evaluateExprs() {
  const size_t nParams = graph_.params.size();
  scratchParams_.resize(nParams + exprCode_.size());
  auto paramValue = [&](uint32_t p) {
    return expr::integerValue(graph_.params[p].type, scratchParams_[p]);
  };
  for (size_t e = 0; e < exprCode_.size(); ++e) {
    const FieldExpr &fe = graph_.exprs[e];
    const ExprSlot &x = exprCode_[e];
    auto where = [&] {
      return (fe.field == ExprField::SlotSize ? slotLabel(graph_, fe.arg)
                                              : nodeLabel(graph_, fe.node)) +
             ": " + exprFieldName(fe.field, fe.arg) + " = " + x.text;
    };
    Expected<int64_t> r = expr::evaluateChecked(x.program, exprStack_.data(), paramValue);
    if (!r) return makeError(where() + ": " + r.error().message());
    const int64_t v = *r;
    const uint16_t f = uint16_t(fe.field);
    if ((f < 6 || fe.field == ExprField::SlotSize) && v < 1)
      return makeError(where() + " is " + std::to_string(v) + "; it must be at least 1");
    if (((f >= 6 && f <= 8) || isTransferField(fe.field) || isCollectiveField(fe.field)) && v < 0)
      return makeError(where() + " is " + std::to_string(v) + "; it must not be negative");
    if (fe.field == ExprField::FillOffset || fe.field == ExprField::FillBytes) {
      const size_t ps = graph_.nodes[fe.node].fill.pattern.size();
      if (ps > 1 && uint64_t(v) % ps != 0)
        return makeError(where() + " is " + std::to_string(v) +
                         ", which is not a multiple of the pattern size " + std::to_string(ps));
    }
    if (fe.field == ExprField::ScalarArg) {
      const ScalarType t = graph_.nodes[fe.node].args[fe.arg].type; // kept by the rewrite
      const uint32_t bytes = scalarSize(t);
      const bool isSigned = t == ScalarType::I8 || t == ScalarType::I16 || t == ScalarType::I32 ||
                            t == ScalarType::I64;
      bool fits = true;
      if (bytes < 8) {
        const int64_t hi =
            isSigned ? (int64_t(1) << (bytes * 8 - 1)) - 1 : (int64_t(1) << (bytes * 8)) - 1;
        const int64_t lo = isSigned ? -(int64_t(1) << (bytes * 8 - 1)) : 0;
        fits = v >= lo && v <= hi;
      } else if (!isSigned) {
        fits = v >= 0;
      }
      if (!fits)
        return makeError(where() + " is " + std::to_string(v) + ", which does not fit its type " +
                         scalarName(t));
    }
    scratchParams_[nParams + e] = uint64_t(v);
  }
  return Error::success();
}

Executable::Transfer Executable::transfer(uint32_t node,
                                          const std::vector<uint64_t> &params) const {
  const Node &n = graph_.nodes[node];
  Transfer t;
  if (n.kind == NodeKind::Fill) {
    t.dstOffset = n.fill.offset;
    t.bytes = n.fill.bytes;
  } else {
    t.srcOffset = n.copy.srcOffset;
    t.dstOffset = n.copy.dstOffset;
    t.bytes = n.copy.bytes;
  }
  if (transferIndex_.empty() || transferIndex_[node] == kNone) return t;
  const std::array<uint32_t, 4> &x = transferParams_[transferIndex_[node]];
  if (x[0] != kNone) t.srcOffset = params[x[0]];
  if (x[1] != kNone) t.dstOffset = params[x[1]];
  if (x[2] != kNone) t.bytes = params[x[2]];
  return t;
}

CollectiveOp Executable::collective(uint32_t node, const std::vector<uint64_t> &params) const {
  CollectiveOp c = graph_.nodes[node].coll;
  if (collIndex_.empty() || collIndex_[node] == kNone) return c;
  const std::array<uint32_t, 4> &x = collParams_[collIndex_[node]];
  if (x[0] != kNone) c.sendOffset = params[x[0]];
  if (x[1] != kNone) c.recvOffset = params[x[1]];
  if (x[2] != kNone) c.count = params[x[2]];
  if (x[3] != kNone) c.peer = params[x[3]];
  return c;
}

// A runtime-owned slot whose size is an expression: one buffer of the largest size seen
// so far, allocated and initialized (slot_init.h) again when a submission needs more.
Error Executable::ensureGrown(uint32_t slot, uint64_t bytes) {
  if (grown_.size() != graph_.slots.size()) grown_.resize(graph_.slots.size());
  std::unique_ptr<Buffer> &cur = grown_[slot];
  if (cur && cur->size() >= bytes) return Error::success();
  Slot s = graph_.slots[slot];
  s.size = bytes;
  const uint64_t alloc = ownedSlotBytes(s, needs_[slot].minSize);
  const uint32_t align = std::max<uint32_t>(s.alignment ? s.alignment : 1, ownedAlignment_);
  Expected<std::unique_ptr<Buffer>> buf = setUpOwnedSlot(*device_, s, alloc, align, ownedPolicy_);
  if (!buf) return buf.error().withContext("growing to " + std::to_string(alloc) + " bytes");
  // A submission in flight may still use the old buffer.
  if (last_) (void)last_->wait();
  cur = std::move(*buf);
  return Error::success();
}

} // namespace cgraph::rt
