// Per-node checks of validateGraph(): references, kernel signatures, nd-ranges, copy
// and fill ranges, subgraph bindings.
#include "validate_internal.h"

#include <string_view>

#include <cgraph/graph/hazards.h>
#include <cgraph/graph/host_ops.h>

#include <algorithm>
#include <cstdint>

namespace cgraph {
namespace detail {

namespace {


bool isFloat(ScalarType t) {
  return t == ScalarType::F16 || t == ScalarType::F32 || t == ScalarType::F64;
}

// The scalar type an OpenCL type spelling names, or false for anything else.
bool typeFromSpelling(std::string_view t, ScalarType *out) {
  static const std::pair<const char *, ScalarType> kTable[] = {
      {"char", ScalarType::I8},     {"uchar", ScalarType::U8},
      {"unsigned char", ScalarType::U8}, {"short", ScalarType::I16},
      {"ushort", ScalarType::U16},  {"unsigned short", ScalarType::U16},
      {"int", ScalarType::I32},     {"uint", ScalarType::U32},
      {"unsigned int", ScalarType::U32}, {"unsigned", ScalarType::U32},
      {"long", ScalarType::I64},    {"ulong", ScalarType::U64},
      {"unsigned long", ScalarType::U64}, {"size_t", ScalarType::U64},
      {"half", ScalarType::F16},    {"float", ScalarType::F32},
      {"double", ScalarType::F64},
  };
  if (t.substr(0, 6) == "const ") t.remove_prefix(6);
  while (!t.empty() && t.back() == ' ') t.remove_suffix(1);
  for (const auto &e : kTable)
    if (t == e.first) {
      *out = e.second;
      return true;
    }
  return false;
}

std::string triple(const uint64_t v[3]) { return "(" + s(v[0]) + "," + s(v[1]) + "," + s(v[2]) + ")"; }

} // namespace

bool Checker::checkSlotRef(uint32_t node, uint32_t sl, const std::string &what) {
  if (sl < g.slots.size()) return true;
  error(node, sl, nodeName(node) + ": " + what + " refers to slot " + s(sl) + " but the graph has " +
                      s(g.slots.size()) + " slots");
  return false;
}

bool Checker::checkParamRef(uint32_t node, uint32_t p, const std::string &what) {
  if (p < g.params.size()) return true;
  error(node, kNone, nodeName(node) + ": " + what + " refers to param " + s(p) +
                         " but the graph has " + s(g.params.size()) + " params");
  return false;
}

namespace {

struct NodeChecker {
  Checker &c;
  uint32_t n;
  const Node &node;
  const Graph &g;

  std::string pre() const { return c.nodeName(n) + ": "; }

  // Whether slot `slot`'s size is a stored expression (records with node kNone, last).
  bool slotSizeExpr(uint32_t slot) const {
    auto it = std::lower_bound(g.exprs.begin(), g.exprs.end(), kNone,
                               [](const FieldExpr &e, uint32_t node) { return e.node < node; });
    for (; it != g.exprs.end(); ++it)
      if (it->field == ExprField::SlotSize && it->arg == slot) return true;
    return false;
  }

  void checkRange(uint32_t slot, uint64_t offset, uint64_t bytes, const char *verb,
                  const char *what) {
    // Whatever the slot's size (unsized ones are checked against the bindings, from
    // the requirement offset + bytes): an end past 2^64 would wrap.
    uint64_t end;
    if (__builtin_add_overflow(offset, bytes, &end)) {
      c.error(n, slot, pre() + what + " " + verb + " " + s(bytes) + " bytes from offset " +
                           s(offset) + ": the end overflows 64 bits");
      return;
    }
    if (slot >= g.slots.size() || g.slots[slot].size == 0) return;
    // A size or field known only per submission is checked then (lib/runtime).
    if (slotSizeExpr(slot)) return;
    uint64_t size = g.slots[slot].size;
    if (end > size)
      c.error(n, slot, pre() + what + " " + verb + " bytes [" + s(offset) + ", " + s(end) +
                           ") of " + c.slotName(slot) + " which has " + s(size) + " bytes");
  }

