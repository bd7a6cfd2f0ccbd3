// The description reader (lib/description) in-process: the position-tracking JSON parser, scalar
// encoding, and a type-confusion sweep proving loadDescription never throws or crashes
// and always reports clang-style diagnostics.
#include "cgraph/description/description.h"
#include "json_pos.h"
#include "values.h"

#include <cgraph/expr.h>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

using namespace cgraph;
using namespace cgraph::desc;
namespace fs = std::filesystem;

namespace {

JValue parseOk(const std::string &text) {
  JValue v;
  JsonError e;
  INFO(text);
  REQUIRE(parseJson(text, &v, &e));
  return v;
}

JsonError parseFail(const std::string &text) {
  JValue v;
  JsonError e;
  INFO(text);
  REQUIRE_FALSE(parseJson(text, &v, &e));
  return e;
}

fs::path tempDir(const std::string &name) {
  fs::path d = fs::path(CGRAPH_BINARY_DIR) / "cgc_test_tmp" / name;
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

struct LoadResult {
  bool ok;
  std::string diags;
  Graph graph;
};

LoadResult load(const fs::path &file, const std::string &text) {
  std::ofstream(file, std::ios::binary) << text;
  std::ostringstream out;
  DiagSink sink(streamDiagHandler(out, "cgc"));
  LoadResult r;
  DescriptionOptions opts;
  r.ok = loadDescription(file.string(), opts, sink, &r.graph);
  r.diags = out.str();
  if (!r.ok) CHECK(sink.errorCount() > 0);
  return r;
}

} // namespace

TEST_CASE("json_pos records line and column of every value", "[cgc][json]") {
  JValue v = parseOk("{\n  \"a\": [1, {\"b\": true}],\n\t\"c\": \"x\"\n}");
  CHECK(v.pos.line == 1);
  CHECK(v.pos.col == 1);
  const JValue *a = v.find("a");
  REQUIRE(a);
  CHECK(a->pos.line == 2);
  CHECK(a->pos.col == 8);
  CHECK(a->items[1].find("b")->pos.col == 18);
  CHECK(v.keys[1].second.line == 3);
  CHECK(v.keys[1].second.col == 2); // a tab is one column
  CHECK(v.find("c")->text == "x");
}

TEST_CASE("json_pos decodes escapes and UTF-8", "[cgc][json]") {
  CHECK(parseOk("\"a\\u00e9\\n\\\"\"").text == "a\xC3\xA9\n\"");
  CHECK(parseOk("\"\\ud83d\\ude00\"").text == "\xF0\x9F\x98\x80");
  CHECK(parseOk("\xEF\xBB\xBF{}").isObject()); // BOM
  CHECK(parseFail("\"\\ud83d\"").message.find("surrogate") != std::string::npos);
  CHECK(parseFail("\"\xC0\xAF\"").message == "invalid UTF-8 in a string");
  CHECK(parseFail("\"a\tb\"").message.find("control character") != std::string::npos);
}

TEST_CASE("json_pos reports syntax errors where they are", "[cgc][json]") {
  JsonError e = parseFail("{\"a\": 1,\n \"a\": 2}");
  CHECK(e.message == "duplicate key 'a'");
  CHECK(e.pos.line == 2);
  CHECK(e.pos.col == 2);
  e = parseFail("[1 2]");
  CHECK(e.pos.col == 4);
  e = parseFail("{} x");
  CHECK(e.message.find("after the top-level value") != std::string::npos);
  CHECK(parseFail("").message.find("end of input") != std::string::npos);
  CHECK(parseFail("01").message.find("leading zero") != std::string::npos);
  CHECK(parseFail("1.").pos.col == 3);
  CHECK(parseFail("nul").message.find("invalid literal") != std::string::npos);
  CHECK(parseFail("[1,]").message.find("expected a value") != std::string::npos);
  std::string deep(kMaxJsonDepth + 1, '[');
  CHECK(parseFail(deep).message.find("nesting deeper") != std::string::npos);
  std::string ok(kMaxJsonDepth, '[');
  ok += std::string(kMaxJsonDepth, ']');
  parseOk(ok);
}

TEST_CASE("json_pos number conversions check ranges", "[cgc][json]") {
  uint64_t u;
  int64_t i;
  double d;
  CHECK(parseOk("18446744073709551615").toU64(&u));
  CHECK(u == ~uint64_t(0));
  CHECK_FALSE(parseOk("18446744073709551616").toU64(&u));
  CHECK_FALSE(parseOk("-1").toU64(&u));
  CHECK_FALSE(parseOk("1.5").toU64(&u));
  CHECK_FALSE(parseOk("1e3").toU64(&u));
  CHECK(parseOk("-9223372036854775808").toI64(&i));
  CHECK_FALSE(parseOk("-9223372036854775809").toI64(&i));
  CHECK(parseOk("1e-400").toDouble(&d));
  CHECK_FALSE(parseOk("1e400").toDouble(&d));
}

TEST_CASE("scalar encoding by type", "[cgc][values]") {
  uint64_t bits = 0;
  CHECK(encodeScalar(ScalarType::F32, parseOk("2.0"), &bits).empty());
  CHECK(bits == 0x40000000u);
  CHECK(encodeScalar(ScalarType::F16, parseOk("1"), &bits).empty());
  CHECK(bits == 0x3C00u);
  CHECK(encodeScalar(ScalarType::F16, parseOk("65504"), &bits).empty());
  CHECK(bits == 0x7BFFu);
  CHECK(encodeScalar(ScalarType::F16, parseOk("-0.5"), &bits).empty());
  CHECK(bits == 0xB800u);
  CHECK(encodeScalar(ScalarType::F16, parseOk("5.96046448e-8"), &bits).empty());
  CHECK(bits == 0x0001u); // smallest subnormal
  CHECK_FALSE(encodeScalar(ScalarType::F16, parseOk("65520"), &bits).empty());
  CHECK(encodeScalar(ScalarType::F32, parseOk("\"-inf\""), &bits).empty());
  CHECK(bits == 0xFF800000u);
  CHECK_FALSE(encodeScalar(ScalarType::F32, parseOk("1e39"), &bits).empty());
  CHECK(encodeScalar(ScalarType::I8, parseOk("-128"), &bits).empty());
  CHECK(bits == 0x80u);
  CHECK_FALSE(encodeScalar(ScalarType::I8, parseOk("-129"), &bits).empty());
  CHECK_FALSE(encodeScalar(ScalarType::U16, parseOk("65536"), &bits).empty());
  CHECK_FALSE(encodeScalar(ScalarType::I32, parseOk("1.5"), &bits).empty());
  CHECK_FALSE(encodeScalar(ScalarType::I32, parseOk("true"), &bits).empty());
  CHECK(encodeScalar(ScalarType::I64, parseOk("-1"), &bits).empty());
  CHECK(bits == ~uint64_t(0));
  ScalarType t;
  CHECK(scalarTypeForOpenCL("uint", &t));
  CHECK(t == ScalarType::U32);
  CHECK(scalarTypeForOpenCL("const float", &t));
  CHECK(t == ScalarType::F32);
  CHECK_FALSE(scalarTypeForOpenCL("float4", &t));
}

// A kernel-free description touching every other construct; every value in it is
// replaced in turn by each hostile value.
static const char *kBase = R"({
  "version": 1, "name": "sweep", "edges": "both",
  "metadata": { "k": "v", "n": 2 },
  "slots": [
    { "name": "a", "count": 64, "type": "f32", "init": { "fill": [1.0, 2.0], "type": "f32" } },
    { "name": "b", "bytes": 256, "init": "transient" },
    { "name": "c", "bytes": 256, "external": true, "align": 64 },
    { "name": "d", "init": { "data": [1, 2, 3], "type": "u16" } }
  ],
  "params": [{ "name": "p", "type": "u32", "default": 7 }],
  "nodes": [
    { "name": "f", "fill": { "dst": { "slot": "b", "offset": 0 }, "value": 0, "type": "u8", "bytes": 128 } },
    { "name": "cp", "copy": { "src": "a", "dst": "c", "bytes": 64 } },
    { "name": "r", "copy_rect": { "src": "a", "dst": "b", "region": [16, 4], "src_pitch": [32], "dst_pitch": [16, 64] } },
    { "repeat": 3, "var": "i", "swap": [["b", "c"]], "nodes": [
      { "name": "h", "host": "print", "args": ["b", "$p", "$i", { "string": "u8" }, { "u8": 3 }], "after": "f" }
    ] },
    { "name": "sync", "barrier": true, "after": ["cp", "h.2"] },
    { "name": "sub", "subgraph": { "slots": [{ "name": "x", "bytes": 256 }],
        "nodes": [{ "name": "z", "fill": { "dst": "x", "value": 1, "type": "u8" } }] }, "bind": { "x": "c" } }
  ]
})";

