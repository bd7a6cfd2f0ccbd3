// cgc's description reader in-process: the position-tracking JSON parser, scalar
// encoding, and a type-confusion sweep proving loadDescription never throws or crashes
// and always reports clang-style diagnostics.
#include "description.h"
#include "json_pos.h"
#include "values.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

using namespace cgraph;
using namespace cgraph::cgc;
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
  DiagSink sink(out);
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
      { "name": "h", "host": "print", "args": ["b", "$p", "$i", { "string": "s" }, { "u8": 3 }], "after": "f" }
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
                           "18446744073709551616", "0", "{}", "[]", "[[[[]]]]", "{\"slot\": 1}"};
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
  // iteration 1 rotates a -> b, which is too small: reported at the template node
  CHECK(r.diags.find((dir / "g.json").string() + ":5:7: error: node 'f.1'") == 0);
}
