// Stored parameter expressions (.cgf 2.0, XPRS): round trip, versioning, and every
// malformed program or reference refused with a message naming the record.
#include "cgf_test_util.h"

#include "cgraph/expr.h"

#include <catch2/catch.hpp>

using namespace cgftest;

namespace {

std::vector<uint8_t> program(const std::string &text, const std::vector<uint32_t> &paramOf) {
  auto p = expr::parse(text);
  REQUIRE(p);
  auto m = expr::remapVariables(*p, paramOf);
  REQUIRE(m);
  return expr::encode(*m);
}

// makeFullGraph plus expressions on k0 (node 0) and k1 (node 7); params: 0 = n (u32),
// 1 = alpha (f32).
Graph exprGraph() {
  Graph g = makeFullGraph();
  auto add = [&](uint32_t node, ExprField f, uint32_t arg, const std::string &text) {
    FieldExpr e;
    e.node = node;
    e.field = f;
    e.arg = arg;
    e.code = program(text, {0});
    g.exprs.push_back(e);
  };
  add(0, ExprField::Global0, 0, "align_up($n - 1, 64)");
  add(0, ExprField::Offset1, 0, "$n % 7");
  add(0, ExprField::ScalarArg, 4, "ceil_div($n, 3) * 2");
  add(7, ExprField::Local0, 0, "min($n, 64)");
  return g;
}

std::string readError(const std::vector<uint8_t> &f) {
  auto r = readCgf(f.data(), f.size());
  if (r.ok()) return "<loaded>";
  return r.error().message();
}

// The STRS bytes of expression record `i`'s code.
uint8_t *codeBytes(std::vector<uint8_t> &f, uint32_t i, uint32_t *len) {
  uint8_t *r = field(f, "XPRS", i, 12);
  *len = ld32(r + 4);
  return field(f, "STRS", 0, ld32(r));
}

} // namespace

TEST_CASE("stored expressions round-trip; the version says who may read them", "[format][expr]") {
  Graph g = exprGraph();
  auto bytes = writeCgf(g);
  REQUIRE(bytes.ok());
  CHECK(ld32(bytes->data() + 8) == 2);  // major 2, minor 0
  CHECK(ld32(bytes->data() + 16) == 1); // required feature: expressions
  CHECK(findSection(*bytes, "XPRS") != ~0u);
  auto back = readCgf(bytes->data(), bytes->size());
  INFO((back ? std::string() : back.error().message()));
  REQUIRE(back.ok());
  CHECK(diffGraphs(g, *back) == "");
  REQUIRE(back->exprs.size() == 4);
  auto p = expr::decode(back->exprs[2].code.data(), back->exprs[2].code.size(), 2);
  REQUIRE(p);
  CHECK(*expr::evaluate(*p, {100}) == 68);
  auto again = writeCgf(*back);
  REQUIRE(again.ok());
  CHECK(*again == *bytes);
  // Written in any order, stored sorted.
  Graph shuffled = g;
  std::swap(shuffled.exprs[0], shuffled.exprs[3]);
  CHECK(*writeCgf(shuffled) == *bytes);
  // Without expressions: exactly a 1.0 file, no XPRS entry.
  auto plain = writeCgf(makeFullGraph());
  REQUIRE(plain.ok());
  CHECK(ld32(plain->data() + 8) == 1);
  CHECK(ld32(plain->data() + 16) == 0);
  CHECK(findSection(*plain, "XPRS") == ~0u);
}