TEST_CASE("loadDescription accepts the sweep base description", "[cgc][description]") {
  fs::path dir = tempDir("core_base");
  LoadResult r = load(dir / "g.json", kBase);
  INFO(r.diags);
  REQUIRE(r.ok);
  CHECK(r.graph.nodes.size() == 8);
  CHECK(r.graph.findNode("h.1") != kNone);
  CHECK(r.graph.subgraphs.size() == 1);
  CHECK(r.graph.slots[3].data.size() == 6);
}

TEST_CASE("loadDescription survives every value replaced by a hostile one", "[cgc][description]") {
  fs::path dir = tempDir("core_sweep");
  nlohmann::json base = nlohmann::json::parse(kBase);
  nlohmann::json flat = base.flatten(); // leaf pointers
  std::vector<std::string> pointers;
  for (auto it = flat.begin(); it != flat.end(); ++it) pointers.push_back(it.key());
  // Containers too: every prefix of every leaf pointer.
  std::set<std::string> all(pointers.begin(), pointers.end());
  for (const std::string &p : pointers)
    for (size_t k = 1; k < p.size(); ++k)
      if (p[k] == '/') all.insert(p.substr(0, k));
  const char *hostile[] = {"null", "true", "\"x\"", "\"$x\"", "\"\"", "1e400", "-1", "1.5",
                           "18446744073709551616", "0", "{}", "[]", "[[[[]]]]", "{\"slot\": 1}",
                           // integer expressions (folded, or errors inside the string)
                           "\"$p / 0\"", "\"align_up(-(\"", "\"9223372036854775807 * $i\""};
  const std::regex diagLine(R"(^(cgc|[^:]+:\d+:\d+): (error|warning|note): .+$)");
  size_t runs = 0, failures = 0;
  for (const std::string &ptr : all) {
    for (const char *h : hostile) {
      // Spliced in as text: nlohmann::json cannot hold 1e400 or 2^64.
      nlohmann::json doc = base;
      doc[nlohmann::json::json_pointer(ptr)] = "@HOSTILE@";
      std::string text = doc.dump();
      text.replace(text.find("\"@HOSTILE@\""), 11, h);
      LoadResult r = load(dir / "g.json", text);
      ++runs;
      if (!r.ok) ++failures;
      std::istringstream in(r.diags);
      for (std::string line; std::getline(in, line);) {
        INFO(ptr << " = " << h);
        CHECK(std::regex_match(line, diagLine));
      }
    }
  }
  CHECK(runs > 1000);
  CHECK(failures > runs / 2); // most replacements are errors, and each was reported
}

