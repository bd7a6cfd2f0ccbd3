#include "test_helpers.h"

#include <cgraph/expr.h>
#include <cgraph/graph/flatten.h>
#include <cgraph/graph/order.h>
#include <cgraph/graph/validate.h>

#include <catch2/catch.hpp>

using namespace cgraph;
using namespace cgraph::test;

namespace {

Graph inner() {
  GraphBuilder b("inner");
  b.addSlot(slot("x", 0));
  b.addParam(Param{"n", ScalarType::I32, 0});
  b.addModule(KernelModule{"inner.cl", {}});
  Kernel k;
  k.name = "ik";
  k.module = 0;
  k.params = {bufferParam("y"), scalarParam("n", "int", 4)};
  b.addKernel(k);
  b.addFill("i0", fillOp(0, 0, 64, {0}));
  NDRange r = range1D(0);
  r.global[0] = paramDim(0);
  b.addKernelNode("i1", 0, r, {Arg::slot(0), Arg::param(0)});
  b.addEdge(0, 1);
  return b.take();
}

Graph middle() {
  GraphBuilder b("middle");
  b.addSlot(slot("p", 0));
  b.addSlot(slot("q", 0));
  b.addParam(Param{"n", ScalarType::I32, 0});
  b.addModule(KernelModule{"mid.cl", {}});
  Kernel k;
  k.name = "mk";
  k.module = 0;
  k.params = {bufferParam("in", true), bufferParam("out")};
  b.addKernel(k);
  b.addCopy("m0", copyOp(0, 0, 1, 0, 64));
  b.addSubgraph("m1", inner(), {1});
  b.addKernelNode("m2", 0, range1D(16), {Arg::slot(1), Arg::slot(0)});
  b.addEdge(0, 1);
  b.addEdge(1, 2);
  return b.take();
}

Graph top() {
  GraphBuilder b("top");
  b.addSlot(slot("A", 1024));
  b.addSlot(slot("B", 1024));
  b.addSlot(slot("C", 1024));
  b.addParam(Param{"z", ScalarType::F32, 0});
  b.addParam(Param{"n", ScalarType::I32, 16});
  b.addModule(KernelModule{"top.cl", {}});
  Kernel k;
  k.name = "tk";
  k.module = 0;
  k.params = {bufferParam("a")};
  b.addKernel(k);
  b.addKernelNode("t0", 0, range1D(16), {Arg::slot(0)});
  b.addSubgraph("t1", middle(), {1, 0});
  b.addHost("t2", HostOp{"print", ""}, {Arg::slot(0)});
  b.addBarrier("t3");
  b.addEdge(0, 1);
  b.addEdge(1, 2);
  b.addEdge(1, 3);
  return b.take();
}

std::vector<std::string> names(const Graph &g) {
  std::vector<std::string> n;
  for (const Node &x : g.nodes) n.push_back(x.name);
  return n;
}

} // namespace

TEST_CASE("flattening a two-level nested subgraph", "[graph][flatten]") {
  Graph g = top();
  g.order = {0, 1, 2, 3};
  auto flat = flattenSubgraphs(g);
  REQUIRE(flat.ok());
  const Graph &f = *flat;
  CHECK(names(f) == std::vector<std::string>{"t0", "t1/m0", "t1/m1/i0", "t1/m1/i1", "t1/m2", "t2", "t3"});
  CHECK(edgeSet(f) == EdgeSet{{0, 1}, {1, 2}, {2, 3}, {3, 4}, {4, 5}, {4, 6}});
  CHECK(f.edges.size() == 6);
  CHECK(f.subgraphs.empty());
  CHECK(f.order == std::vector<uint32_t>{0, 1, 2, 3, 4, 5, 6});
  REQUIRE(f.partitions.size() == 2); // t2 is a host task; t3 does not wait for it
  CHECK(f.partitions[1].nodes == std::vector<uint32_t>{5});
  CHECK_FALSE(checkPartitions(f).failed());
  REQUIRE(f.modules.size() == 3);
  CHECK(f.modules[0].name == "top.cl");
  CHECK(f.modules[1].name == "mid.cl");
  CHECK(f.modules[2].name == "inner.cl");
  REQUIRE(f.kernels.size() == 3);
  CHECK(f.kernels[1].name == "mk");
  CHECK(f.kernels[1].module == 1);
  CHECK(f.kernels[2].name == "ik");
  CHECK(f.kernels[2].module == 2);
  CHECK(f.params.size() == 2);
  // middle p -> B (1), q -> A (0); inner x -> middle q -> A
  CHECK(f.nodes[1].copy.srcSlot == 1);
  CHECK(f.nodes[1].copy.dstSlot == 0);
  CHECK(f.nodes[2].fill.slot == 0);
  CHECK(f.nodes[3].kernel == 2);
  CHECK(f.nodes[3].args[0].index == 0);
  CHECK(f.nodes[3].args[1].kind == ArgKind::Param);
  CHECK(f.nodes[3].args[1].index == 1); // by name: top's 'n' is param 1
  CHECK(f.nodes[3].range.global[0].param == 1);
  CHECK(f.nodes[4].kernel == 1);
  CHECK(f.nodes[4].args[0].index == 0);
  CHECK(f.nodes[4].args[1].index == 1);
  CHECK(f.nodes[5].kind == NodeKind::Host);
  CHECK(validateGraph(f).size() == 1); // slot 'C' is never used
  CHECK(validateGraph(g).size() == 1);
}

