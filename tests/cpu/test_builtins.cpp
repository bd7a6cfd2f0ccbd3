// One test per builtin family; references are computed in C++ (bit-exact for integers,
// ULP-bounded for floats).
#include "cpu_test_util.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>

using namespace cgtest;

namespace {

std::vector<float> randomFloats(size_t n, float lo, float hi, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (float &f : v) f = d(rng);
  return v;
}
std::vector<int> randomInts(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<int> v(n);
  for (int &x : v) x = int(rng());
  for (size_t i = 0; i < n && i < 8; ++i) v[i] = std::vector<int>{0, -1, 1, INT32_MIN, INT32_MAX, 31, -32, 100}[i];
  return v;
}

void checkF(float got, double want, int64_t ulps, const char *what, size_t i) {
  float w = float(want);
  bool ok = ulpDiff(got, w) <= ulps || std::fabs(double(got) - want) <= 1e-6 * std::max(1.0, std::fabs(want));
  if (!ok) FAIL(what << "[" << i << "]: got " << got << ", want " << w << " (" << ulpDiff(got, w) << " ulp)");
}

} // namespace

TEST_CASE("cpu builtins: float math, scalar", "[cpu][builtins][math]") {
  const size_t n = 256;
  auto x = randomFloats(n, -3.0f, 3.0f, 1), y = randomFloats(n, 0.5f, 2.5f, 2);
  auto out = as<float>(runOne("math.cl", "math_f32", range1D(n), {buf(x), buf(y), zeros(n * 32 * 4)})[2]);
  for (size_t i = 0; i < n; ++i) {
    double a = x[i], b = y[i];
    const float *o = &out[i * 32];
    const double want[32] = {std::sqrt(std::fabs(a)), 1.0 / std::sqrt(std::fabs(a) + 1), std::exp(a),
                             std::log(std::fabs(a) + 1), std::pow(std::fabs(a), b), std::sin(a), std::cos(a),
                             std::tan(a), std::fabs(a), std::floor(a), std::ceil(a), std::fma(a, b, 1.0),
                             a * b + 1.0, std::fmin(a, b), std::fmax(a, b), std::fmin(std::fmax(a, -1.0), 1.0),
                             a + (b - a) * 0.25, std::hypot(a, b), std::tanh(a), std::erf(a),
                             std::sqrt(std::fabs(a)), std::exp(float(a * 0.5)), std::exp2(a), std::log2(std::fabs(a) + 1),
                             std::atan2(a, b), std::cbrt(a), std::trunc(a), std::round(a), std::sin(a), std::cos(a),
                             std::fmod(a, b), std::copysign(b, a)};
    for (int k = 0; k < 32; ++k) {
      int64_t ulps = (k == 20 || k == 21 || k == 28 || k == 29) ? 8192 : 4; // native_/half_
      checkF(o[k], want[k], ulps, "math_f32", i * 32 + k);
    }
  }
}

TEST_CASE("cpu builtins: half_ math", "[cpu][builtins][math]") {
  const size_t n = 128;
  auto x = randomFloats(n, 0.1f, 3.0f, 5);
  auto out = as<float>(runOne("half_math.cl", "math_half", range1D(n), {buf(x), zeros(n * 8 * 4)})[1]);
  for (size_t i = 0; i < n; ++i) {
    double a = x[i];
    const double want[8] = {std::exp(a), std::cos(a), std::sin(a), std::sqrt(a),
                            std::log(a), 1.0 / a, 1.0 / a, 1.0 / std::sqrt(a)};
    for (int k = 0; k < 8; ++k) checkF(out[i * 8 + k], want[k], 8192, "math_half", i * 8 + k);
  }
}

