// The built-in host tasks (contract in host_tasks.h).
#include "host_internal.h"

#include "cgraph/runtime/npy.h"
#include "cgraph/runtime/paths.h"
#include "cgraph/runtime/scalar_text.h"

#include <xxhash.h>

#include <cmath>
#include <cstdio>
#include <cstring>

namespace cgraph::rt::detail {

namespace {

bool isFloatType(ScalarType t) {
  return t == ScalarType::F16 || t == ScalarType::F32 || t == ScalarType::F64;
}
bool isSignedType(ScalarType t) {
  return t == ScalarType::I8 || t == ScalarType::I16 || t == ScalarType::I32 ||
         t == ScalarType::I64;
}

uint64_t loadBits(const uint8_t *p, uint32_t size) {
  uint64_t v = 0;
  std::memcpy(&v, p, size); // little-endian hosts only (as the file format)
  return v;
}

std::string formatElement(const uint8_t *p, ScalarType t) {
  return formatScalarBits(loadBits(p, scalarSize(t)), t);
}

std::string hex64(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

// Sums n elements of T in double precision, in element order (the printed sum must not
// depend on how the loop is scheduled).
template <typename T> double sumAs(const uint8_t *p, uint64_t n) {
  double acc = 0;
  for (uint64_t i = 0; i < n; ++i) {
    T e;
    std::memcpy(&e, p + i * sizeof(T), sizeof(T));
    acc += double(e);
  }
  return acc;
}

Error runChecksum(const Context &ctx, const std::vector<SlotView> &s, const Extras &x) {
  const SlotView &v = s[0];
  const uint32_t item = scalarSize(x.type);
  const uint64_t n = v.size / item;
  const uint64_t hash = XXH3_64bits(v.data, size_t(v.size));
  std::string sum;
  if (x.type == ScalarType::F32 || x.type == ScalarType::F64) {
    // Typed loops: the per-element type switch of loadElement cost ~3 ns per element.
    double acc = 0;
    if (x.type == ScalarType::F32) acc = sumAs<float>(v.data, n);
    else acc = sumAs<double>(v.data, n);
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.9g", acc);
    sum = buf;
  } else if (isFloatType(x.type)) {
    double acc = 0;
    for (uint64_t i = 0; i < n; ++i) acc += loadElement(v.data + i * item, x.type);
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.9g", acc);
    sum = buf;
  } else if (isSignedType(x.type)) {
    uint64_t acc = 0; // wrapping, then read as signed
    const uint32_t shift = 64 - item * 8;
    for (uint64_t i = 0; i < n; ++i)
      acc += uint64_t(int64_t(loadBits(v.data + i * item, item) << shift) >> shift);
    sum = std::to_string(int64_t(acc));
  } else {
    uint64_t acc = 0;
    for (uint64_t i = 0; i < n; ++i) acc += loadBits(v.data + i * item, item);
    sum = std::to_string(acc);
  }
  ctx.emit("checksum " + v.name + ": xxh3=" + hex64(hash) + " sum=" + sum + " (" +
           std::to_string(n) + " x " + scalarName(x.type) + ")");
  return Error::success();
}

Error runPrint(const Context &ctx, const std::vector<SlotView> &s, const Extras &x) {
  const SlotView &v = s[0];
  const uint32_t item = scalarSize(x.type);
  const uint64_t n = v.size / item;
  const uint64_t shown = std::min(n, x.count);
  std::string line = "print " + v.name + ":";
  for (uint64_t i = 0; i < shown; ++i) line += " " + formatElement(v.data + i * item, x.type);
  if (shown < n) line += " ...";
  line += " (" + std::to_string(n) + " x " + scalarName(x.type) + ")";
  ctx.emit(line);
  return Error::success();
}

Error runWriteFile(const Context &ctx, const std::vector<SlotView> &s, const Extras &x) {
  Expected<std::string> path = resolveAllowedPath(x.path, *ctx.policy);
  if (!path) return path.error();
  const SlotView &v = s[0];
  if (isNpyPath(*path)) {
    const ScalarType t = x.hasType ? x.type : ScalarType::U8;
    const uint64_t item = scalarSize(t);
    return writeNpyFile(*path, t, v.data, v.size / item * item);
  }
  return writeBinaryFile(*path, v.data, v.size);
}

Error runReadFile(const Context &ctx, const std::vector<SlotView> &s, const Extras &x) {
  Expected<std::string> path = resolveAllowedPath(x.path, *ctx.policy);
  if (!path) return path.error();
  Expected<std::vector<uint8_t>> data = readDataFile(*path);
  if (!data) return data.error();
  const SlotView &v = s[0];
  if (data->size() < v.size)
    return makeError(x.path + ": file has " + std::to_string(data->size()) + " bytes of data, slot '" +
                     v.name + "' needs " + std::to_string(v.size));
  std::memcpy(v.data, data->data(), size_t(v.size));
  return Error::success();
}

Error runCompare(const Context &ctx, const std::vector<SlotView> &s, const Extras &x) {
  const SlotView &a = s[0], &b = s[1];
  const std::string what = "compare '" + a.name + "' vs '" + b.name + "'";
  if (a.size != b.size)
    return makeError(what + ": sizes differ (" + std::to_string(a.size) + " vs " +
                     std::to_string(b.size) + " bytes)");
  const uint32_t item = scalarSize(x.type);
  const uint64_t n = a.size / item;
  const bool exact = !isFloatType(x.type) && !x.hasTolerance;
  for (uint64_t i = 0; i < n; ++i) {
    const uint8_t *pa = a.data + i * item, *pb = b.data + i * item;
    bool same;
    if (exact) {
      same = std::memcmp(pa, pb, item) == 0;
    } else {
      const double va = loadElement(pa, x.type), vb = loadElement(pb, x.type);
      same = (std::isnan(va) && std::isnan(vb)) || va == vb ||
             std::fabs(va - vb) <= x.atol + x.rtol * std::fabs(vb);
    }
    if (!same)
      return makeError(what + ": element " + std::to_string(i) + " differs: " +
                       formatElement(pa, x.type) + " vs " + formatElement(pb, x.type));
  }
  // Bytes past the last whole element still have to agree.
  if (std::memcmp(a.data + n * item, b.data + n * item, size_t(a.size - n * item)) != 0)
    return makeError(what + ": trailing bytes differ");
  return Error::success();
}

} // namespace

double loadElement(const uint8_t *p, ScalarType t) {
  switch (t) {
  case ScalarType::F16: return double(halfBitsToFloat(uint16_t(loadBits(p, 2))));
  case ScalarType::F32: {
    float f;
    std::memcpy(&f, p, 4);
    return double(f);
  }
  case ScalarType::F64: {
    double d;
    std::memcpy(&d, p, 8);
    return d;
  }
  default: break;
  }
  const uint32_t size = scalarSize(t);
  const uint64_t bits = loadBits(p, size);
  if (isSignedType(t)) return double(int64_t(bits << (64 - size * 8)) >> (64 - size * 8));
  return double(bits);
}

const std::vector<Builtin> &builtins() {
  static const std::vector<Builtin> kBuiltins = {
      {"checksum", 1, false, false, false, &runChecksum},
      {"print", 1, false, false, false, &runPrint},
      {"write_file", 1, true, true, false, &runWriteFile},
      {"read_file", 1, true, false, true, &runReadFile},
      {"compare", 2, false, false, false, &runCompare},
  };
  return kBuiltins;
}

const Builtin *findBuiltin(const std::string &name) {
  for (const Builtin &b : builtins())
    if (name == b.name) return &b;
  return nullptr;
}

} // namespace cgraph::rt::detail