TEST_CASE("diagnostics point at the template inside a repeat block", "[cgc][description]") {
  fs::path dir = tempDir("core_repeat_pos");
  LoadResult r = load(dir / "g.json", R"({
  "slots": [{ "name": "a", "bytes": 64 }],
  "nodes": [
    { "repeat": 4, "swap": [["a", "b"]], "nodes": [] }
  ]
})");
  CHECK_FALSE(r.ok);
  CHECK(r.diags == (dir / "g.json").string() + ":4:51: error: empty repeat block\n");
  r = load(dir / "g.json", R"({
  "slots": [{ "name": "a", "bytes": 64 }, { "name": "b", "bytes": 32 }],
  "nodes": [
    { "repeat": 4, "swap": [["a", "b"]], "nodes": [
      { "name": "f", "fill": { "dst": "a", "value": 0, "type": "u8", "bytes": 64 } } ] }
  ]
})");
  CHECK_FALSE(r.ok);
  // iterations 1 and 3 rotate a -> b, which is too small: reported once, at the template
  // node, naming the iterations
  INFO(r.diags);
  CHECK(r.diags.find((dir / "g.json").string() + ":5:7: error: nodes 'f' (repeat block, iterations 1, 3): ") == 0);
  CHECK(r.diags.find("f.1") == std::string::npos);
}

