#include "test_helpers.h"

#include <cgraph/graph/hazards.h>
#include <cgraph/graph/memory_plan.h>

#include <catch2/catch.hpp>

using namespace cgraph;
using namespace cgraph::test;

namespace {

// Copy nodes over the named slots; edges from slot hazards (plus `extra`).
struct Copies {
  GraphBuilder b{"plan"};
  uint32_t slot(const std::string &name, uint64_t bytes, SlotInit init = SlotInit::Transient) {
    return b.addSlot(test::slot(name, bytes, init));
  }
  uint32_t copy(uint32_t src, uint32_t dst, uint64_t bytes = 16) {
    CopyOp op;
    op.srcSlot = src;
    op.dstSlot = dst;
    op.bytes = bytes;
    return b.addCopy("c" + std::to_string(b.graph().nodes.size()), op);
  }
  Graph graph(std::vector<std::pair<uint32_t, uint32_t>> extra = {}) {
    Graph g = b.take();
    g.edges = inferHazardEdges(g);
    for (auto [f, t] : extra) g.edges.push_back(Edge{f, t});
    return g;
  }
};

MemoryPlan plan(const Graph &g) {
  std::vector<uint64_t> bytes;
  for (const Slot &s : g.slots) bytes.push_back(s.size);
  return planMemory(g, bytes);
}

} // namespace

TEST_CASE("a chain of transient slots reuses memory two steps apart", "[graph][plan]") {
  Copies c;
  const uint32_t in = c.slot("in", 64, SlotInit::External), out = c.slot("out", 64, SlotInit::External);
  const uint32_t t1 = c.slot("t1", 64), t2 = c.slot("t2", 64), t3 = c.slot("t3", 64), t4 = c.slot("t4", 64);
  c.copy(in, t1);
  c.copy(t1, t2);
  c.copy(t2, t3);
  c.copy(t3, t4);
  c.copy(t4, out);
  const MemoryPlan p = plan(c.graph());
  CHECK(p.skipped.empty());
  // t1's last use (c1) precedes t3's first (c2); t2 and t4 likewise.
  CHECK(p.blocks == 2);
  CHECK(p.block[t1] != kNone);
  CHECK(p.block[t1] == p.block[t3]);
  CHECK(p.block[t2] == p.block[t4]);
  CHECK(p.block[t1] != p.block[t2]);
  CHECK(p.block[in] == kNone);
  CHECK(p.block[out] == kNone);
  CHECK(p.bytesBefore == 4 * 64);
  CHECK(p.bytesAfter == 2 * 64);
}

TEST_CASE("slots of independent branches never share memory", "[graph][plan]") {
  Copies c;
  const uint32_t in = c.slot("in", 64, SlotInit::External);
  const uint32_t oa = c.slot("oa", 64, SlotInit::External), ob = c.slot("ob", 64, SlotInit::External);
  const uint32_t a = c.slot("a", 64), b = c.slot("b", 64);
  const uint32_t a1 = c.copy(in, a);
  const uint32_t a2 = c.copy(a, oa);
  const uint32_t b1 = c.copy(in, b);
  c.copy(b, ob);
  SECTION("no edge between the branches: a backend may run them at once") {
    const MemoryPlan p = plan(c.graph());
    CHECK(p.blocks == 0);
    CHECK(p.block[a] == kNone);
    CHECK(p.block[b] == kNone);
    CHECK_FALSE(p.skipped.empty());
  }
  SECTION("an edge from the end of one to the start of the other orders them") {
    const MemoryPlan p = plan(c.graph({{a2, b1}}));
    CHECK(p.blocks == 1);
    CHECK(p.block[a] == p.block[b]);
  }
  SECTION("an edge into the middle of the first branch is not enough") {
    const MemoryPlan p = plan(c.graph({{a1, b1}}));
    CHECK(p.blocks == 0);
  }
}

TEST_CASE("what is never planned", "[graph][plan]") {
  Copies c;
  const uint32_t in = c.slot("in", 64, SlotInit::External), out = c.slot("out", 64, SlotInit::External);
  SECTION("slots a host task reads") {
    const uint32_t t1 = c.slot("t1", 64), t2 = c.slot("t2", 64);
    c.copy(in, t1);
    c.b.addHost("show", HostOp{"checksum", ""}, {Arg::slot(t1)});
    c.copy(t1, out);
    c.copy(in, t2);
    const MemoryPlan p = plan(c.graph({{2, 3}}));
    CHECK(p.block[t1] == kNone);
    CHECK(p.block[t2] == kNone);
  }
  SECTION("filled, data and external slots") {
    const uint32_t f = c.slot("f", 64, SlotInit::Fill), t = c.slot("t", 64);
    c.copy(in, f);
    c.copy(f, out);
    c.copy(in, t);
    const MemoryPlan p = plan(c.graph({{1, 2}}));
    CHECK(p.blocks == 0);
  }
  SECTION("a node that reads one slot and writes the other") {
    const uint32_t t1 = c.slot("t1", 64), t2 = c.slot("t2", 64);
    c.copy(in, t1);
    c.copy(t1, t2);
    c.copy(t2, out);
    const MemoryPlan p = plan(c.graph());
    CHECK(p.blocks == 0);
  }
  SECTION("a slot no node touches") {
    c.slot("unused", 64);
    const MemoryPlan p = plan(c.graph());
    CHECK(p.skipped == "no transient slots to plan");
  }
}

TEST_CASE("a slot joins the block that fits it best", "[graph][plan]") {
  Copies c;
  const uint32_t in = c.slot("in", 4096, SlotInit::External), out = c.slot("out", 4096, SlotInit::External);
  // big and small live at once; both end before mid starts.
  const uint32_t big = c.slot("big", 4096), small = c.slot("small", 256), mid = c.slot("mid", 200);
  c.copy(in, big, 4096);
  c.copy(in, small, 256);
  const uint32_t join = c.copy(big, out, 256);
  c.copy(small, out, 256);
  c.copy(in, mid, 200);
  c.copy(mid, out, 200);
  const MemoryPlan p = plan(c.graph({{3, 4}, {join, 3}}));
  REQUIRE(p.block[mid] != kNone);
  CHECK(p.block[mid] == p.block[small]); // 256 holds 200 with the least waste
  CHECK(p.block[big] == kNone);
  CHECK(p.bytesBefore == 456);
  CHECK(p.bytesAfter == 256);
}
