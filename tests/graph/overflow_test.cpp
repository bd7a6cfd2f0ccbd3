// Hostile sizes: copy, rect copy and fill extents and nd-ranges whose arithmetic does
// not fit 64 bits are validation errors that name the node and field, whether or not the
// slot has a declared size (an unsized slot is checked against its bindings later, from
// the same arithmetic).
#include "test_helpers.h"

#include <cgraph/graph/hazards.h>
#include <cgraph/graph/validate.h>

#include <catch2/catch.hpp>

using namespace cgraph;
using namespace cgraph::test;

namespace {

constexpr uint64_t k2p32 = uint64_t(1) << 32;
constexpr uint64_t k2p62 = uint64_t(1) << 62;
constexpr uint64_t kMaxU64 = ~uint64_t(0);

// Slots "a" (1024 bytes) and "u" (unsized), a kernel node "k" and a copy node "c".
Graph overflowBase() {
  GraphBuilder b("hostile");
  b.addSlot(slot("a", 1024));
  b.addSlot(slot("u", 0));
  uint32_t k = addKernel(b, "k", {bufferParam("y")});
  b.addKernelNode("k", k, range1D(64), {Arg::slot(0)});
  b.addCopy("c", copyOp(0, 0, 1, 0, 16));
  b.addFill("f", fillOp(1, 0, 16, {0}));
  b.addEdge(0, 1);
  return b.take();
}

std::string overflowErrors(const Graph &g) {
  std::string out;
  for (const Diagnostic &d : validateGraph(g))
    if (d.severity == Diagnostic::Error) out += formatDiagnostic(d) + "\n";
  return out;
}

void rect(Graph &g, uint64_t w, uint64_t h, uint64_t d) {
  Node &n = g.nodes[1];
  n.kind = NodeKind::CopyRect;
  n.copy = CopyOp{};
  n.copy.srcSlot = 1; // unsized: nothing but the arithmetic bounds it
  n.copy.dstSlot = 1;
  n.copy.dstOffset = 0;
  n.copy.srcOffset = 0;
  n.copy.region[0] = w;
  n.copy.region[1] = h;
  n.copy.region[2] = d;
}

} // namespace

TEST_CASE("rect copy extents that overflow 64 bits are errors", "[graph][validate][overflow]") {
  Graph g = overflowBase();
  CopyOp &c = g.nodes[1].copy;
  SECTION("row pitch 2^62 over 5 rows") {
    rect(g, 4, 5, 1);
    c.srcRowPitch = k2p62;
    c.dstOffset = 1 << 20;
    CHECK(overflowErrors(g) == "error: node 'c': rect copy source row pitch 4611686018427387904 * 5 rows "
                       "(region[1]) overflows 64 bits\n");
  }
  SECTION("destination row pitch 2^62") {
    rect(g, 4, 5, 1);
    c.srcOffset = 1 << 20;
    c.dstRowPitch = k2p62;
    CHECK(overflowErrors(g) == "error: node 'c': rect copy destination row pitch 4611686018427387904 * 5 "
                       "rows (region[1]) overflows 64 bits\n");
  }
  SECTION("slice pitch 2^62 over 5 slices") {
    rect(g, 4, 1, 5);
    c.srcSlicePitch = k2p62;
    c.dstOffset = 1 << 20;
    CHECK(overflowErrors(g) == "error: node 'c': rect copy source slice pitch 4611686018427387904 * 4 "
                       "slices (region[2] - 1) overflows 64 bits\n");
  }
  SECTION("region 2^32 in every dimension") {
    rect(g, k2p32, k2p32, k2p32);
    c.dstOffset = 1 << 20;
    CHECK(overflowErrors(g) == "error: node 'c': rect copy source row pitch 4294967296 * 4294967296 rows "
                       "(region[1]) overflows 64 bits\n"
                       "error: node 'c': rect copy destination row pitch 4294967296 * 4294967296 "
                       "rows (region[1]) overflows 64 bits\n");
  }
  SECTION("the extent itself") {
    rect(g, 1, 2, 2);
    c.srcRowPitch = kMaxU64 / 2;
    c.srcSlicePitch = kMaxU64 - 1; // (2-1)*slice + (2-1)*row + 1 wraps
    c.dstOffset = 1 << 20;
    CHECK(overflowErrors(g).find("error: node 'c': rect copy source extent (region (1,2,2), pitches "
                         "9223372036854775807, 18446744073709551614) overflows 64 bits") == 0);
  }
  SECTION("offset + extent") {
    rect(g, 16, 4, 1);
    c.srcOffset = kMaxU64 - 32;
    c.dstOffset = 1 << 20;
    CHECK(overflowErrors(g) == "error: node 'c': rect copy reads 64 bytes from offset 18446744073709551583: "
                       "the end overflows 64 bits\n");
  }
  SECTION("large but representable extents are fine on an unsized slot") {
    rect(g, 4, 5, 1);
    c.srcRowPitch = uint64_t(1) << 40;
    c.dstOffset = uint64_t(1) << 50;
    CHECK(overflowErrors(g).empty());
  }
  // rectExtent (requirements and hazards) never wraps either.
  uint64_t region[3] = {k2p32, k2p32, k2p32};
  CHECK(rectExtent(region, 0, 0) == kUnknownSize);
  uint64_t rows[3] = {4, 5, 1};
  CHECK(rectExtent(rows, k2p62, 0) == kUnknownSize);
  CHECK(rectExtent(rows, 8, 0) == 36);
}

