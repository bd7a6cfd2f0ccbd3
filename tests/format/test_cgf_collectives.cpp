// Collective nodes (.cgf 2.3, COLL, header flag bit 3): round trip, versioning, and
// every malformed record or expression reference refused with a message naming it.
#include "cgf_test_util.h"

#include "cgraph/expr.h"

#include <catch2/catch.hpp>

using namespace cgftest;

namespace {

// makeFullGraph plus node 8 'sum' (all_reduce max f32 x 64 in place on slot 0 at 256)
// and node 9 'tx' (send i32 x 16 from slot 4 to peer $n % 3: an expression).
Graph collGraph() {
  Graph g = makeFullGraph();
  Node a;
  a.name = "sum";
  a.kind = NodeKind::Collective;
  a.coll.kind = CollKind::AllReduce;
  a.coll.op = ReduceOp::Max;
  a.coll.sendSlot = a.coll.recvSlot = 0;
  a.coll.sendOffset = a.coll.recvOffset = 256;
  a.coll.count = 64;
  g.nodes.push_back(a);
  Node s;
  s.name = "tx";
  s.kind = NodeKind::Collective;
  s.coll.kind = CollKind::Send;
  s.coll.type = ScalarType::I32;
  s.coll.sendSlot = 4;
  s.coll.count = 16;
  s.coll.peer = 1;
  g.nodes.push_back(s);
  g.edges.push_back({7, 8});
  g.order.push_back(8);
  g.order.push_back(9);
  Partition p3; p3.nodes = {8}; p3.deps = {2};
  Partition p4; p4.nodes = {9};
  g.partitions.push_back(p3);
  g.partitions.push_back(p4);
  auto prog = expr::parse("$n % 3");
  REQUIRE(prog);
  auto mapped = expr::remapVariables(*prog, {0});
  REQUIRE(mapped);
  FieldExpr e;
  e.node = 9;
  e.field = ExprField::CollPeer;
  e.code = expr::encode(*mapped);
  g.exprs.push_back(e);
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

TEST_CASE("collective nodes round-trip as format 2.3 with a required flag", "[format][collective]") {
  Graph g = collGraph();
  auto bytes = writeCgf(g);
  REQUIRE(bytes.ok());
  CHECK(ld16(bytes->data() + 8) == 2);       // major 2: a 1.x reader refuses the file
  CHECK(ld16(bytes->data() + 10) == 3);      // minor 3
  CHECK(ld32(bytes->data() + 16) == (1 | 8)); // expressions + collectives
  CHECK(findSection(*bytes, "COLL") != ~0u);
  auto back = readCgf(bytes->data(), bytes->size());
  INFO((back ? std::string() : back.error().message()));
  REQUIRE(back.ok());
  CHECK(diffGraphs(g, *back) == "");
  CHECK(back->nodes[8].coll.op == ReduceOp::Max);
  CHECK(back->nodes[8].coll.recvOffset == 256);
  CHECK(back->nodes[9].coll.kind == CollKind::Send);
  CHECK(back->nodes[9].coll.recvSlot == kNone);
  auto again = writeCgf(*back);
  REQUIRE(again.ok());
  CHECK(*again == *bytes);
}

TEST_CASE("a graph without collectives keeps its version", "[format][collective]") {
  auto bytes = writeCgf(makeFullGraph());
  REQUIRE(bytes.ok());
  CHECK(ld16(bytes->data() + 8) == 1);
  CHECK(findSection(*bytes, "COLL") == ~0u);
}

TEST_CASE("malformed collective nodes are refused", "[format][collective]") {
  auto bytes = writeCgf(collGraph());
  REQUIRE(bytes.ok());
  const std::vector<uint8_t> good = *bytes;
  auto broken = [&](auto edit) {
    std::vector<uint8_t> f = good;
    edit(f);
    fixChecksums(f);
    return readError(f);
  };
  // What a 2.2 reader says: the unknown required feature.
  CHECK(broken([](std::vector<uint8_t> &f) { st32(f.data() + 16, 1 | 16); }) ==
        "file needs unknown features (header flags 0x10)");
  CHECK(broken([](std::vector<uint8_t> &f) { st32(f.data() + 16, 1); }) ==
        "section 'COLL' holds 2 collectives but the header does not declare them (format 2.3, flag bit 3)");
  CHECK(broken([](std::vector<uint8_t> &f) { field(f, "COLL", 0, 0)[0] = 6; }) ==
        "nodes[8]: unknown collective kind 6");
  CHECK(broken([](std::vector<uint8_t> &f) { field(f, "COLL", 0, 1)[0] = 4; }) ==
        "nodes[8]: unknown reduction 4");
  CHECK(broken([](std::vector<uint8_t> &f) { field(f, "COLL", 0, 2)[0] = 12; }) ==
        "nodes[8]: unknown element type 12");
  CHECK(broken([](std::vector<uint8_t> &f) { st32(field(f, "COLL", 0, 8), 40); }) ==
        "nodes[8]: receive side refers to slot 40 but the file has 6 slots");
  CHECK(broken([](std::vector<uint8_t> &f) { st32(field(f, "COLL", 1, 4), kNone); }) ==
        "nodes[9]: send side refers to slot 4294967295 but the file has 6 slots");
  CHECK(broken([](std::vector<uint8_t> &f) { st32(field(f, "COLL", 1, 8), 0); }) ==
        "nodes[9]: send has no receive side");
  CHECK(broken([](std::vector<uint8_t> &f) { field(f, "COLL", 1, 1)[0] = 2; }) ==
        "nodes[9]: send has no reduction (found min)");
  CHECK(broken([](std::vector<uint8_t> &f) { st64(field(f, "COLL", 0, 40), 3); }) ==
        "nodes[8]: all_reduce has no peer or root (found 3)");
  CHECK(broken([](std::vector<uint8_t> &f) { st32(field(f, "NODE", 8, 24), 7); }) ==
        "nodes[8]: refers to collective 7 but the file has 2 collectives");
  // The peer expression moved to a field a send node lacks.
  CHECK(broken([](std::vector<uint8_t> &f) { st16(field(f, "XPRS", 0, 4), 41); }) ==
        "expressions[0]: send has no recv offset field");
  // ... and to a node that is not a collective.
  CHECK(broken([](std::vector<uint8_t> &f) { st32(field(f, "XPRS", 0, 0), 0); }) ==
        "expressions[0]: node 0 is a kernel node; peer needs a collective node");
}
