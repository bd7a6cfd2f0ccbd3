// Clamped x indices (lib/codegen/cpu/src/guards.h XClamps): kernels/clamps.cl against
// C++ references written from the kernels' OpenCL C, at the edges (where the clamps
// fire) and in the interior (where the x loop runs the clone without them).
#include "cpu_test_util.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>

using namespace cgtest;

namespace {

std::vector<int32_t> randomClampInputs(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int32_t> d(-1000, 1000);
  std::vector<int32_t> v(n);
  for (auto &x : v) x = d(rng);
  return v;
}

int64_t clampRef(int64_t v, int64_t lo, int64_t hi) { return std::min(std::max(v, lo), hi); }

} // namespace

TEST_CASE("cpu: clamped 3x3 stencil, edges and interior", "[cpu][clamps]") {
  // Widths below, at and above the vector widths, with remainders; one column; one row.
  const std::vector<std::pair<uint32_t, uint32_t>> sizes = {{1, 4}, {2, 3}, {3, 1}, {17, 5},
                                                             {37, 5}, {64, 2}, {300, 3}, {1029, 4}};
  for (auto [w, h] : sizes) {
    DYNAMIC_SECTION(w << "x" << h) {
      const auto in = randomClampInputs(size_t(w) * h, w * 31 + h);
      auto out = as<int32_t>(runOne("clamps.cl", "clamp_stencil", range2D(w, h),
                                    {zeros(size_t(w) * h * 4), buf(in), scalar(ScalarType::U32, w),
                                     scalar(ScalarType::U32, h)})[0]);
      const int weights[3][3] = {{1, 2, 5}, {11, 23, 47}, {97, 199, 401}}; // [dy + 1][dx + 1]
      size_t edges = 0;
      for (int64_t y = 0; y < h; ++y)
        for (int64_t x = 0; x < w; ++x) {
          int32_t want = 0;
          for (int dy = -1; dy <= 1; ++dy)
            for (int dx = -1; dx <= 1; ++dx)
              want += weights[dy + 1][dx + 1] *
                      in[size_t(clampRef(y + dy, 0, h - 1) * w + clampRef(x + dx, 0, w - 1))];
          edges += x == 0 || x == w - 1;
          INFO("x " << x << " y " << y);
          REQUIRE(out[size_t(y * w + x)] == want);
        }
      CHECK(edges == size_t(w == 1 ? 1 : 2) * h);
    }
  }
}

TEST_CASE("cpu: clamped sobel (examples/image) matches a C++ reference", "[cpu][clamps]") {
  const uint32_t w = 70, h = 6;
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> d(0.0f, 1.0f);
  std::vector<float> in(size_t(w) * h);
  for (auto &v : in) v = d(rng);
  auto mag = as<float>(runOne("clamps.cl", "sobel_clamped", range2D(w, h),
                              {zeros(in.size() * 4), buf(in), scalar(ScalarType::U32, w),
                               scalar(ScalarType::U32, h)})[0]);
  auto at = [&](int64_t x, int64_t y) {
    return double(in[size_t(clampRef(y, 0, h - 1) * w + clampRef(x, 0, w - 1))]);
  };
  for (int64_t y = 0; y < h; ++y)
    for (int64_t x = 0; x < w; ++x) {
      const double gx = (at(x + 1, y - 1) + 2 * at(x + 1, y) + at(x + 1, y + 1)) -
                        (at(x - 1, y - 1) + 2 * at(x - 1, y) + at(x - 1, y + 1));
      const double gy = (at(x - 1, y + 1) + 2 * at(x, y + 1) + at(x + 1, y + 1)) -
                        (at(x - 1, y - 1) + 2 * at(x, y - 1) + at(x + 1, y - 1));
      const double want = std::sqrt(gx * gx + gy * gy);
      INFO("x " << x << " y " << y);
      // float arithmetic (contracted or not) against double: a few ulp of the inputs.
      REQUIRE(std::fabs(double(mag[size_t(y * w + x)]) - want) <= 1e-5);
    }
}