// ---- integer expressions (docs/graph-json.md, "Expressions") -------------------------

TEST_CASE("expressions over repeat variables and literals fold to exact values", "[cgc][expr]") {
  fs::path dir = tempDir("core_expr");
  std::ofstream(dir / "k.cl")
      << "__kernel void kx(__global float *a, uint first, int neg, ulong big, float f,\n"
         "                 __local float *tmp) {\n"
         "  tmp[0] = f;\n  a[get_global_id(0)] = first + neg + big + tmp[0];\n}\n";
  LoadResult r = load(dir / "g.json", R"J({
  "kernels": ["k.cl"],
  "params": [{ "name": "p", "type": "u32", "default": 7 }],
  "slots": [
    { "name": "a", "count": "16 * 16", "type": "f32" },
    { "name": "b", "bytes": "align_up(1000, 256)" }
  ],
  "nodes": [
    { "repeat": 3, "var": "k", "nodes": [
      { "name": "kern", "kernel": "kx", "global": ["align_up(100 - $k * 10, 32)", "max($k, 1)"],
        "local": ["min(32, 16 * 2)", 1], "offset": ["$k + 1", "-(-2)"],
        "args": ["a", "$k + 1", "-$k", { "u64": "$k * 1000000000000" }, "$k * 2", { "local": "64 * ($k + 1)" }] },
      { "name": "cp", "copy": { "src": { "slot": "a", "offset": "$k * 4" }, "dst": "b", "bytes": "ceil_div(100, 3) * 4" } },
      { "name": "fl", "fill": { "dst": { "slot": "b", "offset": "( $k )" }, "value": 0, "type": "u8", "bytes": "64 % ($k + 5)" } },
      { "name": "show", "host": "print", "args": ["a", "$k * 3 + 1", "$p", "$k"] }
    ] },
    { "name": "plain", "kernel": "kx", "global": ["$p"], "args": ["a", "$p", 3, 4, 1.5, { "local": 16 }] }
  ]
})J");
  INFO(r.diags);
  REQUIRE(r.ok);
  const Graph &g = r.graph;
  CHECK(g.slots[0].size == 1024);
  CHECK(g.slots[1].size == 1024);
  REQUIRE(g.nodes.size() == 13);
  for (uint64_t k = 0; k < 3; ++k) {
    INFO("iteration " << k);
    const Node &kn = g.nodes[g.findNode("kern." + std::to_string(k))];
    CHECK(kn.range.dims == 2);
    CHECK(kn.range.global[0].value == (k == 0 ? 128u : k == 1 ? 96u : 96u)); // 100, 90, 80 -> 32s
    CHECK(kn.range.global[0].param == kNone);
    CHECK(kn.range.global[1].value == std::max<uint64_t>(k, 1));
    CHECK(kn.range.local[0].value == 32);
    CHECK(kn.range.offset[0].value == k + 1);
    CHECK(kn.range.offset[1].value == 2);
    REQUIRE(kn.args.size() == 6);
    CHECK(kn.args[1].kind == ArgKind::Scalar);
    CHECK(kn.args[1].type == ScalarType::U32);
    CHECK(kn.args[1].value == k + 1);
    CHECK(kn.args[2].type == ScalarType::I32);
    CHECK(kn.args[2].value == (uint64_t(-int64_t(k)) & 0xFFFFFFFFu)); // two's complement, 4 bytes
    CHECK(kn.args[3].type == ScalarType::U64);
    CHECK(kn.args[3].value == k * 1000000000000ull);
    CHECK(kn.args[4].type == ScalarType::F32);
    float fv = float(2 * k);
    uint32_t fbits;
    std::memcpy(&fbits, &fv, 4);
    CHECK(kn.args[4].value == fbits);
    CHECK(kn.args[5].kind == ArgKind::LocalMem);
    CHECK(kn.args[5].value == 64 * (k + 1));
    const Node &cp = g.nodes[g.findNode("cp." + std::to_string(k))];
    CHECK(cp.copy.srcOffset == 4 * k);
    CHECK(cp.copy.bytes == 136);
    const Node &fl = g.nodes[g.findNode("fl." + std::to_string(k))];
    CHECK(fl.fill.offset == k);
    CHECK(fl.fill.bytes == 64 % (k + 5));
    const Node &h = g.nodes[g.findNode("show." + std::to_string(k))];
    REQUIRE(h.args.size() == 4);
    CHECK(h.args[1].type == ScalarType::I32);
    CHECK(int32_t(uint32_t(h.args[1].value)) == int32_t(3 * k) + 1);
    CHECK(h.args[2].kind == ArgKind::Param); // "$p" alone is still a parameter reference
    CHECK(h.args[3].kind == ArgKind::Scalar);
    CHECK(h.args[3].value == k);
  }
  // Plain "$p" stays a parameter reference in ranges and arguments.
  const Node &plain = g.nodes[g.findNode("plain")];
  CHECK(plain.range.global[0].param == 0);
  CHECK(plain.args[1].kind == ArgKind::Param);
}