  // `field` ("global", "local", "offset") and `dim` name it; the name is built only
  // for a parameter-driven dimension (this runs for every dimension of every node).
  void checkDim(const Dim &d, const char *field, uint32_t dim) {
    if (d.param == kNone) return;
    const std::string what = std::string(field) + "[" + s(dim) + "]";
    if (!c.checkParamRef(n, d.param, what)) return;
    const Param &p = g.params[d.param];
    if (isFloat(p.type) || scalarSize(p.type) == 0)
      c.error(n, kNone, pre() + what + " uses param '" + p.name + "' of type " +
                            (scalarSize(p.type) ? scalarName(p.type) : "invalid") +
                            " (must be an integer)");
  }

  // Bit f set: field f (ExprField 0..8) of this node is a stored parameter expression
  // (Graph::exprs, sorted by node): its value is only known per submission, so it is
  // checked like a parameter-driven dimension (by the runtime, at enqueue).
  uint32_t exprFields() const {
    uint32_t mask = 0;
    auto it = std::lower_bound(g.exprs.begin(), g.exprs.end(), n,
                               [](const FieldExpr &e, uint32_t node) { return e.node < node; });
    for (; it != g.exprs.end() && it->node == n; ++it)
      if (uint16_t(it->field) < 32) mask |= 1u << uint16_t(it->field);
    return mask;
  }

  // The literal parts of the nd-range against 64-bit arithmetic (the runtime checks the
  // parameter-driven ones per submission): at most 2^63 - 1 work-items in all, and no
  // global id past 2^64 - 1 (offset + global size must not wrap).
  template <class GlobalExpr, class OffsetExpr>
  void checkRangeOverflow(const GlobalExpr &globalExpr, const OffsetExpr &offsetExpr) {
    const NDRange &r = node.range;
    uint64_t items = 1;
    bool wrapped = false;
    for (uint32_t d = 0; d < r.dims; ++d) {
      const Dim &gl = r.global[d], &off = r.offset[d];
      if (gl.param != kNone || globalExpr(d)) continue;
      wrapped = wrapped || __builtin_mul_overflow(items, gl.value, &items);
      uint64_t end;
      if (off.param == kNone && !offsetExpr(d) && __builtin_add_overflow(off.value, gl.value, &end))
        c.error(n, kNone, pre() + "offset " + s(off.value) + " + global size " + s(gl.value) +
                              " in dimension " + s(d) + " overflows 64 bits");
    }
    if (wrapped || items > uint64_t(INT64_MAX)) {
      std::string sizes;
      for (uint32_t d = 0; d < r.dims; ++d)
        sizes += (d ? "," : "") + (r.global[d].param != kNone || globalExpr(d) ? std::string("?")
                                                                             : s(r.global[d].value));
      c.error(n, kNone, pre() + "global size (" + sizes +
                            ") has more than 2^63 - 1 work-items in all");
    }
  }

