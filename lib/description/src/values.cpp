#include "values.h"

#include <cfloat>
#include <cmath>
#include <cstring>
#include <limits>

namespace cgraph::desc {

uint16_t toHalf(double d) {
  float f = static_cast<float>(d);
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t exp = (x >> 23) & 0xFFu;
  uint32_t mant = x & 0x7FFFFFu;
  if (exp == 0xFF) return uint16_t(sign | 0x7C00u | (mant ? 0x200u : 0u)); // inf / nan
  int e = int(exp) - 127 + 15;
  if (e >= 31) return uint16_t(sign | 0x7C00u);
  if (e <= 0) {
    if (e < -10) return uint16_t(sign);
    mant |= 0x800000u;
    uint32_t shift = uint32_t(14 - e);
    uint32_t h = mant >> shift;
    uint32_t rem = mant & ((1u << shift) - 1u);
    uint32_t half = 1u << (shift - 1);
    if (rem > half || (rem == half && (h & 1u))) ++h;
    return uint16_t(sign | h);
  }
  uint32_t h = (uint32_t(e) << 10) | (mant >> 13);
  uint32_t rem = mant & 0x1FFFu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) ++h; // may carry into the exponent: fine
  return uint16_t(sign | h);
}

namespace {

bool isFloatType(ScalarType t) {
  return t == ScalarType::F16 || t == ScalarType::F32 || t == ScalarType::F64;
}
bool isSignedType(ScalarType t) {
  return t == ScalarType::I8 || t == ScalarType::I16 || t == ScalarType::I32 || t == ScalarType::I64;
}

} // namespace

std::string encodeScalar(ScalarType t, const JValue &v, uint64_t *bits) {
  const std::string tn = scalarName(t);
  if (isFloatType(t)) {
    double d = 0;
    if (v.isString()) {
      if (v.text == "inf") d = std::numeric_limits<double>::infinity();
      else if (v.text == "-inf") d = -std::numeric_limits<double>::infinity();
      else if (v.text == "nan") d = std::numeric_limits<double>::quiet_NaN();
      else return "expected a number of type " + tn + ", found string '" + v.text + "'";
    } else if (!v.isNumber()) {
      return std::string("expected a number of type ") + tn + ", found " + v.kindName();
    } else if (!v.toDouble(&d)) {
      return "number " + v.text + " is out of range for " + tn;
    } else {
      double maxv = t == ScalarType::F16 ? 65504.0 : t == ScalarType::F32 ? double(FLT_MAX) : DBL_MAX;
      if (std::fabs(d) > maxv) return "number " + v.text + " is out of range for " + tn;
    }
    if (t == ScalarType::F64) {
      std::memcpy(bits, &d, 8);
    } else if (t == ScalarType::F32) {
      float f = static_cast<float>(d);
      uint32_t u;
      std::memcpy(&u, &f, 4);
      *bits = u;
    } else {
      *bits = toHalf(d);
    }
    return "";
  }
  if (!v.isNumber()) return std::string("expected an integer of type ") + tn + ", found " + v.kindName();
  if (!v.isIntegerText()) return "expected an integer of type " + tn + ", found " + v.text;
  uint32_t size = scalarSize(t);
  if (isSignedType(t)) {
    int64_t x;
    if (!v.toI64(&x)) return "number " + v.text + " is out of range for " + tn;
    if (size < 8) {
      int64_t lo = -(int64_t(1) << (size * 8 - 1)), hi = (int64_t(1) << (size * 8 - 1)) - 1;
      if (x < lo || x > hi) return "number " + v.text + " is out of range for " + tn;
    }
    uint64_t u = static_cast<uint64_t>(x);
    *bits = size < 8 ? (u & ((uint64_t(1) << (size * 8)) - 1)) : u;
    return "";
  }
  uint64_t u;
  if (!v.toU64(&u)) return "number " + v.text + " is out of range for " + tn;
  if (size < 8 && u >> (size * 8)) return "number " + v.text + " is out of range for " + tn;
  *bits = u;
  return "";
}

bool scalarTypeForOpenCL(const std::string &typeName, ScalarType *out) {
  static const struct {
    const char *name;
    ScalarType type;
  } kMap[] = {
      {"char", ScalarType::I8},    {"uchar", ScalarType::U8},   {"unsigned char", ScalarType::U8},
      {"short", ScalarType::I16},  {"ushort", ScalarType::U16}, {"unsigned short", ScalarType::U16},
      {"int", ScalarType::I32},    {"uint", ScalarType::U32},   {"unsigned int", ScalarType::U32},
      {"long", ScalarType::I64},   {"ulong", ScalarType::U64},  {"unsigned long", ScalarType::U64},
      {"size_t", ScalarType::U64}, {"half", ScalarType::F16},   {"float", ScalarType::F32},
      {"double", ScalarType::F64}, {"bool", ScalarType::U8},
  };
  std::string n = typeName;
  const std::string kConst = "const ";
  if (n.compare(0, kConst.size(), kConst) == 0) n = n.substr(kConst.size());
  for (const auto &m : kMap)
    if (n == m.name) {
      *out = m.type;
      return true;
    }
  return false;
}

void appendBytes(std::vector<uint8_t> &out, ScalarType t, uint64_t bits) {
  for (uint32_t k = 0; k < scalarSize(t); ++k) out.push_back(uint8_t(bits >> (8 * k)));
}

} // namespace cgraph::desc
