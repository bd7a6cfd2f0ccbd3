#include "kernel_manifest.h"

#include <cmath>
#include <cstring>
#include <random>
#include <sstream>

namespace cgraph::cltest {

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

} // namespace cgraph::cltest
