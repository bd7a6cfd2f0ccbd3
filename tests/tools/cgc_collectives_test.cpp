// Collective nodes through the real cgc: a description with every kind compiles to
// .cgf 2.3, and `cgc dump` (listing and JSON) shows each node's fields, the stored
// expressions, the hazard edges and a partition per collective.
#include "cgc_test_util.h"

#include <nlohmann/json.hpp>

#include <catch2/catch.hpp>

#include <algorithm>

using namespace cgctest;

namespace {

bool hasLine(const std::string &text, const std::string &line) {
  const std::vector<std::string> ls = lines(text);
  return std::find(ls.begin(), ls.end(), line) != ls.end();
}

} // namespace

TEST_CASE("cgc compiles and dumps every collective kind", "[cgc][collective]") {
  fs::path dir = scratch("collectives");
  fs::copy_file(sourceDir() / "tests/tools/data/collectives.json", dir / "coll.json");
  Result comp = cgc("coll.json -o coll.cgf", dir);
  INFO(comp.err);
  REQUIRE(comp.code == 0);
  const std::string bytes = slurp(dir / "coll.cgf");
  REQUIRE(bytes.size() > 16);
  CHECK(uint8_t(bytes[8]) == 2);  // major 2
  CHECK(uint8_t(bytes[10]) == 3); // minor 3: collectives

  Result dump = cgc("dump coll.cgf", dir);
  INFO(dump.out);
  REQUIRE(dump.code == 0);
  CHECK(hasLine(dump.out, "  [0] ar  collective all_reduce max f32 x 64  grad+0 -> grad+0"));
  CHECK(hasLine(dump.out, "      count = $n"));
  CHECK(hasLine(dump.out, "  [1] ag  collective all_gather f32 x 16  part+0 -> whole+0"));
  CHECK(hasLine(dump.out, "  [2] rs  collective reduce_scatter sum f32 x 16  whole+0 -> part+0"));
  CHECK(hasLine(dump.out, "  [3] bc  collective broadcast f32 x 8  act+0 -> act+0  root 0"));
  CHECK(hasLine(dump.out, "      send offset = $rank * 4"));
  CHECK(hasLine(dump.out, "      recv offset = $rank * 4"));
  CHECK(hasLine(dump.out, "  [4] tx  collective send f32 x 16  act+0  peer 0"));
  CHECK(hasLine(dump.out, "      peer = ($rank + 1) % $world"));
  CHECK(hasLine(dump.out, "  [5] rx  collective recv f32 x 16  act+128  peer 0"));
  // Hazards: all_gather writes 'whole' that reduce_scatter reads; the broadcast's
  // offset is an expression, so it covers all of 'act' that send reads and recv writes.
  CHECK(hasLine(dump.out, "  1 -> 2"));
  CHECK(hasLine(dump.out, "  3 -> 4"));
  CHECK(hasLine(dump.out, "  3 -> 5"));

  Result js = cgc("dump --json coll.cgf", dir);
  REQUIRE(js.code == 0);
  auto j = nlohmann::json::parse(js.out);
  const auto &nodes = j.at("nodes");
  REQUIRE(nodes.size() == 6);
  CHECK(nodes[0].at("collective").at("kind") == "all_reduce");
  CHECK(nodes[0].at("collective").at("op") == "max");
  CHECK(nodes[0].at("collective").at("send").at("slot") == "grad");
  CHECK(nodes[3].at("collective").at("root") == 0);
  CHECK(nodes[4].at("collective").contains("send"));
  CHECK_FALSE(nodes[4].at("collective").contains("recv"));
  CHECK(nodes[5].at("collective").at("recv").at("offset") == 128);
  CHECK(nodes[5].at("collective").at("type") == "f32");
  // One partition per collective.
  CHECK(j.at("partitions").size() == 6);
}