TEST_CASE("cpu builtins: float4 math and double math", "[cpu][builtins][math]") {
  const size_t n = 64;
  auto x = randomFloats(n * 4, -3.0f, 3.0f, 3), y = randomFloats(n * 4, 0.5f, 2.5f, 4);
  auto out = as<float>(runOne("math.cl", "math_f32x4", range1D(n), {buf(x), buf(y), zeros(n * 32 * 4)})[2]);
  for (size_t i = 0; i < n * 4; ++i) {
    size_t v = i / 4, c = i % 4;
    double a = x[i], b = y[i];
    const double want[8] = {std::sqrt(std::fabs(a)), std::exp(a), std::fmin(a, b), std::fmin(std::fmax(a, -1.0), 1.0),
                            a + (b - a) * 0.25, std::fma(a, b, 1.0), std::sin(a), std::exp(a)};
    for (int k = 0; k < 8; ++k) checkF(out[v * 32 + k * 4 + c], want[k], k == 7 ? 8192 : 4, "math_f32x4", i);
  }
  std::vector<double> dx(n), dy(n);
  for (size_t i = 0; i < n; ++i) { dx[i] = x[i] * 1.1; dy[i] = y[i]; }
  auto d = as<double>(runOne("math.cl", "math_f64", range1D(n), {buf(dx), buf(dy), zeros(n * 8 * 8)})[2]);
  for (size_t i = 0; i < n; ++i) {
    double a = dx[i], b = dy[i];
    const double want[8] = {std::sqrt(std::fabs(a)), std::exp(a), std::log(std::fabs(a) + 1), std::pow(std::fabs(a), b),
                            std::sin(a), std::fma(a, b, 1.0), std::fmax(a, b), std::tanh(a)};
    for (int k = 0; k < 8; ++k) REQUIRE(ulpDiff(d[i * 8 + k], want[k]) <= 4);
  }
}

namespace {
int32_t satAdd(int64_t a, int64_t b) { return int32_t(std::clamp<int64_t>(a + b, INT32_MIN, INT32_MAX)); }
uint32_t rotl(uint32_t v, uint32_t s) { s &= 31; return s ? (v << s) | (v >> (32 - s)) : v; }
int clz32(uint32_t v) { return v ? __builtin_clz(v) : 32; }
int32_t mul24(int32_t a, int32_t b) { return int32_t(int64_t(a << 8 >> 8) * int64_t(b << 8 >> 8)); }
} // namespace

TEST_CASE("cpu builtins: integer", "[cpu][builtins][integer]") {
  const size_t n = 256;
  auto x = randomInts(n, 5), y = randomInts(n, 6);
  auto out = as<int32_t>(runOne("integer.cl", "int_ops", range1D(n), {buf(x), buf(y), zeros(n * 16 * 4)})[2]);
  for (size_t i = 0; i < n; ++i) {
    int64_t a = x[i], b = y[i];
    const int32_t want[16] = {
        int32_t(uint32_t(a < 0 ? -a : a)), int32_t(std::min(a, b)), int32_t(std::max(a, b)),
        int32_t(std::clamp<int64_t>(a, -100, 100)), int32_t((a * b) >> 32), int32_t(rotl(uint32_t(a), uint32_t(b))),
        __builtin_popcount(uint32_t(a)), clz32(uint32_t(a)), satAdd(a, b), satAdd(a, -b),
        mul24(int32_t(a & 0x7fffff), int32_t(b & 0x7fff)) + 7, mul24(int32_t(a & 0x7fffff), int32_t(b & 0x7fff)),
        int32_t((a + b) >> 1), int32_t((a + b + 1) >> 1), int32_t(uint32_t(a > b ? a - b : b - a)),
        int32_t(uint32_t((a * b) >> 32) + 3u)};
    for (int k = 0; k < 16; ++k) {
      INFO("int_ops item " << i << " result " << k << " a=" << a << " b=" << b);
      REQUIRE(out[i * 16 + k] == want[k]);
    }
  }
  auto v = as<int32_t>(runOne("integer.cl", "int_ops_vec", range1D(n / 4), {buf(x), buf(y), zeros(n * 4 * 4)})[2]);
  for (size_t i = 0; i < n; ++i) {
    size_t q = i / 4, c = i % 4;
    int64_t a = x[i], b = y[i];
    REQUIRE(v[q * 16 + 0 + c] == int32_t(std::max(a, b)));
    REQUIRE(v[q * 16 + 4 + c] == satAdd(a, b));
    REQUIRE(v[q * 16 + 8 + c] == __builtin_popcount(uint32_t(a)));
    REQUIRE(v[q * 16 + 12 + c] == int32_t(std::clamp<int64_t>(a, -5, 5)));
  }
  auto l = as<int64_t>(runOne("integer.cl", "int_small_long", range1D(n), {buf(x), buf(y), zeros(n * 4 * 8)})[2]);
  for (size_t i = 0; i < n; ++i) {
    uint8_t ua = uint8_t(x[i]), ub = uint8_t(y[i]);
    int16_t sa = int16_t(x[i]), sb = int16_t(y[i]);
    int64_t la = int64_t(x[i]) * 1000003, lb = int64_t(y[i]) * -999983;
    REQUIRE(l[i * 4 + 0] == std::min(int(ua) + int(ub), 255));
    REQUIRE(l[i * 4 + 1] == std::clamp(int(sa) - int(sb), -32768, 32767));
    REQUIRE(l[i * 4 + 2] == int64_t((__int128)la * lb >> 64));
    REQUIRE(uint64_t(l[i * 4 + 3]) == uint64_t((unsigned __int128)uint64_t(la) * uint64_t(lb) >> 64));
  }
}

