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
  CHECK(broken([](std::vector<uint8_t> &f) { st32(f.data() + 16, 17); }) ==
        "file needs unknown features (header flags 0x10)");
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

namespace {

// exprGraph plus expressions in copy/fill fields, a host task argument and slot sizes
// (.cgf 2.2, header flag bit 2). Sorted: 0 global0, 1 offset1, 2 arg 4, 3 copy src
// offset, 4 copy bytes, 5 fill offset, 6 fill bytes, 7 host arg 3, 8 local0 of k1,
// 9 size of slot 0, 10 size of slot 4.
Graph transferGraph() {
  Graph g = exprGraph();
  g.nodes[4].args.push_back(Arg::scalar(ScalarType::U32, 16));
  auto add = [&](uint32_t node, ExprField f, uint32_t arg, const std::string &text) {
    FieldExpr e;
    e.node = node;
    e.field = f;
    e.arg = arg;
    e.code = program(text, {0});
    g.exprs.push_back(e);
  };
  add(kNone, ExprField::SlotSize, 4, "$n * $n * 4");
  add(1, ExprField::CopySrcOffset, 0, "$n * 4");
  add(1, ExprField::CopyBytes, 0, "$n");
  add(3, ExprField::FillOffset, 0, "$n * 8");
  add(3, ExprField::FillBytes, 0, "align_up($n, 8)");
  add(4, ExprField::ScalarArg, 3, "$n + 1");
  add(kNone, ExprField::SlotSize, 0, "max($n, 16)");
  return g;
}

} // namespace

TEST_CASE("copy, fill, host task and slot size expressions round-trip as 2.2", "[format][expr]") {
  Graph g = transferGraph();
  auto bytes = writeCgf(g);
  INFO((bytes ? std::string() : bytes.error().message()));
  REQUIRE(bytes.ok());
  CHECK(ld32(bytes->data() + 8) == 0x00020002u); // major 2, minor 2
  CHECK(ld32(bytes->data() + 16) == 5);          // flags: expressions, copy/fill/host/slot ones
  auto back = readCgf(bytes->data(), bytes->size());
  INFO((back ? std::string() : back.error().message()));
  REQUIRE(back.ok());
  REQUIRE(back->exprs.size() == 11);
  CHECK(back->exprs[3].field == ExprField::CopySrcOffset);
  CHECK(back->exprs[7].field == ExprField::ScalarArg);
  CHECK(back->exprs[7].node == 4);
  CHECK(back->exprs[9].node == kNone);
  CHECK(back->exprs[9].arg == 0);
  CHECK(back->exprs[10].arg == 4);
  auto p = expr::decode(back->exprs[10].code.data(), back->exprs[10].code.size(), 2);
  REQUIRE(p);
  CHECK(*expr::evaluate(*p, {10}) == 400);
  auto again = writeCgf(*back);
  REQUIRE(again.ok());
  CHECK(*again == *bytes);
  // Only kernel-node expressions: still 2.0 with flag bit 0 alone (a 2.0 reader's file).
  auto plain = writeCgf(exprGraph());
  REQUIRE(plain.ok());
  CHECK(ld32(plain->data() + 8) == 2); // major 2, minor 0
  CHECK(ld32(plain->data() + 16) == 1);
}

TEST_CASE("malformed copy, fill, host and slot size expressions are refused", "[format][expr]") {
  auto bytes = writeCgf(transferGraph());
  REQUIRE(bytes.ok());
  const std::vector<uint8_t> good = *bytes;
  auto broken = [&](auto edit) {
    std::vector<uint8_t> f = good;
    edit(f);
    fixChecksums(f);
    return readError(f);
  };
  // A file without flag bit 2 (what a 2.0/2.1 writer could have made) is refused.
  CHECK(broken([](std::vector<uint8_t> &f) { st32(f.data() + 16, 1); }) ==
        "expressions[3]: src offset expressions need header flag bit 2 (format 2.2)");
  CHECK(broken([](std::vector<uint8_t> &f) { st16(field(f, "XPRS", 4, 4), 25); }) ==
        "expressions[4]: node 1 is a copy node; bytes needs a fill node");
  CHECK(broken([](std::vector<uint8_t> &f) { st16(field(f, "XPRS", 5, 4), 21); }) ==
        "expressions[5]: node 3 is a fill node; dst offset needs a copy node");
  CHECK(broken([](std::vector<uint8_t> &f) { st16(field(f, "XPRS", 4, 4), 23); }) ==
        "expressions[4]: unknown field 23");
  CHECK(broken([](std::vector<uint8_t> &f) { st32(field(f, "XPRS", 4, 8), 1); }) ==
        "expressions[4]: arg must be 0 for a range, copy or fill field");
  CHECK(broken([](std::vector<uint8_t> &f) { st32(field(f, "XPRS", 7, 8), 0); }) ==
        "expressions[7]: arg 0 is not an integer scalar");
  CHECK(broken([](std::vector<uint8_t> &f) { st32(field(f, "XPRS", 9, 0), 2); }) ==
        "expressions[9]: a slot size record must have node 0xFFFFFFFF");
  CHECK(broken([](std::vector<uint8_t> &f) { st32(field(f, "XPRS", 10, 8), 99); }) ==
        "expressions[10]: slot 99 points past the slot table (6 slots)");
  CHECK(broken([](std::vector<uint8_t> &f) { st32(field(f, "XPRS", 10, 8), 1); }) ==
        "expressions[10]: slot 1 has embedded data of a fixed size; its size cannot be an "
        "expression");
  CHECK(
      broken([](std::vector<uint8_t> &f) { st32(field(f, "XPRS", 9, 8), 4); }) ==
      "expressions[10]: not sorted by (node, field, arg) after expressions[9] (or a field has two "
      "expressions)");
}
