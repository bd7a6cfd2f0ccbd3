// ParamValues::set and scalar text parsing, for every scalar type and bad text.
#include "cgraph/runtime/runtime.h"
#include "cgraph/runtime/scalar_text.h"

#include <catch2/catch.hpp>

#include <cstring>

using namespace cgraph;
using namespace cgraph::rt;

namespace {

Graph paramGraph() {
  Graph g;
  const std::pair<const char *, ScalarType> types[] = {
      {"i8", ScalarType::I8},   {"i16", ScalarType::I16}, {"i32", ScalarType::I32},
      {"i64", ScalarType::I64}, {"u8", ScalarType::U8},   {"u16", ScalarType::U16},
      {"u32", ScalarType::U32}, {"u64", ScalarType::U64}, {"f16", ScalarType::F16},
      {"f32", ScalarType::F32}, {"f64", ScalarType::F64}};
  for (auto &t : types) {
    Param p;
    p.name = std::string("p_") + t.first;
    p.type = t.second;
    p.defaultBits = 1;
    g.params.push_back(p);
  }
  return g;
}

uint64_t setOk(const Graph &g, ParamValues &v, const std::string &name, const std::string &text) {
  Error e = v.set(g, name, text);
  INFO(e.message());
  REQUIRE_FALSE(e);
  return v.bits[g.findParam(name)];
}

std::string setFails(const Graph &g, const std::string &name, const std::string &text) {
  ParamValues v;
  Error e = v.set(g, name, text);
  REQUIRE(e);
  return e.message();
}

} // namespace

TEST_CASE("params parse by type", "[runtime][params]") {
  Graph g = paramGraph();
  ParamValues v;
  CHECK(setOk(g, v, "p_i8", "-128") == 0x80);
  CHECK(setOk(g, v, "p_i16", "-2") == 0xFFFE);
  CHECK(setOk(g, v, "p_i32", "-1") == 0xFFFFFFFFu);
  CHECK(setOk(g, v, "p_i32", "0x10") == 16);
  CHECK(setOk(g, v, "p_i64", "-9223372036854775808") == 0x8000000000000000ull);
  CHECK(setOk(g, v, "p_u8", "255") == 255);
  CHECK(setOk(g, v, "p_u16", "65535") == 65535);
  CHECK(setOk(g, v, "p_u32", "0xffffffff") == 0xFFFFFFFFu);
  CHECK(setOk(g, v, "p_u64", "18446744073709551615") == ~uint64_t(0));
  CHECK(setOk(g, v, "p_f16", "1.5") == 0x3E00);
  CHECK(setOk(g, v, "p_f16", "-2") == 0xC000);
  CHECK(setOk(g, v, "p_f32", "2.5") == 0x40200000u);
  const uint64_t d = setOk(g, v, "p_f64", "0.1");
  double back;
  std::memcpy(&back, &d, 8);
  CHECK(back == 0.1);
  // Unset params keep their defaults.
  ParamValues fresh;
  setOk(g, fresh, "p_u8", "3");
  CHECK(fresh.bits[g.findParam("p_i32")] == 1);
}

TEST_CASE("bad param text names the param", "[runtime][params]") {
  Graph g = paramGraph();
  CHECK(setFails(g, "p_i32", "2.5") == "param 'p_i32': '2.5' is not a valid i32");
  CHECK(setFails(g, "p_i32", "") == "param 'p_i32': empty value is not a valid i32");
  CHECK(setFails(g, "p_i32", "12abc") == "param 'p_i32': '12abc' is not a valid i32");
  CHECK(setFails(g, "p_i8", "128") == "param 'p_i8': 128 is out of range for i8");
  CHECK(setFails(g, "p_u8", "256") == "param 'p_u8': 256 is out of range for u8");
  CHECK(setFails(g, "p_u32", "-1") == "param 'p_u32': -1 is out of range for u32");
  CHECK(setFails(g, "p_i64", "9223372036854775808") ==
        "param 'p_i64': 9223372036854775808 is out of range for i64");
  CHECK(setFails(g, "p_f32", "abc") == "param 'p_f32': 'abc' is not a valid f32");
  CHECK(setFails(g, "p_f32", "1e39") == "param 'p_f32': 1e39 is out of range for f32");
  CHECK(setFails(g, "p_f16", "70000") == "param 'p_f16': 70000 is out of range for f16");
  CHECK(setFails(g, "nope", "1").rfind("graph has no param 'nope' (params: p_i8, p_i16", 0) == 0);
  Graph empty;
  ParamValues v;
  CHECK(v.set(empty, "a", "1").message() == "graph has no param 'a' (it has none)");
}

TEST_CASE("scalar bits format back to text", "[runtime][params]") {
  CHECK(formatScalarBits(0x40200000u, ScalarType::F32) == "2.5");
  CHECK(formatScalarBits(0xFF, ScalarType::I8) == "-1");
  CHECK(formatScalarBits(0xFF, ScalarType::U8) == "255");
  CHECK(formatScalarBits(0x3E00, ScalarType::F16) == "1.5");
  CHECK(halfBitsToFloat(floatToHalfBits(65504.0f)) == 65504.0f);
  CHECK(floatToHalfBits(1e-8f) == 0); // underflows to zero
}
