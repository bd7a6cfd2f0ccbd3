#include "cgraph/model.h"

namespace cgraph {

uint32_t scalarSize(ScalarType t) {
  switch (t) {
  case ScalarType::I8: case ScalarType::U8: return 1;
  case ScalarType::I16: case ScalarType::U16: case ScalarType::F16: return 2;
  case ScalarType::I32: case ScalarType::U32: case ScalarType::F32: return 4;
  case ScalarType::I64: case ScalarType::U64: case ScalarType::F64: return 8;
  }
  return 0;
}

const char *scalarName(ScalarType t) {
  switch (t) {
  case ScalarType::I8: return "i8";
  case ScalarType::I16: return "i16";
  case ScalarType::I32: return "i32";
  case ScalarType::I64: return "i64";
  case ScalarType::U8: return "u8";
  case ScalarType::U16: return "u16";
  case ScalarType::U32: return "u32";
  case ScalarType::U64: return "u64";
  case ScalarType::F16: return "f16";
  case ScalarType::F32: return "f32";
  case ScalarType::F64: return "f64";
  }
  return "invalid";
}

bool parseScalarType(const std::string &s, ScalarType *out) {
  for (uint8_t v = 1; v <= 11; ++v) {
    auto t = static_cast<ScalarType>(v);
    if (s == scalarName(t)) {
      if (out) *out = t;
      return true;
    }
  }
  return false;
}

const char *formKindName(FormKind k) {
  switch (k) {
  case FormKind::SpirV: return "spirv";
  case FormKind::OpenCLC: return "opencl-c";
  case FormKind::LLVMBitcode: return "llvm-bc";
  case FormKind::PTX: return "ptx";
  case FormKind::Cubin: return "cubin";
  case FormKind::AmdgcnCodeObject: return "amdgcn-code-object";
  case FormKind::HostObject: return "host-object";
  }
  return "invalid";
}

std::string signatureDifference(const Kernel &a, const Kernel &b) {
  const std::string versus = "'" + b.name + "' and '" + a.name + "' differ: ";
  if (a.params.size() != b.params.size())
    return versus + std::to_string(b.params.size()) + " parameters vs " + std::to_string(a.params.size());
  for (size_t i = 0; i < a.params.size(); ++i) {
    const KernelParam &x = a.params[i], &y = b.params[i];
    if (x.kind != y.kind || x.size != y.size || x.qualifiers != y.qualifiers || x.typeName != y.typeName)
      return versus + "parameter " + std::to_string(i) + " is " +
             (y.typeName.empty() ? std::string("?") : y.typeName) + (y.qualifiers != x.qualifiers ? " (qualifiers differ)" : "") +
             " vs " + (x.typeName.empty() ? std::string("?") : x.typeName);
  }
  return "";
}

const char *condKindName(CondKind k) { return k == CondKind::While ? "while" : "if"; }

namespace {
const char *const kCollKindNames[] = {"all_reduce", "all_gather", "reduce_scatter", "broadcast", "send", "recv"};
const char *const kReduceOpNames[] = {"sum", "max", "min", "prod"};
} // namespace

const char *collKindName(CollKind k) {
  return uint8_t(k) <= kCollKindMax ? kCollKindNames[uint8_t(k)] : "invalid";
}
bool parseCollKind(const std::string &s, CollKind *out) {
  for (uint8_t i = 0; i <= kCollKindMax; ++i)
    if (s == kCollKindNames[i]) return *out = CollKind(i), true;
  return false;
}
const char *reduceOpName(ReduceOp op) {
  return uint8_t(op) <= kReduceOpMax ? kReduceOpNames[uint8_t(op)] : "invalid";
}
bool parseReduceOp(const std::string &s, ReduceOp *out) {
  for (uint8_t i = 0; i <= kReduceOpMax; ++i)
    if (s == kReduceOpNames[i]) return *out = ReduceOp(i), true;
  return false;
}

const char *nodeKindName(NodeKind k) {
  switch (k) {
  case NodeKind::Kernel: return "kernel";
  case NodeKind::Copy: return "copy";
  case NodeKind::CopyRect: return "copy-rect";
  case NodeKind::Fill: return "fill";
  case NodeKind::Host: return "host";
  case NodeKind::Barrier: return "barrier";
  case NodeKind::Subgraph: return "subgraph";
  case NodeKind::Conditional: return "conditional";
  case NodeKind::Collective: return "collective";
  }
  return "invalid";
}

namespace {
template <typename V> uint32_t findByName(const V &v, const std::string &n) {
  for (size_t i = 0; i < v.size(); ++i)
    if (v[i].name == n) return static_cast<uint32_t>(i);
  return kNone;
}
} // namespace

uint32_t Graph::findSlot(const std::string &n) const { return findByName(slots, n); }
uint32_t Graph::findParam(const std::string &n) const { return findByName(params, n); }
uint32_t Graph::findKernel(const std::string &n) const { return findByName(kernels, n); }
uint32_t Graph::findNode(const std::string &n) const { return findByName(nodes, n); }

std::string exprFieldName(ExprField f, uint32_t arg) {
  const uint16_t v = static_cast<uint16_t>(f);
  if (v <= 8) {
    static const char *kinds[3] = {"global", "local", "offset"};
    return std::string(kinds[v / 3]) + "[" + std::to_string(v % 3) + "]";
  }
  switch (f) {
  case ExprField::ScalarArg: return "arg " + std::to_string(arg);
  case ExprField::CopySrcOffset: return "src offset";
  case ExprField::CopyDstOffset: return "dst offset";
  case ExprField::CopyBytes:
  case ExprField::FillBytes: return "bytes";
  case ExprField::FillOffset: return "offset";
  case ExprField::SlotSize: return "size";
  case ExprField::CollSendOffset: return "send offset";
  case ExprField::CollRecvOffset: return "recv offset";
  case ExprField::CollCount: return "count";
  case ExprField::CollPeer: return "peer";
  default: return "?";
  }
}

} // namespace cgraph