  void checkRangeSanity(const Kernel *k) {
    const NDRange &r = node.range;
    const uint32_t ex = exprFields();
    auto globalExpr = [&](uint32_t d) { return (ex >> d) & 1u; };
    auto localExpr = [&](uint32_t d) { return (ex >> (3 + d)) & 1u; };
    if (r.dims < 1 || r.dims > 3) {
      c.error(n, kNone, pre() + "nd-range has " + s(r.dims) + " dimensions (must be 1..3)");
      return;
    }
    for (uint32_t d = 0; d < r.dims; ++d) {
      checkDim(r.global[d], "global", d);
      checkDim(r.local[d], "local", d);
      checkDim(r.offset[d], "offset", d);
      if (r.global[d].param == kNone && !globalExpr(d) && r.global[d].value == 0)
        c.error(n, kNone, pre() + "global size 0 in dimension " + s(d));
    }
    checkRangeOverflow(globalExpr, [&](uint32_t d) { return (ex >> (6 + d)) & 1u; });
    bool hasLocal = r.hasLocal();
    if (hasLocal) {
      for (uint32_t d = 0; d < r.dims; ++d) {
        const Dim &l = r.local[d], &gl = r.global[d];
        if (l.param != kNone || localExpr(d)) continue;
        if (l.value == 0) {
          c.error(n, kNone, pre() + "local size 0 in dimension " + s(d) +
                                " while other dimensions are given");
          continue;
        }
        if (gl.param == kNone && !globalExpr(d) && gl.value != 0 && gl.value % l.value != 0)
          c.error(n, kNone, pre() + "local size " + s(l.value) + " does not divide global size " +
                                s(gl.value) + " in dimension " + s(d));
      }
    }
    if (!k || k->reqdLocal[0] == 0) return;
    uint64_t req[3] = {k->reqdLocal[0], std::max<uint64_t>(k->reqdLocal[1], 1),
                       std::max<uint64_t>(k->reqdLocal[2], 1)};
    if (hasLocal) {
      uint64_t used[3] = {1, 1, 1};
      bool literal = true, differs = false;
      for (uint32_t d = 0; d < 3; ++d) {
        if (d < r.dims) {
          literal &= r.local[d].param == kNone && !localExpr(d);
          used[d] = r.local[d].value;
        }
        differs |= used[d] != req[d];
      }
      if (literal && differs)
        c.error(n, kNone, pre() + "kernel '" + k->name + "' requires work-group size " +
                              triple(req) + " but the node uses " + triple(used));
      return;
    }
    for (uint32_t d = 0; d < r.dims; ++d) {
      const Dim &gl = r.global[d];
      if (gl.param == kNone && gl.value != 0 && gl.value % req[d] != 0)
        c.error(n, kNone, pre() + "global size " + s(gl.value) + " in dimension " + s(d) +
                              " is not a multiple of the required work-group size " + s(req[d]) +
                              " of kernel '" + k->name + "'");
    }
  }

  // `argLabel()` and `what()` build their text only for an error (validation runs at
  // every finalize: no string per argument on the good path).
  template <class Label, class What>
  void checkScalarAgainst(const Label &argLabel, const KernelParam &p, ScalarType t, const What &what) {
    uint32_t size = scalarSize(t);
    if (size == 0) {
      c.error(n, kNone, pre() + argLabel() + ": invalid scalar type");
      return;
    }
    if (p.size != 0 && size != p.size) {
      c.error(n, kNone, pre() + argLabel() + ": " + what() + " of " + s(size) + " bytes (" +
                            scalarName(t) + ") but the parameter takes " + s(p.size) + " bytes");
      return;
    }
    ScalarType pt;
    if (typeFromSpelling(p.typeName, &pt) && (isFloat(pt) != isFloat(t) || scalarSize(pt) != size))
      c.error(n, kNone, pre() + argLabel() + ": " + what() + " of type " + scalarName(t) +
                            " for a parameter of type '" + p.typeName + "'");
  }

