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

MemoryPlan plan(const Graph &g) { return planMemory(g, slotSizes(g)); }

bool conflicts(const MemoryPlan &p, uint32_t a, uint32_t b) {
  return std::find(p.conflicts[a].begin(), p.conflicts[a].end(), b) != p.conflicts[a].end();
}

// No two conflicting planned slots overlap in the packing, every offset is aligned,
// and the arena holds them all.
void checkPacking(const MemoryPlan &p, const std::vector<uint64_t> &bytes, uint32_t align) {
  std::vector<uint64_t> at;
  const uint64_t arena = packMemory(p, bytes, align, &at);
  for (uint32_t a = 0; a < p.planned.size(); ++a) {
    if (!p.planned[a]) continue;
    CHECK(at[a] % std::max<uint32_t>(align, kPlanAlignment) == 0);
    CHECK(at[a] + bytes[a] <= arena);
    for (uint32_t b : p.conflicts[a]) {
      INFO("slots " << a << " and " << b);
      CHECK((at[a] + bytes[a] <= at[b] || at[b] + bytes[b] <= at[a]));
    }
  }
}

} // namespace

TEST_CASE("a chain of transient slots reuses memory two steps apart", "[graph][plan]") {
  Copies c;
  const uint32_t in = c.slot("in", 64, SlotInit::External), out = c.slot("out", 64, SlotInit::External);
  const uint32_t t1 = c.slot("t1", 1024), t2 = c.slot("t2", 1024), t3 = c.slot("t3", 1024), t4 = c.slot("t4", 1024);
  c.copy(in, t1);
  c.copy(t1, t2);
  c.copy(t2, t3);
  c.copy(t3, t4);
  c.copy(t4, out);
  const Graph g = c.graph();
  const MemoryPlan p = plan(g);
  CHECK(p.skipped.empty());
  CHECK(p.slots == 4);
  // Neighbours live at once (a copy reads one and writes the next); t1 and t3 do not.
  CHECK(conflicts(p, t1, t2));
  CHECK(conflicts(p, t2, t3));
  CHECK_FALSE(conflicts(p, t1, t3));
  CHECK_FALSE(conflicts(p, t2, t4));
  CHECK_FALSE(conflicts(p, t1, t4));
  CHECK_FALSE(p.isPlanned(in));
  CHECK_FALSE(p.isPlanned(out));
  CHECK(p.bytesBefore == 4 * 1024);
  CHECK(p.bytesAfter == 2 * 1024);
  checkPacking(p, slotSizes(g), 1);
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
    CHECK(p.slots == 0);
    CHECK_FALSE(p.isPlanned(a));
    CHECK_FALSE(p.isPlanned(b));
    CHECK(p.skipped == "no two transient slots have disjoint lifetimes");
  }
  SECTION("an edge from the end of one to the start of the other orders them") {
    const MemoryPlan p = plan(c.graph({{a2, b1}}));
    CHECK(p.slots == 2);
    CHECK_FALSE(conflicts(p, a, b));
    CHECK(p.bytesAfter == 64);
  }
  SECTION("an edge into the middle of the first branch is not enough") {
    const MemoryPlan p = plan(c.graph({{a1, b1}}));
    CHECK(p.slots == 0);
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
    CHECK_FALSE(p.isPlanned(t1));
    CHECK_FALSE(p.isPlanned(t2));
  }
  SECTION("filled, data and external slots") {
    const uint32_t f = c.slot("f", 64, SlotInit::Fill), t = c.slot("t", 64);
    c.copy(in, f);
    c.copy(f, out);
    c.copy(in, t);
    const MemoryPlan p = plan(c.graph({{1, 2}}));
    CHECK(p.slots == 0);
  }
  SECTION("a node that reads one slot and writes the other") {
    const uint32_t t1 = c.slot("t1", 64), t2 = c.slot("t2", 64);
    c.copy(in, t1);
    c.copy(t1, t2);
    c.copy(t2, out);
    const MemoryPlan p = plan(c.graph());
    CHECK(p.slots == 0);
  }
  SECTION("a slot no node touches") {
    c.slot("unused", 64);
    const MemoryPlan p = plan(c.graph());
    CHECK(p.skipped == "no transient slots to plan");
  }
}

TEST_CASE("the arena packs the largest slots first into the gaps of the live ones", "[graph][plan]") {
  Copies c;
  const uint32_t in = c.slot("in", 4096, SlotInit::External), out = c.slot("out", 4096, SlotInit::External);
  // big and small live at once; mid lives after both; tail after mid.
  const uint32_t big = c.slot("big", 4096), small = c.slot("small", 512), mid = c.slot("mid", 3072),
                 tail = c.slot("tail", 1024);
  const uint32_t n0 = c.copy(in, big, 4096);
  const uint32_t n1 = c.copy(in, small, 512);
  const uint32_t n2 = c.copy(big, out, 256);
  const uint32_t n3 = c.copy(small, out, 256);
  const uint32_t n4 = c.copy(in, mid, 3072);
  const uint32_t n5 = c.copy(mid, out, 256);
  const uint32_t n6 = c.copy(in, tail, 1024);
  c.copy(tail, out, 256);
  (void)n0, (void)n1;
  const Graph g = c.graph({{n2, n4}, {n3, n4}, {n5, n6}});
  const MemoryPlan p = plan(g);
  REQUIRE(p.slots == 4);
  CHECK(conflicts(p, big, small));
  CHECK_FALSE(conflicts(p, big, mid));
  CHECK_FALSE(conflicts(p, small, tail));
  std::vector<uint64_t> at;
  const uint64_t arena = packMemory(p, slotSizes(g), 1, &at);
  CHECK(arena == 4096 + 512); // big and small side by side; mid and tail inside that
  CHECK(p.bytesBefore == 4096 + 512 + 3072 + 1024);
  CHECK(p.bytesAfter == arena);
  checkPacking(p, slotSizes(g), 1);
  SECTION("larger sizes pack again, alignment honoured") {
    std::vector<uint64_t> bigger = slotSizes(g);
    bigger[mid] = 8000;
    bigger[small] = 100;
    checkPacking(p, bigger, 4096);
  }
}
