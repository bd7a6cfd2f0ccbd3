#include "test_helpers.h"

#include <cgraph/graph/hazards.h>
#include <cgraph/graph/json.h>
#include <cgraph/graph/recorder.h>

#include <catch2/catch.hpp>

#include <algorithm>

using namespace cgraph;
using namespace cgraph::test;

namespace {

// Slots a, b, c (1024 bytes each) and kernel 0 = map(const in, out, float s),
// kernel 1 = accumulate(in/out rw), kernel 2 = cmap(__constant in, out).
template <typename B> void setup(B &b) {
  b.addSlot(slot("a", 1024));
  b.addSlot(slot("b", 1024));
  b.addSlot(slot("c", 1024));
  b.addModule(KernelModule{"m.cl", {}});
  Kernel map;
  map.name = "map";
  map.module = 0;
  map.params = {bufferParam("in", true), bufferParam("out"), scalarParam("s", "float", 4)};
  b.addKernel(map);
  Kernel acc;
  acc.name = "accumulate";
  acc.module = 0;
  acc.params = {bufferParam("x")};
  b.addKernel(acc);
  Kernel cmap;
  cmap.name = "cmap";
  cmap.module = 0;
  KernelParam cin = bufferParam("in");
  cin.kind = ParamKind::ConstantBuffer;
  cmap.params = {cin, bufferParam("out")};
  b.addKernel(cmap);
}

std::vector<Arg> mapArgs(uint32_t in, uint32_t out, uint64_t inOff = 0, uint64_t outOff = 0) {
  return {Arg::slot(in, inOff), Arg::slot(out, outOff),
          Arg::scalar(ScalarType::F32, f32Bits(2.0f))};
}

Graph record(void (*program)(Recorder &)) {
  Recorder r("p");
  setup(r);
  program(r);
  return r.take();
}

} // namespace

TEST_CASE("nodeAccesses follows the access convention", "[graph][hazards]") {
  GraphBuilder b;
  setup(b);
  b.addKernelNode("map", 0, range1D(16), mapArgs(0, 1, 8, 16));
  b.addKernelNode("cmap", 2, range1D(16), {Arg::slot(2), Arg::slot(0)});
  b.addCopy("copy", copyOp(0, 4, 0, 512, 100));
  CopyOp rect;
  rect.srcSlot = 1;
  rect.srcOffset = 10;
  rect.dstSlot = 2;
  rect.region[0] = 8;
  rect.region[1] = 3;
  rect.region[2] = 2;
  rect.srcRowPitch = 16;   // slice default = 48
  rect.dstSlicePitch = 40; // row default = 8
  b.addCopyRect("rect", rect);
  b.addFill("fill", fillOp(1, 32, 64, {1, 2}));
  b.addHost("sum", HostOp{"checksum", ""}, {Arg::slot(0, 4), Arg::string("x")});
  b.addHost("load", HostOp{"read_file", ""}, {Arg::slot(1), Arg::string("f.bin")});
  b.addHost("custom", HostOp{"my_op", "libx.so"}, {Arg::slot(2)});
  b.addBarrier("bar");
  b.addKernelNode("extra", 1, range1D(16), {Arg::slot(0), Arg::slot(1)}); // arg past signature
  const Graph &g = b.graph();

  auto acc = [&](uint32_t n) { return nodeAccesses(g, n).accesses; };
  auto same = [](const SlotAccess &a, uint32_t slot, uint64_t off, uint64_t size, bool r, bool w) {
    return a.slot == slot && a.offset == off && a.size == size && a.read == r && a.write == w;
  };
  auto a0 = acc(0);
  REQUIRE(a0.size() == 2);
  CHECK(same(a0[0], 0, 8, kUnknownSize, true, false));
  CHECK(same(a0[1], 1, 16, kUnknownSize, true, true));
  auto a1 = acc(1);
  REQUIRE(a1.size() == 2);
  CHECK(same(a1[0], 2, 0, kUnknownSize, true, false));
  CHECK(same(a1[1], 0, 0, kUnknownSize, true, true));
  auto a2 = acc(2);
  REQUIRE(a2.size() == 2);
  CHECK(same(a2[0], 0, 4, 100, true, false));
  CHECK(same(a2[1], 0, 512, 100, false, true));
  auto a3 = acc(3);
  REQUIRE(a3.size() == 2);
  CHECK(same(a3[0], 1, 10, 48 + 32 + 8, true, false)); // (2-1)*48 + (3-1)*16 + 8
  CHECK(same(a3[1], 2, 0, 40 + 16 + 8, false, true));  // (2-1)*40 + (3-1)*8 + 8
  auto a4 = acc(4);
  REQUIRE(a4.size() == 1);
  CHECK(same(a4[0], 1, 32, 64, false, true));
  auto a5 = acc(5);
  REQUIRE(a5.size() == 1);
  CHECK(same(a5[0], 0, 4, kUnknownSize, true, false));
  auto a6 = acc(6);
  REQUIRE(a6.size() == 1);
  CHECK(same(a6[0], 1, 0, kUnknownSize, false, true));
  auto a7 = acc(7);
  REQUIRE(a7.size() == 1);
  CHECK(same(a7[0], 2, 0, kUnknownSize, true, true));
  CHECK(acc(8).empty());
  auto a9 = acc(9);
  REQUIRE(a9.size() == 2);
  CHECK(same(a9[1], 1, 0, kUnknownSize, true, true));
  CHECK(acc(99).empty());

  CHECK(hostOpReadsOnly("checksum"));
  CHECK(hostOpReadsOnly("print"));
  CHECK(hostOpReadsOnly("write_file"));
  CHECK(hostOpReadsOnly("compare"));
  CHECK_FALSE(hostOpReadsOnly("read_file"));
  CHECK(hostOpWritesOnly("read_file"));
  uint64_t region[3] = {8, 3, 2};
  CHECK(rectExtent(region, 0, 0) == 48);
  uint64_t zero[3] = {0, 1, 1};
  CHECK(rectExtent(zero, 0, 0) == 0);
}