TEST_CASE("cpu builtins: relational", "[cpu][builtins][relational]") {
  const size_t n = 64;
  auto x = randomFloats(n * 4, -4.0f, 4.0f, 7), y = randomFloats(n * 4, -4.0f, 4.0f, 8);
  x[0] = NAN; x[1] = INFINITY; x[2] = -INFINITY; x[3] = -0.0f; y[4] = x[4]; x[5] = NAN;
  auto out = as<int32_t>(runOne("relational.cl", "rel_ops", range1D(n), {buf(x), buf(y), zeros(n * 12 * 4)})[2]);
  auto bits = [](float f) { int32_t u; std::memcpy(&u, &f, 4); return u; };
  for (size_t i = 0; i < n; ++i) {
    float a = x[i], b = y[i];
    int32_t v[4] = {int32_t(a), int32_t(b), -1, 0};
    const int32_t want[12] = {std::isnan(a), std::isinf(a), std::isfinite(a), std::signbit(a), a == b, a < b, a > b,
                              std::isnan(a) || std::isnan(b), bits(a < b ? b : a),
                              (v[0] < 0 || v[1] < 0 || v[2] < 0 || v[3] < 0), (v[0] >= 0 && v[1] >= 0 && v[2] >= 0 && v[3] >= 0),
                              (bits(a) & ~0xffff) | (bits(b) & 0xffff)};
    for (int k = 0; k < 12; ++k) {
      INFO("rel_ops item " << i << " result " << k);
      if (k == 1 && std::isinf(a)) REQUIRE(out[i * 12 + k] == 1);
      else if (!(std::isnan(a) && k == 1)) REQUIRE(out[i * 12 + k] == want[k]);
    }
  }
  auto vout = as<int32_t>(runOne("relational.cl", "rel_vec", range1D(n), {buf(x), buf(y), zeros(n * 12 * 4)})[2]);
  for (size_t i = 0; i < n; ++i) {
    bool anyS = false, allS = true, anyG = false, allF = true;
    for (int c = 0; c < 4; ++c) {
      float a = x[i * 4 + c], b = y[i * 4 + c];
      REQUIRE(vout[i * 12 + c] == (std::isnan(a) ? -1 : 0));
      REQUIRE(vout[i * 12 + 4 + c] == bits(a < b ? b : a));
      anyS |= std::signbit(a); allS &= std::signbit(a); anyG |= a > b; allF &= std::isfinite(a);
    }
    REQUIRE(vout[i * 12 + 8] == int(anyS));
    REQUIRE(vout[i * 12 + 9] == int(allS));
    REQUIRE(vout[i * 12 + 10] == int(anyG));
    REQUIRE(vout[i * 12 + 11] == int(allF));
  }
}