TEST_CASE("expressions over parameters are stored per field", "[cgc][expr]") {
  fs::path dir = tempDir("core_expr_store");
  std::ofstream(dir / "k.cl") << "__kernel void ku(__global float *a, int k, uint n, float f) {\n"
                                 "  a[get_global_id(0)] = k + n + f;\n}\n";
  LoadResult r = load(dir / "g.json", R"J({
  "kernels": ["k.cl"],
  "params": [{ "name": "n", "type": "u32", "default": 100 }, { "name": "m", "type": "i64", "default": 3 }],
  "slots": [{ "name": "a", "bytes": 4096 }],
  "nodes": [
    { "repeat": 2, "var": "k", "nodes": [
      { "name": "upd", "kernel": "ku", "global": ["align_up($n - $k - 1, 64)"], "local": ["min($m * 8, 64)"],
        "offset": ["$k + $m - 3"], "args": ["a", "$k + 1", "$n - $k", 1.5] }
    ] },
    { "name": "zero", "kernel": "ku", "global": ["$n - 100"], "args": ["a", "$m * 2", 0, 0.5] }
  ]
})J");
  INFO(r.diags);
  REQUIRE(r.ok);
  const Graph &g = r.graph;
  REQUIRE(g.nodes.size() == 3);
  // upd.0: global, local, offset, arg 2 (arg 1 folds: $k + 1); upd.1 the same;
  // zero: global (0 at the defaults: the field keeps 1), arg 1.
  REQUIRE(g.exprs.size() == 10);
  auto program = [&](const FieldExpr &e) {
    auto p = expr::decode(e.code.data(), e.code.size(), uint32_t(g.params.size()));
    REQUIRE(p);
    expr::Program q = *p;
    q.names = {"n", "m"};
    return q.toString();
  };
  for (uint32_t k = 0; k < 2; ++k) {
    INFO("iteration " << k);
    const uint32_t n = g.findNode("upd." + std::to_string(k));
    const FieldExpr *e = &g.exprs[4 * k];
    CHECK(e[0].node == n);
    CHECK(e[0].field == ExprField::Global0);
    CHECK(program(e[0]) == "align_up($n - " + std::to_string(k) + " - 1, 64)"); // folded as written
    CHECK(g.nodes[n].range.global[0].value == (k == 0 ? 128u : 128u));          // 99, 98 -> 128
    CHECK(e[1].field == ExprField::Local0);
    CHECK(program(e[1]) == "min($m * 8, 64)"); // 24 does not divide 128: checked per submission
    CHECK(g.nodes[n].range.local[0].value == 24);
    CHECK(e[2].field == ExprField::Offset0);
    CHECK(g.nodes[n].range.offset[0].value == k);
    CHECK(e[3].field == ExprField::ScalarArg);
    CHECK(e[3].arg == 2);
    CHECK(program(e[3]) == "$n - " + std::to_string(k));
    CHECK(g.nodes[n].args[1].kind == ArgKind::Scalar); // folded: $k + 1
    CHECK(g.nodes[n].args[1].value == k + 1);
    CHECK(g.nodes[n].args[2].kind == ArgKind::Scalar);
    CHECK(g.nodes[n].args[2].type == ScalarType::U32);
    CHECK(g.nodes[n].args[2].value == 100 - k);
  }
  const uint32_t z = g.findNode("zero");
  CHECK(g.exprs[8].node == z);
  CHECK(program(g.exprs[8]) == "$n - 100");
  CHECK(g.nodes[z].range.global[0].value == 1);
  CHECK(g.exprs[9].arg == 1);
  CHECK(g.nodes[z].args[1].value == 6);
  // A float argument over a parameter is still refused.
  LoadResult bad = load(dir / "g.json", R"J({
  "kernels": ["k.cl"], "params": [{ "name": "n", "type": "u32" }], "slots": [{ "name": "a", "bytes": 64 }],
  "nodes": [{ "name": "x", "kernel": "ku", "global": [4], "args": ["a", 1, 2, "$n * 2"] }]
})J");
  CHECK_FALSE(bad.ok);
  CHECK(bad.diags.find(
            "arg 3 ('f'): expressions over parameters ('$n') are stored only in nd-ranges, "
            "integer kernel and host task arguments, copy and fill offsets and sizes, and "
            "slot sizes") != std::string::npos);
}

