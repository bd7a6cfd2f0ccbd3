// Parameter values given before fusion: their text read as the parameter's type, and
// the graph specialized to them (FuseOptions::paramValues).
#include "graph_internal.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "cgraph/expr.h"

namespace cgraph {
namespace fusion {
namespace detail {

// The value bits of `text` typed as parameter `p`.
Expected<uint64_t> constantBits(const Param &p, const std::string &text) {
  const char *b = text.c_str();
  char *end = nullptr;
  errno = 0;
  uint64_t bits = 0;
  switch (p.type) {
  case ScalarType::F32: {
    float f = std::strtof(b, &end);
    uint32_t u;
    std::memcpy(&u, &f, 4);
    bits = u;
    break;
  }
  case ScalarType::F64: {
    double d = std::strtod(b, &end);
    std::memcpy(&bits, &d, 8);
    break;
  }
  case ScalarType::F16:
    return makeError("parameter '" + p.name + "': f16 constants are not supported");
  default: {
    uint32_t size = scalarSize(p.type);
    bool isSigned = p.type == ScalarType::I8 || p.type == ScalarType::I16 ||
                    p.type == ScalarType::I32 || p.type == ScalarType::I64;
    if (isSigned)
      bits = uint64_t(std::strtoll(b, &end, 0));
    else
      bits = std::strtoull(b, &end, 0);
    if (size < 8) bits &= (uint64_t(1) << (8 * size)) - 1;
    break;
  }
  }
  if (text.empty() || end == b || *end != 0 || errno == ERANGE)
    return makeError("parameter '" + p.name + "': '" + text + "' is not a " + scalarName(p.type) +
                     " value");
  return bits;
}

namespace {

bool isFloat(ScalarType t) {
  return t == ScalarType::F16 || t == ScalarType::F32 || t == ScalarType::F64;
}

// Sets the field `e` names to `v` (a specialized expression's value).
Error setField(Graph &g, const FieldExpr &e, int64_t v) {
  std::string where = e.node == kNone ? "slot '" + g.slots[e.arg].name + "'"
                                      : "node '" + g.nodes[e.node].name + "'";
  where += " " + exprFieldName(e.field, e.arg);
  if (v < 0 && e.field != ExprField::ScalarArg)
    return makeError(where + " is " + std::to_string(v) + " with the given parameter values");
  uint16_t f = uint16_t(e.field);
  if (e.node == kNone) {
    g.slots[e.arg].size = uint64_t(v);
    return Error();
  }
  Node &n = g.nodes[e.node];
  if (f <= uint16_t(ExprField::Offset2)) {
    Dim *d = f < 3 ? n.range.global : f < 6 ? n.range.local : n.range.offset;
    d[f % 3].value = uint64_t(v);
    d[f % 3].param = kNone;
    return Error();
  }
  switch (e.field) {
  case ExprField::ScalarArg: {
    Arg &a = n.args[e.arg];
    uint32_t size = scalarSize(a.type);
    a.value = uint64_t(v);
    if (size < 8) a.value &= (uint64_t(1) << (8 * size)) - 1;
    return Error();
  }
  case ExprField::CopySrcOffset:
    n.copy.srcOffset = uint64_t(v);
    return Error();
  case ExprField::CopyDstOffset:
    n.copy.dstOffset = uint64_t(v);
    return Error();
  case ExprField::CopyBytes:
    n.copy.bytes = uint64_t(v);
    return Error();
  case ExprField::FillOffset:
    n.fill.offset = uint64_t(v);
    return Error();
  case ExprField::FillBytes:
    n.fill.bytes = uint64_t(v);
    return Error();
  case ExprField::CollSendOffset:
    n.coll.sendOffset = uint64_t(v);
    return Error();
  case ExprField::CollRecvOffset:
    n.coll.recvOffset = uint64_t(v);
    return Error();
  case ExprField::CollCount:
    n.coll.count = uint64_t(v);
    return Error();
  case ExprField::CollPeer:
    n.coll.peer = uint64_t(v);
    return Error();
  default:
    return makeError(where + ": unknown expression field");
  }
}

} // namespace

// FuseOptions::paramValues: each named parameter takes its value in every stored
// expression (folded to a literal where it was the last variable), nd-range size and
// kernel argument that uses it.
Error specialize(Graph &g, const std::vector<std::pair<std::string, std::string>> &values,
                 FuseReport &rep) {
  std::vector<bool> fixed(g.params.size(), false);
  std::vector<int64_t> ival(g.params.size(), 0);
  std::string list;
  for (const auto &[name, text] : values) {
    uint32_t p = g.findParam(name);
    if (p == kNone) return makeError("--param: no parameter named '" + name + "'");
    Expected<uint64_t> bits = constantBits(g.params[p], text);
    if (!bits) return bits.error().withContext("--param");
    fixed[p] = true;
    g.params[p].defaultBits = *bits;
    ival[p] = isFloat(g.params[p].type) ? 0 : expr::integerValue(g.params[p].type, *bits);
    g.metadata.push_back({"specialized." + name, text});
    list += (list.empty() ? "" : ", ") + name + " = " + text;
  }
  unsigned folded = 0, literals = 0;
  std::vector<FieldExpr> keep;
  for (FieldExpr &e : g.exprs) {
    Expected<expr::Program> prog =
        expr::decode(e.code.data(), e.code.size(), uint32_t(g.params.size()));
    if (!prog) return prog.error().withContext("stored expression");
    bool changed = false, open = false;
    for (expr::Instr &in : prog->code) {
      if (in.op != expr::Op::Var) continue;
      if (!fixed[size_t(in.operand)]) {
        open = true;
        continue;
      }
      in = {expr::Op::Lit, ival[size_t(in.operand)]};
      changed = true;
    }
    if (!changed) {
      keep.push_back(std::move(e));
      continue;
    }
    if (open) { // other parameters remain: the expression stays, with the values in it
      e.code = expr::encode(*prog);
      keep.push_back(std::move(e));
      continue;
    }
    Expected<int64_t> v = expr::evaluate(*prog, nullptr, 0);
    if (!v) return v.error().withContext("stored expression of " + exprFieldName(e.field, e.arg));
    CGRAPH_RETURN_IF_ERROR(setField(g, e, *v));
    ++folded;
  }
  g.exprs = std::move(keep);
  for (Node &n : g.nodes) {
    for (Dim *d : {n.range.global, n.range.local, n.range.offset})
      for (uint32_t i = 0; i < 3; ++i)
        if (d[i].param != kNone && d[i].param < fixed.size() && fixed[d[i].param]) {
          d[i].value = uint64_t(ival[d[i].param]);
          d[i].param = kNone;
          ++literals;
        }
    if (n.kind != NodeKind::Kernel) continue;
    for (Arg &a : n.args)
      if (a.kind == ArgKind::Param && a.index < fixed.size() && fixed[a.index]) {
        a = Arg::scalar(g.params[a.index].type, g.params[a.index].defaultBits);
        ++literals;
      }
  }
  rep.remarks.push_back({Remark::Note, "",
                         "specialized " + list + ": " + std::to_string(folded) +
                             " stored expressions folded, " + std::to_string(literals) +
                             " nd-range sizes and arguments made literal; the fused graph "
                             "ignores other values of these parameters"});
  return Error();
}

} // namespace detail
} // namespace fusion
} // namespace cgraph