TEST_CASE("copy and fill offset + bytes that overflow are errors", "[graph][validate][overflow]") {
  Graph g = overflowBase();
  SECTION("copy into an unsized slot") {
    g.nodes[1].copy.dstOffset = kMaxU64 - 7;
    CHECK(overflowErrors(g) == "error: node 'c': copy writes 16 bytes from offset 18446744073709551608: "
                       "the end overflows 64 bits\n");
  }
  SECTION("copy from a sized slot") {
    g.nodes[1].copy.srcOffset = kMaxU64;
    CHECK(overflowErrors(g) == "error: node 'c': copy reads 16 bytes from offset 18446744073709551615: "
                       "the end overflows 64 bits\n");
  }
  SECTION("fill of an unsized slot") {
    g.nodes[2].fill.offset = kMaxU64 - 14;
    g.nodes[2].fill.bytes = 16;
    CHECK(overflowErrors(g) == "error: node 'f': fill writes 16 bytes from offset 18446744073709551601: "
                       "the end overflows 64 bits\n");
  }
}

TEST_CASE("nd-ranges whose work-item count or ids overflow are errors", "[graph][validate][overflow]") {
  Graph g = overflowBase();
  NDRange &r = g.nodes[0].range;
  SECTION("2^96 work-items") {
    r = range3D(k2p32, k2p32, k2p32);
    CHECK(overflowErrors(g) == "error: node 'k': global size (4294967296,4294967296,4294967296) has more "
                       "than 2^63 - 1 work-items in all\n");
  }
  SECTION("exactly 2^64 work-items") {
    r = range2D(k2p32, k2p32);
    CHECK(overflowErrors(g) == "error: node 'k': global size (4294967296,4294967296) has more than 2^63 - 1 "
                       "work-items in all\n");
  }
  SECTION("2^63 work-items") {
    r = range1D(uint64_t(1) << 63);
    CHECK(overflowErrors(g) == "error: node 'k': global size (9223372036854775808) has more than 2^63 - 1 "
                       "work-items in all\n");
  }
  SECTION("a parameter-driven dimension counts as unknown") {
    r = range2D(k2p32, k2p32);
    g.params.push_back(Param{"n", ScalarType::U64, 4});
    r.global[0].param = 0;
    CHECK(overflowErrors(g).empty());
    r.global[1].value = kMaxU64;
    r.global[2].value = 2;
    r.dims = 3;
    CHECK(overflowErrors(g) == "error: node 'k': global size (?,18446744073709551615,2) has more than 2^63 - 1 "
                       "work-items in all\n");
  }
  SECTION("offset + global wraps") {
    r = range1D(1024);
    r.offset[0].value = kMaxU64;
    CHECK(overflowErrors(g) == "error: node 'k': offset 18446744073709551615 + global size 1024 in dimension 0 "
                       "overflows 64 bits\n");
    r.offset[0].value = kMaxU64 - 1024; // the last id is 2^64 - 2
    CHECK(overflowErrors(g).empty());
  }
  SECTION("big but representable ranges are fine") {
    r = range3D(k2p32, 1 << 20, 1 << 10);
    CHECK(overflowErrors(g).empty());
  }
}
