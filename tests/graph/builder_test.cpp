#include "test_helpers.h"

#include <cgraph/graph/recorder.h>

#include <catch2/catch.hpp>

using namespace cgraph;
using namespace cgraph::test;

TEST_CASE("range helpers fill unused dimensions", "[graph][builder]") {
  NDRange r1 = range1D(1024, 64);
  CHECK(r1.dims == 1);
  CHECK(r1.global[0].value == 1024);
  CHECK(r1.global[1].value == 1);
  CHECK(r1.global[2].value == 1);
  CHECK(r1.local[0].value == 64);
  CHECK(r1.local[1].value == 1);
  CHECK(r1.local[2].value == 1);
  CHECK(r1.hasLocal());

  NDRange r0 = range1D(100);
  CHECK_FALSE(r0.hasLocal());
  CHECK(r0.local[1].value == 0);

  NDRange r2 = range2D(64, 32, 8, 4);
  CHECK(r2.dims == 2);
  CHECK(r2.global[1].value == 32);
  CHECK(r2.global[2].value == 1);
  CHECK(r2.local[1].value == 4);
  CHECK(r2.local[2].value == 1);

  NDRange r3 = range3D(8, 8, 8, 2, 0, 2); // partial local = runtime chooses
  CHECK(r3.dims == 3);
  CHECK_FALSE(r3.hasLocal());
  CHECK(r3.global[2].value == 8);

  Dim d = paramDim(3);
  CHECK(d.param == 3);
  CHECK(d.value == 0);
}

TEST_CASE("builder adds every element kind and returns indices", "[graph][builder]") {
  GraphBuilder b("g");
  CHECK(b.addSlot(slot("a", 256)) == 0);
  CHECK(b.addSlot(slot("b", 256)) == 1);
  CHECK(b.addParam(Param{"n", ScalarType::I32, 4}) == 0);
  uint32_t k = addKernel(b, "scale", {bufferParam("x"), scalarParam("n", "int", 4)});
  CHECK(k == 0);
  CHECK(b.graph().modules.size() == 1);

  CHECK(b.addKernelNode("k", k, range1D(64), {Arg::slot(0, 16), Arg::param(0)}) == 0);
  CHECK(b.addCopy("c", copyOp(0, 0, 1, 8, 64)) == 1);
  CopyOp rect;
  rect.srcSlot = 0;
  rect.dstSlot = 1;
  rect.region[0] = 4;
  rect.region[1] = 2;
  CHECK(b.addCopyRect("r", rect) == 2);
  CHECK(b.addFill("f", fillOp(1, 0, 16, {1, 2, 3, 4})) == 3);
  CHECK(b.addHost("h", HostOp{"checksum", ""}, {Arg::slot(1), Arg::string("x")}) == 4);
  CHECK(b.addBarrier("bar") == 5);
  GraphBuilder child("child");
  child.addSlot(slot("cs", 0));
  child.addFill("cf", fillOp(0, 0, 4, {0}));
  CHECK(b.addSubgraph("s", child.take(), {1}) == 6);
  b.addEdge(0, 1);
  b.addEdge(0, 1); // duplicate ignored
  b.addEdge(1, 2);

  const Graph &g = b.graph();
  REQUIRE(g.nodes.size() == 7);
  CHECK(g.nodes[0].kind == NodeKind::Kernel);
  CHECK(g.nodes[0].kernel == 0);
  CHECK(g.nodes[0].args[0].value == 16);
  CHECK(g.nodes[1].kind == NodeKind::Copy);
  CHECK(g.nodes[1].copy.dstOffset == 8);
  CHECK(g.nodes[1].copy.bytes == 64);
  CHECK(g.nodes[2].kind == NodeKind::CopyRect);
  CHECK(g.nodes[2].copy.region[1] == 2);
  CHECK(g.nodes[3].kind == NodeKind::Fill);
  CHECK(g.nodes[3].fill.pattern == std::vector<uint8_t>{1, 2, 3, 4});
  CHECK(g.nodes[4].kind == NodeKind::Host);
  CHECK(g.nodes[4].host.op == "checksum");
  CHECK(g.nodes[4].args[1].text == "x");
  CHECK(g.nodes[5].kind == NodeKind::Barrier);
  CHECK(g.nodes[6].kind == NodeKind::Subgraph);
  CHECK(g.nodes[6].subgraph == 0);
  CHECK(g.nodes[6].subgraphSlots == std::vector<uint32_t>{1});
  REQUIRE(g.subgraphs.size() == 1);
  CHECK(g.subgraphs[0].name == "child");
  CHECK(g.edges.size() == 2);
  CHECK(edgeSet(g) == EdgeSet{{0, 1}, {1, 2}});

  Graph taken = b.take();
  CHECK(taken.name == "g");
  CHECK(taken.nodes.size() == 7);
  CHECK(b.graph().nodes.empty());
  b.addEdge(0, 1); // the builder is reusable after take()
  CHECK(b.graph().edges.size() == 1);
}

