// The portable entry point: validate once, then dispatch (docs/architecture.md, "The
// backend contract"). Everything a backend's submit() receives has been checked here,
// so backends never re-check. Here: the executable's finalize-time state (stored
// expressions decoded, slot requirements) and enqueue with its binding-table checks;
// enqueue's other checks are enqueue_validation.cpp, the evaluation of stored
// expressions stored_exprs.cpp, updates updates.cpp, the Registry registry.cpp.
#include "cgraph/runtime/runtime.h"

#include "cgraph/expr.h"
#include "cgraph/graph/hazards.h"
#include "cgraph/graph/labels.h"
#include "cgraph/runtime/slot_init.h"
#include "executable_internal.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <string>

namespace cgraph::rt {

using detail::deviceLabel;

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

} // namespace cgraph::rt