TEST_CASE("subgraph node accesses merge the child's per parent slot", "[graph][hazards]") {
  GraphBuilder child("child");
  setup(child); // child slots a, b, c
  child.addFill("f", fillOp(0, 64, 32, {0}));
  child.addCopy("c", copyOp(0, 16, 1, 0, 8));
  GraphBuilder b;
  setup(b);
  b.addSubgraph("s", child.take(), {2, 0, 1});
  auto acc = nodeAccesses(b.graph(), 0).accesses;
  REQUIRE(acc.size() == 2);
  CHECK(acc[0].slot == 2);
  CHECK(acc[0].offset == 16);
  CHECK(acc[0].size == 80); // [16, 96)
  CHECK(acc[0].read);
  CHECK(acc[0].write);
  CHECK(acc[1].slot == 0);
  CHECK(acc[1].offset == 0);
  CHECK(acc[1].size == 8);
  CHECK_FALSE(acc[1].read);
  CHECK(acc[1].write);
}

TEST_CASE("recording infers RAW, WAR and WAW edges", "[graph][recorder]") {
  SECTION("RAW") {
    Graph g = record([](Recorder &r) {
      r.addFill("init", fillOp(0, 0, 1024, {0}));
      r.addKernelNode("k1", 0, range1D(256), mapArgs(0, 1));
      r.addKernelNode("k2", 0, range1D(256), mapArgs(1, 2));
    });
    CHECK(edgeSet(g) == EdgeSet{{0, 1}, {1, 2}});
  }
  SECTION("WAR") {
    Graph g = record([](Recorder &r) {
      r.addKernelNode("k1", 0, range1D(256), mapArgs(0, 1));
      r.addFill("overwrite", fillOp(0, 0, 1024, {0}));
    });
    CHECK(edgeSet(g) == EdgeSet{{0, 1}});
  }
  SECTION("WAW") {
    Graph g = record([](Recorder &r) {
      r.addFill("f1", fillOp(0, 0, 1024, {0}));
      r.addFill("f2", fillOp(0, 0, 1024, {1}));
    });
    CHECK(edgeSet(g) == EdgeSet{{0, 1}});
  }
  SECTION("independent slots run in parallel") {
    Graph g = record([](Recorder &r) {
      r.addFill("fa", fillOp(0, 0, 1024, {0}));
      r.addFill("fb", fillOp(1, 0, 1024, {0}));
      r.addKernelNode("acc", 1, range1D(256), {Arg::slot(2)});
    });
    CHECK(g.edges.empty());
  }
  SECTION("readers of one slot do not depend on each other") {
    Graph g = record([](Recorder &r) {
      r.addFill("fa", fillOp(0, 0, 1024, {0}));
      r.addKernelNode("r1", 0, range1D(256), mapArgs(0, 1));
      r.addKernelNode("r2", 2, range1D(256), {Arg::slot(0), Arg::slot(2)});
      r.addHost("sum", HostOp{"checksum", ""}, {Arg::slot(0)});
      r.addFill("fa2", fillOp(0, 0, 1024, {1})); // WAR on all three readers
    });
    CHECK(edgeSet(g) == EdgeSet{{0, 1}, {0, 2}, {0, 3}, {1, 4}, {2, 4}, {3, 4}});
  }
  SECTION("non-overlapping ranges of one slot do not conflict") {
    Graph g = record([](Recorder &r) {
      r.addFill("lo", fillOp(0, 0, 512, {0}));
      r.addFill("hi", fillOp(0, 512, 512, {0}));
      r.addCopy("readlo", copyOp(0, 0, 1, 0, 512));
      r.addKernelNode("hi-rw", 1, range1D(128), {Arg::slot(0, 512)});
      r.addFill("edge", fillOp(0, 500, 24, {0})); // overlaps both halves
    });
    CHECK(edgeSet(g) == EdgeSet{{0, 2}, {1, 3}, {2, 4}, {3, 4}});
  }
  SECTION("edges are transitively reduced") {
    Graph g = record([](Recorder &r) {
      r.addFill("fa", fillOp(0, 0, 1024, {0}));
      r.addKernelNode("k1", 0, range1D(256), mapArgs(0, 1));
      r.addCopy("ac", copyOp(0, 0, 2, 0, 512));   // RAW a on fa only (reads don't conflict)
      r.addCopy("bc", copyOp(1, 0, 2, 512, 512)); // RAW b on k1; c ranges are disjoint
    });
    CHECK(edgeSet(g) == EdgeSet{{0, 1}, {0, 2}, {1, 3}});
    Graph h = record([](Recorder &r) {
      r.addFill("fa", fillOp(0, 0, 1024, {0}));
      r.addKernelNode("k1", 0, range1D(256), mapArgs(0, 1));
      r.addKernelNode("k2", 1, range1D(256), {Arg::slot(1)});
      // RAW a on fa and RAW b on k2; fa reaches k2, so only k2 -> both remains
      r.addHost("both", HostOp{"compare", ""}, {Arg::slot(0), Arg::slot(1)});
    });
    CHECK(edgeSet(h) == EdgeSet{{0, 1}, {1, 2}, {2, 3}});
  }
  SECTION("a copy within one slot") {
    Graph g = record([](Recorder &r) {
      r.addFill("lo", fillOp(0, 0, 512, {0}));
      r.addCopy("lo-hi", copyOp(0, 0, 0, 512, 512));
      r.addCopy("hi-b", copyOp(0, 512, 1, 0, 512));
      r.addFill("lo2", fillOp(0, 0, 512, {1}));
    });
    CHECK(edgeSet(g) == EdgeSet{{0, 1}, {1, 2}, {1, 3}});
  }
  SECTION("host tasks: read-only built-ins, read_file writes, others read+write") {
    Graph g = record([](Recorder &r) {
      r.addHost("load", HostOp{"read_file", ""}, {Arg::slot(0), Arg::string("in.bin")});
      r.addHost("print", HostOp{"print", ""}, {Arg::slot(0)});
      r.addHost("save", HostOp{"write_file", ""}, {Arg::slot(0), Arg::string("out.bin")});
      r.addHost("plugin", HostOp{"mutate", "libm.so"}, {Arg::slot(0)});
      r.addHost("print2", HostOp{"print", ""}, {Arg::slot(0)});
    });
    CHECK(edgeSet(g) == EdgeSet{{0, 1}, {0, 2}, {1, 3}, {2, 3}, {3, 4}});
  }
}

