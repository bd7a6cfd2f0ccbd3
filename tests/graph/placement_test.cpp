#include "test_helpers.h"

#include <cgraph/graph/hazards.h>
#include <cgraph/graph/order.h>
#include <cgraph/graph/placement.h>

#include <catch2/catch.hpp>

using namespace cgraph;
using namespace cgraph::test;

namespace {

constexpr uint64_t kBig = 1 << 20;

// A chain of copies x -> a -> a2 -> s -> c -> y whose work (bytes / 4 + 1 per copy) puts
// the balanced cut of two devices between the copy into a2 and the one out of it (a2,
// 1 MiB, would cross), while one node later only the 64-byte slot s crosses.
Graph skewedChain() {
  GraphBuilder b("skewed");
  const uint32_t x = b.addSlot(slot("x", kBig)), a = b.addSlot(slot("a", kBig, SlotInit::Transient));
  const uint32_t a2 = b.addSlot(slot("a2", kBig, SlotInit::Transient)), s = b.addSlot(slot("s", 64, SlotInit::Transient));
  const uint32_t c = b.addSlot(slot("c", kBig, SlotInit::Transient)), y = b.addSlot(slot("y", kBig));
  auto copy = [&](const char *name, uint32_t src, uint32_t dst, uint64_t bytes) {
    CopyOp op;
    op.srcSlot = src;
    op.dstSlot = dst;
    op.bytes = bytes;
    b.addCopy(name, op);
  };
  copy("c0", x, a, 400);  // work 101
  copy("c1", a, a2, 480); // 121
  copy("c2", a2, s, 40);  // 11
  copy("c3", s, c, 40);   // 11
  copy("c4", c, y, 760);  // 191
  Graph g = b.take();
  g.edges = inferHazardEdges(g);
  REQUIRE_FALSE(finalizeForFile(g));
  return g;
}

std::vector<uint32_t> devicesOf(const Graph &g) {
  std::vector<uint32_t> d;
  for (const Node &n : g.nodes) d.push_back(n.device);
  return d;
}

} // namespace

TEST_CASE("placement: cost cuts at the balanced point, min-bytes moves the cut to the fewest bytes", "[graph][place]") {
  Graph cost = skewedChain();
  REQUIRE_FALSE(placeNodes(cost, 2, PlaceRule::Cost));
  CHECK(devicesOf(cost) == std::vector<uint32_t>{0, 0, 1, 1, 1});
  PlacementReport rc = placementReport(cost, slotSizes(cost));
  CHECK(rc.devices == 2);
  CHECK(rc.bytesCrossing == kBig);
  REQUIRE(rc.slots.size() == 1);
  CHECK(cost.slots[rc.slots[0].slot].name == "a2");
  CHECK(rc.slots[0].devices == std::vector<uint32_t>{0, 1});

  Graph few = skewedChain();
  REQUIRE_FALSE(placeNodes(few, 2, PlaceRule::MinBytes));
  CHECK(devicesOf(few) == std::vector<uint32_t>{0, 0, 0, 1, 1});
  PlacementReport rm = placementReport(few, slotSizes(few));
  CHECK(rm.bytesCrossing == 64);
  REQUIRE(rm.slots.size() == 1);
  CHECK(few.slots[rm.slots[0].slot].name == "s");
  REQUIRE(rm.work.size() == 2);
  CHECK(rm.work[0] == Approx(101 + 121 + 11));
  CHECK(rm.work[1] == Approx(11 + 191));
}

TEST_CASE("placement: one device, bad device counts, a graph without its order", "[graph][place]") {
  Graph g = skewedChain();
  REQUIRE_FALSE(placeNodes(g, 1, PlaceRule::MinBytes));
  CHECK(devicesOf(g) == std::vector<uint32_t>(5, 0));
  PlacementReport r = placementReport(g, slotSizes(g));
  CHECK(r.devices == 1);
  CHECK(r.bytesCrossing == 0);
  CHECK(r.slots.empty());
  Error e = placeNodes(g, 0, PlaceRule::MinBytes);
  REQUIRE(e);
  CHECK(e.message().find("must be 1 to") != std::string::npos);
  g.order.clear();
  Error noOrder = placeNodes(g, 2, PlaceRule::MinBytes);
  REQUIRE(noOrder);
  CHECK(noOrder.message().find("execution order") != std::string::npos);
}

TEST_CASE("placement: three devices, each cut on its own share", "[graph][place]") {
  Graph g = skewedChain();
  REQUIRE_FALSE(placeNodes(g, 3, PlaceRule::MinBytes));
  const std::vector<uint32_t> d = devicesOf(g);
  CHECK(std::is_sorted(d.begin(), d.end())); // contiguous runs in the chain's order
  CHECK(d.front() == 0);
  CHECK(d.back() == 2);
}
