// .npy round trips and deliberately malformed files.
#include "../common/temp_dir.h"

#include "cgraph/runtime/npy.h"

#include <catch2/catch.hpp>

#include <cstring>

using namespace cgraph;
using namespace cgraph::rt;
using cgraph::test::TempDir;

namespace {

std::vector<uint8_t> npyImage(const std::string &dict, size_t payload, uint8_t major = 1) {
  std::string header = dict;
  const size_t pre = major == 1 ? 10 : 12;
  header.append((64 - (pre + header.size() + 1) % 64) % 64, ' ');
  header += '\n';
  std::vector<uint8_t> out = {0x93, 'N', 'U', 'M', 'P', 'Y', major, 0};
  const uint32_t len = uint32_t(header.size());
  out.push_back(uint8_t(len));
  out.push_back(uint8_t(len >> 8));
  if (major != 1) {
    out.push_back(uint8_t(len >> 16));
    out.push_back(uint8_t(len >> 24));
  }
  out.insert(out.end(), header.begin(), header.end());
  for (size_t i = 0; i < payload; ++i) out.push_back(uint8_t(i));
  return out;
}

std::string parseFails(const std::vector<uint8_t> &img) {
  Expected<NpyArray> a = parseNpy(img.data(), img.size(), "x.npy");
  REQUIRE_FALSE(a.ok());
  return a.error().message();
}

} // namespace

TEST_CASE("npy round trip for every element type", "[runtime][npy]") {
  TempDir dir;
  const ScalarType types[] = {ScalarType::I8,  ScalarType::I16, ScalarType::I32, ScalarType::I64,
                              ScalarType::U8,  ScalarType::U16, ScalarType::U32, ScalarType::U64,
                              ScalarType::F16, ScalarType::F32, ScalarType::F64};
  for (ScalarType t : types) {
    std::vector<uint8_t> data(scalarSize(t) * 6);
    for (size_t i = 0; i < data.size(); ++i) data[i] = uint8_t(i * 7 + 1);
    const std::string path = dir.str(std::string(scalarName(t)) + ".npy");
    REQUIRE_FALSE(writeNpyFile(path, t, data.data(), data.size(), {2, 3}));
    Expected<NpyArray> a = readNpyFile(path);
    REQUIRE(a.ok());
    CHECK(a->type == t);
    CHECK(a->shape == std::vector<uint64_t>{2, 3});
    CHECK(a->data == data);
    CHECK(a->elements() == 6);
    NpyArray header;
    Expected<std::vector<uint8_t>> viaData = readDataFile(path, &header);
    REQUIRE(viaData.ok());
    CHECK(*viaData == data);
    CHECK(header.descr == npyDescr(t));
  }
  // The written header is what numpy writes: 64-byte aligned, 1-tuples keep the comma.
  float f[3] = {1, 2, 3};
  Expected<std::vector<uint8_t>> img = encodeNpy(ScalarType::F32, f, 12);
  REQUIRE(img.ok());
  CHECK((img->size() - 12) % 64 == 0);
  const std::string header(img->begin() + 10, img->end() - 12);
  CHECK(header.rfind("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", 0) == 0);
}

TEST_CASE("npy versions 2 and 3, and reordered keys, are read", "[runtime][npy]") {
  auto v2 = npyImage("{'shape': (2,), 'fortran_order': False, 'descr': '<i4'}", 8, 2);
  Expected<NpyArray> a = parseNpy(v2.data(), v2.size(), "v2.npy");
  REQUIRE(a.ok());
  CHECK(a->type == ScalarType::I32);
  auto v3 = npyImage("{\"descr\": \"|u1\", \"fortran_order\": True, \"shape\": (5,)}", 5, 3);
  REQUIRE(parseNpy(v3.data(), v3.size(), "v3.npy").ok());
  auto scalar = npyImage("{'descr': '<f8', 'fortran_order': False, 'shape': ()}", 8);
  Expected<NpyArray> s = parseNpy(scalar.data(), scalar.size(), "s.npy");
  REQUIRE(s.ok());
  CHECK(s->elements() == 1);
}

TEST_CASE("malformed npy files are refused with a clear message", "[runtime][npy]") {
  const std::string good = "{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }";
  CHECK(parseFails({1, 2, 3}) == "x.npy: not a .npy file (bad magic)");
  auto img = npyImage(good, 16);
  img[1] = 'X';
  CHECK(parseFails(img) == "x.npy: not a .npy file (bad magic)");
  img = npyImage(good, 16);
  img[6] = 9;
  CHECK(parseFails(img) == "x.npy: unsupported .npy version 9.0");
  img = npyImage(good, 16);
  img[8] = 0xFF;
  img[9] = 0xFF;
  CHECK(parseFails(img) == "x.npy: header length 65535 runs past the end of the file");
  CHECK(parseFails(npyImage(good, 12)) ==
        "x.npy: payload has 12 bytes, shape of 4 <f4 elements needs 16");
  CHECK(parseFails(npyImage(good, 20)) == "x.npy: payload has 4 trailing bytes");
  CHECK(parseFails(npyImage("{'descr': '>f4', 'fortran_order': False, 'shape': (4,)}", 16)) ==
        "x.npy: header: dtype '>f4' is big-endian");
  CHECK(parseFails(npyImage("{'descr': '<c8', 'fortran_order': False, 'shape': (4,)}", 32)) ==
        "x.npy: header: unsupported dtype '<c8'");
  CHECK(parseFails(npyImage("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (4,)}", 16)) ==
        "x.npy: header: 'descr' is not a string (structured dtypes are not supported)");
  CHECK(parseFails(npyImage("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2)}", 16)) ==
        "x.npy: header: fortran_order arrays are not supported (write C order)");
  CHECK(parseFails(npyImage("{'descr': '<f4', 'shape': (4,)}", 16)) ==
        "x.npy: header: missing key 'fortran_order'");
  CHECK(parseFails(npyImage("{'descr': '<f4', 'fortran_order': Maybe, 'shape': (4,)}", 16)) ==
        "x.npy: header: 'fortran_order' must be True or False");
  CHECK(parseFails(npyImage("{'descr': '<f4', 'fortran_order': False, 'shape': (4,x)}", 16)) ==
        "x.npy: header: bad dimension in 'shape'");
  CHECK(parseFails(npyImage("{'descr': '<f4', 'fortran_order': False, 'shape': (4,), 'extra': 1}", 16)) ==
        "x.npy: header: unknown key 'extra'");
  CHECK(parseFails(npyImage("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999, 99999999999)}", 16)) ==
        "x.npy: shape is too large");
  CHECK(parseFails(npyImage("'descr'", 0)) == "x.npy: header: expected '{'");
  // Every truncation of a valid file fails cleanly.
  auto full = npyImage(good, 16);
  for (size_t n = 0; n < full.size(); ++n) {
    Expected<NpyArray> a = parseNpy(full.data(), n, "t.npy");
    CHECK_FALSE(a.ok());
  }
}

TEST_CASE("encodeNpy checks sizes", "[runtime][npy]") {
  uint8_t d[6] = {};
  CHECK(encodeNpy(ScalarType::F32, d, 6).error().message() ==
        "npy: 6 bytes is not a whole number of f32 elements");
  CHECK(encodeNpy(ScalarType::U8, d, 6, {4}).error().message() ==
        "npy: shape has 4 elements but the data has 6");
}
