// The built-in host operations' argument check (contract in cgraph/graph/host_ops.h).
#include <cgraph/graph/host_ops.h>

#include <cmath>
#include <cstdlib>
#include <cstring>

namespace cgraph {

namespace {

bool isFloatType(ScalarType t) {
  return t == ScalarType::F16 || t == ScalarType::F32 || t == ScalarType::F64;
}

bool isSignedType(ScalarType t) {
  return t == ScalarType::I8 || t == ScalarType::I16 || t == ScalarType::I32 ||
         t == ScalarType::I64;
}

// The value of scalar bits (Param::defaultBits layout) as a double; enough to tell
// negative and NaN values.
double scalarValue(ScalarType t, uint64_t bits) {
  switch (t) {
  case ScalarType::F16: {
    const uint32_t sign = uint32_t(bits >> 15) & 1, expo = uint32_t(bits >> 10) & 0x1F,
                   mant = uint32_t(bits) & 0x3FF;
    double v = expo == 0x1F
                   ? (mant ? NAN : INFINITY)
                   : std::ldexp(double(expo ? (mant | 0x400) : mant), int(expo ? expo : 1) - 25);
    return sign ? -v : v;
  }
  case ScalarType::F32: {
    float f;
    const uint32_t u = uint32_t(bits);
    std::memcpy(&f, &u, 4);
    return double(f);
  }
  case ScalarType::F64: {
    double d;
    std::memcpy(&d, &bits, 8);
    return d;
  }
  default:
    break;
  }
  const uint32_t width = scalarSize(t) * 8;
  if (width == 0 || width > 64) return 0;
  if (isSignedType(t)) return double(int64_t(bits << (64 - width)) >> (64 - width));
  return double(width == 64 ? bits : bits & ((uint64_t(1) << width) - 1));
}

bool startsWith(const std::string &s, const char *p) {
  return s.rfind(p, 0) == 0;
}

std::string plural(uint32_t n, const char *what) {
  return std::to_string(n) + " " + what + (n == 1 ? "" : "s");
}

// One non-slot argument of built-in `op`; `havePath` tracks the path String.
Error checkExtra(const Graph &g, const HostOpInfo &op, const Arg &a, bool *havePath) {
  const std::string name = op.name;
  switch (a.kind) {
  case ArgKind::String: {
    ScalarType ty;
    if (op.needsPath && !*havePath) {
      *havePath = true;
      return Error::success();
    }
    if (parseScalarType(a.text, &ty)) return Error::success();
    if (name == "compare" && (startsWith(a.text, "atol=") || startsWith(a.text, "rtol="))) {
      const std::string num = a.text.substr(5);
      char *end = nullptr;
      const double v = num.empty() ? 0 : std::strtod(num.c_str(), &end);
      if (num.empty() || *end != '\0') return makeError("'" + num + "' is not a valid f64");
      if (!(v >= 0)) return makeError("tolerance must be >= 0");
      return Error::success();
    }
    if (name == "print" && !a.text.empty() &&
        a.text.find_first_not_of("0123456789") == std::string::npos)
      return Error::success();
    return makeError("'" + a.text + "' is not understood by '" + name + "'");
  }
  case ArgKind::Scalar:
  case ArgKind::Param: {
    const bool param = a.kind == ArgKind::Param;
    const ScalarType ty = param && a.index < g.params.size() ? g.params[a.index].type : a.type;
    const double v = param ? 0 : scalarValue(ty, a.value); // a Param's value comes at run time
    if (name == "print" && !isFloatType(ty)) {
      if (v < 0) return makeError("count must be >= 0");
      return Error::success();
    }
    if (name == "compare") {
      if (!(v >= 0)) return makeError("tolerance must be >= 0");
      return Error::success();
    }
    return makeError("'" + name + "' takes no scalar argument here");
  }
  case ArgKind::Slot:
    return makeError("'" + name + "' takes " + plural(op.slotArgs, "slot argument"));
  case ArgKind::LocalMem:
    return makeError("local memory is not a host task argument");
  }
  return makeError("unknown argument kind " + std::to_string(int(a.kind)));
}

} // namespace

const std::vector<HostOpInfo> &builtinHostOps() {
  static const std::vector<HostOpInfo> kOps = {
      {"checksum", 1, false}, {"print", 1, false},   {"write_file", 1, true},
      {"read_file", 1, true}, {"compare", 2, false},
  };
  return kOps;
}

const HostOpInfo *findBuiltinHostOp(const std::string &name) {
  for (const HostOpInfo &op : builtinHostOps())
    if (name == op.name) return &op;
  return nullptr;
}

Error checkHostTask(const Graph &g, const Node &node) {
  if (!node.host.library.empty()) return Error::success();
  const HostOpInfo *op = findBuiltinHostOp(node.host.op);
  if (!op) {
    std::string names;
    for (const HostOpInfo &b : builtinHostOps())
      names += (names.empty() ? "" : ", ") + std::string(b.name);
    return makeError("unknown built-in host task '" + node.host.op + "' (built-ins: " + names +
                     ")");
  }
  const std::string name = op->name;
  const std::vector<Arg> &args = node.args;
  for (uint32_t i = 0; i < op->slotArgs; ++i) {
    if (i >= args.size())
      return makeError("'" + name + "' needs " + plural(op->slotArgs, "slot argument") + ", got " +
                       plural(uint32_t(args.size()), "arg"));
    if (args[i].kind != ArgKind::Slot)
      return makeError("arg " + std::to_string(i) + ": '" + name + "' expects a slot here");
    if (args[i].index >= g.slots.size())
      return makeError("arg " + std::to_string(i) + ": slot index out of range");
  }
  bool havePath = false;
  for (size_t i = op->slotArgs; i < args.size(); ++i)
    if (Error e = checkExtra(g, *op, args[i], &havePath))
      return e.withContext("arg " + std::to_string(i));
  if (op->needsPath && !havePath) return makeError("'" + name + "' needs a path argument");
  return Error::success();
}

} // namespace cgraph