TEST_CASE("flattening connects every child root and leaf", "[graph][flatten]") {
  GraphBuilder child("two");
  child.addBarrier("c0");
  child.addBarrier("c1");
  GraphBuilder b;
  b.addBarrier("p");
  b.addSubgraph("s", child.take(), {});
  b.addBarrier("q");
  b.addEdge(0, 1);
  b.addEdge(1, 2);
  auto f = flattenSubgraphs(b.graph());
  REQUIRE(f.ok());
  CHECK(names(*f) == std::vector<std::string>{"p", "s/c0", "s/c1", "q"});
  CHECK(edgeSet(*f) == EdgeSet{{0, 1}, {0, 2}, {1, 3}, {2, 3}});
}

TEST_CASE("an empty subgraph becomes a barrier", "[graph][flatten]") {
  GraphBuilder b;
  b.addBarrier("p");
  b.addSubgraph("s", Graph(), {});
  b.addBarrier("q");
  b.addEdge(0, 1);
  b.addEdge(1, 2);
  auto f = flattenSubgraphs(b.graph());
  REQUIRE(f.ok());
  REQUIRE(f->nodes.size() == 3);
  CHECK(f->nodes[1].kind == NodeKind::Barrier);
  CHECK(f->nodes[1].name == "s");
  CHECK(edgeSet(*f) == EdgeSet{{0, 1}, {1, 2}});
}

TEST_CASE("flattening errors", "[graph][flatten]") {
  SECTION("binding count") {
    Graph g = top();
    g.nodes[1].subgraphSlots = {1};
    auto f = flattenSubgraphs(g);
    REQUIRE_FALSE(f.ok());
    CHECK(f.error().message() == "node 't1': subgraph has 2 slots but the node binds 1");
  }
  SECTION("binding out of range") {
    Graph g = top();
    g.nodes[1].subgraphSlots = {1, 8};
    auto f = flattenSubgraphs(g);
    REQUIRE_FALSE(f.ok());
    CHECK(f.error().message() == "node 't1': subgraph slot binding 1 refers to slot 8 but the graph has 3 slots");
  }
  SECTION("missing parent param, two levels down") {
    Graph g = top();
    g.params[1].name = "m";
    g.subgraphs[0].params[0].name = "n"; // middle keeps 'n', top lacks it
    auto f = flattenSubgraphs(g);
    REQUIRE_FALSE(f.ok());
    CHECK(f.error().message() == "node 't1': subgraph param 'n' has no parent param of that name");
  }
  SECTION("error inside the middle level carries both node names") {
    Graph g = top();
    g.subgraphs[0].nodes[1].subgraphSlots = {};
    auto f = flattenSubgraphs(g);
    REQUIRE_FALSE(f.ok());
    CHECK(f.error().message() == "node 't1': node 'm1': subgraph has 1 slots but the node binds 0");
  }
  SECTION("bad subgraph index") {
    Graph g = top();
    g.nodes[1].subgraph = 4;
    auto f = flattenSubgraphs(g);
    REQUIRE_FALSE(f.ok());
    CHECK(f.error().message() == "node 't1': subgraph index 4 but the graph has 1 subgraphs");
  }
}