TEST_CASE("recording barrier semantics", "[graph][recorder]") {
  Graph g = record([](Recorder &r) {
    r.addFill("fa", fillOp(0, 0, 1024, {0}));              // 0
    r.addFill("fb", fillOp(1, 0, 1024, {0}));              // 1
    r.addBarrier("b1");                                    // 2: after 0, 1
    r.addFill("fc", fillOp(2, 0, 1024, {0}));              // 3: after barrier only
    r.addKernelNode("k", 0, range1D(256), mapArgs(0, 1));  // 4: hazards absorbed by b1
    r.addKernelNode("k2", 0, range1D(256), mapArgs(2, 1)); // 5: RAW c on 3, WAW b on 4
    r.addBarrier("b2");                                    // 6: leaf since b1 is 5
    r.addBarrier("b3");                                    // 7: nothing since b2
    r.addFill("fa2", fillOp(0, 0, 1024, {1}));             // 8
  });
  CHECK(edgeSet(g) ==
        EdgeSet{{0, 2}, {1, 2}, {2, 3}, {2, 4}, {3, 5}, {4, 5}, {5, 6}, {6, 7}, {7, 8}});
  CHECK(inferHazardEdges(g).size() == 9);
}

namespace {

// One program, run twice: recorded, and explicitly with the hazard edges written out.
template <typename B> void diamondNodes(B &b) {
  b.addFill("init", fillOp(0, 0, 1024, {7}));
  b.addKernelNode("left", 0, range1D(256), mapArgs(0, 1, 0, 0));
  b.addKernelNode("right", 2, range1D(256), {Arg::slot(0), Arg::slot(2)});
  CopyOp rect;
  rect.srcSlot = 1;
  rect.dstSlot = 2;
  rect.dstOffset = 512;
  rect.region[0] = 64;
  rect.region[1] = 4;
  b.addCopyRect("join", rect);
  b.addHost("check", HostOp{"checksum", ""}, {Arg::slot(2), Arg::string("out")});
  b.addBarrier("end");
  b.addFill("reset", fillOp(1, 0, 1024, {0}));
}

} // namespace

