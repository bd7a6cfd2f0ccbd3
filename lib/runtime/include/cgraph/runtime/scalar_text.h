// Scalar values as text: parsing command-line/host-task values into value bits typed by
// a ScalarType, formatting bits back, and f16 conversions.
//
// Pure functions, no state; thread-safe. Failures are Errors naming the value and type
// (`'2.5x' is not a valid f32`, `300 is out of range for u8`).
#pragma once

#include "cgraph/error.h"
#include "cgraph/model.h"

#include <cstdint>
#include <string>

namespace cgraph::rt {

// Integers: decimal or 0x hex, optional sign (unsigned types refuse '-'), range-checked.
// Floats: strtod syntax (also "inf", "nan"); f32/f16 refuse finite values out of range.
// Bits are little-endian value bits zero-extended to 64 (Param::defaultBits layout).
Error parseScalarText(const std::string &text, ScalarType type, uint64_t *bits);
// Shortest round-trippable text of value bits (%.9g for f32/f16, %.17g for f64).
std::string formatScalarBits(uint64_t bits, ScalarType type);

// IEEE binary16 <-> binary32, round to nearest even; NaN stays NaN.
uint16_t floatToHalfBits(float f);
float halfBitsToFloat(uint16_t h);

} // namespace cgraph::rt