TEST_CASE("malformed stored expressions are refused", "[format][expr]") {
  auto bytes = writeCgf(exprGraph());
  REQUIRE(bytes.ok());
  const std::vector<uint8_t> good = *bytes;
  auto broken = [&](auto edit) {
    std::vector<uint8_t> f = good;
    edit(f);
    fixChecksums(f);
    return readError(f);
  };
  CHECK(broken([](std::vector<uint8_t> &f) { st16(f.data() + 8, 1); }) ==
        "section 'XPRS' holds 4 expressions but the header does not declare them (format 2.0, flag "
        "bit 0)");
  CHECK(broken([](std::vector<uint8_t> &f) { st32(f.data() + 16, 0); }) ==
        "section 'XPRS' holds 4 expressions but the header does not declare them (format 2.0, flag "
        "bit 0)");
  CHECK(broken([](std::vector<uint8_t> &f) { st32(f.data() + 16, 5); }) ==
        "file needs unknown features (header flags 0x4)");
  CHECK(broken([](std::vector<uint8_t> &f) { st32(field(f, "XPRS", 1, 0), 99); }) ==
        "expressions[1]: node 99 points past the node table (8 nodes)");
  CHECK(broken([](std::vector<uint8_t> &f) { st32(field(f, "XPRS", 3, 0), 1); }) ==
        "expressions[3]: node 1 is a copy node; local[0] needs a kernel node");
  CHECK(broken([](std::vector<uint8_t> &f) { st16(field(f, "XPRS", 0, 4), 12); }) ==
        "expressions[0]: unknown field 12");
  CHECK(broken([](std::vector<uint8_t> &f) { st16(field(f, "XPRS", 1, 4), 8); }) ==
        "expressions[1]: offset[2] of a 2-dimensional range");
  CHECK(broken([](std::vector<uint8_t> &f) { st32(field(f, "XPRS", 2, 8), 3); }) ==
        "expressions[2]: arg 3 is not an integer scalar");
  CHECK(broken([](std::vector<uint8_t> &f) { st32(field(f, "XPRS", 2, 8), 9); }) ==
        "expressions[2]: arg 9 but the node has 6 arguments");
  CHECK(broken([](std::vector<uint8_t> &f) { st16(field(f, "XPRS", 1, 4), 0); }) ==
        "expressions[1]: not sorted by (node, field, arg) after expressions[0] (or a field has two "
        "expressions)");
  CHECK(broken([](std::vector<uint8_t> &f) {
          st32(field(f, "XPRS", 0, 16), 1u << 30);
        }).find("expressions[0]: code (offset") == 0);
  // Variable 1 is alpha (f32): refused. Code = var 1 (opcode 1, LEB 1).
  CHECK(broken([](std::vector<uint8_t> &f) {
          uint32_t len;
          uint8_t *c = codeBytes(f, 1, &len); // "$n % 7" = var 0, lit 7, rem
          REQUIRE(len == 5);
          c[1] = 1;
        }) == "expressions[1]: uses parameter 1 ('alpha'), which is f32; expressions need integer "
              "parameters");
  CHECK(broken([](std::vector<uint8_t> &f) {
          uint32_t len;
          uint8_t *c = codeBytes(f, 1, &len);
          c[1] = 2; // variable 2: the graph has 2 parameters
        }).find("expressions[1]: offset[1]: ") == 0);
  CHECK(broken([](std::vector<uint8_t> &f) {
          uint32_t len;
          uint8_t *c = codeBytes(f, 1, &len);
          c[4] = 200; // unknown opcode
        }).find("expressions[1]: offset[1]: ") == 0);
}

TEST_CASE("every single-byte change of a stored program loads or is refused cleanly",
          "[format][expr][fuzz]") {
  auto bytes = writeCgf(exprGraph());
  REQUIRE(bytes.ok());
  const std::vector<uint8_t> good = *bytes;
  size_t loaded = 0, refused = 0;
  for (uint32_t rec = 0; rec < 4; ++rec) {
    std::vector<uint8_t> probe = good;
    uint32_t len;
    codeBytes(probe, rec, &len);
    for (uint32_t at = 0; at < len; ++at)
      for (uint32_t v = 0; v < 256; ++v) {
        std::vector<uint8_t> f = good;
        uint32_t l;
        uint8_t *c = codeBytes(f, rec, &l);
        c[at] = uint8_t(v);
        fixChecksums(f);
        auto r = readCgf(f.data(), f.size());
        if (r.ok()) {
          ++loaded;
          // Whatever loads decodes, evaluates without crashing, and re-writes identically.
          for (const FieldExpr &e : r->exprs) {
            auto p = expr::decode(e.code.data(), e.code.size(), 2);
            REQUIRE(p);
            (void)expr::evaluate(*p, {int64_t(v), 3});
          }
          auto w = writeCgf(*r);
          REQUIRE(w.ok());
          CHECK(*w == f);
        } else {
          ++refused;
          INFO(r.error().message());
          CHECK(r.error().message().rfind("expressions[" + std::to_string(rec) + "]", 0) == 0);
        }
      }
  }
  CHECK(loaded > 0);
  CHECK(refused > 0);
}