  void checkKernelArgs(const Kernel &k) {
    if (node.args.size() != k.params.size()) {
      c.error(n, kNone, pre() + "kernel '" + k.name + "' takes " + s(k.params.size()) +
                            " args but the node gives " + s(node.args.size()));
      return;
    }
    for (size_t i = 0; i < node.args.size(); ++i) {
      const Arg &a = node.args[i];
      const KernelParam &p = k.params[i];
      auto label = [&] { return "arg " + s(i) + (p.name.empty() ? "" : " ('" + p.name + "')"); };
      bool buffer = p.kind == ParamKind::GlobalBuffer || p.kind == ParamKind::ConstantBuffer;
      switch (a.kind) {
      case ArgKind::Slot:
        if (!buffer)
          c.error(n, a.index, pre() + label() + ": kernel parameter is " +
                                  (p.kind == ParamKind::LocalBuffer ? "__local" : "a scalar") +
                                  " but the arg is a slot");
        break;
      case ArgKind::Scalar:
      case ArgKind::Param: {
        const char *what = a.kind == ArgKind::Scalar ? "scalar" : "param";
        if (p.kind != ParamKind::Scalar) {
          c.error(n, kNone, pre() + label() + ": kernel parameter is " +
                                (buffer ? "a buffer" : "__local") + " but the arg is a " + what);
          break;
        }
        if (a.kind == ArgKind::Scalar)
          checkScalarAgainst(label, p, a.type, [] { return std::string("scalar"); });
        else if (a.index < g.params.size())
          checkScalarAgainst(label, p, g.params[a.index].type,
                             [&] { return "param '" + g.params[a.index].name + "'"; });
        break;
      }
      case ArgKind::LocalMem:
        if (p.kind != ParamKind::LocalBuffer)
          c.error(n, kNone, pre() + label() + ": local memory arg for a parameter that is not __local");
        else if (a.value == 0)
          c.error(n, kNone, pre() + label() + ": local memory arg of 0 bytes");
        break;
      case ArgKind::String:
        c.error(n, kNone, pre() + label() + ": string args are only allowed for host tasks");
        break;
      }
    }
  }

  void checkArgRefs() {
    for (size_t i = 0; i < node.args.size(); ++i) {
      const Arg &a = node.args[i];
      // The reference checks build their message only for a reference out of range.
      if (a.kind == ArgKind::Slot && (a.index < g.slots.size() || c.checkSlotRef(n, a.index, "arg " + s(i))) &&
          g.slots[a.index].size != 0 && a.value >= g.slots[a.index].size)
        c.error(n, a.index, pre() + "arg " + s(i) + " offset " + s(a.value) + " is past the end of " +
                                c.slotName(a.index) + " (" + s(g.slots[a.index].size) + " bytes)");
      if (a.kind == ArgKind::Param && a.index >= g.params.size()) c.checkParamRef(n, a.index, "arg " + s(i));
    }
  }

  // One side of a rect copy: its pitches against the region and its byte extent
  // (hazards.h rectExtent) into *extent, every product and sum checked against 64 bits;
  // false after an error that names the side and field.
  bool rectSide(const char *side, uint64_t row, uint64_t slice, uint64_t *extent) {
    const uint64_t w = node.copy.region[0], h = node.copy.region[1], d = node.copy.region[2];
    auto where = [&] { return pre() + "rect copy " + side + " "; }; // only for an error
    if (row != 0 && row < w) {
      c.error(n, kNone, where() + "row pitch " + s(row) + " is less than the region width " + s(w));
      return false;
    }
    const uint64_t effRow = row ? row : w;
    uint64_t plane, slices, rows;
    if (__builtin_mul_overflow(effRow, h, &plane)) {
      c.error(n, kNone, where() + "row pitch " + s(effRow) + " * " + s(h) +
                            " rows (region[1]) overflows 64 bits");
      return false;
    }
    if (slice != 0 && slice < plane) {
      c.error(n, kNone, where() + "slice pitch " + s(slice) + " is less than row pitch * height " +
                            s(plane));
      return false;
    }
    const uint64_t effSlice = slice ? slice : plane;
    if (__builtin_mul_overflow(d - 1, effSlice, &slices)) {
      c.error(n, kNone, where() + "slice pitch " + s(effSlice) + " * " + s(d - 1) +
                            " slices (region[2] - 1) overflows 64 bits");
      return false;
    }
    rows = (h - 1) * effRow; // below plane
    if (__builtin_add_overflow(slices, rows, extent) || __builtin_add_overflow(*extent, w, extent)) {
      c.error(n, kNone, where() + "extent (region " + triple(node.copy.region) + ", pitches " +
                            s(effRow) + ", " + s(effSlice) + ") overflows 64 bits");
      return false;
    }
    return true;
  }