TEST_CASE("cpu: clamp() builtin with argument bounds and a global offset", "[cpu][clamps]") {
  const auto in = randomClampInputs(256, 3);
  const int32_t shift = -5, lo = 10, hi = 180;
  NDRange r = range1D(200);
  r.offset[0].value = 3;
  auto out = as<int32_t>(runOne("clamps.cl", "clamp_builtin", r,
                                {zeros(200 * 4), buf(in), scalar(ScalarType::I32, uint32_t(shift)),
                                 scalar(ScalarType::I32, lo), scalar(ScalarType::I32, hi)})[0]);
  for (int64_t i = 3; i < 203; ++i) {
    INFO("i " << i);
    REQUIRE(out[size_t(i - 3)] == in[size_t(clampRef(i + shift, lo, hi))] +
                                      3 * in[size_t(clampRef(i - shift, lo, hi))]);
  }
}

TEST_CASE("cpu: unsigned min of an index that wraps inside the group", "[cpu][clamps]") {
  const auto in = randomClampInputs(16, 5);
  NDRange r = range1D(64);
  r.offset[0].value = 4294967264u; // ids 2^32 - 32 .. 2^32 + 31: the uint id wraps at 32
  auto out = as<int32_t>(
      runOne("clamps.cl", "clamp_umin_wrap", r, {zeros(64 * 4), buf(in), scalar(ScalarType::U32, 16)})[0]);
  for (uint64_t k = 0; k < 64; ++k) {
    const uint32_t i = uint32_t(4294967264u + k);
    const uint32_t j = std::min<uint32_t>(i + 3u, 15u);
    INFO("k " << k);
    REQUIRE(out[k] == in[j]);
  }
}

TEST_CASE("cpu: lower clamps of ids that wrap inside the group", "[cpu][clamps]") {
  NDRange r = range1D(64);
  r.offset[0].value = 4294967264u; // the uint id wraps after 32 work-items
  auto u = as<uint32_t>(runOne("clamps.cl", "clamp_max_wrap", r, {zeros(64 * 4)})[0]);
  for (uint64_t k = 0; k < 64; ++k) {
    INFO("k " << k);
    REQUIRE(u[k] == std::max<uint32_t>(uint32_t(4294967264u + k) + 3u, 5u));
  }
  r.offset[0].value = 2147483616u; // the int id passes INT_MAX after 32 work-items
  auto s = as<int32_t>(runOne("clamps.cl", "clamp_smax_wrap", r, {zeros(64 * 4)})[0]);
  for (uint64_t k = 0; k < 64; ++k) {
    const int32_t i = int32_t(uint32_t(2147483616u + k));
    INFO("k " << k);
    REQUIRE(s[k] == std::max<int32_t>(i, -5));
  }
}

TEST_CASE("cpu: one-sided clamps as selects", "[cpu][clamps]") {
  const auto in = randomClampInputs(100, 9);
  const int32_t n = 100, lo = 4;
  auto out = as<int32_t>(runOne("clamps.cl", "clamp_forms", range1D(100),
                                {zeros(100 * 4), buf(in), scalar(ScalarType::I32, n),
                                 scalar(ScalarType::I32, lo)})[0]);
  for (int64_t x = 0; x < n; ++x) {
    const int64_t a = std::max<int64_t>(x - 3, lo), b = std::min<int64_t>(x + 2, n - 1),
                  c = std::max<int64_t>(x - 7, 0), d = std::min<int64_t>(x + 9, n - 1);
    const int64_t e = x - 20 <= lo ? lo : 2 * (x - 20);
    INFO("x " << x);
    REQUIRE(out[size_t(x)] ==
            in[size_t(a)] + 10 * in[size_t(b)] + 100 * in[size_t(c)] + 1000 * in[size_t(d)] + 3 * e);
  }
}

TEST_CASE("cpu: clamped indices from group and local ids, small groups", "[cpu][clamps]") {
  // Groups of 16, 4 and 1 (the kernel observes them): the first and last groups that
  // pass the guard hold the edges; 112 work-items for 100 elements (the guard).
  for (uint64_t local : {16, 4, 1}) {
    DYNAMIC_SECTION("local " << local) {
      const auto in = randomClampInputs(100, 11);
      const uint32_t n = 100;
      auto out = as<int32_t>(runOne("clamps.cl", "clamp_groups", range1D(112, local),
                                    {zeros(100 * 4), buf(in), scalar(ScalarType::U32, n)})[0]);
      for (int64_t x = 0; x < n; ++x) {
        INFO("x " << x);
        REQUIRE(out[size_t(x)] == in[size_t(clampRef(x - 2, 0, n - 1))] - 7 * in[size_t(clampRef(x + 2, 0, n - 1))]);
      }
    }
  }
}
