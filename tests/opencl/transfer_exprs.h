// The .cgf 2.2 expression case every backend's suite runs (tests/opencl
// test_backends_shared on cpu and opencl, tests/cuda test_cuda_backend on cuda) and the
// helper the HIP fake test uses to store expressions. Header-only, test-only.
//   addExpr: a stored expression (text over $n, the graph's parameter 0) on `node`'s
//            field `f` (argument or slot `arg`); REQUIREs that it parses.
//   transferExprsGraph: copy and fill offsets and sizes, a host task's integer
//            argument and slot sizes as expressions over $n: copyA src->tmp, fillB tmp
//            (9), copyC tmp->dst, copyD pat->dst, fillZ dst (5), print(dst, u32, $n + 1).
// Thread-safety: none needed (pure, one test thread).
#pragma once

#include "cgraph/expr.h"
#include "cgraph/graph/builder.h"

#include <catch2/catch.hpp>

#include <vector>

namespace cgraph::exprtest {

inline void addExpr(Graph &g, uint32_t node, ExprField f, uint32_t arg, const char *text) {
  auto p = expr::parse(text);
  REQUIRE(p);
  auto m = expr::remapVariables(*p, {0});
  REQUIRE(m);
  FieldExpr e;
  e.node = node;
  e.field = f;
  e.arg = arg;
  e.code = expr::encode(*m);
  g.exprs.push_back(e);
}

struct TransferExprs {
  Graph graph;
  uint32_t src = 0, dst = 0, tmp = 0, pat = 0; // slots: src 16, dst 1024 external
};

inline TransferExprs transferExprsGraph() {
  auto slot = [](const char *name, uint64_t size, SlotInit init) {
    Slot s;
    s.name = name;
    s.size = size;
    s.init = init;
    return s;
  };
  GraphBuilder b("transfer_exprs");
  b.addParam(Param{"n", ScalarType::I32, 4});
  TransferExprs t;
  t.src = b.addSlot(slot("src", 16, SlotInit::External));
  t.dst = b.addSlot(slot("dst", 1024, SlotInit::External));
  t.tmp = b.addSlot(slot("tmp", 32, SlotInit::Transient));
  Slot pat = slot("pat", 16, SlotInit::Fill);
  pat.data = {7, 0, 0, 0};
  t.pat = b.addSlot(pat);
  auto fillOp = [](uint32_t s, uint32_t value) {
    FillOp f;
    f.slot = s;
    f.bytes = 4;
    f.pattern = {uint8_t(value), 0, 0, 0};
    return f;
  };
  auto copyOp = [](uint32_t src, uint32_t dst) {
    CopyOp c;
    c.srcSlot = src;
    c.dstSlot = dst;
    c.bytes = 4;
    return c;
  };
  std::vector<uint32_t> nodes;
  nodes.push_back(b.addCopy("copyA", copyOp(t.src, t.tmp)));
  nodes.push_back(b.addFill("fillB", fillOp(t.tmp, 9)));
  nodes.push_back(b.addCopy("copyC", copyOp(t.tmp, t.dst)));
  nodes.push_back(b.addCopy("copyD", copyOp(t.pat, t.dst)));
  nodes.push_back(b.addFill("fillZ", fillOp(t.dst, 5)));
  HostOp print;
  print.op = "print";
  nodes.push_back(b.addHost("show", print,
                            {Arg::slot(t.dst), Arg::string("u32"), Arg::scalar(ScalarType::U32, 1)}));
  for (size_t i = 0; i + 1 < nodes.size(); ++i)
    b.addEdge(nodes[i], nodes[i + 1]);
  t.graph = b.take();
  Graph &g = t.graph;
  addExpr(g, nodes[0], ExprField::CopyDstOffset, 0, "$n * 4");
  addExpr(g, nodes[0], ExprField::CopyBytes, 0, "$n * 4");
  addExpr(g, nodes[1], ExprField::FillBytes, 0, "$n * 4");
  addExpr(g, nodes[2], ExprField::CopyBytes, 0, "$n * 8");
  addExpr(g, nodes[3], ExprField::CopyDstOffset, 0, "$n * 8");
  addExpr(g, nodes[3], ExprField::CopyBytes, 0, "$n * 4");
  addExpr(g, nodes[4], ExprField::FillOffset, 0, "$n * 12");
  addExpr(g, nodes[4], ExprField::FillBytes, 0, "max($n - 8, 0) * 4");
  addExpr(g, nodes[5], ExprField::ScalarArg, 2, "$n + 1");
  addExpr(g, kNone, ExprField::SlotSize, t.src, "$n * 4");
  addExpr(g, kNone, ExprField::SlotSize, t.tmp, "$n * 8");
  addExpr(g, kNone, ExprField::SlotSize, t.pat, "$n * 4");
  return t;
}

} // namespace cgraph::exprtest