TEST_CASE("copy, fill, host task and slot size expressions are stored (2.2)", "[cgc][expr]") {
  fs::path dir = tempDir("core_expr_transfer");
  LoadResult r = load(dir / "g.json", R"J({
  "params": [{ "name": "n", "type": "u32", "default": 8 }],
  "slots": [{ "name": "a", "count": "$n * $n", "type": "f32" }, { "name": "b", "bytes": 4096 },
            { "name": "t", "bytes": "max($n - 9, 0)", "init": "transient" },
            { "name": "f", "count": "$n", "type": "u32", "init": { "fill": 7, "type": "u32" } }],
  "nodes": [
    { "name": "c", "copy": { "src": { "slot": "a", "offset": "$n * 4" }, "dst": { "slot": "b", "offset": 16 },
                             "bytes": "($n - 1) * 4" } },
    { "name": "z", "fill": { "dst": { "slot": "b", "offset": "$n * 8" }, "value": 0, "type": "u32", "bytes": "$n * 4" } },
    { "name": "p", "host": "print", "args": ["b", { "string": "u32" }, "$n + 1"] }
  ]
})J");
  INFO(r.diags);
  REQUIRE(r.ok);
  const Graph &g = r.graph;
  auto program = [&](const FieldExpr &e) {
    auto p = expr::decode(e.code.data(), e.code.size(), uint32_t(g.params.size()));
    REQUIRE(p);
    expr::Program q = *p;
    q.names = {"n"};
    return q.toString();
  };
  // Node fields in node order, then the slot sizes (node kNone).
  REQUIRE(g.exprs.size() == 8);
  const uint32_t c = g.findNode("c"), z = g.findNode("z"), p = g.findNode("p");
  CHECK((g.exprs[0].node == c && g.exprs[0].field == ExprField::CopySrcOffset));
  CHECK(program(g.exprs[0]) == "$n * 4");
  CHECK((g.exprs[1].node == c && g.exprs[1].field == ExprField::CopyBytes));
  CHECK(program(g.exprs[1]) == "($n - 1) * 4");
  CHECK(g.nodes[c].copy.srcOffset == 32); // the values at the defaults
  CHECK(g.nodes[c].copy.dstOffset == 16); // literal: not stored
  CHECK(g.nodes[c].copy.bytes == 28);
  CHECK((g.exprs[2].node == z && g.exprs[2].field == ExprField::FillOffset));
  CHECK((g.exprs[3].node == z && g.exprs[3].field == ExprField::FillBytes));
  CHECK(g.nodes[z].fill.offset == 64);
  CHECK((g.exprs[4].node == p && g.exprs[4].field == ExprField::ScalarArg && g.exprs[4].arg == 2));
  CHECK(g.nodes[p].args[2].kind == ArgKind::Scalar);
  CHECK(g.nodes[p].args[2].value == 9);
  for (uint32_t i = 5; i < 8; ++i) {
    CHECK(g.exprs[i].node == kNone);
    CHECK(g.exprs[i].field == ExprField::SlotSize);
  }
  CHECK(g.exprs[5].arg == g.findSlot("a"));
  CHECK(program(g.exprs[5]) == "$n * $n * 4"); // count * element size
  CHECK(g.slots[g.findSlot("a")].size == 256);
  CHECK(g.exprs[6].arg == g.findSlot("t"));
  CHECK(g.slots[g.findSlot("t")].size == 1); // 0 at the defaults: the smallest valid size
  CHECK(g.exprs[7].arg == g.findSlot("f"));
  CHECK(program(g.exprs[7]) == "$n * 4");
}