TEST_CASE("cpu builtins: vload/vstore", "[cpu][builtins][vload]") {
  const size_t n = 16;
  auto in = randomFloats(n * 33, -10, 10, 9);
  auto out = as<float>(runOne("vload.cl", "vload_float", range1D(n), {buf(in), zeros(n * 33 * 4)})[1]);
  for (size_t i = 0; i < in.size(); ++i) REQUIRE(out[i] == in[i] * 2.0f);
  std::vector<int> ii(6000);
  for (size_t i = 0; i < ii.size(); ++i) ii[i] = int(i * 7 + 3);
  auto o = as<int>(runOne("vload.cl", "vload_int_offsets", range1D(50), {buf(ii), zeros(6000 * 4)})[1]);
  for (size_t i = 0; i < 200; ++i) REQUIRE(o[i] == ii[i] + 1);
  for (size_t i = 1000; i < 1150; ++i) REQUIRE(o[i] == ii[i] - 1);
  for (size_t i = 2000; i < 2800; ++i) REQUIRE(o[i] == (ii[i] ^ 5));
  for (size_t i = 4000; i < 4400; ++i) REQUIRE(o[i] == ii[i] * 3);
  for (size_t i = 5000; i < 5100; ++i) REQUIRE(o[i] == ii[i] << 1);
  auto lin = randomFloats(64 * 4, -1, 1, 10);
  auto lo = as<float>(runOne("vload.cl", "vload_local", range1D(64, 16), {buf(lin), zeros(64 * 16), localMem(16 * 16)})[1]);
  for (size_t g = 0; g < 4; ++g)
    for (size_t l = 0; l < 16; ++l)
      for (int c = 0; c < 4; ++c) REQUIRE(lo[(g * 16 + l) * 4 + c] == lin[(g * 16 + 15 - l) * 4 + c]);
}

TEST_CASE("cpu builtins: conversions", "[cpu][builtins][convert]") {
  std::vector<float> x = {0.5f, 1.5f, 2.5f, -0.5f, -1.5f, -2.7f, 3.2f, 1e10f, -1e10f, NAN, 255.5f, 300.0f,
                          -129.3f, 70000.0f, -70000.0f, 0.0f, 2147483520.0f, 4e9f, -3.99f, 65535.4f};
  const size_t n = x.size();
  auto out = as<int32_t>(runOne("convert.cl", "conv_from_float", range1D(n), {buf(x), zeros(n * 12 * 4)})[1]);
  auto sat = [](double v, double lo, double hi) -> int64_t { return std::isnan(v) ? 0 : v <= lo ? int64_t(lo) : v >= hi ? int64_t(hi) : int64_t(v); };
  for (size_t i = 0; i < n; ++i) {
    double a = x[i];
    INFO("conv_from_float item " << i << " x=" << a);
    bool inInt = !std::isnan(a) && a > -2147483648.0 && a < 2147483647.0;
    if (inInt) {
      REQUIRE(out[i * 12 + 0] == int32_t(std::trunc(a)));
      REQUIRE(out[i * 12 + 2] == int32_t(std::nearbyint(a)));
      REQUIRE(out[i * 12 + 3] == int32_t(std::floor(a)));
      REQUIRE(out[i * 12 + 4] == int32_t(std::ceil(a)));
    }
    REQUIRE(out[i * 12 + 1] == sat(std::trunc(a), INT32_MIN, INT32_MAX));
    REQUIRE(out[i * 12 + 5] == sat(std::nearbyint(a), INT32_MIN, INT32_MAX));
    REQUIRE(out[i * 12 + 6] == sat(std::trunc(a), 0, 255));
    REQUIRE(out[i * 12 + 7] == sat(std::floor(a), -128, 127));
    REQUIRE(out[i * 12 + 8] == sat(std::trunc(a), 0, 65535));
    int32_t b; std::memcpy(&b, &x[i], 4);
    REQUIRE(out[i * 12 + 9] == b);
    REQUIRE(out[i * 12 + 10] == sat(std::trunc(double(float(a * 1000.0f))), -32768, 32767));
    REQUIRE(uint32_t(out[i * 12 + 11]) == uint32_t(sat(std::trunc(a), 0, 4294967295.0)));
  }
  std::vector<int32_t> xi = {0, 1, -1, 16777217, -16777217, 2147483647, INT32_MIN, 123456789, -987654321, 300, -300, 65536};
  auto r = runOne("convert.cl", "conv_from_int", range1D(xi.size()), {buf(xi), zeros(xi.size() * 16), zeros(xi.size() * 16)});
  auto f = as<float>(r[1]);
  auto oi = as<int32_t>(r[2]);
  for (size_t i = 0; i < xi.size(); ++i) {
    double a = xi[i];
    float ne = float(a);
    float dn = double(ne) > a ? std::nextafter(ne, -INFINITY) : ne;
    float up = double(ne) < a ? std::nextafter(ne, INFINITY) : ne;
    INFO("conv_from_int item " << i << " x=" << xi[i]);
    REQUIRE(f[i * 4 + 0] == ne);
    REQUIRE(f[i * 4 + 1] == (a >= 0 ? dn : up));
    REQUIRE(f[i * 4 + 2] == up);
    REQUIRE(f[i * 4 + 3] == dn);
    REQUIRE(oi[i * 4 + 0] == std::clamp(xi[i], 0, 255));
    REQUIRE(oi[i * 4 + 1] == std::clamp(xi[i], -128, 127));
    REQUIRE(oi[i * 4 + 2] == int16_t(xi[i]));
    REQUIRE(oi[i * 4 + 3] == std::clamp(xi[i], 0, 65535));
  }
  std::vector<float> v4 = {0.5f, 1.5f, -2.5f, 3e10f, -7.7f, 260.0f, NAN, 128.5f};
  auto cv = as<int32_t>(runOne("convert.cl", "conv_vec", range1D(2), {buf(v4), zeros(64)})[1]);
  for (size_t i = 0; i < 8; ++i) {
    size_t q = i / 4, c = i % 4;
    REQUIRE(cv[q * 8 + c] == sat(std::nearbyint(double(v4[i])), INT32_MIN, INT32_MAX));
    REQUIRE(cv[q * 8 + 4 + c] == sat(std::trunc(double(v4[i])), 0, 255));
  }
}