TEST_CASE("explicit and recorded programs give the same graph", "[graph][recorder]") {
  Recorder r("same");
  setup(r);
  diamondNodes(r);
  Graph recorded = r.take();

  GraphBuilder b("same");
  setup(b);
  diamondNodes(b);
  b.addEdge(0, 1);
  b.addEdge(0, 2);
  b.addEdge(1, 3);
  b.addEdge(2, 3);
  b.addEdge(3, 4);
  b.addEdge(4, 5);
  b.addEdge(5, 6);
  Graph explicitGraph = b.take();

  CHECK(edgeSet(recorded) == edgeSet(explicitGraph));
  CHECK(toJson(recorded) == toJson(explicitGraph));
  std::vector<Edge> inferred = inferHazardEdges(explicitGraph);
  Graph tmp = explicitGraph;
  tmp.edges = inferred;
  CHECK(edgeSet(tmp) == edgeSet(explicitGraph));
}

TEST_CASE("hazard inference ignores out-of-range slots", "[graph][hazards]") {
  GraphBuilder b;
  setup(b);
  b.addFill("bad", fillOp(77, 0, 4, {0}));
  b.addFill("bad2", fillOp(77, 0, 4, {0}));
  b.addFill("ok", fillOp(0, 0, 4, {0}));
  CHECK(inferHazardEdges(b.graph()).empty());
}

// Copy/fill fields that are stored parameter expressions (.cgf 2.2) are known only per
// submission: the accesses run from the offset (0 when it is an expression) to the end
// of the slot, so edges inferred from the placeholder values hold for every value.
TEST_CASE("copy and fill expression fields widen the accesses", "[graph][hazards][expr]") {
  GraphBuilder b;
  setup(b);
  b.addParam(Param{"n", ScalarType::I32, 4});
  b.addFill("f1", fillOp(0, 0, 16, {0}));    // a[0, 16)
  b.addFill("f2", fillOp(0, 512, 16, {0}));  // a[512, 528): offset is "$n * 128"
  b.addCopy("c", copyOp(1, 64, 0, 256, 16)); // b[64, ..) -> a[256, ..): bytes is "$n * 4"
  Graph &g = b.graph();
  auto add = [&](uint32_t node, ExprField f) {
    FieldExpr e;
    e.node = node;
    e.field = f;
    e.code = {1, 0}; // $n
    g.exprs.push_back(e);
  };
  add(1, ExprField::FillOffset);
  add(2, ExprField::CopyBytes);
  auto f2 = nodeAccesses(g, 1).accesses;
  REQUIRE(f2.size() == 1);
  CHECK(f2[0].offset == 0);
  CHECK(f2[0].size == kUnknownSize);
  auto c = nodeAccesses(g, 2).accesses;
  REQUIRE(c.size() == 2);
  CHECK((c[0].slot == 1 && c[0].offset == 64 && c[0].size == kUnknownSize));
  CHECK((c[1].slot == 0 && c[1].offset == 256 && c[1].size == kUnknownSize));
  // f1 and f2 were disjoint at the placeholders; with the expression they are ordered.
  auto edges = inferHazardEdges(g);
  CHECK(std::find_if(edges.begin(), edges.end(),
                     [](const Edge &e) { return e.from == 0 && e.to == 1; }) != edges.end());
  CHECK(std::find_if(edges.begin(), edges.end(),
                     [](const Edge &e) { return e.from == 1 && e.to == 2; }) != edges.end());
  // Requirements: a widened access asks only for its offset.
  CHECK(slotRequirements(g)[0].minSize == 1024); // the declared size
}