TEST_CASE("flattening keeps the stored order and gives an executable plan", "[graph][flatten][partitions]") {
  // r0 and r1 are roots; s (a two-node child a -> b) follows r1; breadth-first order
  // differs from depth-first here, and the flattened order must keep the stored one.
  GraphBuilder child("child");
  child.addBarrier("a");
  child.addBarrier("b");
  child.addEdge(0, 1);
  GraphBuilder b("top");
  b.addBarrier("r0");
  b.addBarrier("r1");
  b.addBarrier("x");
  b.addSubgraph("s", child.take(), {});
  b.addEdge(0, 2);
  b.addEdge(1, 3);
  Graph g = b.take();
  REQUIRE_FALSE(finalizeForFile(g, OrderKind::BreadthFirst).failed());
  REQUIRE(g.order == std::vector<uint32_t>{0, 1, 2, 3});
  auto flat = flattenSubgraphs(g);
  REQUIRE(flat.ok());
  // s/a, s/b are nodes 3 and 4: the breadth-first order, with s replaced by its order.
  CHECK(names(*flat) == std::vector<std::string>{"r0", "r1", "x", "s/a", "s/b"});
  CHECK(flat->order == std::vector<uint32_t>{0, 1, 2, 3, 4});
  CHECK(isTopologicalOrder(*flat, flat->order));
  CHECK_FALSE(checkPartitions(*flat).failed());

  // Depth-first would put x right after r0.
  Graph d = g;
  REQUIRE_FALSE(finalizeForFile(d, OrderKind::DepthFirst).failed());
  auto flatD = flattenSubgraphs(d);
  REQUIRE(flatD.ok());
  CHECK(flatD->order == std::vector<uint32_t>{0, 2, 1, 3, 4});
}

TEST_CASE("stored partitions survive flattening when sound, else are recomputed", "[graph][flatten][partitions]") {
  GraphBuilder b("g");
  b.addBarrier("n0");
  b.addHost("h", HostOp{"print", ""}, {});
  b.addBarrier("n2");
  b.addEdge(0, 1);
  b.addEdge(1, 2);
  Graph g = b.take();
  REQUIRE_FALSE(finalizeForFile(g).failed());
  auto flat = flattenSubgraphs(g);
  REQUIRE(flat.ok());
  REQUIRE(flat->partitions.size() == 3);
  // A broken stored plan (the host task merged into a device partition) is not used.
  g.partitions = {Partition{{0, 1, 2}, {}}};
  flat = flattenSubgraphs(g);
  REQUIRE(flat.ok());
  CHECK(flat->partitions.size() == 3);
  CHECK_FALSE(checkPartitions(*flat).failed());
}

TEST_CASE("flattening carries stored expressions to the new nodes and parameters",
          "[graph][flatten][expr]") {
  auto exprOf = [](const std::string &text, uint32_t paramIndex) {
    auto p = expr::parse(text);
    REQUIRE(p.ok());
    auto m = expr::remapVariables(*p, {paramIndex});
    REQUIRE(m.ok());
    return expr::encode(*m);
  };
  auto fe = [](uint32_t node, ExprField f, std::vector<uint8_t> code) {
    FieldExpr e;
    e.node = node;
    e.field = f;
    e.code = std::move(code);
    return e;
  };
  Graph in = inner();
  in.exprs.push_back(fe(1, ExprField::Global0, exprOf("$n * 2", 0)));
  Graph mid = middle();
  mid.subgraphs[0] = in;
  mid.exprs.push_back(fe(2, ExprField::Global0, exprOf("$n + 5", 0)));
  Graph g = top();
  g.subgraphs[0] = mid;
  g.exprs.push_back(fe(0, ExprField::Global0, exprOf("$n - 1", 1)));
  auto flat = flattenSubgraphs(g);
  INFO((flat ? std::string() : flat.error().message()));
  REQUIRE(flat.ok());
  const Graph &f = *flat;
  REQUIRE(f.exprs.size() == 3);
  const uint32_t nodes[3] = {0, 3, 4};                   // t0, t1/m1/i1, t1/m2
  const char *texts[3] = {"$1 - 1", "$1 * 2", "$1 + 5"}; // top's 'n' is param 1
  for (int i = 0; i < 3; ++i) {
    INFO(i);
    CHECK(f.exprs[i].node == nodes[i]);
    auto p =
        expr::decode(f.exprs[i].code.data(), f.exprs[i].code.size(), uint32_t(f.params.size()));
    REQUIRE(p.ok());
    CHECK(p->toString() == texts[i]);
  }
}

