// The portable entry point: validate once, then dispatch (docs/architecture.md, "The
// backend contract"). Everything a backend's submit() receives has been checked here,
// so backends never re-check.
#include "cgraph/runtime/runtime.h"

#include "cgraph/expr.h"
#include "cgraph/graph/flatten.h"
#include "cgraph/graph/hazards.h"
#include "cgraph/graph/labels.h"
#include "cgraph/runtime/slot_init.h"

#include <algorithm>
#include <atomic>
#include <array>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>

namespace cgraph::rt {

namespace {

std::string deviceLabel(const Device &d) {
  const DeviceInfo &info = d.info();
  return info.backend + " (" + info.name + ")";
}

} // namespace

Executable::Executable(Device &device, Graph flattened, ExecMode mode)
    : graph_(std::move(flattened)), mode_(mode), device_(&device) {
  // Stored expressions: decoded once; on a device that evaluates them, each field is
  // rewritten to read "parameter" params.size() + e, whose value enqueue computes.
  if (!graph_.exprs.empty()) {
    const uint32_t nParams = uint32_t(graph_.params.size());
    std::vector<std::string> names;
    for (const Param &p : graph_.params)
      names.push_back(p.name);
    for (size_t e = 0; e < graph_.exprs.size() && exprError_.empty(); ++e) {
      const FieldExpr &fe = graph_.exprs[e];
      const std::string where =
          (fe.field == ExprField::SlotSize ? slotLabel(graph_, fe.arg)
                                           : nodeLabel(graph_, fe.node)) +
          ": " + exprFieldName(fe.field, fe.arg);
      auto prog = expr::decode(fe.code.data(), fe.code.size(), nParams);
      if (!prog) {
        exprError_ = where + ": " + prog.error().message();
        break;
      }
      auto isFloat = [](ScalarType t) {
        return t == ScalarType::F16 || t == ScalarType::F32 || t == ScalarType::F64;
      };
      for (uint32_t v : prog->usedVariables())
        if (isFloat(graph_.params[v].type))
          exprError_ = where + ": parameter '" + names[v] + "' is not an integer";
      if (!exprError_.empty()) break;
      prog->names = names;
      ExprSlot slot;
      slot.text = prog->toString();
      slot.program = std::move(*prog);
      exprStack_.resize(std::max<size_t>(exprStack_.size(), slot.program.maxStack));
      exprCode_.push_back(std::move(slot));
      const bool stored = device.info().caps.storedExpressions;
      if (fe.field == ExprField::SlotSize) {
        if (fe.arg >= graph_.slots.size() || graph_.slots[fe.arg].init == SlotInit::Data) {
          exprError_ = where + ": not a slot whose size may vary";
          break;
        }
        if (slotSizeExpr_.empty()) slotSizeExpr_.assign(graph_.slots.size(), kNone);
        slotSizeExpr_[fe.arg] = uint32_t(e);
        // Unsized until a submission gives it a size: requirements come from the nodes'
        // literal accesses only, and backends take the range the runtime resolves.
        graph_.slots[fe.arg].size = 0;
        continue;
      }
      if (fe.node >= graph_.nodes.size()) {
        exprError_ = where + ": no such node";
        break;
      }
      Node &node = graph_.nodes[fe.node];
      if (isTransferField(fe.field)) {
        const bool copy = uint16_t(fe.field) < 24;
        if (node.kind != (copy ? NodeKind::Copy : NodeKind::Fill)) {
          exprError_ = where + ": not a " + (copy ? "copy" : "fill") + " node";
          break;
        }
        if (transferIndex_.empty()) transferIndex_.assign(graph_.nodes.size(), kNone);
        if (transferIndex_[fe.node] == kNone) {
          transferIndex_[fe.node] = uint32_t(transferParams_.size());
          transferParams_.push_back({kNone, kNone, kNone, fe.node});
        }
        // Slot 0: source offset (fill: offset), 1: destination offset, 2: bytes.
        const uint16_t f = uint16_t(fe.field);
        const int k = f == 20 ? 0 : f == 21 ? 1 : f == 22 ? 2 : f == 24 ? 1 : 2;
        transferParams_[transferIndex_[fe.node]][k] = nParams + uint32_t(e);
        // The placeholder must not count as a requirement or a hazard range.
        if (f == 20) node.copy.srcOffset = 0;
        if (f == 21) node.copy.dstOffset = 0;
        if (f == 22) node.copy.bytes = 0;
        if (f == 24) node.fill.offset = 0;
        if (f == 25) node.fill.bytes = 0;
        continue;
      }
      if (isCollectiveField(fe.field)) {
        if (node.kind != NodeKind::Collective) {
          exprError_ = where + ": not a collective node";
          break;
        }
        if (collIndex_.empty()) collIndex_.assign(graph_.nodes.size(), kNone);
        if (collIndex_[fe.node] == kNone) {
          collIndex_[fe.node] = uint32_t(collParams_.size());
          collParams_.push_back({kNone, kNone, kNone, kNone});
        }
        collParams_[collIndex_[fe.node]][uint16_t(fe.field) - 40] = nParams + uint32_t(e);
        continue;
      }
      if (fe.field == ExprField::ScalarArg && node.kind == NodeKind::Host) {
        if (fe.arg < node.args.size() && node.args[fe.arg].kind == ArgKind::Scalar &&
            !isFloat(node.args[fe.arg].type)) {
          // Read as parameter params.size() + e, typed by the argument (host_tasks.h).
          if (stored) {
            node.args[fe.arg].kind = ArgKind::Param;
            node.args[fe.arg].index = nParams + uint32_t(e);
          }
        } else {
          exprError_ = where + ": not an integer scalar argument";
          break;
        }
        continue;
      }
      if (node.kind != NodeKind::Kernel) {
        exprError_ = where + ": not a kernel node";
        break;
      }
      const uint16_t f = uint16_t(fe.field);
      if (f <= 8) {
        if (f % 3 >= node.range.dims) {
          exprError_ = where + ": the range has " + std::to_string(node.range.dims) + " dimensions";
          break;
        }
        Dim *dims = f < 3 ? node.range.global : f < 6 ? node.range.local : node.range.offset;
        if (device.info().caps.storedExpressions) dims[f % 3].param = nParams + uint32_t(e);
      } else if (fe.field == ExprField::ScalarArg && fe.arg < node.args.size() &&
                 node.args[fe.arg].kind == ArgKind::Scalar && !isFloat(node.args[fe.arg].type)) {
        if (device.info().caps.storedExpressions) {
          node.args[fe.arg].kind = ArgKind::Param;
          node.args[fe.arg].index = nParams + uint32_t(e);
        }
      } else {
        exprError_ = where + ": not an integer scalar argument";
      }
    }
    if (exprError_.empty() && !device.info().caps.storedExpressions)
      exprError_ = "the graph has " + std::to_string(graph_.exprs.size()) +
                   " parameter expressions, and device " + deviceLabel(device) +
                   " does not evaluate stored expressions yet";
  }
  computeNeeds();
  // Flattening (lib/graph/flatten.h) maps child slots onto parent slots and adds none,
  // so the caller's slot i is slot i of the finalized graph.
  slotMap_.resize(graph_.slots.size());
  for (uint32_t i = 0; i < slotMap_.size(); ++i)
    slotMap_[i] = i;
  scratchSlots_.resize(graph_.slots.size());
  disabled_.assign(graph_.nodes.size(), 0);
  for (uint32_t n = 0; n < graph_.nodes.size(); ++n) {
    const Node &node = graph_.nodes[n];
    if (node.kind != NodeKind::Kernel) continue;
    bool fromParams = false;
    for (int d = 0; d < 3; ++d)
      fromParams = fromParams || node.range.global[d].param != kNone ||
                   node.range.local[d].param != kNone || node.range.offset[d].param != kNone;
    if (fromParams) paramRangeNodes_.push_back(n);
  }
}

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

void Executable::computeNeeds() {
  // Requirements accumulate over every use of a slot (lib/graph), so a binding table is
  // checked in O(slots) per enqueue instead of walking the nodes each time.
  std::vector<SlotRequirement> reqs = slotRequirements(graph_);
  needs_.resize(graph_.slots.size());
  for (size_t i = 0; i < graph_.slots.size(); ++i) {
    const Slot &s = graph_.slots[i];
    SlotNeed &n = needs_[i];
    n.minSize = s.size;
    n.alignment = s.alignment ? s.alignment : 1;
    n.usage = s.usage;
    if (i < reqs.size()) {
      n.minSize = std::max(n.minSize, reqs[i].minSize);
      n.alignment = std::max(n.alignment, reqs[i].alignment ? reqs[i].alignment : 1u);
      n.usage |= reqs[i].usage;
    }
    n.external = s.init == SlotInit::External;
  }
  // Written by some node, conditional bodies included (overlap checks, checkOverlaps).
  written_.assign(graph_.slots.size(), 0);
  for (size_t i = 0; i < reqs.size() && i < written_.size(); ++i) written_[i] = reqs[i].written;
}

namespace {

// Node `n`'s nd-range against the device's limits; `value` gives a dimension's value.
template <typename V>
Error checkNodeRange(const Graph &graph_, uint32_t n, const Capabilities &caps, V value) {
    const Node &node = graph_.nodes[n];
    const NDRange &r = node.range;
    auto where = [&] { return nodeLabel(graph_, n); }; // only for an error
    const bool hasLocal = r.hasLocal();
    const uint32_t dims = std::min<uint32_t>(r.dims, 3);
    uint64_t items = 1, total = 1;
    bool wrapped = false;
    for (uint32_t d = 0; d < dims; ++d) {
      const uint64_t g = value(r.global[d]), off = value(r.offset[d]);
      if (g == 0)
        return makeError(where() + ": global size in dimension " + std::to_string(d) + " is 0");
      // Backends count work-items and global ids in 64 bits: neither may wrap (at most
      // 2^63 - 1 work-items in all, no id past 2^64 - 1), as validation has it for
      // literal ranges.
      uint64_t end;
      if (__builtin_add_overflow(off, g, &end))
        return makeError(where() + ": offset " + std::to_string(off) + " + global size " +
                         std::to_string(g) + " in dimension " + std::to_string(d) +
                         " overflows 64 bits");
      wrapped = wrapped || __builtin_mul_overflow(total, g, &total);
      if (wrapped || total > uint64_t(INT64_MAX)) {
        std::string sizes;
        for (uint32_t k = 0; k < dims; ++k)
          sizes += (k ? "," : "") + std::to_string(value(r.global[k]));
        return makeError(where() + ": global size (" + sizes +
                         ") has more than 2^63 - 1 work-items in all");
      }
      if (!hasLocal) continue;
      const uint64_t l = value(r.local[d]);
      if (l == 0)
        return makeError(where() + ": local size in dimension " + std::to_string(d) + " is 0");
      items = l > (~uint64_t(0)) / items ? ~uint64_t(0) : items * l;
    }
    if (!hasLocal) return Error::success();
    if (caps.maxWorkGroupSize && items > caps.maxWorkGroupSize)
      return makeError(where() + ": work-group of " + std::to_string(items) +
                       " work-items is larger than the device's maximum of " +
                       std::to_string(caps.maxWorkGroupSize));
    if (!caps.nonUniformWorkGroups)
      for (uint32_t d = 0; d < dims; ++d) {
        const uint64_t g = value(r.global[d]), l = value(r.local[d]);
        if (g % l != 0)
          return makeError(where() + ": local size " + std::to_string(l) +
                           " does not divide global size " + std::to_string(g) + " in dimension " +
                           std::to_string(d) + " (the device needs uniform work-groups)");
      }
    return Error::success();
}

} // namespace

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

bool Executable::sameAsChecked(const BindingTable &bindings, const ParamValues &params) const {
  if (!checked_ || bindings.overrideInternal != checkedOverride_ || bindings.slots.size() != checkedBindings_.size() ||
      params.bits != checkedParams_)
    return false;
  for (size_t i = 0; i < checkedBindings_.size(); ++i) {
    const Binding &b = bindings.slots[i];
    const CheckedBinding &c = checkedBindings_[i];
    if (b.buffer != c.buffer || b.offset != c.offset || b.length != c.length) return false;
    if (b.buffer && b.buffer->serial() != c.serial) return false;
  }
  return true;
}

void Executable::rememberChecked(const BindingTable &bindings, const ParamValues &params) {
  checkedBindings_.resize(bindings.slots.size());
  for (size_t i = 0; i < bindings.slots.size(); ++i) {
    const Binding &b = bindings.slots[i];
    checkedBindings_[i] = {b.buffer, b.buffer ? b.buffer->serial() : 0, b.offset, b.length};
  }
  checkedParams_ = params.bits;
  checkedOverride_ = bindings.overrideInternal;
  checked_ = exprCode_.empty(); // expressions: slot sizes and grown buffers per submission
}

uint64_t Buffer::nextSerial() {
  static std::atomic<uint64_t> next{1};
  return next.fetch_add(1, std::memory_order_relaxed);
}

Expected<EventPtr> Executable::enqueue(const BindingTable &bindings, const ParamValues &params,
                                       const SubmitOptions &opts) {
  if (opts.stream && !device_->info().caps.callerStreams)
    return makeError(ErrorCode::Unsupported, "device " + deviceLabel(*device_) +
                                                 " does not take a caller's stream (only cuda does)");
  if (sameAsChecked(bindings, params)) {
    sameAsLast_ = true;
    Expected<EventPtr> ev = submit(scratchSlots_, scratchParams_, opts);
    sameAsLast_ = false;
    if (ev) last_ = *ev;
    return ev;
  }
  checked_ = false;
  const size_t callerSlots = slotMap_.size();
  if (bindings.slots.size() > callerSlots)
    return makeError("binding table has " + std::to_string(bindings.slots.size()) +
                     " entries but the graph has " + std::to_string(callerSlots) + " slots");

  // Parameters and expressions first: slot sizes may depend on them.
  const size_t nParams = graph_.params.size();
  if (params.bits.empty()) {
    scratchParams_.resize(nParams);
    for (size_t p = 0; p < nParams; ++p)
      scratchParams_[p] = graph_.params[p].defaultBits;
  } else {
    if (params.bits.size() != nParams)
      return makeError("expected " + std::to_string(nParams) + " parameter values, got " +
                       std::to_string(params.bits.size()));
    scratchParams_ = params.bits;
  }
  if (!exprError_.empty()) return makeError(exprError_);
  CGRAPH_RETURN_IF_ERROR(evaluateExprs());

  for (ResolvedSlot &r : scratchSlots_)
    r = ResolvedSlot{};
  inArena_.assign(graph_.slots.size(), 0);
  inArenaCount_ = 0;
  for (size_t i = 0; i < callerSlots; ++i) {
    const uint32_t j = slotMap_[i];
    const SlotNeed &need = needs_[j];
    // A slot whose size is an expression has that size in this submission; the nodes'
    // literal accesses must fit in it.
    const bool sized = !slotSizeExpr_.empty() && slotSizeExpr_[j] != kNone;
    uint64_t needBytes = need.minSize;
    if (sized) {
      const uint32_t e = slotSizeExpr_[j];
      needBytes = scratchParams_[nParams + e];
      if (need.minSize > needBytes)
        return makeError(slotLabel(graph_, j) + ": size = " + exprCode_[e].text + " is " +
                         std::to_string(needBytes) +
                         " bytes in this submission, but its nodes need at least " +
                         std::to_string(need.minSize));
    }
    const Binding *b = i < bindings.slots.size() ? &bindings.slots[i] : nullptr;
    const bool bound = b && b->buffer;
    if (!bound) {
      if (need.external)
        return makeError(slotLabel(graph_, j) + ": no binding (the slot is external and " +
                         std::to_string(needBytes) + " bytes are needed)");
      if (planned(j)) {
        notePlanned(j, sized ? needBytes : ownedSlotBytes(graph_.slots[j], need.minSize));
        continue;
      }
      if (sized) {
        CGRAPH_RETURN_IF_ERROR(ensureGrown(j, needBytes));
        scratchSlots_[j] = ResolvedSlot{grown_[j].get(), 0, needBytes};
      }
      continue;
    }
    if (!need.external && !bindings.overrideInternal) {
      if (planned(j)) {
        notePlanned(j, sized ? needBytes : ownedSlotBytes(graph_.slots[j], need.minSize));
        continue;
      }
      if (sized) {
        CGRAPH_RETURN_IF_ERROR(ensureGrown(j, needBytes));
        scratchSlots_[j] = ResolvedSlot{grown_[j].get(), 0, needBytes};
      }
      continue; // runtime-owned, ignored
    }
    const Device *owner = b->buffer->device();
    if (owner && owner != device_)
      return makeError(slotLabel(graph_, j) + ": buffer belongs to device " + deviceLabel(*owner) +
                       ", not " + deviceLabel(*device_));
    const uint64_t bufSize = b->buffer->size();
    if (b->offset > bufSize)
      return makeError(slotLabel(graph_, j) + ": offset " + std::to_string(b->offset) +
                       " is past the end of its " + std::to_string(bufSize) + "-byte buffer");
    uint64_t length = b->length ? b->length : bufSize - b->offset;
    if (b->length && b->length > bufSize - b->offset)
      return makeError(slotLabel(graph_, j) + ": bound range [" + std::to_string(b->offset) + ", " +
                       std::to_string(b->offset) + "+" + std::to_string(b->length) +
                       ") exceeds its " + std::to_string(bufSize) + "-byte buffer");
    if (length < needBytes)
      return makeError(
          slotLabel(graph_, j) + ": bound range is " + std::to_string(length) +
          " bytes, the graph needs at least " + std::to_string(needBytes) +
          (sized ? " (size = " + exprCode_[slotSizeExpr_[j]].text + " in this submission)"
                 : std::string()));
    if (need.alignment > 1 && b->offset % need.alignment != 0)
      return makeError(slotLabel(graph_, j) + ": offset " + std::to_string(b->offset) +
                       " is not a multiple of the slot's alignment " +
                       std::to_string(need.alignment));
    // A sized slot is exactly its size for this submission (host tasks, sub-buffers).
    scratchSlots_[j] = ResolvedSlot{b->buffer, b->offset, sized ? needBytes : length};
  }

  CGRAPH_RETURN_IF_ERROR(placePlanned());
  CGRAPH_RETURN_IF_ERROR(checkTransfers());
  CGRAPH_RETURN_IF_ERROR(checkOverlaps());
  CGRAPH_RETURN_IF_ERROR(checkRanges(!literalRangesChecked_));
  literalRangesChecked_ = true;
  rememberChecked(bindings, params);
  Expected<EventPtr> ev = submit(scratchSlots_, scratchParams_, opts);
  if (ev) last_ = *ev;
  return ev;
}

Expected<std::vector<std::unique_ptr<Buffer>>>
Executable::allocateOwnedSlots(const HostPolicy &policy, uint32_t minAlignment, bool planMemory) {
  ownedPolicy_ = policy;
  ownedAlignment_ = minAlignment;
  planOwnedSlots(planMemory);
  std::vector<uint64_t> minSizes(needs_.size());
  for (size_t i = 0; i < needs_.size(); ++i)
    minSizes[i] = needs_[i].minSize;
  // Slots whose size is an expression are allocated per submission (ensureGrown), and
  // planned slots in their blocks (placePlanned); for the backend both are bound slots.
  Graph slotsOnly;
  slotsOnly.slots = graph_.slots;
  for (uint32_t i = 0; i < slotsOnly.slots.size(); ++i)
    if ((!slotSizeExpr_.empty() && slotSizeExpr_[i] != kNone) || planned(i))
      slotsOnly.slots[i].init = SlotInit::External;
  auto owned = rt::allocateOwnedSlots(*device_, slotsOnly, minSizes, policy, minAlignment);
  finalizeOwnedBytes_ = 0;
  if (owned)
    for (const auto &b : *owned)
      if (b) finalizeOwnedBytes_ += b->size();
  return owned;
}

// ---- Registry ------------------------------------------------------------------------

void Registry::add(std::unique_ptr<Backend> backend) {
  if (backend) backends_.push_back(std::move(backend));
}

Backend *Registry::find(const std::string &name) const {
  for (const auto &b : backends_)
    if (name == b->name()) return b.get();
  return nullptr;
}

Expected<Device *> Registry::open(const std::string &spec) const {
  std::string name = spec;
  uint32_t index = 0;
  size_t colon = spec.find(':');
  if (colon != std::string::npos) {
    name = spec.substr(0, colon);
    std::string idx = spec.substr(colon + 1);
    char *end = nullptr;
    unsigned long v = idx.empty() ? 0 : std::strtoul(idx.c_str(), &end, 10);
    if (idx.empty() || *end != '\0' || idx[0] == '-' || v > 0xFFFFFFFEul)
      return makeError("device '" + spec + "': '" + idx + "' is not a device index");
    index = uint32_t(v);
  }
  Backend *b = find(name);
  if (!b) {
    std::string known;
    for (const auto &k : backends_)
      known += std::string(known.empty() ? "" : ", ") + k->name();
    return makeError("device '" + spec + "': no backend '" + name +
                     "' (compiled in: " + (known.empty() ? std::string("none") : known) + ")");
  }
  Expected<Device *> d = b->device(index);
  if (!d) return d.error().withContext("device '" + spec + "'");
  return d;
}

} // namespace cgraph::rt

// ---- update --------------------------------------------------------------------------
namespace cgraph::rt {

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
