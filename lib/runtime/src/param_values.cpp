// ParamValues::set: text -> value bits, typed by the graph's parameter declaration.
#include "cgraph/runtime/runtime.h"
#include "cgraph/runtime/scalar_text.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>

namespace cgraph::rt {

namespace {

bool isSigned(ScalarType t) {
  return t == ScalarType::I8 || t == ScalarType::I16 || t == ScalarType::I32 ||
         t == ScalarType::I64;
}
bool isFloat(ScalarType t) {
  return t == ScalarType::F16 || t == ScalarType::F32 || t == ScalarType::F64;
}

} // namespace

uint16_t floatToHalfBits(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  const uint32_t sign = (x >> 16) & 0x8000u;
  const uint32_t expo = (x >> 23) & 0xFFu;
  uint32_t mant = x & 0x7FFFFFu;
  if (expo == 0xFF) return uint16_t(sign | 0x7C00u | (mant ? 0x200u : 0u)); // inf / nan
  int e = int(expo) - 127 + 15;
  if (e >= 0x1F) return uint16_t(sign | 0x7C00u); // overflow -> inf
  if (e <= 0) {
    if (e < -10) return uint16_t(sign); // underflow -> signed zero
    mant |= 0x800000u;
    const uint32_t shift = uint32_t(14 - e);
    uint32_t half = mant >> shift;
    const uint32_t rem = mant & ((1u << shift) - 1);
    const uint32_t mid = 1u << (shift - 1);
    if (rem > mid || (rem == mid && (half & 1))) ++half;
    return uint16_t(sign | half);
  }
  uint32_t half = (uint32_t(e) << 10) | (mant >> 13);
  const uint32_t rem = mant & 0x1FFFu;
  if (rem > 0x1000u || (rem == 0x1000u && (half & 1))) ++half; // may carry into inf: right
  return uint16_t(sign | half);
}

float halfBitsToFloat(uint16_t h) {
  const uint32_t sign = uint32_t(h & 0x8000u) << 16;
  const uint32_t expo = (h >> 10) & 0x1Fu;
  const uint32_t mant = h & 0x3FFu;
  uint32_t x;
  if (expo == 0) {
    if (mant == 0) {
      x = sign;
    } else {
      float v = std::ldexp(float(mant), -24);
      std::memcpy(&x, &v, 4);
      x |= sign;
    }
  } else if (expo == 0x1F) {
    x = sign | 0x7F800000u | (mant << 13);
  } else {
    x = sign | ((expo - 15 + 127) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}

Error parseScalarText(const std::string &text, ScalarType type, uint64_t *bits) {
  const char *name = scalarName(type);
  const std::string quoted = "'" + text + "' is not a valid " + name;
  if (text.empty()) return makeError("empty value is not a valid " + std::string(name));
  const char *begin = text.c_str();
  char *end = nullptr;
  errno = 0;
  if (isFloat(type)) {
    double v = std::strtod(begin, &end);
    if (end == begin || *end != '\0') return makeError(quoted);
    if (type == ScalarType::F64) {
      std::memcpy(bits, &v, 8);
    } else {
      if (std::isfinite(v) && std::fabs(v) > double(std::numeric_limits<float>::max()))
        return makeError(text + " is out of range for " + name);
      float f = float(v);
      if (type == ScalarType::F32) {
        uint32_t u;
        std::memcpy(&u, &f, 4);
        *bits = u;
      } else {
        if (std::isfinite(v) && std::fabs(v) > 65504.0)
          return makeError(text + " is out of range for f16");
        *bits = floatToHalfBits(f);
      }
    }
    return Error::success();
  }
  const uint32_t size = scalarSize(type);
  if (size == 0) return makeError("unknown scalar type");
  // Decimal or 0x hex; base 0 would also read a leading 0 as octal, which surprises.
  int base = 10;
  {
    const size_t p = (text[0] == '-' || text[0] == '+') ? 1 : 0;
    if (text.size() > p + 2 && text[p] == '0' && (text[p + 1] == 'x' || text[p + 1] == 'X'))
      base = 16;
  }
  if (isSigned(type)) {
    long long v = std::strtoll(begin, &end, base);
    if (end == begin || *end != '\0') return makeError(quoted);
    const long long lo = size == 8 ? std::numeric_limits<long long>::min()
                                   : -(1ll << (size * 8 - 1));
    const long long hi = size == 8 ? std::numeric_limits<long long>::max()
                                   : (1ll << (size * 8 - 1)) - 1;
    if (errno == ERANGE || v < lo || v > hi)
      return makeError(text + " is out of range for " + name);
    uint64_t u = uint64_t(v);
    if (size < 8) u &= (uint64_t(1) << (size * 8)) - 1;
    *bits = u;
    return Error::success();
  }
  if (text[0] == '-') return makeError(text + " is out of range for " + name);
  unsigned long long v = std::strtoull(begin, &end, base);
  if (end == begin || *end != '\0') return makeError(quoted);
  const unsigned long long hi =
      size == 8 ? std::numeric_limits<unsigned long long>::max() : (1ull << (size * 8)) - 1;
  if (errno == ERANGE || v > hi) return makeError(text + " is out of range for " + name);
  *bits = v;
  return Error::success();
}

std::string formatScalarBits(uint64_t bits, ScalarType type) {
  char buf[64];
  switch (type) {
  case ScalarType::F16:
    std::snprintf(buf, sizeof buf, "%.9g", double(halfBitsToFloat(uint16_t(bits))));
    return buf;
  case ScalarType::F32: {
    float f;
    uint32_t u = uint32_t(bits);
    std::memcpy(&f, &u, 4);
    std::snprintf(buf, sizeof buf, "%.9g", double(f));
    return buf;
  }
  case ScalarType::F64: {
    double d;
    std::memcpy(&d, &bits, 8);
    std::snprintf(buf, sizeof buf, "%.17g", d);
    return buf;
  }
  default:
    break;
  }
  const uint32_t size = scalarSize(type);
  if (isSigned(type)) {
    int64_t v = int64_t(bits << (64 - size * 8)) >> (64 - size * 8);
    return std::to_string(v);
  }
  if (size < 8) bits &= (uint64_t(1) << (size * 8)) - 1;
  return std::to_string(bits);
}

Error ParamValues::set(const Graph &g, const std::string &name, const std::string &text) {
  const uint32_t p = g.findParam(name);
  if (p == kNone) {
    std::string known;
    for (const Param &q : g.params) known += (known.empty() ? "" : ", ") + q.name;
    return makeError("graph has no param '" + name + "'" +
                     (known.empty() ? std::string(" (it has none)") : " (params: " + known + ")"));
  }
  if (!bits.empty() && bits.size() != g.params.size())
    return makeError("parameter values have " + std::to_string(bits.size()) +
                     " entries but the graph has " + std::to_string(g.params.size()) + " params");
  if (bits.empty()) {
    bits.resize(g.params.size());
    for (size_t i = 0; i < g.params.size(); ++i) bits[i] = g.params[i].defaultBits;
  }
  uint64_t v = 0;
  Error e = parseScalarText(text, g.params[p].type, &v);
  if (e) return e.withContext("param '" + name + "'");
  bits[p] = v;
  return Error::success();
}

} // namespace cgraph::rt
