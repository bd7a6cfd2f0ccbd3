// Kernel alternatives (.cgf 1.1 / 2.1, ALTK): round trip, versioning, and every
// malformed record refused with a message naming it.
#include "cgf_test_util.h"

#include <catch2/catch.hpp>

using namespace cgftest;

namespace {

// makeFullGraph plus kernel 2 'axpy_fast' (axpy's signature); k0 (node 0) may run axpy
// or axpy_fast, k1 (node 7) axpy_fast or axpy.
Graph altGraph() {
  Graph g = makeFullGraph();
  Kernel fast = g.kernels[0];
  fast.name = "axpy_fast";
  g.kernels.push_back(fast);
  g.nodes[0].alternatives = {0, 2};
  g.nodes[7].alternatives = {2, 0};
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

TEST_CASE("kernel alternatives round-trip as a minor version", "[format][alternatives]") {
  Graph g = altGraph();
  auto bytes = writeCgf(g);
  REQUIRE(bytes.ok());
  CHECK(ld16(bytes->data() + 8) == 1);  // major 1
  CHECK(ld16(bytes->data() + 10) == 1); // minor 1: nothing a 1.0 reader must understand
  CHECK(ld32(bytes->data() + 16) == 0); // no required feature
  CHECK(findSection(*bytes, "ALTK") != ~0u);
  auto back = readCgf(bytes->data(), bytes->size());
  INFO((back ? std::string() : back.error().message()));
  REQUIRE(back.ok());
  CHECK(diffGraphs(g, *back) == "");
  CHECK(back->nodes[7].alternatives == std::vector<uint32_t>{2, 0});
  auto again = writeCgf(*back);
  REQUIRE(again.ok());
  CHECK(*again == *bytes);
  // A reader that predates ALTK skips it: the same graph without the choice.
  std::vector<uint8_t> f = *bytes;
  std::memcpy(entry(f, findSection(f, "ALTK")), "ZZZZ", 4);
  fixChecksums(f);
  auto old = readCgf(f.data(), f.size());
  REQUIRE(old.ok());
  CHECK(old->nodes[0].alternatives.empty());
  CHECK(old->nodes[0].kernel == 0);
  // Without alternatives: a 1.0 file without an ALTK entry.
  auto plain = writeCgf(makeFullGraph());
  REQUIRE(plain.ok());
  CHECK(ld16(plain->data() + 10) == 0);
  CHECK(findSection(*plain, "ALTK") == ~0u);
}

TEST_CASE("malformed kernel alternatives are refused", "[format][alternatives]") {
  auto bytes = writeCgf(altGraph());
  REQUIRE(bytes.ok());
  const std::vector<uint8_t> good = *bytes;
  auto broken = [&](auto edit) {
    std::vector<uint8_t> f = good;
    edit(f);
    fixChecksums(f);
    return readError(f);
  };
  CHECK(broken([](std::vector<uint8_t> &f) { st32(field(f, "ALTK", 1, 0), 99); }) ==
        "alternatives[1]: node 99 points past the node table (8 nodes)");
  CHECK(broken([](std::vector<uint8_t> &f) { st32(field(f, "ALTK", 3, 0), 0); }) ==
        "alternatives[3]: not sorted by node");
  CHECK(broken([](std::vector<uint8_t> &f) {
          st32(field(f, "ALTK", 2, 0), 1);
          st32(field(f, "ALTK", 3, 0), 1);
        }) == "alternatives[2]: node 1 is a copy node; only kernel nodes have alternatives");
  CHECK(broken([](std::vector<uint8_t> &f) { st32(field(f, "ALTK", 1, 4), 7); }) ==
        "alternatives[1]: kernel 7 points past the kernel table (3 kernels)");
  CHECK(broken([](std::vector<uint8_t> &f) { st32(field(f, "ALTK", 1, 4), 0); }) ==
        "alternatives[1]: kernel 'axpy' is listed twice");
  CHECK(broken([](std::vector<uint8_t> &f) { st32(field(f, "ALTK", 1, 4), 1); }) ==
        "alternatives[1]: 'other' and 'axpy' differ: 0 parameters vs 6");
  CHECK(broken([](std::vector<uint8_t> &f) { st32(field(f, "ALTK", 0, 4), 2); }).find("is listed twice") !=
        std::string::npos);
}

TEST_CASE("a node's own kernel is among its alternatives", "[format][alternatives]") {
  Graph g = altGraph();
  g.nodes[0].alternatives = {2};
  // The writer stores what it is given; the reader refuses a list without the node's
  // kernel (a choice that could not give back the original).
  auto bytes = writeCgf(g);
  REQUIRE(bytes.ok());
  CHECK(readError(*bytes) == "alternatives of node 0: its kernel 'axpy' is not among them");
}

TEST_CASE("device placement round-trips as a minor version; malformed records are refused",
          "[format][placement]") {
  Graph g = makeFullGraph();
  g.nodes[1].device = 1;
  g.nodes[7].device = 3;
  auto bytes = writeCgf(g);
  REQUIRE(bytes.ok());
  CHECK(ld16(bytes->data() + 8) == 1);  // major 1: any reader may run it on one device
  CHECK(ld16(bytes->data() + 10) == 1); // minor 1
  REQUIRE(findSection(*bytes, "PLAC") != ~0u);
  auto back = readCgf(bytes->data(), bytes->size());
  INFO((back ? std::string() : back.error().message()));
  REQUIRE(back.ok());
  CHECK(diffGraphs(g, *back) == "");
  CHECK(back->nodes[7].device == 3);
  CHECK(back->nodes[0].device == 0);
  auto again = writeCgf(*back);
  REQUIRE(again.ok());
  CHECK(*again == *bytes);
  const std::vector<uint8_t> good = *bytes;
  auto broken = [&](auto edit) {
    std::vector<uint8_t> f = good;
    edit(f);
    fixChecksums(f);
    return readError(f);
  };
  CHECK(broken([](std::vector<uint8_t> &f) { st32(field(f, "PLAC", 1, 0), 50); }) ==
        "placement[1]: node 50 points past the node table (8 nodes)");
  CHECK(broken([](std::vector<uint8_t> &f) { st32(field(f, "PLAC", 1, 0), 1); }) ==
        "placement[1]: not sorted by node (or a node placed twice)");
  CHECK(broken([](std::vector<uint8_t> &f) { st32(field(f, "PLAC", 0, 4), 0); }) ==
        "placement[0]: device 0 (must be 1 to 63; device 0 is not stored)");
  CHECK(broken([](std::vector<uint8_t> &f) { st32(field(f, "PLAC", 0, 4), 64); }) ==
        "placement[0]: device 64 (must be 1 to 63; device 0 is not stored)");
}