  void checkCopy(bool rect) {
    const CopyOp &op = node.copy;
    const char *what = rect ? "rect copy" : "copy";
    bool srcOk = c.checkSlotRef(n, op.srcSlot, std::string(what) + " source");
    bool dstOk = c.checkSlotRef(n, op.dstSlot, std::string(what) + " destination");
    uint64_t srcBytes = op.bytes, dstBytes = op.bytes;
    if (rect) {
      if (op.region[0] == 0 || op.region[1] == 0 || op.region[2] == 0) {
        c.error(n, kNone, pre() + "rect copy region has a zero extent " + triple(op.region));
        return;
      }
      bool pitchOk = rectSide("source", op.srcRowPitch, op.srcSlicePitch, &srcBytes);
      pitchOk = rectSide("destination", op.dstRowPitch, op.dstSlicePitch, &dstBytes) && pitchOk;
      if (!pitchOk) return;
    } else if (op.bytes == 0 && !exprFields()) {
      c.warning(n, kNone, pre() + "copy of 0 bytes");
    }
    // Fields that are stored expressions are range-checked per submission (lib/runtime).
    if (!rect && exprFields()) return;
    if (srcOk) checkRange(op.srcSlot, op.srcOffset, srcBytes, "reads", what);
    if (dstOk) checkRange(op.dstSlot, op.dstOffset, dstBytes, "writes", what);
    uint64_t srcEnd, dstEnd; // a wrapped end was reported above
    if (__builtin_add_overflow(op.srcOffset, srcBytes, &srcEnd) ||
        __builtin_add_overflow(op.dstOffset, dstBytes, &dstEnd))
      return;
    if (srcOk && dstOk && op.srcSlot == op.dstSlot && op.srcOffset < dstEnd && op.dstOffset < srcEnd)
      c.error(n, op.srcSlot, pre() + what + " source and destination overlap in " +
                                 c.slotName(op.srcSlot));
  }

  void checkFill() {
    const FillOp &f = node.fill;
    bool ok = c.checkSlotRef(n, f.slot, "fill");
    size_t ps = f.pattern.size();
    if (ps < 1 || ps > 128) {
      c.error(n, ok ? f.slot : kNone, pre() + "fill pattern has " + s(ps) + " bytes (must be 1..128)");
      return;
    }
    // Fields that are stored expressions are checked per submission (lib/runtime).
    const uint32_t ex = exprFields();
    if (f.bytes % ps != 0 && !(ex & (1u << 25)))
      c.error(n, ok ? f.slot : kNone, pre() + "fill of " + s(f.bytes) +
                                   " bytes is not a multiple of the pattern size " + s(ps));
    if (f.offset % ps != 0 && !(ex & (1u << 24)))
      c.error(n, ok ? f.slot : kNone, pre() + "fill offset " + s(f.offset) +
                                   " is not a multiple of the pattern size " + s(ps));
    if (ok && !ex) checkRange(f.slot, f.offset, f.bytes, "writes", "fill");
  }