TEST_CASE("expression errors point into the string", "[cgc][expr]") {
  fs::path dir = tempDir("core_expr_errors");
  const std::string file = (dir / "g.json").string();
  auto err = [&](const std::string &nodes,
                 const std::string &slots = R"([{ "name": "a", "bytes": 256 }])") {
    LoadResult r = load(dir / "g.json", "{\"params\": [{\"name\": \"n\", \"type\": \"u32\"}, "
                                        "{\"name\": \"x\", \"type\": \"f64\"}],\n"
                                        "\"slots\": " +
                                            slots + ",\n\"nodes\": [" + nodes + "]}");
    CHECK_FALSE(r.ok);
    REQUIRE(r.diags.compare(0, file.size(), file) == 0);
    return r.diags.substr(file.size());
  };
  // line 3: `"nodes": [` + rep + the string
  const std::string rep =
      R"({"repeat": 2, "var": "k", "nodes": [{"name": "f", "fill": {"dst": "a", "value": 0, "type": "u8", "bytes": )";
  auto fill = [&](const std::string &bytes) { return rep + "\"" + bytes + "\"}}]}"; };
  const uint32_t q =
      uint32_t(std::string("\"nodes\": [").size() + rep.size()) + 1; // the opening quote
  auto at = [&](uint32_t offset) { return ":3:" + std::to_string(q + 1 + offset) + ": error: "; };
  CHECK(err(fill("$k +")) ==
        at(4) + "'bytes' of node 'f.0': unexpected end of expression; expected a value\n");
  CHECK(err(fill("$k + $m")) == at(5) + "'bytes' of node 'f.0': unknown name '$m' (not a repeat "
                                        "variable or parameter) (did you mean 'k'?)\n");
  CHECK(err(fill("$x + 1")) == at(0) + "'bytes' of node 'f.0': parameter 'x' is f64; integer "
                                       "expressions need integer parameters\n");
  CHECK(err(fill("$n / 0")) == at(3) + "'bytes' of node 'f.0': division by zero\n");
  CHECK(err(fill("1 + 2 % $k")) == at(6) + "'bytes' of node 'f.0': remainder by zero\n");
  CHECK(err(fill("align_up(8, $k)")) ==
        at(0) + "'bytes' of node 'f.0': align_up to a non-positive alignment 0\n");
  CHECK(err(fill("9223372036854775807 + $k + 1")) ==
        at(25) + "'bytes' of node 'f.0': integer overflow in 9223372036854775807 + 1\n");
  // A fill size over a parameter is stored (.cgf 2.2), not an error.
  CHECK(load(dir / "g.json", "{\"params\": [{\"name\": \"n\", \"type\": \"u32\"}],\n"
                             "\"slots\": [{ \"name\": \"a\", \"bytes\": 256 }],\n\"nodes\": [" +
                                 fill("8 * $n") + "]}")
            .ok);
  CHECK(err(fill("16 - $k * 16")) ==
        ":3:" + std::to_string(q) +
            ": error: 'bytes' of node 'f.1' is 0 ('16 - $k * 16'); it must be positive\n");
  // Slot sizes: parameters are known there too (stored, .cgf 2.2); repeat variables are
  // not, and a slot with embedded data keeps a fixed size.
  CHECK(
      err("", R"([{ "name": "a", "count": "$n * 4", "type": "f32", "init": { "data": [1] } }])") ==
      ":2:35: error: slot 'a': embedded 'data' has a fixed size, so the slot's size cannot depend "
      "on "
      "parameters (use 'fill', 'file' or 'transient', or an external slot)\n");
  CHECK(err("", R"([{ "name": "a", "bytes": "$k" }])") ==
        ":2:36: error: slot 'bytes' of 'a': unknown name '$k' (not a repeat variable or parameter) "
        "(did you mean 'n'?)\n");
  // A string that is no expression keeps its wrong-type error.
  CHECK(err("", R"([{ "name": "a", "bytes": "many" }])") ==
        ":2:35: error: slot 'bytes' must be a non-negative integer, found string\n");
}

