// Test helpers for graphs with collective nodes (the cpu and cuda collective tests):
// a CollectiveOp from its slots and count, and a stored field expression added to a
// built graph (parsed over the graph's parameters, kept in (node, field) order).
// Header-only; failures are Catch2 REQUIREs in the calling test.
#pragma once

#include "cgraph/expr.h"
#include "cgraph/model.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <tuple>
#include <vector>

namespace cgraph::test {

inline void addExpr(Graph &g, uint32_t node, ExprField field, const std::string &text) {
  auto p = expr::parse(text);
  REQUIRE(p.ok());
  std::vector<uint32_t> paramOf;
  for (const std::string &n : p->names) paramOf.push_back(g.findParam(n));
  auto m = expr::remapVariables(*p, paramOf);
  REQUIRE(m.ok());
  FieldExpr e;
  e.node = node;
  e.field = field;
  e.code = expr::encode(*m);
  g.exprs.push_back(e);
  std::sort(g.exprs.begin(), g.exprs.end(), [](const FieldExpr &a, const FieldExpr &b) {
    return std::make_tuple(a.node, uint16_t(a.field)) < std::make_tuple(b.node, uint16_t(b.field));
  });
}

inline CollectiveOp coll(CollKind kind, uint32_t send, uint32_t recv, uint64_t count) {
  CollectiveOp c;
  c.kind = kind;
  c.sendSlot = send;
  c.recvSlot = recv;
  c.count = count;
  return c;
}

} // namespace cgraph::test