TEST_CASE("cpu builtins: atomics on global and local memory", "[cpu][builtins][atomics]") {
  const size_t n = 1 << 16;
  const uint32_t nbins = 37;
  std::vector<uint32_t> data(n);
  std::mt19937 rng(11);
  for (uint32_t &d : data) d = rng();
  std::vector<int> want(nbins, 0);
  for (uint32_t d : data) want[d % nbins]++;
  auto g = as<int>(runOne("atomics.cl", "hist_global", range1D(n), {buf(data), zeros(nbins * 4), scalar(ScalarType::U32, nbins)})[1]);
  REQUIRE(g == want);
  auto l = as<int>(runOne("atomics.cl", "hist_local", range1D(n, 128),
                          {buf(data), zeros(nbins * 4), localMem(nbins * 4), scalar(ScalarType::U32, nbins)})[1]);
  REQUIRE(l == want);
  auto fl = as<int>(runOne("fences.cl", "hist_fenced", range1D(n, 64),
                           {buf(data), zeros(nbins * 4), localMem(nbins * 4), scalar(ScalarType::U32, nbins)})[1]);
  REQUIRE(fl == want);

  const int m = 1000;
  std::vector<int> c = {0, 0, INT32_MIN, INT32_MAX, 0, -1, 0, 0, 0, 0};
  auto r = runOne("atomics.cl", "atomic_ops", range1D(m), {buf(c), zeros(4)});
  auto ci = as<int>(r[0]);
  int64_t sum = int64_t(m) * (m - 1) / 2;
  int orBits = 0, xr = 0;
  for (int i = 0; i < m; ++i) { orBits |= 1 << (i % 31); xr ^= i; }
  REQUIRE(ci[0] == sum);
  REQUIRE(ci[1] == -sum);
  REQUIRE(ci[2] == m - 1);
  REQUIRE(ci[3] == 0);
  REQUIRE(ci[4] == orBits);
  REQUIRE(ci[5] == (-1 & ~orBits));
  REQUIRE(ci[6] == xr);
  REQUIRE(ci[7] == -m);
  REQUIRE(ci[8] == 2 * m);
  REQUIRE(ci[9] >= 1);
  REQUIRE(ci[9] <= m);
  uint32_t umax = 0;
  for (int i = 0; i < m; ++i) umax = std::max<uint64_t>(umax, uint32_t(i) * 0x10000001u);
  REQUIRE(as<uint32_t>(r[1])[0] == umax);
}