TEST_CASE("a graph flattens the same whether it is copied or consumed", "[graph][flatten]") {
  // Without Subgraph nodes the consuming overload works in place: duplicate edges
  // dropped, conditional bodies renumbered in order of use (one body used twice, one
  // unused), expressions sorted, a broken stored plan recomputed, no order computed.
  GraphBuilder body("body");
  body.addBarrier("inside");
  GraphBuilder b("flat");
  b.addSlot(slot("c", 64));
  b.addParam(Param{"n", ScalarType::I32, 4});
  b.addBarrier("n0");
  b.addHost("h", HostOp{"print", ""}, {});
  b.addBarrier("n2");
  const uint32_t unused = b.addSubgraphGraph(inner());
  const uint32_t used = b.addSubgraphGraph(body.take());
  for (const char *name : {"if0", "if1"}) {
    Node c;
    c.name = name;
    c.kind = NodeKind::Conditional;
    c.cond.slot = 0;
    c.subgraph = used;
    b.addNode(c);
  }
  b.addEdge(0, 1);
  b.addEdge(0, 1);
  b.addEdge(1, 2);
  b.addEdge(2, 3);
  b.addEdge(3, 4);
  Graph g = b.take();
  REQUIRE(unused == 0);
  g.partitions = {Partition{{0, 1, 2, 3, 4}, {}}};
  FieldExpr e1, e2;
  e1.node = 2;
  e2.node = 0;
  auto p = expr::parse("$n + 1");
  REQUIRE(p.ok());
  auto m0 = expr::remapVariables(*p, {0});
  REQUIRE(m0.ok());
  e1.code = e2.code = expr::encode(*m0);
  g.exprs = {e1, e2};

  auto copied = flattenSubgraphs(g);
  REQUIRE(copied.ok());
  auto moved = flattenSubgraphs(Graph(g));
  REQUIRE(moved.ok());
  for (const Graph *f : {&*copied, &*moved}) {
    CHECK(names(*f) == std::vector<std::string>{"n0", "h", "n2", "if0", "if1"});
    CHECK(f->edges.size() == 4);
    CHECK(f->subgraphs.size() == 2); // the used body, once per conditional
    CHECK(f->nodes[3].subgraph == 0);
    CHECK(f->nodes[4].subgraph == 1);
    CHECK(f->subgraphs[0].nodes.size() == 1);
    CHECK(f->order == std::vector<uint32_t>{0, 1, 2, 3, 4});
    // The stored single partition is broken (a host task and conditionals inside it):
    // recomputed, each of them a partition of its own.
    CHECK(f->partitions.size() == 5);
    CHECK_FALSE(checkPartitions(*f).failed());
    REQUIRE(f->exprs.size() == 2);
    CHECK(f->exprs[0].node == 0);
    CHECK(f->slots.size() == 1);
    CHECK(f->params.size() == 1);
  }
  CHECK(moved->edges.size() == copied->edges.size());
  for (size_t i = 0; i < moved->edges.size(); ++i) {
    CHECK(moved->edges[i].from == copied->edges[i].from);
    CHECK(moved->edges[i].to == copied->edges[i].to);
  }
  CHECK(moved->partitions.size() == copied->partitions.size());

  // Errors are the same either way.
  Graph bad = g;
  bad.edges.push_back(Edge{0, 9});
  auto c = flattenSubgraphs(bad);
  auto m = flattenSubgraphs(Graph(bad));
  REQUIRE_FALSE(c.ok());
  REQUIRE_FALSE(m.ok());
  CHECK(c.error().message() == m.error().message());
  CHECK(m.error().message().find("points past the node table") != std::string::npos);

  // With Subgraph nodes the consuming overload flattens as the copying one does.
  auto t1 = flattenSubgraphs(top());
  const Graph t = top();
  auto t2 = flattenSubgraphs(t);
  REQUIRE(t1.ok());
  REQUIRE(t2.ok());
  CHECK(names(*t1) == names(*t2));
  CHECK(t1->order == t2->order);
}
