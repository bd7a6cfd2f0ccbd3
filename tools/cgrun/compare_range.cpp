// How cgrun compare judges one range of a slot (compareRange, common.h): element by
// element within --rtol/--atol/--ulp, or by the relative L2 norm of the difference.
#include "common.h"

#include "cgraph/runtime/scalar_text.h"

#include <cmath>
#include <cstdio>
#include <cstring>

namespace cgraph::cgrun {

namespace {

constexpr uint64_t kNoneU64 = ~uint64_t(0);

double floatAt(const uint8_t *p, uint64_t i, ScalarType t) {
  if (t == ScalarType::F64) {
    double d;
    std::memcpy(&d, p + i * 8, 8);
    return d;
  }
  if (t == ScalarType::F16) {
    uint16_t h;
    std::memcpy(&h, p + i * 2, 2);
    return double(rt::halfBitsToFloat(h));
  }
  float f;
  std::memcpy(&f, p + i * 4, 4);
  return double(f);
}

std::string valueText(const uint8_t *p, uint64_t i, ScalarType t) {
  const uint32_t size = scalarSize(t);
  uint64_t bits = 0;
  std::memcpy(&bits, p + i * size, size);
  return rt::formatScalarBits(bits, t);
}

std::string fmt(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.3g", v);
  return b;
}

} // namespace

Verdict compareRange(const uint8_t *a, const uint8_t *b, uint64_t bytes, uint64_t firstElement,
                     ScalarType t, const CompareOptions &c, const Tolerance &tol) {
  Verdict v;
  v.type = t;
  const uint32_t item = scalarSize(t);
  v.elements = bytes / item;
  v.j = {{"type", scalarName(t)}, {"elements", v.elements}};
  if (c.norm == "l2" && isFloat(t)) {
    double diff2 = 0, ref2 = 0, maxErr = -1;
    uint64_t worst = 0, nanAt = kNoneU64;
    for (uint64_t i = 0; i < v.elements; ++i) {
      const double x = floatAt(a, i, t), y = floatAt(b, i, t);
      if (std::isnan(x) || std::isnan(y)) {
        if (!(std::isnan(x) && std::isnan(y)) && nanAt == kNoneU64) nanAt = i;
        continue;
      }
      const double d = x == y ? 0.0 : y - x; // equal infinities differ by 0, not NaN
      diff2 += d * d;
      ref2 += x * x;
      if (std::fabs(d) > maxErr || !std::isfinite(d)) {
        maxErr = std::fabs(d);
        worst = i;
      }
    }
    const double diff = std::sqrt(diff2), ref = std::sqrt(ref2);
    const double rel = ref > 0 ? diff / ref : (diff > 0 ? INFINITY : 0.0);
    const bool normOk = std::isfinite(diff) && diff <= tol.atol + tol.rtol * ref;
    v.ok = normOk && nanAt == kNoneU64;
    v.j["norm"] = {{"kind", "l2"}, {"difference", diff}, {"reference", ref}, {"relative", rel}};
    if (maxErr >= 0) {
      v.j["max_abs_err"] = maxErr;
      v.j["worst"] = {{"element", firstElement + worst},
                      {"values", {valueText(a, worst, t), valueText(b, worst, t)}}};
    }
    if (nanAt != kNoneU64) {
      v.j["nan_mismatch"] = {{"element", firstElement + nanAt},
                             {"values", {valueText(a, nanAt, t), valueText(b, nanAt, t)}}};
      v.detail = "element " + std::to_string(firstElement + nanAt) + " is NaN on one side only: " +
                 valueText(a, nanAt, t) + " vs " + valueText(b, nanAt, t);
    } else if (!normOk) {
      v.detail = "l2 norm of the difference " + fmt(diff) + ", of the reference " + fmt(ref) +
                 ", relative " + fmt(rel) + " > rtol " + fmt(tol.rtol) + " (largest difference at element " +
                 std::to_string(firstElement + worst) + ": " + valueText(a, worst, t) + " vs " +
                 valueText(b, worst, t) + ")";
    }
    v.j["ok"] = v.ok;
    return v;
  }
  // Element by element; compareElements(got, expected) measures against `expected`,
  // the reference side.
  CompareResult r = compareElements(b, a, bytes, t, tol);
  v.ok = r.ok;
  v.j["max_abs_err"] = r.maxAbsErr;
  if (isFloat(t)) v.j["max_ulp"] = r.maxUlp;
  v.j["ok"] = r.ok;
  if (!r.ok) {
    if (r.gotText.empty()) {
      v.detail = r.message;
    } else {
      v.detail = "element " + std::to_string(firstElement + r.firstBad) + " differs: " + r.expectedText +
                 " vs " + r.gotText;
      v.j["first_bad"] = {{"element", firstElement + r.firstBad}, {"values", {r.expectedText, r.gotText}}};
    }
  }
  return v;
}

} // namespace cgraph::cgrun