TEST_CASE("cpu builtins: 64-bit atomics (Int64Atomics SPIR-V)", "[cpu][builtins][atomics]") {
  const int64_t m = 512;
  std::vector<int64_t> c(8, 7);
  std::vector<uint64_t> u = {3, 3, 3, 3};
  auto r = runOne("atomics64.cl", "atomics64", range1D(m), {buf(c), buf(u)});
  auto ci = as<int64_t>(r[0]);
  auto cu = as<uint64_t>(r[1]);
  int64_t add = 7, sub = 7, mx = 7, mn = 7, orv = 7, andv = 7, xr = 7;
  uint64_t umax = 3, cas = 3;
  for (int64_t i = 0; i < m; ++i) {
    add += i * 0x100000001LL;
    sub -= i << 33;
    mx = std::max<int64_t>(mx, i * -3000000000LL);
    mn = std::min<int64_t>(mn, i * -3000000000LL);
    orv |= int64_t(1) << (i % 63);
    andv &= ~(int64_t(1) << (i % 63));
    xr ^= i * 0x123456789LL;
    umax = std::max<uint64_t>(umax, uint64_t(i) * 0x9000000000000001ULL);
    cas += uint64_t(i) * 0x100000000ULL;
  }
  CHECK(ci == std::vector<int64_t>{add, sub, mx, mn, orv, andv, xr, 7 + m});
  CHECK(cu == std::vector<uint64_t>{3 - uint64_t(m), umax, cas, 3});

  std::vector<int64_t> in(512);
  int64_t sum = 0;
  for (size_t i = 0; i < in.size(); ++i) sum += in[i] = (int64_t(i) - 200) * 40000000003LL;
  auto s = as<int64_t>(runOne("atomics64.cl", "atomics64_local", range1D(512, 128), {buf(in), zeros(8)})[1]);
  CHECK(s[0] == sum);
}

TEST_CASE("cpu builtins: float tanh within 5 ulp over a sweep of floats", "[cpu][builtins][math]") {
  // tanh (float) is the backend's own vectorizable code, not libm: every 4099th bit
  // pattern of the positive floats, negated too, and the special values.
  std::vector<float> x;
  for (uint32_t b = 0; b < 0x7f800000u; b += 4099) {
    float f;
    std::memcpy(&f, &b, 4);
    x.push_back(f);
    x.push_back(-f);
  }
  for (float f : {0.0f, -0.0f, 0.625f, -0.625f, 0.62499994f, 9.0f, 10.0f, 88.0f, 1e-30f,
                  std::numeric_limits<float>::denorm_min(), std::numeric_limits<float>::infinity(),
                  -std::numeric_limits<float>::infinity()})
    x.push_back(f);
  x.push_back(std::numeric_limits<float>::quiet_NaN());
  const size_t n = x.size();
  auto out = as<float>(runOne("math.cl", "tanh_f32", range1D(n), {buf(x), zeros(n * 4)})[1]);
  for (size_t i = 0; i + 1 < n; ++i) {
    const float want = float(std::tanh(double(x[i])));
    if (ulpDiff(out[i], want) > 5)
      FAIL("tanh(" << x[i] << "): got " << out[i] << ", want " << want << " (" << ulpDiff(out[i], want) << " ulp)");
    if (std::signbit(out[i]) != std::signbit(want)) FAIL("tanh(" << x[i] << "): sign of " << out[i]);
  }
  CHECK(std::isnan(out[n - 1]));
}