TEST_CASE("slot requirements accumulate size and usage", "[graph][hazards]") {
  GraphBuilder b;
  b.addSlot(slot("sized", 64));
  b.addSlot(slot("in", 0));
  b.addSlot(slot("out", 0));
  b.addSlot(slot("unused", 0));
  b.addSlot(slot("sub", 0));
  Slot aligned = slot("aligned", 0);
  aligned.alignment = 256;
  b.addSlot(aligned);
  b.addModule(KernelModule{"m.cl", {}});
  Kernel k;
  k.name = "map";
  k.module = 0;
  k.params = {bufferParam("in", true), bufferParam("out")};
  b.addKernel(k);
  b.addFill("f", fillOp(1, 100, 28, {0, 0, 0, 0}));                          // in: >= 128
  b.addKernelNode("k", 0, range1D(4), {Arg::slot(1, 4), Arg::slot(2, 300)}); // out: >= 300
  b.addCopy("c", copyOp(0, 0, 2, 8, 32));                                    // sized 64 stays 64
  b.addHost("h", HostOp{"print", ""}, {Arg::slot(5, 16)});
  GraphBuilder child;
  child.addSlot(slot("x", 0));
  child.addFill("cf", fillOp(0, 0, 4096, {1}));
  b.addSubgraph("s", child.take(), {4});

  std::vector<SlotRequirement> req = slotRequirements(b.graph());
  REQUIRE(req.size() == 6);
  CHECK(req[0].minSize == 64);
  CHECK(req[0].usage == kUsageTransfer);
  CHECK(req[1].minSize == 128);
  CHECK(req[1].usage == (kUsageTransfer | kUsageRead));
  CHECK(req[2].minSize == 300);
  CHECK(req[2].usage == (kUsageRead | kUsageWrite | kUsageTransfer));
  CHECK(req[3].minSize == 0);
  CHECK(req[3].usage == 0);
  CHECK(req[4].minSize == 4096);
  CHECK(req[4].usage == kUsageTransfer);
  CHECK(req[5].minSize == 16);
  CHECK(req[5].alignment == 256);
  CHECK(req[5].usage == kUsageRead);
  // Written: a copy source is not, a fill, copy or kernel destination and a subgraph's
  // fill are; a print-only host task's slot is not.
  CHECK_FALSE(req[0].written);
  CHECK(req[1].written);
  CHECK(req[2].written);
  CHECK_FALSE(req[3].written);
  CHECK(req[4].written);
  CHECK_FALSE(req[5].written);

  accumulateSlotRequirements(b.graph());
  CHECK(b.graph().slots[1].usage == (kUsageTransfer | kUsageRead));
  CHECK(b.graph().slots[3].usage == 0);
  CHECK(b.graph().subgraphs[0].slots[0].usage == kUsageTransfer);
}

TEST_CASE("barrierEdges orders the nodes around each barrier", "[graph][hazards]") {
  GraphBuilder b("bars");
  setup(b);
  b.addFill("f0", fillOp(0, 0, 64, {1})); // 0
  b.addFill("f1", fillOp(1, 0, 64, {1})); // 1
  b.addBarrier("b2");                     // 2
  b.addFill("f3", fillOp(2, 0, 64, {1})); // 3
  b.addBarrier("b4");                     // 4
  b.addBarrier("b5");                     // 5: nothing since b4, so it waits for b4
  b.addFill("f6", fillOp(0, 0, 64, {2})); // 6
  const Graph &g = b.graph();
  std::vector<std::pair<uint32_t, uint32_t>> got;
  for (const Edge &e : barrierEdges(g))
    got.emplace_back(e.from, e.to);
  const std::vector<std::pair<uint32_t, uint32_t>> want = {{0, 2}, {1, 2}, {2, 3},
                                                           {3, 4}, {4, 5}, {5, 6}};
  CHECK(got == want);
  // A graph without barriers has none.
  GraphBuilder plain("plain");
  setup(plain);
  plain.addFill("f", fillOp(0, 0, 64, {1}));
  CHECK(barrierEdges(plain.graph()).empty());
}