  void checkSubgraph() {
    if (node.subgraph >= g.subgraphs.size()) {
      c.error(n, kNone, pre() + "subgraph index " + s(node.subgraph) + " but the graph has " +
                            s(g.subgraphs.size()) + " subgraphs");
      return;
    }
    const Graph &child = g.subgraphs[node.subgraph];
    std::string childName = child.name.empty() ? "#" + s(node.subgraph) : "'" + child.name + "'";
    if (node.subgraphSlots.size() != child.slots.size())
      c.error(n, kNone, pre() + "subgraph " + childName + " has " + s(child.slots.size()) +
                            " slots but the node binds " + s(node.subgraphSlots.size()));
    for (size_t i = 0; i < node.subgraphSlots.size(); ++i) {
      uint32_t ps = node.subgraphSlots[i];
      if (!c.checkSlotRef(n, ps, "subgraph slot binding " + s(i))) continue;
      if (i < child.slots.size() && child.slots[i].size != 0 && g.slots[ps].size != 0 &&
          child.slots[i].size > g.slots[ps].size)
        c.error(n, ps, pre() + "subgraph slot '" + child.slots[i].name + "' needs " +
                           s(child.slots[i].size) + " bytes but parent " + c.slotName(ps) +
                           " has " + s(g.slots[ps].size));
    }
    for (const Param &cp : child.params) {
      uint32_t pp = g.findParam(cp.name);
      if (pp == kNone)
        c.error(n, kNone, pre() + "subgraph param '" + cp.name + "' has no parent param of that name");
      else if (g.params[pp].type != cp.type)
        c.error(n, kNone, pre() + "subgraph param '" + cp.name + "' is " +
                              (scalarSize(cp.type) ? scalarName(cp.type) : "invalid") +
                              " but the parent param is " +
                              (scalarSize(g.params[pp].type) ? scalarName(g.params[pp].type) : "invalid"));
    }
  }

  void checkConditional() {
    const CondOp &cd = node.cond;
    if (cd.kind != CondKind::If && cd.kind != CondKind::While)
      c.error(n, kNone, pre() + "unknown condition kind " + s(uint32_t(cd.kind)));
    if (cd.kind == CondKind::While && cd.maxTrips == 0)
      c.error(n, kNone, pre() + "a while node needs a maximum trip count of at least 1");
    if (cd.kind == CondKind::If && cd.maxTrips != 0)
      c.error(n, kNone, pre() + "an if node has no trip count (got " + s(cd.maxTrips) + ")");
    if (c.checkSlotRef(n, cd.slot, "condition")) {
      if (cd.offset % 4 != 0)
        c.error(n, cd.slot, pre() + "condition offset " + s(cd.offset) + " is not a multiple of 4 (a u32)");
      checkRange(cd.slot, cd.offset, 4, "reads", "condition");
    }
    checkSubgraph();
  }

  // Whether any field of this collective is a stored expression (ExprField 40..43).
  bool collectiveExprs() const {
    auto it = std::lower_bound(g.exprs.begin(), g.exprs.end(), n,
                               [](const FieldExpr &e, uint32_t node) { return e.node < node; });
    for (; it != g.exprs.end() && it->node == n; ++it)
      if (isCollectiveField(it->field)) return true;
    return false;
  }