namespace {

// Every finite non-negative half in increasing order; the index is the half's bits.
const std::vector<double> &halfValues() {
  static const std::vector<double> v = [] {
    std::vector<double> r(0x7c00);
    for (uint32_t h = 0; h < 0x7c00; ++h) {
      const int e = int(h >> 10), m = int(h & 0x3ff);
      r[h] = e ? std::ldexp(1024 + m, e - 25) : std::ldexp(m, -24);
    }
    return r;
  }();
  return v;
}

// Reference float/double -> half bits (OpenCL C 1.2 6.12.7, IEEE 754 rounding) in mode
// 0 (to nearest even), 1 (toward zero), 2 (toward +inf), 3 (toward -inf): a search in the
// table of all halves, independent of the backend's bit manipulation. `nan`: the bits a
// NaN input gives (sign, quiet bit, top payload bits: the backend's documented choice).
uint16_t refToHalf(double x, int mode, uint16_t nan) {
  if (std::isnan(x)) return nan;
  const bool neg = std::signbit(x);
  const uint16_t sign = neg ? 0x8000 : 0;
  const double a = std::fabs(x);
  const bool up = (mode == 2 && !neg) || (mode == 3 && neg); // away from zero
  if (std::isinf(a)) return sign | 0x7c00;
  if (a > 65504.0) // 65520 is halfway between 65504 and 2^16, which rounds to even: inf
    return sign | (mode == 0 ? (a >= 65520.0 ? 0x7c00 : 0x7bff) : up ? 0x7c00 : 0x7bff);
  const std::vector<double> &v = halfValues();
  const size_t lo = size_t(std::upper_bound(v.begin(), v.end(), a) - v.begin()) - 1;
  if (v[lo] == a) return uint16_t(sign | lo);
  const size_t hi = lo + 1;
  size_t pick = up ? hi : lo;
  if (mode == 0) { // both sums are exact: halves have 11 significant bits
    const double twice = 2 * a, sum = v[lo] + v[hi];
    pick = twice < sum ? lo : twice > sum ? hi : (lo % 2 == 0 ? lo : hi);
  }
  return uint16_t(sign | pick);
}

uint16_t nanHalf(uint64_t bits, int mantissaBits, bool neg) {
  return uint16_t((neg ? 0x8000 : 0) | 0x7e00 | ((bits >> (mantissaBits - 10)) & 0x1ff));
}
uint16_t refFloatToHalf(float x, int mode) {
  uint32_t u;
  std::memcpy(&u, &x, 4);
  return refToHalf(x, mode, nanHalf(u, 23, u >> 31));
}
uint16_t refDoubleToHalf(double x, int mode) {
  uint64_t u;
  std::memcpy(&u, &x, 8);
  return refToHalf(x, mode, nanHalf(u, 52, u >> 63));
}

float refHalfToFloat(uint16_t h) {
  const uint32_t sign = uint32_t(h & 0x8000) << 16, m = h & 0x3ff;
  uint32_t bits = sign | 0x7f800000u | (m << 13); // inf and NaN keep their payload
  if ((h & 0x7c00) != 0x7c00) {
    float f = float(halfValues()[h & 0x7fff]);
    std::memcpy(&bits, &f, 4);
    bits |= sign;
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

float bitsToFloat(uint32_t b) {
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}
double bitsToDouble(uint64_t b) {
  double d;
  std::memcpy(&d, &b, 8);
  return d;
}

// The halves' neighbourhoods: each finite half, the midpoints to the next one, and their
// nearest floats on both sides, both signs; then the special values.
std::vector<float> halfBoundaryFloats() {
  const std::vector<double> &v = halfValues();
  std::vector<float> x;
  for (size_t h = 0; h < v.size(); ++h) {
    const double next = h + 1 < v.size() ? v[h + 1] : 65536.0;
    for (double p : {v[h], (v[h] + next) / 2}) {
      const float f = float(p); // exact: 12 significant bits at most
      for (float g : {f, std::nextafter(f, 0.0f), std::nextafter(f, 1e9f)}) {
        x.push_back(g);
        x.push_back(-g);
      }
    }
  }
  for (uint32_t b : {0x00000000u, 0x80000000u, 0x00000001u, 0x807fffffu, 0x00800000u, 0x7f7fffffu, 0xff7fffffu,
                     0x7f800000u, 0xff800000u, 0x7fc00000u, 0xffc00000u, 0x7f800001u, 0xff812345u, 0x7fffe000u,
                     0x7fbfffffu, 0x33000000u, 0x33000001u, 0xb2ffffffu, 0x477ff000u, 0x477fefffu, 0x47800000u})
    x.push_back(bitsToFloat(b));
  std::mt19937 rng(7);
  for (int i = 0; i < 65536; ++i) x.push_back(bitsToFloat(rng()));
  return x;
}

void checkHalves(const std::vector<uint16_t> &got, size_t i, uint16_t want, int mode, const char *what,
                 double input) {
  if (got[i] != want)
    FAIL(what << " mode " << mode << " of " << input << " (" << std::hexfloat << input << std::defaultfloat
              << "): got 0x" << std::hex << got[i] << ", want 0x" << want << std::dec);
}

} // namespace

TEST_CASE("cpu builtins: half conversions are exact in every rounding mode", "[cpu][builtins][half]") {
  // vstore_half (rte), _rte, _rtz, _rtp, _rtn, per item 5 halves; against refToHalf.
  const int modeOf[5] = {0, 0, 1, 2, 3};
  SECTION("from float") {
    const std::vector<float> x = halfBoundaryFloats();
    const size_t n = x.size();
    auto h = as<uint16_t>(runOne("half_convert.cl", "half_from_float", range1D(n), {buf(x), zeros(n * 10)})[1]);
    for (size_t i = 0; i < n; ++i)
      for (int k = 0; k < 5; ++k) checkHalves(h, 5 * i + k, refFloatToHalf(x[i], modeOf[k]), modeOf[k], "float", x[i]);
  }
  SECTION("from double, rounded once") {
    // The floats above, plus doubles a float cannot hold: a hair off each half and each
    // midpoint (rounding through float first would get these wrong), and double specials.
    std::vector<double> x;
    for (float f : halfBoundaryFloats()) x.push_back(f);
    const std::vector<double> &v = halfValues();
    for (size_t h = 0; h < v.size(); ++h) {
      const double mid = (v[h] + (h + 1 < v.size() ? v[h + 1] : 65536.0)) / 2;
      for (double d : {v[h] * (1 + 0x1p-40), v[h] * (1 - 0x1p-40), mid * (1 + 0x1p-40), mid * (1 - 0x1p-40)}) {
        x.push_back(d);
        x.push_back(-d);
      }
    }
    for (uint64_t b : {0x0000000000000001ull, 0x8000000000000001ull, 0x0010000000000000ull, 0x7fefffffffffffffull,
                       0xffefffffffffffffull, 0x7ff0000000000000ull, 0xfff0000000000000ull, 0x7ff0000000000001ull,
                       0xfff8000000000000ull, 0x7ff4000000000000ull, 0x3e70000000000000ull, 0x3e70000000000001ull,
                       0x3e6fffffffffffffull, 0x40effe0000000000ull, 0x40effdffffffffffull, 0x40effe0000000001ull})
      x.push_back(bitsToDouble(b));
    const size_t n = x.size();
    auto h = as<uint16_t>(runOne("half_convert.cl", "half_from_double", range1D(n), {buf(x), zeros(n * 10)})[1]);
    for (size_t i = 0; i < n; ++i)
      for (int k = 0; k < 5; ++k)
        checkHalves(h, 5 * i + k, refDoubleToHalf(x[i], modeOf[k]), modeOf[k], "double", x[i]);
  }
  SECTION("every half to float") {
    std::vector<uint16_t> h(65536);
    for (size_t i = 0; i < h.size(); ++i) h[i] = uint16_t(i);
    auto f = as<uint32_t>(runOne("half_convert.cl", "half_to_float", range1D(h.size()), {buf(h), zeros(65536 * 4)})[1]);
    for (size_t i = 0; i < h.size(); ++i) {
      float want = refHalfToFloat(uint16_t(i));
      uint32_t w;
      std::memcpy(&w, &want, 4);
      if (f[i] != w) FAIL("vload_half(0x" << std::hex << i << "): got 0x" << f[i] << ", want 0x" << w << std::dec);
    }
  }
  SECTION("vector forms") {
    const size_t n = 512; // items, 4 floats each: large, small and tiny magnitudes
    std::vector<float> x = randomFloats(n * 4, -70000.0f, 70000.0f, 11);
    for (size_t i = 0; i < x.size(); i += 3) x[i] *= 1e-9f;
    auto out = runOne("half_convert.cl", "half_vectors", range1D(n), {buf(x), zeros(n * 16), zeros(n * 32)});
    auto h = as<uint16_t>(out[1]);
    auto back = as<float>(out[2]);
    for (size_t i = 0; i < n; ++i) {
      for (int k = 0; k < 4; ++k) {
        const uint16_t rtp = refFloatToHalf(x[4 * i + k], 2), rtn = refFloatToHalf(x[4 * i + k], 3);
        checkHalves(h, 8 * i + k, rtp, 2, "vstore_half4_rtp", x[4 * i + k]);
        CHECK(back[8 * i + k] == refHalfToFloat(rtp));
        if (k == 3) continue;
        checkHalves(h, 8 * i + 4 + k, rtn, 3, "vstorea_half3_rtn", x[4 * i + k]);
        CHECK(back[8 * i + 4 + k] == refHalfToFloat(rtn));
      }
      CHECK(h[8 * i + 7] == 0); // vstorea_half3 leaves the fourth half alone
      CHECK(back[8 * i + 7] == 0.0f);
    }
  }
}
