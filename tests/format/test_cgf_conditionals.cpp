// Conditional nodes (.cgf 2.1, COND, header flag bit 1): round trip, versioning, and
// every malformed record refused with a message naming it.
#include "cgf_test_util.h"

#include <catch2/catch.hpp>

using namespace cgftest;

namespace {

// makeFullGraph plus node 8 'loop' (while ext[8..12) != 0, at most 100 trips, body =
// subgraph 0 bound to slots {4, 0}) and node 9 'maybe' (if ext[0..4) != 0, same body).
Graph condGraph() {
  Graph g = makeFullGraph();
  Node w;
  w.name = "loop";
  w.kind = NodeKind::Conditional;
  w.cond.kind = CondKind::While;
  w.cond.slot = 0;
  w.cond.offset = 8;
  w.cond.maxTrips = 100;
  w.subgraph = 0;
  w.subgraphSlots = {4, 0};
  g.nodes.push_back(w);
  Node i = w;
  i.name = "maybe";
  i.cond.kind = CondKind::If;
  i.cond.offset = 0;
  i.cond.maxTrips = 0;
  g.nodes.push_back(i);
  g.edges.push_back({7, 8});
  g.edges.push_back({8, 9});
  g.order.push_back(8);
  g.order.push_back(9);
  Partition p3; p3.nodes = {8}; p3.deps = {2};
  Partition p4; p4.nodes = {9}; p4.deps = {3};
  g.partitions.push_back(p3);
  g.partitions.push_back(p4);
  return g;
}

uint16_t ld16(const uint8_t *p) {
  uint16_t v;
  std::memcpy(&v, p, 2);
  return v;
}

std::string readError(const std::vector<uint8_t> &f) {
  auto r = readCgf(f.data(), f.size());
  if (r.ok()) return "<loaded>";
  return r.error().message();
}

} // namespace

TEST_CASE("conditional nodes round-trip as format 2.1 with a required flag", "[format][conditional]") {
  Graph g = condGraph();
  auto bytes = writeCgf(g);
  REQUIRE(bytes.ok());
  CHECK(ld16(bytes->data() + 8) == 2);  // major 2: a 1.x reader refuses the file
  CHECK(ld16(bytes->data() + 10) == 1); // minor 1
  CHECK(ld32(bytes->data() + 16) == 2); // flag bit 1: a 2.0 reader refuses the file
  CHECK(findSection(*bytes, "COND") != ~0u);
  auto back = readCgf(bytes->data(), bytes->size());
  INFO((back ? std::string() : back.error().message()));
  REQUIRE(back.ok());
  CHECK(diffGraphs(g, *back) == "");
  CHECK(back->nodes[8].cond.maxTrips == 100);
  CHECK(back->nodes[9].cond.kind == CondKind::If);
  auto again = writeCgf(*back);
  REQUIRE(again.ok());
  CHECK(*again == *bytes);
}

TEST_CASE("malformed conditional nodes are refused", "[format][conditional]") {
  auto bytes = writeCgf(condGraph());
  REQUIRE(bytes.ok());
  const std::vector<uint8_t> good = *bytes;
  auto broken = [&](auto edit) {
    std::vector<uint8_t> f = good;
    edit(f);
    fixChecksums(f);
    return readError(f);
  };
  // What a reader without conditionals says: the unknown required feature.
  CHECK(broken([](std::vector<uint8_t> &f) { st32(f.data() + 16, 2 | 16); }) ==
        "file needs unknown features (header flags 0x10)");
  CHECK(broken([](std::vector<uint8_t> &f) { st32(f.data() + 16, 0); }) ==
        "section 'COND' holds 2 conditions but the header does not declare them (format 2.1, flag bit 1)");
  CHECK(broken([](std::vector<uint8_t> &f) { field(f, "COND", 0, 0)[0] = 7; }) ==
        "nodes[8]: unknown condition kind 7");
  CHECK(broken([](std::vector<uint8_t> &f) { st32(field(f, "COND", 0, 4), 40); }) ==
        "nodes[8]: condition refers to slot 40 but the file has 6 slots");
  CHECK(broken([](std::vector<uint8_t> &f) { st32(field(f, "COND", 0, 16), 0); }) ==
        "nodes[8]: a while node needs a maximum trip count >= 1");
  CHECK(broken([](std::vector<uint8_t> &f) { st32(field(f, "NODE", 8, 24), 9); }) ==
        "nodes[8]: refers to condition 9 but the file has 2 conditions");
  CHECK(broken([](std::vector<uint8_t> &f) { st32(field(f, "NODE", 8, 28), 5); }) ==
        "nodes[8]: refers to subgraph 5 but the file has 1 subgraphs");
}