  // Kinds, reduction and the sides the kind has; literal ranges against the slots (the
  // world-scaled sides at least one block: the world size is known per submission); a
  // send and receive side on one slot either the same bytes (in place: all_reduce,
  // broadcast) or disjoint.
  void checkCollective() {
    const CollectiveOp &op = node.coll;
    if (uint8_t(op.kind) > kCollKindMax) {
      c.error(n, kNone, pre() + "unknown collective kind " + s(uint32_t(op.kind)));
      return;
    }
    const std::string kind = collKindName(op.kind);
    if (uint8_t(op.op) > kReduceOpMax)
      c.error(n, kNone, pre() + "unknown reduction " + s(uint32_t(op.op)));
    else if (!collReduces(op.kind) && op.op != ReduceOp::Sum)
      c.error(n, kNone, pre() + kind + " has no reduction (found " + reduceOpName(op.op) + ")");
    const uint64_t elem = scalarSize(op.type);
    if (elem == 0) c.error(n, kNone, pre() + kind + " has an unknown element type " + s(uint32_t(op.type)));
    if (!collHasPeer(op.kind) && op.peer != 0)
      c.error(n, kNone, pre() + kind + " has no peer or root (found " + s(op.peer) + ")");
    const bool hasSend = collHasSend(op.kind), hasRecv = collHasRecv(op.kind);
    bool sendOk = hasSend && c.checkSlotRef(n, op.sendSlot, kind + " send side");
    bool recvOk = hasRecv && c.checkSlotRef(n, op.recvSlot, kind + " receive side");
    if (!hasSend && op.sendSlot != kNone) c.error(n, kNone, pre() + kind + " has no send side");
    if (!hasRecv && op.recvSlot != kNone) c.error(n, kNone, pre() + kind + " has no receive side");
    const bool ex = collectiveExprs();
    if (ex || elem == 0) return; // checked per submission (lib/runtime)
    if (op.count == 0) c.warning(n, kNone, pre() + kind + " of 0 elements");
    uint64_t bytes;
    if (__builtin_mul_overflow(op.count, elem, &bytes)) {
      c.error(n, kNone, pre() + kind + " count " + s(op.count) + " * " + s(elem) + " bytes overflows 64 bits");
      return;
    }
    if (sendOk) checkRange(op.sendSlot, op.sendOffset, bytes, "reads", (kind + " send side").c_str());
    if (recvOk) checkRange(op.recvSlot, op.recvOffset, bytes, "writes", (kind + " receive side").c_str());
    if (!sendOk || !recvOk || op.sendSlot != op.recvSlot) return;
    const bool inPlaceOk = op.kind == CollKind::AllReduce || op.kind == CollKind::Broadcast;
    if (inPlaceOk && op.sendOffset == op.recvOffset) return;
    const uint64_t sendEnd = op.kind == CollKind::ReduceScatter ? ~uint64_t(0) : op.sendOffset + bytes;
    const uint64_t recvEnd = op.kind == CollKind::AllGather ? ~uint64_t(0) : op.recvOffset + bytes;
    if (op.sendOffset < recvEnd && op.recvOffset < sendEnd)
      c.error(n, op.sendSlot, pre() + kind + " send and receive sides overlap in " + c.slotName(op.sendSlot) +
                                  (inPlaceOk ? " (in place needs the same offset)" : ""));
  }

  void run() {
    if (node.device >= kMaxDevices)
      c.error(n, kNone, pre() + "placed on device " + s(node.device) + " (devices are 0 to " + s(kMaxDevices - 1) + ")");
    switch (node.kind) {
    case NodeKind::Kernel: {
      checkArgRefs();
      const Kernel *k = nullptr;
      if (node.kernel >= g.kernels.size())
        c.error(n, kNone, pre() + "kernel index " + s(node.kernel) + " but the graph has " +
                              s(g.kernels.size()) + " kernels");
      else
        k = &g.kernels[node.kernel];
      checkRangeSanity(k);
      if (k && c.opt.checkSignatures) checkKernelArgs(*k);
      break;
    }
    case NodeKind::Host: {
      const size_t before = c.out.size();
      checkArgRefs();
      if (node.host.op.empty()) c.error(n, kNone, pre() + "host task has no op");
      for (size_t i = 0; i < node.args.size(); ++i)
        if (node.args[i].kind == ArgKind::LocalMem)
          c.error(n, kNone, pre() + "arg " + s(i) + ": local memory args are only allowed for kernels");
      // The built-ins' argument shapes, as the runtime checks them (host_ops.h); once
      // the references above are sound, so that one problem is reported once.
      if (c.out.size() == before && !node.host.op.empty())
        if (Error e = checkHostTask(g, node)) c.error(n, kNone, pre() + e.message());
      break;
    }
    case NodeKind::Copy: checkCopy(false); break;
    case NodeKind::CopyRect: checkCopy(true); break;
    case NodeKind::Fill: checkFill(); break;
    case NodeKind::Subgraph: checkSubgraph(); break;
    case NodeKind::Conditional: checkConditional(); break;
    case NodeKind::Collective: checkCollective(); break;
    case NodeKind::Barrier: break;
    default:
      c.error(n, kNone, pre() + "unknown node kind " + s(uint32_t(node.kind)));
    }
  }
};

} // namespace

void Checker::checkNode(uint32_t n) { NodeChecker{*this, n, g.nodes[n], g}.run(); }

} // namespace detail
} // namespace cgraph