TEST_CASE("builder edge dedupe survives direct edits of the edge list", "[graph][builder]") {
  GraphBuilder b;
  b.addBarrier("a");
  b.addBarrier("b");
  b.graph().edges.push_back(Edge{0, 1});
  b.addEdge(0, 1);
  CHECK(b.graph().edges.size() == 1);
  b.graph().edges.clear();
  b.addEdge(0, 1);
  CHECK(b.graph().edges.size() == 1);
}

TEST_CASE("recorder adds every node kind", "[graph][recorder]") {
  Recorder r("rec");
  uint32_t a = r.addSlot(slot("a", 256));
  uint32_t bSlot = r.addSlot(slot("b", 256));
  Kernel k;
  k.name = "inc";
  k.module = r.addModule(KernelModule{"m.cl", {}});
  k.params = {bufferParam("x")};
  uint32_t ki = r.addKernel(k);
  r.addParam(Param{"n", ScalarType::I32, 0});

  CHECK(r.addFill("f", fillOp(a, 0, 256, {0})) == 0);
  CHECK(r.lastDependencies().empty());
  CHECK(r.addKernelNode("k", ki, range1D(64), {Arg::slot(a)}) == 1);
  CHECK(r.lastDependencies() == std::vector<uint32_t>{0});
  CHECK(r.addCopy("c", copyOp(a, 0, bSlot, 0, 256)) == 2);
  CHECK(r.lastDependencies() == std::vector<uint32_t>{1});
  CopyOp rect;
  rect.srcSlot = bSlot;
  rect.dstSlot = a;
  rect.region[0] = 16;
  rect.region[1] = 4;
  CHECK(r.addCopyRect("r", rect) == 3); // reads b [0,64) (RAW on c), writes a [0,64) (WAR on c)
  CHECK(r.lastDependencies() == std::vector<uint32_t>{2});
  CHECK(r.addHost("h", HostOp{"print", ""}, {Arg::slot(bSlot)}) == 4);
  CHECK(r.lastDependencies() == std::vector<uint32_t>{2});
  CHECK(r.addBarrier("bar") == 5);
  CHECK(r.lastDependencies() == std::vector<uint32_t>{3, 4});
  GraphBuilder child("child");
  child.addSlot(slot("cs", 0));
  child.addFill("cf", fillOp(0, 0, 4, {0}));
  CHECK(r.addSubgraph("s", child.take(), {a}) == 6);
  CHECK(r.lastDependencies() == std::vector<uint32_t>{5});

  Graph g = r.take();
  CHECK(g.nodes.size() == 7);
  CHECK(edgeSet(g) == EdgeSet{{0, 1}, {1, 2}, {2, 3}, {2, 4}, {3, 5}, {4, 5}, {5, 6}});
  CHECK(r.graph().nodes.empty());
  CHECK(r.lastDependencies().empty());
}
