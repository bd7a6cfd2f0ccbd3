// Element-wise comparison with relative/absolute/ULP tolerances (--check, compare).
#include "common.h"

#include "cgraph/runtime/scalar_text.h"

#include <cmath>
#include <cstring>

namespace cgraph::cgrun {

namespace {

uint64_t load(const uint8_t *p, uint32_t size) {
  uint64_t v = 0;
  std::memcpy(&v, p, size);
  return v;
}

double toDouble(uint64_t bits, ScalarType t) {
  switch (t) {
  case ScalarType::F16: return double(rt::halfBitsToFloat(uint16_t(bits)));
  case ScalarType::F32: {
    float f;
    uint32_t u = uint32_t(bits);
    std::memcpy(&f, &u, 4);
    return double(f);
  }
  case ScalarType::F64: {
    double d;
    std::memcpy(&d, &bits, 8);
    return d;
  }
  default: break;
  }
  const uint32_t size = scalarSize(t);
  const bool isSigned = t == ScalarType::I8 || t == ScalarType::I16 || t == ScalarType::I32 ||
                        t == ScalarType::I64;
  if (isSigned) return double(int64_t(bits << (64 - size * 8)) >> (64 - size * 8));
  return double(bits);
}

// Distance in representable values: map sign-magnitude floats onto a monotonic integer
// line, so that +0 and -0 are 0 apart and adjacent floats 1 apart.
uint64_t ulpDistance(uint64_t a, uint64_t b, uint32_t size) {
  const uint64_t signBit = uint64_t(1) << (size * 8 - 1);
  auto ordered = [&](uint64_t x) -> int64_t {
    int64_t mag = int64_t(x & (signBit - 1));
    return (x & signBit) ? -mag : mag;
  };
  const int64_t oa = ordered(a), ob = ordered(b);
  return oa > ob ? uint64_t(oa - ob) : uint64_t(ob - oa);
}

} // namespace

CompareResult compareElements(const uint8_t *got, const uint8_t *expected, uint64_t bytes,
                              ScalarType t, const Tolerance &tol) {
  CompareResult r;
  const uint32_t item = scalarSize(t);
  r.elements = bytes / item;
  for (uint64_t i = 0; i < r.elements; ++i) {
    const uint64_t gb = load(got + i * item, item), eb = load(expected + i * item, item);
    if (gb == eb) continue;
    const double g = toDouble(gb, t), e = toDouble(eb, t);
    bool ok;
    if (isFloat(t)) {
      if (std::isnan(g) && std::isnan(e)) continue;
      const double err = std::fabs(g - e);
      const uint64_t ulps = ulpDistance(gb, eb, item);
      if (std::isfinite(err)) r.maxAbsErr = std::max(r.maxAbsErr, err);
      r.maxUlp = std::max(r.maxUlp, ulps);
      ok = (tol.relAbsUsed && err <= tol.atol + tol.rtol * std::fabs(e)) ||
           (tol.ulp >= 0 && ulps <= uint64_t(tol.ulp));
    } else {
      const double err = std::fabs(g - e);
      r.maxAbsErr = std::max(r.maxAbsErr, err);
      ok = tol.relAbsUsed && err <= tol.atol;
    }
    if (!ok && r.ok) {
      r.ok = false;
      r.firstBad = i;
      r.gotText = rt::formatScalarBits(gb, t);
      r.expectedText = rt::formatScalarBits(eb, t);
      r.message = "element " + std::to_string(i) + " differs: " + r.gotText + " vs " + r.expectedText;
    }
  }
  const uint64_t tail = r.elements * item;
  if (r.ok && std::memcmp(got + tail, expected + tail, size_t(bytes - tail)) != 0) {
    r.ok = false;
    r.firstBad = r.elements;
    r.message = "trailing bytes past element " + std::to_string(r.elements) + " differ";
  }
  return r;
}

} // namespace cgraph::cgrun
