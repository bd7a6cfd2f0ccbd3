#include "kernel_manifest.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <random>
#include <type_traits>
#include <sstream>

namespace cgraph::conformance {

namespace {

std::string trim(std::string s) {
  size_t a = s.find_first_not_of(" \t\r"), b = s.find_last_not_of(" \t\r");
  return a == std::string::npos ? std::string() : s.substr(a, b - a + 1);
}

std::vector<std::string> split(const std::string &s, char sep) {
  std::vector<std::string> out;
  std::string cur;
  int depth = 0;
  for (char c : s) {
    if (c == '(' || c == '[') ++depth;
    if (c == ')' || c == ']') --depth;
    if (c == sep && depth == 0) {
      out.push_back(trim(cur));
      cur.clear();
    } else {
      cur += c;
    }
  }
  out.push_back(trim(cur));
  return out;
}

bool isFloat(ScalarType t) { return t == ScalarType::F32 || t == ScalarType::F64 || t == ScalarType::F16; }
bool isSigned(ScalarType t) {
  return t == ScalarType::I8 || t == ScalarType::I16 || t == ScalarType::I32 || t == ScalarType::I64;
}

uint64_t valueBits(ScalarType t, double v) {
  uint64_t bits = 0;
  if (t == ScalarType::F32) {
    float f = float(v);
    std::memcpy(&bits, &f, 4);
  } else if (t == ScalarType::F64) {
    std::memcpy(&bits, &v, 8);
  } else if (isSigned(t)) {
    int64_t i = int64_t(v);
    std::memcpy(&bits, &i, 8);
    if (scalarSize(t) < 8) bits &= (uint64_t(1) << (8 * scalarSize(t))) - 1;
  } else {
    bits = uint64_t(v);
  }
  return bits;
}

Expected<double> number(const std::string &s, const std::string &where) {
  try {
    size_t used = 0;
    double v = std::stod(s, &used);
    if (used == s.size()) return v;
  } catch (...) {
  }
  return makeError(where + ": '" + s + "' is not a number");
}

Expected<ManifestArg> parseArg(const std::string &text, const std::string &where) {
  ManifestArg a;
  if (text.rfind("local(", 0) == 0 && text.back() == ')') {
    a.kind = ManifestArg::Local;
    auto v = number(text.substr(6, text.size() - 7), where);
    if (!v) return v.error();
    a.bytes = uint64_t(*v);
    return a;
  }
  std::vector<std::string> parts = split(text, ':');
  if (parts.size() == 2) { // VALUE:TYPE
    a.kind = ManifestArg::Scalar;
    if (!parseScalarType(parts[1], &a.type)) return makeError(where + ": unknown type '" + parts[1] + "'");
    auto v = number(parts[0], where);
    if (!v) return v.error();
    a.bits = valueBits(a.type, *v);
    return a;
  }
  if (parts.size() < 3 || parts.size() > 4 || (parts.size() == 4 && parts[3] != "out"))
    return makeError(where + ": argument '" + text + "' is not NAME:TYPE[COUNT]:INIT[:out], VALUE:TYPE or local(BYTES)");
  a.name = parts[0];
  size_t lb = parts[1].find('['), rb = parts[1].find(']');
  if (lb == std::string::npos || rb != parts[1].size() - 1)
    return makeError(where + ": argument '" + text + "': expected TYPE[COUNT]");
  if (!parseScalarType(parts[1].substr(0, lb), &a.type))
    return makeError(where + ": unknown type '" + parts[1].substr(0, lb) + "'");
  auto cnt = number(parts[1].substr(lb + 1, rb - lb - 1), where);
  if (!cnt) return cnt.error();
  a.count = uint64_t(*cnt);
  a.out = parts.size() == 4;
  const std::string &init = parts[2];
  if (init == "w") {
    a.init = ManifestArg::Zero;
    a.out = true;
  } else if (init == "zero") {
    a.init = ManifestArg::Zero;
  } else if (init == "seq") {
    a.init = ManifestArg::Seq;
  } else if (init == "rand") {
    a.init = ManifestArg::Rand;
  } else if (init.rfind("rand(", 0) == 0 && init.back() == ')') {
    a.init = ManifestArg::Rand;
    std::string r = init.substr(5, init.size() - 6);
    size_t dots = r.find("..");
    if (dots == std::string::npos) return makeError(where + ": '" + init + "' is not rand(LO..HI)");
    auto lo = number(r.substr(0, dots), where), hi = number(r.substr(dots + 2), where);
    if (!lo) return lo.error();
    if (!hi) return hi.error();
    a.lo = *lo;
    a.hi = *hi;
    a.hasRange = true;
  } else if (init.rfind("fill(", 0) == 0 && init.back() == ')') {
    a.init = ManifestArg::Fill;
    auto v = number(init.substr(5, init.size() - 6), where);
    if (!v) return v.error();
    a.lo = *v;
  } else {
    return makeError(where + ": unknown initializer '" + init + "' (w, zero, seq, rand, rand(LO..HI), fill(V))");
  }
  return a;
}

Error parseDims(const std::string &v, uint64_t *out, uint32_t *dims, const std::string &where) {
  std::vector<std::string> p = split(v, ',');
  if (p.empty() || p.size() > 3) return makeError(where + ": '" + v + "' needs 1 to 3 values");
  for (size_t i = 0; i < p.size(); ++i) {
    auto n = number(p[i], where);
    if (!n) return n.error();
    out[i] = uint64_t(*n);
  }
  if (dims) *dims = uint32_t(p.size());
  return Error::success();
}

} // namespace

std::string ManifestCase::label() const {
  std::string f = file.substr(file.find_last_of('/') + 1);
  return f + ":" + std::to_string(line) + " " + kernel;
}

Expected<std::vector<ManifestCase>> parseManifest(const std::string &source, const std::string &file) {
  std::vector<ManifestCase> cases;
  std::istringstream in(source);
  std::string line;
  int lineNo = 0;
  const std::string tag = "// cgtest:";
  while (std::getline(in, line)) {
    ++lineNo;
    size_t at = line.find(tag);
    if (at == std::string::npos) continue;
    const std::string where = file + ":" + std::to_string(lineNo);
    ManifestCase c;
    c.file = file;
    c.line = lineNo;
    std::string rest = trim(line.substr(at + tag.size()));
    size_t argsAt = rest.find("args=");
    std::string head = argsAt == std::string::npos ? rest : rest.substr(0, argsAt);
    std::istringstream words(head);
    std::string w;
    uint32_t localDims = 0, offsetDims = 0;
    while (words >> w) {
      size_t eq = w.find('=');
      if (eq == std::string::npos) return makeError(where + ": '" + w + "' is not KEY=VALUE");
      std::string k = w.substr(0, eq), v = w.substr(eq + 1);
      if (k == "kernel") c.kernel = v;
      else if (k == "global") CGRAPH_RETURN_IF_ERROR(parseDims(v, c.global, &c.dims, where));
      else if (k == "local") CGRAPH_RETURN_IF_ERROR(parseDims(v, c.local, &localDims, where));
      else if (k == "offset") CGRAPH_RETURN_IF_ERROR(parseDims(v, c.offset, &offsetDims, where));
      else if (k == "ulp") {
        auto n = number(v, where);
        if (!n) return n.error();
        c.ulp = uint32_t(*n);
      } else return makeError(where + ": unknown key '" + k + "'");
    }
    if (c.kernel.empty()) return makeError(where + ": no kernel=NAME");
    if ((localDims && localDims != c.dims) || (offsetDims && offsetDims != c.dims))
      return makeError(where + ": global, local and offset need the same number of dimensions");
    if (argsAt != std::string::npos) {
      for (const std::string &t : split(rest.substr(argsAt + 5), ',')) {
        auto a = parseArg(t, where);
        if (!a) return a.error();
        c.args.push_back(*a);
      }
    }
    cases.push_back(std::move(c));
  }
  return cases;
}

std::vector<uint8_t> makeInput(const ManifestArg &a, uint64_t seed) {
  const uint32_t es = scalarSize(a.type);
  std::vector<uint8_t> out(a.count * es, 0);
  std::mt19937_64 rng(seed);
  double lo = a.hasRange ? a.lo : isFloat(a.type) ? -1.0 : isSigned(a.type) ? -100.0 : 0.0;
  double hi = a.hasRange ? a.hi : isFloat(a.type) ? 1.0 : isSigned(a.type) ? 100.0 : 200.0;
  for (uint64_t i = 0; i < a.count; ++i) {
    double v = 0;
    switch (a.init) {
    case ManifestArg::Zero: v = 0; break;
    case ManifestArg::Seq: v = double(i); break;
    case ManifestArg::Fill: v = a.lo; break;
    case ManifestArg::Rand:
      if (isFloat(a.type)) v = std::uniform_real_distribution<double>(lo, hi)(rng);
      else v = double(std::uniform_int_distribution<int64_t>(int64_t(lo), int64_t(hi))(rng));
      break;
    }
    uint64_t bits = valueBits(a.type, v);
    std::memcpy(out.data() + i * es, &bits, es);
  }
  return out;
}

namespace {
// Distance in representable values (monotonic integer mapping of IEEE floats).
template <class F, class I> uint64_t ulpDistance(F a, F b) {
  I ia, ib;
  std::memcpy(&ia, &a, sizeof(F));
  std::memcpy(&ib, &b, sizeof(F));
  const I sign = I(1) << (sizeof(I) * 8 - 1);
  if (ia < 0) ia = sign - ia;
  if (ib < 0) ib = sign - ib;
  return ia > ib ? uint64_t(ia) - uint64_t(ib) : uint64_t(ib) - uint64_t(ia);
}
} // namespace

std::string compareOutputs(const ManifestArg &a, const std::vector<uint8_t> &ref,
                           const std::vector<uint8_t> &got, uint32_t ulp) {
  if (ref.size() != got.size()) return a.name + ": sizes differ";
  const uint32_t es = scalarSize(a.type);
  for (uint64_t i = 0; i < a.count; ++i) {
    const uint8_t *r = ref.data() + i * es, *g = got.data() + i * es;
    std::ostringstream msg;
    msg.precision(17);
    if (a.type == ScalarType::F32 || a.type == ScalarType::F64) {
      double rv, gv;
      uint64_t d;
      if (a.type == ScalarType::F32) {
        float rf, gf;
        std::memcpy(&rf, r, 4);
        std::memcpy(&gf, g, 4);
        rv = rf, gv = gf;
        d = ulpDistance<float, int32_t>(rf, gf);
      } else {
        std::memcpy(&rv, r, 8);
        std::memcpy(&gv, g, 8);
        d = ulpDistance<double, int64_t>(rv, gv);
      }
      if (std::isnan(rv) && std::isnan(gv)) continue;
      if (d > ulp || std::isnan(rv) != std::isnan(gv)) {
        msg << a.name << "[" << i << "]: " << rv << " vs " << gv << " (" << d << " ulp > " << ulp << ")";
        return msg.str();
      }
    } else if (std::memcmp(r, g, es) != 0) {
      int64_t rv = 0, gv = 0;
      std::memcpy(&rv, r, es);
      std::memcpy(&gv, g, es);
      msg << a.name << "[" << i << "]: " << rv << " vs " << gv << " (integers must match exactly)";
      return msg.str();
    }
  }
  return {};
}

// ---- C++ references ------------------------------------------------------------------
//
// One function per case (FILE.cl:KERNEL), each the kernel's arithmetic written again in
// C++ over every work-item. Integer arithmetic the kernel lets wrap is done on unsigned
// types (C++ signed overflow is undefined); float expressions keep the kernel's order.
// Clang contracts `a * b + c` inside one OpenCL C expression; references say where a
// contraction can happen and the case's ulp bound covers both roundings.

namespace {

template <class T> T *view(std::vector<uint8_t> &b) { return reinterpret_cast<T *>(b.data()); }

// The global ids of a 1-D case: offset .. offset + global.
template <class F> void forEachId(const ManifestCase &c, F f) {
  for (uint64_t i = c.offset[0]; i < c.offset[0] + c.global[0]; ++i) f(i);
}

uint32_t rotl32(uint32_t x, uint32_t k) {
  k &= 31;
  return k ? (x << k) | (x >> (32 - k)) : x;
}

uint32_t popcount32(uint32_t x) {
  uint32_t n = 0;
  for (; x; x &= x - 1) ++n;
  return n;
}

uint32_t clz32(uint32_t x) {
  uint32_t n = 0;
  for (uint32_t bit = 1u << 31; bit && !(x & bit); bit >>= 1) ++n;
  return n;
}

void refFloatBasic(const ManifestCase &c, std::vector<std::vector<uint8_t>> &b) {
  float *out = view<float>(b[0]);
  const float *a = view<float>(b[1]), *bb = view<float>(b[2]);
  forEachId(c, [&](uint64_t i) {
    const float x = a[i], y = bb[i];
    float r = x + y;
    r = r * y;
    r = r / (y + 1.0f);
    out[i] = r - x + std::fmax(x, y) - std::fmin(x, y) + std::fabs(x) + std::floor(x) + std::ceil(y) +
             std::trunc(x) + float(int(x));
  });
}

void refFloatTranscendental(const ManifestCase &c, std::vector<std::vector<uint8_t>> &b) {
  float *out = view<float>(b[0]);
  const float *a = view<float>(b[1]);
  forEachId(c, [&](uint64_t i) {
    const float x = a[i];
    out[i] = std::sqrt(x) + std::exp(x * 0.1f) + std::log(x) + std::sin(x) + std::cos(x);
  });
}

void refDoubleOps(const ManifestCase &c, std::vector<std::vector<uint8_t>> &b) {
  double *out = view<double>(b[0]);
  const double *a = view<double>(b[1]);
  // sqrt(x) * x + exp(-x) may be contracted; the case's 32 ulp covers both.
  forEachId(c, [&](uint64_t i) {
    const double x = a[i];
    out[i] = std::sqrt(x) * x + std::exp(-x) + std::log(x);
  });
}

void refIntMix(const ManifestCase &c, std::vector<std::vector<uint8_t>> &b) {
  int32_t *out = view<int32_t>(b[0]);
  const int32_t *a = view<int32_t>(b[1]), *bb = view<int32_t>(b[2]);
  int32_t k;
  std::memcpy(&k, &c.args[3].bits, 4);
  forEachId(c, [&](uint64_t i) {
    const int32_t x = a[i], y = bb[i];
    const uint32_t madHi = uint32_t(int32_t((int64_t(x) * y) >> 32)) + uint32_t(k);
    const uint32_t absDiff = uint32_t(x > y ? int64_t(x) - y : int64_t(y) - x);
    const uint32_t clamped = uint32_t(std::min(std::max(x, -500), 500));
    const uint32_t mul24 = uint32_t((x & 0xFFF) * y);
    const uint32_t addSat = uint32_t(int32_t(std::min<int64_t>(int64_t(x) + 2147483000, INT32_MAX)));
    const uint32_t hadd = uint32_t(int32_t((int64_t(x) + y) >> 1));
    // `^` binds looser than `+`: (x / y) ^ (the whole sum).
    const uint32_t sum = uint32_t(x % y) + madHi + absDiff + rotl32(uint32_t(x), uint32_t(k)) + clamped + mul24 +
                         addSat + hadd + popcount32(uint32_t(x)) + clz32(uint32_t(y)) +
                         uint32_t(std::max(x, y)) - uint32_t(std::min(x, k)) + uint32_t(x >> 3) +
                         (uint32_t(x) << 2);
    out[i] = int32_t(uint32_t(x / y) ^ sum);
  });
}

void refUintBits(const ManifestCase &c, std::vector<std::vector<uint8_t>> &b) {
  uint32_t *out = view<uint32_t>(b[0]);
  const uint32_t *a = view<uint32_t>(b[1]);
  forEachId(c, [&](uint64_t i) {
    const uint32_t x = a[i];
    const uint32_t subSat = x > 1000000u ? x - 1000000u : 0u;
    const uint32_t mulHi = uint32_t((uint64_t(x) * 2654435761u) >> 32);
    const uint32_t upsample = (uint32_t(uint16_t(x)) << 16) | uint16_t(x >> 16);
    out[i] = rotl32(x, 13) ^ (x >> 7) ^ subSat ^ mulHi ^ upsample ^ popcount32(x);
  });
}

void refLongMul(const ManifestCase &c, std::vector<std::vector<uint8_t>> &b) {
  int64_t *out = view<int64_t>(b[0]);
  const int64_t *a = view<int64_t>(b[1]);
  forEachId(c, [&](uint64_t i) {
    const int64_t x = a[i];
    const int64_t mulHi = int64_t((__int128(x) * __int128(0x123456789)) >> 64);
    out[i] = int64_t(uint64_t(x) * 3 - uint64_t(x >> 5) + uint64_t(mulHi) + c.offset[0]);
  });
}

void refBlockSum(const ManifestCase &c, std::vector<std::vector<uint8_t>> &b) {
  int32_t *out = view<int32_t>(b[0]);
  const int32_t *in = view<int32_t>(b[1]);
  const uint64_t groups = c.global[0] / c.local[0];
  for (uint64_t g = 0; g < groups; ++g) {
    uint32_t s = 0;
    for (uint64_t l = 0; l < c.local[0]; ++l) s += uint32_t(in[g * c.local[0] + l]);
    out[g] = int32_t(s);
  }
}

void refReverseTile(const ManifestCase &c, std::vector<std::vector<uint8_t>> &b) {
  float *out = view<float>(b[0]);
  const float *in = view<float>(b[1]);
  const uint64_t L = c.local[0];
  forEachId(c, [&](uint64_t i) { out[i] = in[(i / L) * L + (L - 1 - i % L)] * 2.0f; });
}

void refHistogram(const ManifestCase &c, std::vector<std::vector<uint8_t>> &b) {
  uint32_t *hist = view<uint32_t>(b[0]);
  const uint32_t *in = view<uint32_t>(b[1]);
  forEachId(c, [&](uint64_t i) { ++hist[in[i] % 16]; });
}

void refGrid2d(const ManifestCase &c, std::vector<std::vector<uint8_t>> &b) {
  int32_t *out = view<int32_t>(b[0]);
  int32_t width;
  std::memcpy(&width, &c.args[1].bits, 4);
  for (uint64_t y = c.offset[1]; y < c.offset[1] + c.global[1]; ++y)
    for (uint64_t x = c.offset[0]; x < c.offset[0] + c.global[0]; ++x) {
      const uint64_t lid0 = (x - c.offset[0]) % c.local[0], grp1 = (y - c.offset[1]) / c.local[1];
      out[y * uint64_t(width) + x] = int32_t(x * 1000 + y * 10 + lid0 + grp1 * 100000);
    }
}

template <class T> T scalarArg(const ManifestCase &c, size_t i) {
  T v;
  std::memcpy(&v, &c.args[i].bits, sizeof(T));
  return v;
}

// basic.cl. `a * x + y` may be contracted: the cases' ulp bounds cover both roundings.
void refAxpy(const ManifestCase &c, std::vector<std::vector<uint8_t>> &b) {
  const float a = scalarArg<float>(c, 0);
  const float *x = view<float>(b[0]);
  float *y = view<float>(b[1]);
  forEachId(c, [&](uint64_t i) { y[i] = std::fma(a, x[i], y[i]); });
}

void refScaleInt(const ManifestCase &c, std::vector<std::vector<uint8_t>> &b) {
  const int32_t k = scalarArg<int32_t>(c, 1);
  int32_t *v = view<int32_t>(b[0]);
  forEachId(c, [&](uint64_t i) { v[i] = int32_t(uint32_t(v[i]) * uint32_t(k)); });
}

void refLongChain(const ManifestCase &c, std::vector<std::vector<uint8_t>> &b) {
  uint32_t *out = view<uint32_t>(b[0]);
  const uint32_t *x = view<uint32_t>(b[1]);
  const uint32_t k = scalarArg<uint32_t>(c, 2);
  forEachId(c, [&](uint64_t i) {
    uint32_t v = out[i], t = x[i];
    for (int s = 0; s < 300; ++s) {
      v = v * k + t;
      v ^= v >> 13;
      t += v;
    }
    out[i] = v ^ t;
  });
}

void refFmaChain(const ManifestCase &c, std::vector<std::vector<uint8_t>> &b) {
  float *y = view<float>(b[0]);
  const float *x = view<float>(b[1]);
  const float a = scalarArg<float>(c, 2);
  forEachId(c, [&](uint64_t i) {
    float v = y[i];
    for (int s = 0; s < 300; ++s)
      v = std::fma(a, x[i], v);
    y[i] = v;
  });
}

void refIds(const ManifestCase &c, std::vector<std::vector<uint8_t>> &b) {
  int32_t *out = view<int32_t>(b[0]);
  uint64_t G[3], L[3], O[3], N[3];
  for (int d = 0; d < 3; ++d) {
    G[d] = d < int(c.dims) ? c.global[d] : 1;
    L[d] = d < int(c.dims) && c.local[d] ? c.local[d] : 1;
    O[d] = d < int(c.dims) ? c.offset[d] : 0;
    N[d] = G[d] / L[d];
  }
  for (uint64_t z = 0; z < G[2]; ++z)
    for (uint64_t y = 0; y < G[1]; ++y)
      for (uint64_t x = 0; x < G[0]; ++x) {
        int32_t *o = out + 8 * ((z * G[1] + y) * G[0] + x);
        o[0] = int32_t(x + O[0]);
        o[1] = int32_t(y + O[1]);
        o[2] = int32_t(z + O[2]);
        o[3] = int32_t(x % L[0] + 100 * (y % L[1]) + 10000 * (z % L[2]));
        o[4] = int32_t(x / L[0] + 100 * (y / L[1]) + 10000 * (z / L[2]));
        o[5] = int32_t(L[0] * L[1] * L[2]);
        o[6] = int32_t(N[0] * N[1] * N[2]);
        o[7] = int32_t(c.dims);
      }
}

void refScalars(const ManifestCase &c, std::vector<std::vector<uint8_t>> &b) {
  int64_t *out = view<int64_t>(b[0]);
  out[0] = scalarArg<int8_t>(c, 1);
  out[1] = scalarArg<uint8_t>(c, 2);
  out[2] = scalarArg<int16_t>(c, 3);
  out[3] = scalarArg<uint16_t>(c, 4);
  out[4] = scalarArg<int32_t>(c, 5);
  out[5] = scalarArg<uint32_t>(c, 6);
  out[6] = scalarArg<int64_t>(c, 7);
  out[7] = int64_t(scalarArg<uint64_t>(c, 8));
  out[8] = int64_t(scalarArg<float>(c, 9) * 1000.0f);
  out[9] = int64_t(scalarArg<double>(c, 10) * 1000.0);
}

void refMatmul(const ManifestCase &c, std::vector<std::vector<uint8_t>> &b) {
  const float *A = view<float>(b[0]), *B = view<float>(b[1]);
  float *C = view<float>(b[2]);
  const int32_t n = scalarArg<int32_t>(c, 3);
  for (int32_t row = 0; row < int32_t(c.global[1]); ++row)
    for (int32_t col = 0; col < int32_t(c.global[0]); ++col) {
      float acc = 0.0f;
      for (int32_t k = 0; k < n; ++k) acc = std::fma(A[row * n + k], B[k * n + col], acc);
      C[row * n + col] = acc;
    }
}

// barriers.cl: work-group tree reductions (the same pairing order as the kernel, so
// float sums round identically) and a tiled transpose.
template <class T> void treeReduce(const ManifestCase &c, const T *in, T *out) {
  const uint64_t n = c.local[0];
  std::vector<T> scratch(n);
  for (uint64_t g = 0; g < c.global[0] / n; ++g) {
    for (uint64_t l = 0; l < n; ++l) scratch[l] = in[c.offset[0] + g * n + l];
    for (uint64_t st = n / 2; st > 0; st >>= 1)
      for (uint64_t l = 0; l < st; ++l) {
        if constexpr (std::is_integral<T>::value)
          scratch[l] = T(std::make_unsigned_t<T>(scratch[l]) + std::make_unsigned_t<T>(scratch[l + st]));
        else
          scratch[l] += scratch[l + st];
      }
    out[g] = scratch[0];
  }
}

void refReduceStatic(const ManifestCase &c, std::vector<std::vector<uint8_t>> &b) {
  treeReduce(c, view<float>(b[0]), view<float>(b[1]));
}

void refReduceArg(const ManifestCase &c, std::vector<std::vector<uint8_t>> &b) {
  treeReduce(c, view<int32_t>(b[0]), view<int32_t>(b[1]));
}

void refUniformMix(const ManifestCase &c, std::vector<std::vector<uint8_t>> &b) {
  const uint32_t *in = view<uint32_t>(b[0]);
  uint32_t *out = view<uint32_t>(b[1]);
  const uint32_t trips = scalarArg<uint32_t>(c, 3);
  const uint64_t n = c.local[0], groups = c.global[0] / n;
  for (uint64_t g = 0; g < groups; ++g) {
    std::vector<uint32_t> v(in + g * n, in + (g + 1) * n), scratch(n);
    uint32_t u = 5;
    for (uint32_t it = 0; it < trips; ++it) {
      for (uint64_t i = 1; i < n; i += 2) v[i] += it;
      u = u * 3 + it;
      for (uint64_t i = 0; i < n; ++i) scratch[i] = v[i] + u;
      for (uint64_t i = 0; i < n; ++i) v[i] += scratch[(i + 1) % n] & 7;
    }
    for (uint64_t i = 0; i < n; ++i) scratch[i] = v[i] ^ u;
    for (uint64_t s = n / 2; s > 0; s >>= 1)
      for (uint64_t i = 0; i < s; ++i) scratch[i] += scratch[i + s];
    for (uint64_t i = 0; i < n; ++i) out[g * n + i] = v[i] * 1000u + u + scratch[0];
  }
}

// barrier_phis.cl: phis used after a barrier; one work-group of n items at a time.
template <class F> void perGroup(const ManifestCase &c, std::vector<std::vector<uint8_t>> &b, F f) {
  const uint32_t *in = view<uint32_t>(b[0]);
  uint32_t *out = view<uint32_t>(b[1]);
  const uint64_t n = c.local[0];
  for (uint64_t g = 0; g < c.global[0] / n; ++g) {
    std::vector<uint32_t> v(in + g * n, in + (g + 1) * n);
    f(v);
    std::copy(v.begin(), v.end(), out + g * n);
  }
}

void refLoopResult(const ManifestCase &c, std::vector<std::vector<uint8_t>> &b) {
  perGroup(c, b, [](std::vector<uint32_t> &v) {
    const size_t n = v.size();
    uint32_t s = 0;
    for (size_t k = 0; k < n; ++k) s += v[k] * uint32_t(k + 1);
    for (size_t l = 0; l < n; ++l) v[l] = s * 3u + (s ^ uint32_t((l + 1) % n));
  });
}

void refLoopCounter(const ManifestCase &c, std::vector<std::vector<uint8_t>> &b) {
  const uint32_t trips = scalarArg<uint32_t>(c, 3);
  perGroup(c, b, [&](std::vector<uint32_t> &acc) {
    const size_t n = acc.size();
    std::vector<uint32_t> tile(n), next(n);
    for (uint32_t it = 0; it < trips; ++it) {
      for (size_t l = 0; l < n; ++l) tile[l] = acc[l] + it;
      for (size_t l = 0; l < n; ++l) next[l] = ((l & 1) ? acc[l] * 3u : acc[l] + 1u) + tile[(l + 1) % n];
      acc = next;
    }
  });
}

void refCondAcross(const ManifestCase &c, std::vector<std::vector<uint8_t>> &b) {
  perGroup(c, b, [](std::vector<uint32_t> &v) {
    const size_t n = v.size();
    std::vector<uint32_t> x = v;
    for (size_t l = 0; l < n; ++l) v[l] = (l % 3 == 0 ? x[l] * 2u : x[l] ^ 0x55u) + x[(l + 1) % n];
  });
}

void refCondLoop(const ManifestCase &c, std::vector<std::vector<uint8_t>> &b) {
  const uint32_t trips = scalarArg<uint32_t>(c, 3);
  perGroup(c, b, [&](std::vector<uint32_t> &acc) {
    const size_t n = acc.size();
    std::vector<uint32_t> next(n);
    for (uint32_t it = 0; it < trips; ++it) {
      for (size_t l = 0; l < n; ++l) next[l] = ((l & 1) ? acc[l] * 3u : acc[l] + it) + acc[(l + 1) % n];
      acc = next;
    }
  });
}

void refTranspose(const ManifestCase &c, std::vector<std::vector<uint8_t>> &b) {
  const float *in = view<float>(b[0]);
  float *out = view<float>(b[1]);
  const int32_t w = scalarArg<int32_t>(c, 2), h = scalarArg<int32_t>(c, 3);
  for (int32_t r = 0; r < h; ++r)
    for (int32_t col = 0; col < w; ++col) out[col * h + r] = in[r * w + col];
}

// vload.cl
void refVloadFloat(const ManifestCase &c, std::vector<std::vector<uint8_t>> &b) {
  const float *in = view<float>(b[0]);
  float *out = view<float>(b[1]);
  forEachId(c, [&](uint64_t i) {
    for (uint64_t e = 0; e < 33; ++e) out[33 * i + e] = in[33 * i + e] * 2.0f;
  });
}

void refVloadIntOffsets(const ManifestCase &c, std::vector<std::vector<uint8_t>> &b) {
  const int32_t *in = view<int32_t>(b[0]);
  int32_t *out = view<int32_t>(b[1]);
  forEachId(c, [&](uint64_t i) {
    for (uint64_t e = 0; e < 4; ++e) out[4 * i + e] = int32_t(uint32_t(in[4 * i + e]) + 1);
    for (uint64_t e = 0; e < 3; ++e) out[1000 + 3 * i + e] = int32_t(uint32_t(in[1000 + 3 * i + e]) - 1);
    for (uint64_t e = 0; e < 16; ++e) out[2000 + 16 * i + e] = in[2000 + 16 * i + e] ^ 5;
    for (uint64_t e = 0; e < 8; ++e) out[4000 + 8 * i + e] = int32_t(uint32_t(in[4000 + 8 * i + e]) * 3);
    for (uint64_t e = 0; e < 2; ++e) out[5000 + 2 * i + e] = int32_t(uint32_t(in[5000 + 2 * i + e]) << 1);
  });
}

void refVloadLocal(const ManifestCase &c, std::vector<std::vector<uint8_t>> &b) {
  const float *in = view<float>(b[0]);
  float *out = view<float>(b[1]);
  const uint64_t n = c.local[0];
  for (uint64_t g = 0; g < c.global[0] / n; ++g)
    for (uint64_t l = 0; l < n; ++l)
      for (uint64_t e = 0; e < 4; ++e) out[4 * (g * n + l) + e] = in[4 * (g * n + n - 1 - l) + e];
}

// atomics.cl: the order of atomic updates does not change these results.
void refHistGlobal(const ManifestCase &c, std::vector<std::vector<uint8_t>> &b) {
  const uint32_t *data = view<uint32_t>(b[0]);
  int32_t *bins = view<int32_t>(b[1]);
  const uint32_t nbins = scalarArg<uint32_t>(c, 2);
  forEachId(c, [&](uint64_t i) { ++bins[data[i] % nbins]; });
}

void refHistLocal(const ManifestCase &c, std::vector<std::vector<uint8_t>> &b) {
  const uint32_t *data = view<uint32_t>(b[0]);
  int32_t *bins = view<int32_t>(b[1]);
  const uint32_t nbins = scalarArg<uint32_t>(c, 3);
  forEachId(c, [&](uint64_t i) { ++bins[data[i] % nbins]; });
}

void refAtomicOps(const ManifestCase &c, std::vector<std::vector<uint8_t>> &b) {
  int32_t *cnt = view<int32_t>(b[0]);
  uint32_t *u = view<uint32_t>(b[1]);
  forEachId(c, [&](uint64_t gid) {
    const int32_t i = int32_t(gid);
    cnt[0] = int32_t(uint32_t(cnt[0]) + uint32_t(i));
    cnt[1] = int32_t(uint32_t(cnt[1]) - uint32_t(i));
    cnt[2] = std::max(cnt[2], i);
    cnt[3] = std::min(cnt[3], i);
    cnt[4] |= int32_t(1u << (i % 31));
    cnt[5] &= ~int32_t(1u << (i % 31));
    cnt[6] ^= i;
    cnt[7] = int32_t(uint32_t(cnt[7]) - 1);
    cnt[8] = int32_t(uint32_t(cnt[8]) + 2);
    if (cnt[9] == 0) cnt[9] = i + 1; // the cases start c[9] non-zero: never taken
    u[0] = std::max(u[0], uint32_t(i) * 0x10000001u);
  });
}

// integer.cl
int32_t satI32(int64_t v) { return int32_t(std::min<int64_t>(std::max<int64_t>(v, INT32_MIN), INT32_MAX)); }

void refDivUniform(const ManifestCase &c, std::vector<std::vector<uint8_t>> &b) {
  uint32_t *q = view<uint32_t>(b[0]), *r = view<uint32_t>(b[1]);
  const uint32_t d = scalarArg<uint32_t>(c, 2);
  forEachId(c, [&](uint64_t i) {
    const uint32_t n = i < 4 ? 0xFFFFFFFFu - uint32_t(i) : uint32_t(i) * 2654435761u;
    q[i] = n / d;
    r[i] = (n % d) ^ 0xA5A5A5A5u;
  });
}

void refIntOps(const ManifestCase &c, std::vector<std::vector<uint8_t>> &b) {
  const int32_t *x = view<int32_t>(b[0]), *y = view<int32_t>(b[1]);
  int32_t *out = view<int32_t>(b[2]);
  forEachId(c, [&](uint64_t i) {
    const int32_t a = x[i], bb = y[i];
    int32_t *o = out + i * 16;
    const int32_t mulHi = int32_t((int64_t(a) * bb) >> 32);
    o[0] = int32_t(a < 0 ? 0u - uint32_t(a) : uint32_t(a));
    o[1] = std::min(a, bb);
    o[2] = std::max(a, bb);
    o[3] = std::min(std::max(a, -100), 100);
    o[4] = mulHi;
    o[5] = int32_t(rotl32(uint32_t(a), uint32_t(bb)));
    o[6] = int32_t(popcount32(uint32_t(a)));
    o[7] = int32_t(clz32(uint32_t(a)));
    o[8] = satI32(int64_t(a) + bb);
    o[9] = satI32(int64_t(a) - bb);
    o[10] = int32_t(uint32_t(a & 0x7fffff) * uint32_t(bb & 0x7fff) + 7u);
    o[11] = int32_t(uint32_t(a & 0x7fffff) * uint32_t(bb & 0x7fff));
    o[12] = int32_t((int64_t(a) + bb) >> 1);
    o[13] = int32_t((int64_t(a) + bb + 1) >> 1);
    o[14] = int32_t(uint32_t(a > bb ? int64_t(a) - bb : int64_t(bb) - a));
    o[15] = int32_t(uint32_t(mulHi) + 3u);
  });
}

void refIntOpsVec(const ManifestCase &c, std::vector<std::vector<uint8_t>> &b) {
  const int32_t *x = view<int32_t>(b[0]), *y = view<int32_t>(b[1]);
  int32_t *out = view<int32_t>(b[2]);
  forEachId(c, [&](uint64_t i) {
    for (uint64_t e = 0; e < 4; ++e) {
      const int32_t a = x[4 * i + e], bb = y[4 * i + e];
      out[16 * i + e] = std::max(a, bb);
      out[16 * i + 4 + e] = satI32(int64_t(a) + bb);
      out[16 * i + 8 + e] = int32_t(popcount32(uint32_t(a)));
      out[16 * i + 12 + e] = std::min(std::max(a, -5), 5);
    }
  });
}

void refIntSmallLong(const ManifestCase &c, std::vector<std::vector<uint8_t>> &b) {
  const int32_t *x = view<int32_t>(b[0]), *y = view<int32_t>(b[1]);
  int64_t *out = view<int64_t>(b[2]);
  forEachId(c, [&](uint64_t i) {
    const uint8_t ua = uint8_t(x[i]), ub = uint8_t(y[i]);
    const int16_t sa = int16_t(x[i]), sb = int16_t(y[i]);
    const int64_t la = int64_t(x[i]) * 1000003, lb = int64_t(y[i]) * -999983;
    int64_t *o = out + i * 4;
    o[0] = std::min(int(ua) + int(ub), 255);
    o[1] = std::min(std::max(int(sa) - int(sb), -32768), 32767);
    o[2] = int64_t((__int128(la) * __int128(lb)) >> 64);
    o[3] = int64_t(uint64_t((unsigned __int128)uint64_t(la) * uint64_t(lb) >> 64));
  });
}

// relational.cl: scalar relationals give 1/0, vector ones -1/0; select and bitselect
// pick bits.
int32_t floatBits(float f) {
  int32_t v;
  std::memcpy(&v, &f, 4);
  return v;
}

void refRelOps(const ManifestCase &c, std::vector<std::vector<uint8_t>> &b) {
  const float *x = view<float>(b[0]), *y = view<float>(b[1]);
  int32_t *out = view<int32_t>(b[2]);
  forEachId(c, [&](uint64_t i) {
    const float a = x[i], bb = y[i];
    int32_t *o = out + i * 12;
    o[0] = std::isnan(a);
    o[1] = std::isinf(a);
    o[2] = std::isfinite(a);
    o[3] = std::signbit(a);
    o[4] = a == bb;
    o[5] = std::isless(a, bb);
    o[6] = std::isgreater(a, bb);
    o[7] = std::isunordered(a, bb);
    o[8] = floatBits(a < bb ? bb : a);
    // v = ((int)a, (int)b, -1, 0): -1 makes any(v < 0) true and all(v >= 0) false,
    // whatever (int) of a NaN or infinity gives.
    o[9] = 1;
    o[10] = 0;
    o[11] = (floatBits(a) & ~0x0000ffff) | (floatBits(bb) & 0x0000ffff);
  });
}

void refRelVec(const ManifestCase &c, std::vector<std::vector<uint8_t>> &b) {
  const float *x = view<float>(b[0]), *y = view<float>(b[1]);
  int32_t *out = view<int32_t>(b[2]);
  forEachId(c, [&](uint64_t i) {
    bool anySign = false, allSign = true, anyGreater = false, allFinite = true;
    for (uint64_t e = 0; e < 4; ++e) {
      const float a = x[4 * i + e], bb = y[4 * i + e];
      out[12 * i + e] = std::isnan(a) ? -1 : 0;
      out[12 * i + 4 + e] = floatBits(std::isless(a, bb) ? bb : a);
      anySign = anySign || std::signbit(a);
      allSign = allSign && std::signbit(a);
      anyGreater = anyGreater || std::isgreater(a, bb);
      allFinite = allFinite && std::isfinite(a);
    }
    out[12 * i + 8] = anySign;
    out[12 * i + 9] = allSign;
    out[12 * i + 10] = anyGreater;
    out[12 * i + 11] = allFinite;
  });
}

// math.cl: computed in double and rounded once to float (the cases' bounds are for the
// implementation-defined native_ functions; see the file).
void refMathF32(const ManifestCase &c, std::vector<std::vector<uint8_t>> &b) {
  const float *x = view<float>(b[0]), *y = view<float>(b[1]);
  float *out = view<float>(b[2]);
  forEachId(c, [&](uint64_t i) {
    const double a = x[i], bb = y[i];
    const double r[32] = {std::sqrt(std::fabs(a)), 1.0 / std::sqrt(double(std::fabs(x[i]) + 1.0f)),
                          std::exp(a), std::log(double(std::fabs(x[i]) + 1.0f)),
                          std::pow(std::fabs(a), bb), std::sin(a), std::cos(a), std::tan(a),
                          std::fabs(a), std::floor(a), std::ceil(a), std::fma(a, bb, 1.0),
                          a * bb + 1.0, std::fmin(a, bb), std::fmax(a, bb), std::min(std::max(a, -1.0), 1.0),
                          a + (bb - a) * 0.25, std::hypot(a, bb), std::tanh(a), std::erf(a),
                          std::sqrt(std::fabs(a)), std::exp(double(x[i] * 0.5f)), std::exp2(a),
                          std::log2(double(std::fabs(x[i]) + 1.0f)), std::atan2(a, bb), std::cbrt(a),
                          std::trunc(a), std::round(a), std::sin(a), std::cos(a),
                          double(std::fmod(x[i], y[i])), std::copysign(bb, a)};
    for (int k = 0; k < 32; ++k) out[i * 32 + k] = float(r[k]);
  });
}

void refMathF32x4(const ManifestCase &c, std::vector<std::vector<uint8_t>> &b) {
  const float *x = view<float>(b[0]), *y = view<float>(b[1]);
  float *out = view<float>(b[2]);
  forEachId(c, [&](uint64_t i) {
    for (uint64_t e = 0; e < 4; ++e) {
      const double a = x[4 * i + e], bb = y[4 * i + e];
      const double r[8] = {std::sqrt(std::fabs(a)), std::exp(a), std::fmin(a, bb), std::min(std::max(a, -1.0), 1.0),
                           a + (bb - a) * 0.25, std::fma(a, bb, 1.0), std::sin(a), std::exp(a)};
      for (uint64_t k = 0; k < 8; ++k) out[4 * (8 * i + k) + e] = float(r[k]);
    }
  });
}

void refMathF64(const ManifestCase &c, std::vector<std::vector<uint8_t>> &b) {
  const double *x = view<double>(b[0]), *y = view<double>(b[1]);
  double *out = view<double>(b[2]);
  forEachId(c, [&](uint64_t i) {
    const double a = x[i], bb = y[i];
    double *o = out + i * 8;
    o[0] = std::sqrt(std::fabs(a));
    o[1] = std::exp(a);
    o[2] = std::log(std::fabs(a) + 1.0);
    o[3] = std::pow(std::fabs(a), bb);
    o[4] = std::sin(a);
    o[5] = std::fma(a, bb, 1.0);
    o[6] = std::fmax(a, bb);
    o[7] = std::tanh(a);
  });
}

// convert.cl: _sat clamps to the destination range, without _sat the value is
// truncated to the destination's bits; float -> int rounds toward zero unless a
// rounding suffix says otherwise; int -> float rounds to nearest even by default.
int64_t clampTo(double v, double lo, double hi) { return int64_t(std::min(std::max(v, lo), hi)); }

void refConvFromFloat(const ManifestCase &c, std::vector<std::vector<uint8_t>> &b) {
  const float *x = view<float>(b[0]);
  int32_t *out = view<int32_t>(b[1]);
  forEachId(c, [&](uint64_t i) {
    const float a = x[i];
    int32_t *o = out + i * 12;
    const double t = std::trunc(a), e = std::nearbyint(a);
    o[0] = int32_t(t);
    o[1] = int32_t(clampTo(t, INT32_MIN, INT32_MAX));
    o[2] = int32_t(e);
    o[3] = int32_t(std::floor(a));
    o[4] = int32_t(std::ceil(a));
    o[5] = int32_t(clampTo(e, INT32_MIN, INT32_MAX));
    o[6] = int32_t(clampTo(t, 0, 255));
    o[7] = int32_t(clampTo(std::floor(a), -128, 127));
    o[8] = int32_t(clampTo(t, 0, 65535));
    o[9] = floatBits(a);
    o[10] = int32_t(clampTo(std::trunc(a * 1000.0f), -32768, 32767));
    o[11] = int32_t(uint32_t(clampTo(t, 0, 4294967295.0)));
  });
}

// int -> float with a directed rounding: the nearest float, stepped one ulp the other
// way when it landed on the wrong side of the exact value (a double holds any int).
float intToFloat(int32_t a, int dir) { // 0 toward zero, 1 up, -1 down
  const double exact = a;
  float f = float(exact);
  if (dir == 0 && std::fabs(double(f)) > std::fabs(exact)) f = std::nextafter(f, 0.0f);
  if (dir == 1 && double(f) < exact) f = std::nextafter(f, INFINITY);
  if (dir == -1 && double(f) > exact) f = std::nextafter(f, -INFINITY);
  return f;
}

void refConvFromInt(const ManifestCase &c, std::vector<std::vector<uint8_t>> &b) {
  const int32_t *x = view<int32_t>(b[0]);
  float *outf = view<float>(b[1]);
  int32_t *outi = view<int32_t>(b[2]);
  forEachId(c, [&](uint64_t i) {
    const int32_t a = x[i];
    float *f = outf + i * 4;
    f[0] = float(a);
    f[1] = intToFloat(a, 0);
    f[2] = intToFloat(a, 1);
    f[3] = intToFloat(a, -1);
    int32_t *o = outi + i * 4;
    o[0] = std::min(std::max(a, 0), 255);
    o[1] = std::min(std::max(a, -128), 127);
    o[2] = int16_t(uint16_t(uint32_t(a)));
    o[3] = std::min(std::max(a, 0), 65535);
  });
}

void refConvVec(const ManifestCase &c, std::vector<std::vector<uint8_t>> &b) {
  const float *x = view<float>(b[0]);
  int32_t *out = view<int32_t>(b[1]);
  forEachId(c, [&](uint64_t i) {
    for (uint64_t e = 0; e < 4; ++e) {
      const float a = x[4 * i + e];
      out[8 * i + e] = int32_t(clampTo(std::nearbyint(a), INT32_MIN, INT32_MAX));
      out[8 * i + 4 + e] = int32_t(clampTo(std::trunc(a), 0, 255));
    }
  });
}

// atomics64.cl: the updates commute; 64-bit wrap-around on unsigned types.
void refAtomics64(const ManifestCase &c, std::vector<std::vector<uint8_t>> &b) {
  int64_t *cnt = view<int64_t>(b[0]);
  uint64_t *u = view<uint64_t>(b[1]);
  auto wrap = [](uint64_t v) { return int64_t(v); };
  forEachId(c, [&](uint64_t gid) {
    const int64_t i = int64_t(gid);
    cnt[0] = wrap(uint64_t(cnt[0]) + uint64_t(i) * 0x100000001ull);
    cnt[1] = wrap(uint64_t(cnt[1]) - (uint64_t(i) << 33));
    cnt[2] = std::max<int64_t>(cnt[2], i * -3000000000ll);
    cnt[3] = std::min<int64_t>(cnt[3], i * -3000000000ll);
    cnt[4] |= int64_t(1ull << (i % 63));
    cnt[5] &= ~int64_t(1ull << (i % 63));
    cnt[6] ^= wrap(uint64_t(i) * 0x123456789ull);
    cnt[7] = wrap(uint64_t(cnt[7]) + 1);
    u[0] -= 1;
    u[1] = std::max<uint64_t>(u[1], uint64_t(i) * 0x9000000000000001ull);
    u[2] += uint64_t(i) * 0x100000000ull;
  });
}

void refAtomics64Local(const ManifestCase &c, std::vector<std::vector<uint8_t>> &b) {
  const int64_t *in = view<int64_t>(b[0]);
  int64_t *out = view<int64_t>(b[1]);
  uint64_t sum = uint64_t(out[0]);
  forEachId(c, [&](uint64_t i) { sum += uint64_t(in[i]); });
  out[0] = int64_t(sum);
}

void refGuardThenAll(const ManifestCase &c, std::vector<std::vector<uint8_t>> &b) {
  const int32_t *in = view<int32_t>(b[0]);
  int32_t *a = view<int32_t>(b[1]), *r = view<int32_t>(b[2]);
  const uint32_t n = scalarArg<uint32_t>(c, 3);
  forEachId(c, [&](uint64_t i) {
    if (i < n) a[i] = in[i] * 3;
    r[i] = int32_t(uint32_t(a[i]) - uint32_t(i));
  });
}

void refGuardOrUniform(const ManifestCase &c, std::vector<std::vector<uint8_t>> &b) {
  const float *in = view<float>(b[0]);
  float *out = view<float>(b[1]), *r = view<float>(b[2]);
  const uint32_t nx = scalarArg<uint32_t>(c, 3), ny = scalarArg<uint32_t>(c, 4);
  for (uint64_t y = 0; y < c.global[1]; ++y)
    for (uint64_t x = 0; x < c.global[0]; ++x) {
      const uint64_t i = y * c.global[0] + x;
      if (!(x >= nx || y >= ny)) out[i] = in[i] * 0.5f + 1.0f;
      r[i] = out[i] + float(x);
    }
}

void refGuardAndUniform(const ManifestCase &c, std::vector<std::vector<uint8_t>> &b) {
  int32_t *out = view<int32_t>(b[0]);
  const uint32_t n = scalarArg<uint32_t>(c, 1), on = scalarArg<uint32_t>(c, 2);
  forEachId(c, [&](uint64_t i) { out[i] = i < n && on != 0 ? int32_t(i * 7) : -1; });
}

struct NamedReference {
  const char *id; // FILE.cl:KERNEL
  Reference fn;
};

const NamedReference kReferences[] = {
    {"float_math.cl:float_basic", refFloatBasic},
    {"float_math.cl:float_transcendental", refFloatTranscendental},
    {"float_math.cl:double_ops", refDoubleOps},
    {"int_ops.cl:int_mix", refIntMix},
    {"int_ops.cl:uint_bits", refUintBits},
    {"int_ops.cl:long_mul", refLongMul},
    {"local_barrier.cl:block_sum", refBlockSum},
    {"local_barrier.cl:reverse_tile", refReverseTile},
    {"local_barrier.cl:histogram", refHistogram},
    {"local_barrier.cl:grid2d", refGrid2d},
    {"basic.cl:axpy", refAxpy},
    {"basic.cl:scale_int", refScaleInt},
    {"basic.cl:long_chain", refLongChain},
    {"basic.cl:fma_chain", refFmaChain},
    {"basic.cl:ids", refIds},
    {"basic.cl:scalars", refScalars},
    {"basic.cl:matmul", refMatmul},
    {"barriers.cl:reduce_static", refReduceStatic},
    {"barriers.cl:reduce_arg", refReduceArg},
    {"barriers.cl:transpose", refTranspose},
    {"barriers.cl:uniform_mix", refUniformMix},
    {"barrier_phis.cl:loop_result", refLoopResult},
    {"barrier_phis.cl:loop_counter", refLoopCounter},
    {"barrier_phis.cl:cond_across", refCondAcross},
    {"barrier_phis.cl:cond_loop", refCondLoop},
    {"vload.cl:vload_float", refVloadFloat},
    {"vload.cl:vload_int_offsets", refVloadIntOffsets},
    {"vload.cl:vload_local", refVloadLocal},
    {"atomics.cl:hist_global", refHistGlobal},
    {"atomics.cl:hist_local", refHistLocal},
    {"atomics.cl:atomic_ops", refAtomicOps},
    {"integer.cl:int_ops", refIntOps},
    {"integer.cl:int_ops_vec", refIntOpsVec},
    {"integer.cl:int_small_long", refIntSmallLong},
    {"integer.cl:div_uniform", refDivUniform},
    {"relational.cl:rel_ops", refRelOps},
    {"relational.cl:rel_vec", refRelVec},
    {"math.cl:math_f32", refMathF32},
    {"math.cl:math_f32x4", refMathF32x4},
    {"math.cl:math_f64", refMathF64},
    {"convert.cl:conv_from_float", refConvFromFloat},
    {"convert.cl:conv_from_int", refConvFromInt},
    {"convert.cl:conv_vec", refConvVec},
    {"atomics64.cl:atomics64", refAtomics64},
    {"atomics64.cl:atomics64_local", refAtomics64Local},
    {"guards.cl:guard_then_all", refGuardThenAll},
    {"guards.cl:guard_or_uniform", refGuardOrUniform},
    {"guards.cl:guard_and_uniform", refGuardAndUniform},
};

} // namespace

Reference findReference(const ManifestCase &c) {
  const std::string id = std::filesystem::path(c.file).filename().string() + ":" + c.kernel;
  for (const NamedReference &r : kReferences)
    if (id == r.id) return r.fn;
  return nullptr;
}

} // namespace cgraph::conformance