TEST_CASE("the library reports to the caller's handler and returns errors as values", "[cgc][library]") {
  std::vector<Diag> seen;
  DiagSink sink([&seen](const Diag &d) { seen.push_back(d); });
  DescriptionOptions opts;
  Expected<Graph> missing = compileDescription("/nonexistent/dir/graph.json", opts, sink);
  REQUIRE_FALSE(missing);
  CHECK(missing.error().code() == ErrorCode::Io);
  CHECK(missing.error().message().find("/nonexistent/dir/graph.json") != std::string::npos);
  REQUIRE(seen.size() == 1);
  CHECK(seen[0].severity == Severity::Error);

  seen.clear();
  DiagSink second([&seen](const Diag &d) { seen.push_back(d); });
  const std::string text = "{\n  \"slots\": [\n    {\"name\": \"s\", \"count\": 4, \"type\": \"f32\"},\n"
                           "    {\"name\": \"s\", \"count\": 4, \"type\": \"f32\"}\n  ]\n}\n";
  Expected<Graph> dup = compileDescriptionText(text, "mem.json", "", opts, second);
  REQUIRE_FALSE(dup);
  CHECK(dup.error().code() == ErrorCode::Invalid);
  CHECK(dup.error().message() == "mem.json:4:14: error: duplicate slot name 's'");
  CHECK(second.firstError() == dup.error().message());
  REQUIRE(seen.size() == 2); // the error and its note, in the order reported
  CHECK(formatDiag(seen[0]) == "mem.json:3:5: note: slot 's' first declared here");
  CHECK(formatDiag(seen[1]) == dup.error().message());
  CHECK(formatDiag(Diag{Severity::Warning, Location{}, "w", false}, "cgc") == "cgc: warning: w");

  DiagSink silent; // counts only
  const std::string good = "{\"name\": \"g\", \"slots\": [{\"name\": \"s\", \"count\": 4, \"type\": \"f32\"}]}";
  Expected<Graph> ok = compileDescriptionText(good, "good.json", "", opts, silent);
  REQUIRE(ok);
  CHECK(ok->name == "g");
  CHECK(ok->slots.size() == 1);
  CHECK(silent.errorCount() == 0);
}
