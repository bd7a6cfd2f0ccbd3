// The portable entry point: validate once, then dispatch (docs/architecture.md, "The
// backend contract"). Everything a backend's submit() receives has been checked here,
// so backends never re-check.
#include "cgraph/runtime/runtime.h"

#include "cgraph/expr.h"
#include "cgraph/graph/hazards.h"
#include "cgraph/runtime/slot_init.h"

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <string>

namespace cgraph::rt {

namespace {

std::string slotLabel(const Graph &g, uint32_t s) {
  if (s < g.slots.size() && !g.slots[s].name.empty()) return "slot '" + g.slots[s].name + "'";
  return "slot #" + std::to_string(s);
}

namespace detail {
std::string nodeLabel(const Graph &g, uint32_t n) {
  if (n < g.nodes.size() && !g.nodes[n].name.empty()) return "node '" + g.nodes[n].name + "'";
  return "node #" + std::to_string(n);
}
} // namespace detail

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
          detail::nodeLabel(graph_, fe.node) + ": " + exprFieldName(fe.field, fe.arg);
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
      if (fe.node >= graph_.nodes.size() || graph_.nodes[fe.node].kind != NodeKind::Kernel) {
        exprError_ = where + ": not a kernel node";
        break;
      }
      Node &node = graph_.nodes[fe.node];
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
  // Flattening (lib/graph/flatten.h) maps child slots onto parent slots and adds none,
  // so the caller's slot i is slot i of the finalized graph.
  slotMap_.resize(graph_.slots.size());
  for (uint32_t i = 0; i < slotMap_.size(); ++i)
    slotMap_[i] = i;
  scratchSlots_.resize(graph_.slots.size());
  written_.assign(graph_.slots.size(), 0);
  for (uint32_t n = 0; n < graph_.nodes.size(); ++n) {
    for (const SlotAccess &a : nodeAccesses(graph_, n).accesses)
      if (a.write && a.slot < written_.size()) written_[a.slot] = 1;
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
    if (!r.buffer) continue;
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
  auto check = [&](uint32_t n) -> Error {
    const Node &node = graph_.nodes[n];
    const NDRange &r = node.range;
    const std::string where = detail::nodeLabel(graph_, n);
    const bool hasLocal = r.hasLocal();
    const uint32_t dims = std::min<uint32_t>(r.dims, 3);
    uint64_t items = 1;
    for (uint32_t d = 0; d < dims; ++d) {
      if (value(r.global[d]) == 0)
        return makeError(where + ": global size in dimension " + std::to_string(d) + " is 0");
      if (!hasLocal) continue;
      const uint64_t l = value(r.local[d]);
      if (l == 0)
        return makeError(where + ": local size in dimension " + std::to_string(d) + " is 0");
      items = l > (~uint64_t(0)) / items ? ~uint64_t(0) : items * l;
    }
    if (!hasLocal) return Error::success();
    if (caps.maxWorkGroupSize && items > caps.maxWorkGroupSize)
      return makeError(where + ": work-group of " + std::to_string(items) +
                       " work-items is larger than the device's maximum of " +
                       std::to_string(caps.maxWorkGroupSize));
    if (!caps.nonUniformWorkGroups)
      for (uint32_t d = 0; d < dims; ++d) {
        const uint64_t g = value(r.global[d]), l = value(r.local[d]);
        if (g % l != 0)
          return makeError(where + ": local size " + std::to_string(l) +
                           " does not divide global size " + std::to_string(g) + " in dimension " +
                           std::to_string(d) + " (the device needs uniform work-groups)");
      }
    return Error::success();
  };
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
      return detail::nodeLabel(graph_, fe.node) + ": " + exprFieldName(fe.field, fe.arg) + " = " +
             x.text;
    };
    Expected<int64_t> r = expr::evaluateChecked(x.program, exprStack_.data(), paramValue);
    if (!r) return makeError(where() + ": " + r.error().message());
    const int64_t v = *r;
    const uint16_t f = uint16_t(fe.field);
    if (f < 6 && v < 1)
      return makeError(where() + " is " + std::to_string(v) + "; it must be at least 1");
    if (f >= 6 && f <= 8 && v < 0)
      return makeError(where() + " is " + std::to_string(v) + "; it must not be negative");
    if (fe.field == ExprField::ScalarArg) {
      const ScalarType t = graph_.nodes[fe.node].args[fe.arg].type;
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

Expected<EventPtr> Executable::enqueue(const BindingTable &bindings, const ParamValues &params,
                                       const SubmitOptions &opts) {
  const size_t callerSlots = slotMap_.size();
  if (bindings.slots.size() > callerSlots)
    return makeError("binding table has " + std::to_string(bindings.slots.size()) +
                     " entries but the graph has " + std::to_string(callerSlots) + " slots");

  for (ResolvedSlot &r : scratchSlots_)
    r = ResolvedSlot{};
  for (size_t i = 0; i < callerSlots; ++i) {
    const uint32_t j = slotMap_[i];
    const SlotNeed &need = needs_[j];
    const Binding *b = i < bindings.slots.size() ? &bindings.slots[i] : nullptr;
    const bool bound = b && b->buffer;
    if (!bound) {
      if (need.external)
        return makeError(slotLabel(graph_, j) + ": no binding (the slot is external and " +
                         std::to_string(need.minSize) + " bytes are needed)");
      continue;
    }
    if (!need.external && !bindings.overrideInternal) continue; // runtime-owned, ignored
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
    if (length < need.minSize)
      return makeError(slotLabel(graph_, j) + ": bound range is " + std::to_string(length) +
                       " bytes, the graph needs at least " + std::to_string(need.minSize));
    if (need.alignment > 1 && b->offset % need.alignment != 0)
      return makeError(slotLabel(graph_, j) + ": offset " + std::to_string(b->offset) +
                       " is not a multiple of the slot's alignment " +
                       std::to_string(need.alignment));
    scratchSlots_[j] = ResolvedSlot{b->buffer, b->offset, length};
  }

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
  CGRAPH_RETURN_IF_ERROR(checkOverlaps());
  CGRAPH_RETURN_IF_ERROR(checkRanges(!literalRangesChecked_));
  literalRangesChecked_ = true;
  return submit(scratchSlots_, scratchParams_, opts);
}

Expected<std::vector<std::unique_ptr<Buffer>>>
Executable::allocateOwnedSlots(const HostPolicy &policy, uint32_t minAlignment) {
  std::vector<uint64_t> minSizes(needs_.size());
  for (size_t i = 0; i < needs_.size(); ++i)
    minSizes[i] = needs_[i].minSize;
  return rt::allocateOwnedSlots(*device_, graph_, minSizes, policy, minAlignment);
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
