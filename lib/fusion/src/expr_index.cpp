// The index of a graph's stored parameter expressions by node and field, and their
// text in remarks.
#include "graph_internal.h"

#include "cgraph/expr.h"

namespace cgraph {
namespace fusion {
namespace detail {

ExprIndex::ExprIndex(const Graph &graph) : g(graph) {
  if (g.exprs.empty()) return;
  std::array<int32_t, 9> none;
  none.fill(-1);
  range.assign(g.nodes.size(), none);
  args.resize(g.nodes.size());
  for (uint32_t e = 0; e < g.exprs.size(); ++e) {
    const FieldExpr &x = g.exprs[e];
    if (x.node >= g.nodes.size()) continue;
    uint16_t f = uint16_t(x.field);
    if (f <= uint16_t(ExprField::Offset2))
      range[x.node][f] = int32_t(e);
    else if (x.field == ExprField::ScalarArg)
      args[x.node].push_back({x.arg, e});
  }
}

std::string ExprIndex::text(int32_t e) const {
  const std::vector<uint8_t> &code = g.exprs[size_t(e)].code;
  Expected<expr::Program> p = expr::decode(code.data(), code.size(), uint32_t(g.params.size()));
  if (!p) return "?";
  for (const Param &q : g.params)
    p->names.push_back(q.name);
  return p->toString();
}

// Node n's nd-range dimensions of one kind (0 global, 1 local, 2 offset): "64x$n", with
// an expression in parentheses.
std::string dimText(const Graph &g, const ExprIndex &ex, uint32_t n, unsigned kind) {
  const NDRange &r = g.nodes[n].range;
  const Dim *d = kind == 0 ? r.global : kind == 1 ? r.local : r.offset;
  std::string s;
  for (uint32_t i = 0; i < r.dims; ++i) {
    if (i) s += "x";
    int32_t e = ex.field(n, kind * 3 + i);
    if (e >= 0)
      s += "(" + ex.text(e) + ")";
    else
      s += d[i].param != kNone ? "$" + g.params[d[i].param].name : std::to_string(d[i].value);
  }
  return s;
}

} // namespace detail
} // namespace fusion
} // namespace cgraph
