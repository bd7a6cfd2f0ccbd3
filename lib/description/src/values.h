// Scalar values of graph descriptions: JSON numbers -> typed little-endian bits.
//
// Pure functions, no state. Failures are returned as a message (empty = success) so
// the description reader can attach the JSON position.
#pragma once

#include "json_pos.h"

#include "cgraph/model.h"

#include <cstdint>
#include <string>
#include <vector>

namespace cgraph::desc {

// Encodes `v` (a JSON number, or for float types the strings "inf", "-inf", "nan") as
// type `t`; the result is zero-extended to 64 bits. Integers must be integral and in
// range of the type; floats must be finite in the type unless written as "inf"/"nan".
std::string encodeScalar(ScalarType t, const JValue &v, uint64_t *bits);

// The scalar type an OpenCL kernel parameter spelled `typeName` takes ("float" -> F32,
// "uint" -> U32, "size_t" -> U64, ...); false for pointers, vectors, structs.
bool scalarTypeForOpenCL(const std::string &typeName, ScalarType *out);

// IEEE binary16 from a double (round to nearest even; overflow gives infinity).
uint16_t toHalf(double v);

// Appends the scalarSize(t) low bytes of `bits`, little-endian.
void appendBytes(std::vector<uint8_t> &out, ScalarType t, uint64_t bits);

} // namespace cgraph::desc
