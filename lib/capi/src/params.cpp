// Parameter values: int64 / double <-> value bits typed by the graph's declaration.
#include "internal.h"

#include "cgraph/runtime/scalar_text.h"

#include <cmath>
#include <cstring>
#include <limits>

namespace cgraph::capi {

namespace {

bool isFloat(ScalarType t) {
  return t == ScalarType::F16 || t == ScalarType::F32 || t == ScalarType::F64;
}
bool isSigned(ScalarType t) {
  return t == ScalarType::I8 || t == ScalarType::I16 || t == ScalarType::I32 ||
         t == ScalarType::I64;
}

Error outOfRange(const Param &p, const std::string &value) {
  return makeError("param '" + p.name + "': " + value + " is out of range for " +
                   scalarName(p.type));
}

} // namespace

void paramDefault(const Param &p, int64_t *asInt, double *asFloat) {
  const uint64_t b = p.defaultBits;
  *asInt = 0;
  *asFloat = 0.0;
  if (p.type == ScalarType::F64) {
    std::memcpy(asFloat, &b, 8);
  } else if (p.type == ScalarType::F32) {
    const uint32_t u = uint32_t(b);
    float f;
    std::memcpy(&f, &u, 4);
    *asFloat = f;
  } else if (p.type == ScalarType::F16) {
    *asFloat = rt::halfBitsToFloat(uint16_t(b));
  } else {
    const unsigned bits = scalarSize(p.type) * 8;
    if (isSigned(p.type) && bits < 64)
      *asInt = int64_t(b << (64 - bits)) >> (64 - bits); // sign-extend
    else
      *asInt = int64_t(b);
  }
}

Error paramBitsFromInt(const Param &p, int64_t value, uint64_t *bits) {
  if (isFloat(p.type)) return paramBitsFromFloat(p, double(value), bits);
  const unsigned width = scalarSize(p.type) * 8;
  if (isSigned(p.type)) {
    if (width < 64) {
      const int64_t lo = -(int64_t(1) << (width - 1)), hi = (int64_t(1) << (width - 1)) - 1;
      if (value < lo || value > hi) return outOfRange(p, std::to_string(value));
      *bits = uint64_t(value) & ((uint64_t(1) << width) - 1);
    } else {
      *bits = uint64_t(value);
    }
    return Error::success();
  }
  if (value < 0 || (width < 64 && uint64_t(value) >> width))
    return outOfRange(p, std::to_string(value));
  *bits = uint64_t(value);
  return Error::success();
}

Error paramBitsFromFloat(const Param &p, double value, uint64_t *bits) {
  if (!isFloat(p.type))
    return makeError("param '" + p.name + "' is " + scalarName(p.type) +
                     "; give it an integer, not a floating-point value");
  if (p.type == ScalarType::F64) {
    std::memcpy(bits, &value, 8);
    return Error::success();
  }
  const double limit =
      p.type == ScalarType::F32 ? double(std::numeric_limits<float>::max()) : 65504.0;
  if (std::isfinite(value) && std::fabs(value) > limit) return outOfRange(p, std::to_string(value));
  const float f = float(value);
  if (p.type == ScalarType::F16) {
    *bits = rt::floatToHalfBits(f);
  } else {
    uint32_t u;
    std::memcpy(&u, &f, 4);
    *bits = u;
  }
  return Error::success();
}

} // namespace cgraph::capi
