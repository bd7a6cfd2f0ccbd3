#include "cgf_test_util.h"

#include <catch2/catch.hpp>

using namespace cgftest;

TEST_CASE("model helpers", "[format]") {
  CHECK(scalarSize(ScalarType::F16) == 2);
  CHECK(scalarSize(ScalarType::U64) == 8);
  CHECK(scalarSize(static_cast<ScalarType>(0)) == 0);
  ScalarType t;
  REQUIRE(parseScalarType("f32", &t));
  CHECK(t == ScalarType::F32);
  CHECK_FALSE(parseScalarType("float", &t));
  CHECK(std::string(nodeKindName(NodeKind::CopyRect)) == "copy-rect");
  CHECK(std::string(formKindName(FormKind::SpirV)) == "spirv");
  Graph g = makeFullGraph();
  CHECK(g.findSlot("zeros") == 2);
  CHECK(g.findNode("barrier") == 5);
  CHECK(g.findKernel("other") == 1);
  CHECK(g.findParam("missing") == kNone);
}

TEST_CASE("a graph using every feature round-trips exactly", "[format]") {
  Graph g = makeFullGraph();
  for (bool compressTables : {false, true}) {
    WriteOptions wo;
    wo.compressTables = compressTables;
    wo.compressThreshold = compressTables ? 256 : 4096;
    auto bytes = writeCgf(g, wo);
    REQUIRE(bytes.ok());
    CHECK(bytes->size() % 64 == 0);
    // The 256 KiB data slot is compressible, so the file is much smaller than it.
    CHECK(bytes->size() < 64 * 1024);
    auto back = readCgf(bytes->data(), bytes->size());
    INFO((back ? std::string() : back.error().message()));
    REQUIRE(back.ok());
    CHECK(diffGraphs(g, *back) == "");
    auto again = writeCgf(*back, wo);
    REQUIRE(again.ok());
    CHECK(*again == *bytes);
    // The same graph written twice gives the same bytes.
    CHECK(*writeCgf(g, wo) == *bytes);
  }
}

TEST_CASE("uncompressed blobs when compression is off", "[format]") {
  Graph g = makeFullGraph();
  WriteOptions wo;
  wo.compressThreshold = UINT64_MAX;
  auto bytes = writeCgf(g, wo);
  REQUIRE(bytes.ok());
  CHECK(bytes->size() > 256 * 1024);
  auto back = readCgf(bytes->data(), bytes->size());
  REQUIRE(back.ok());
  CHECK(diffGraphs(g, *back) == "");
}

TEST_CASE("an empty graph round-trips", "[format]") {
  Graph g;
  auto bytes = writeCgf(g);
  REQUIRE(bytes.ok());
  auto back = readCgf(bytes->data(), bytes->size());
  REQUIRE(back.ok());
  CHECK(diffGraphs(g, *back) == "");
  auto text = describeCgf(bytes->data(), bytes->size());
  REQUIRE(text.ok());
  CHECK(text->find("cgf 1.0") == 0);
  CHECK(text->find("NODE") != std::string::npos);
}

TEST_CASE("strings and blobs are deduplicated", "[format]") {
  Graph g;
  Slot s; s.name = "same"; s.size = 16; s.init = SlotInit::Data; s.data.assign(16, 7);
  for (int i = 0; i < 100; ++i) g.slots.push_back(s);
  auto bytes = writeCgf(g);
  REQUIRE(bytes.ok());
  auto secs = unpack(*bytes);
  CHECK(sectionByTag(secs, "STRS")->bytes.size() == 4);
  CHECK(sectionByTag(secs, "BLOB")->count == 1);
  auto back = readCgf(bytes->data(), bytes->size());
  REQUIRE(back.ok());
  CHECK(diffGraphs(g, *back) == "");
}

TEST_CASE("cyclic edges are structurally fine", "[format]") {
  Graph g;
  Node b; b.kind = NodeKind::Barrier;
  g.nodes = {b, b, b};
  g.edges = {{0, 1}, {1, 2}, {2, 0}, {1, 1}};
  auto bytes = writeCgf(g);
  REQUIRE(bytes.ok());
  auto back = readCgf(bytes->data(), bytes->size());
  REQUIRE(back.ok());
  CHECK(back->edges.size() == 4);
  CHECK(back->edges[3].from == 1);
}

TEST_CASE("the writer refuses structurally broken graphs", "[format]") {
  Graph g = makeFullGraph();
  SECTION("arg slot") {
    g.nodes[0].args[0].index = 99;
    auto r = writeCgf(g);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().message() == "nodes[0]: arg 0 refers to slot 99 but the graph has 6 slots");
  }
  SECTION("dims") {
    g.nodes[0].range.dims = 4;
    auto r = writeCgf(g);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().message() == "nodes[0]: range has 4 dims (must be 1..3)");
  }
  SECTION("fill pattern") {
    g.nodes[3].fill.pattern.assign(129, 0);
    auto r = writeCgf(g);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().message() == "nodes[3]: fill pattern has 129 bytes (must be 1..128)");
  }
  SECTION("subgraph slot count") {
    g.nodes[6].subgraphSlots = {0};
    auto r = writeCgf(g);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().message() == "nodes[6]: binds 1 slots but subgraph 0 has 2");
  }
  SECTION("nested subgraph") {
    g.subgraphs[0].nodes[0].copy.dstSlot = 5;
    auto r = writeCgf(g);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().message() == "subgraphs[0]: nodes[0]: copy destination refers to slot 5 but the graph has 2 slots");
  }
  SECTION("nesting depth") {
    Graph inner = makeSubgraph();
    for (int i = 0; i < 9; ++i) {
      Graph outer;
      outer.subgraphs.push_back(inner);
      inner = outer;
    }
    auto r = writeCgf(inner);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().message().find("nested deeper than 8 levels") != std::string::npos);
  }
}
