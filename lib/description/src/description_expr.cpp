// Integer expressions in graph descriptions (docs/graph-json.md, "Expressions"):
// parsed and folded with lib/graph's expression module. Repeat variables and literals
// fold at compile time, so the unrolled graph is exact; an expression that still
// references a graph parameter after folding is stored in the file where the field
// allows it (nd-ranges and kernel scalar arguments; .cgf 2.0) and refused elsewhere.
#include "reader.h"

#include "cgraph/graph/expr.h"

#include <optional>

namespace cgraph::desc {

namespace {

bool isFloat(ScalarType t) {
  return t == ScalarType::F16 || t == ScalarType::F32 || t == ScalarType::F64;
}

} // namespace

bool isExpressionText(const std::string &s, bool strict) {
  size_t i = 0;
  while (i < s.size() && (s[i] == ' ' || s[i] == '\t'))
    ++i;
  if (i == s.size()) return !strict && !s.empty(); // blanks: an (empty) expression error
  char c = s[i];
  if (c == '$' || c == '-' || c == '(' || (c >= '0' && c <= '9')) return true;
  if (strict) {
    for (const char *f : {"min", "max", "ceil_div", "align_up"}) {
      std::string fn = f;
      if (s.compare(i, fn.size(), fn) != 0) continue;
      size_t j = i + fn.size();
      while (j < s.size() && (s[j] == ' ' || s[j] == '\t'))
        ++j;
      if (j < s.size() && s[j] == '(') return true;
    }
    return false;
  }
  return s.find_first_of("$0123456789+-*/%()") != std::string::npos;
}

Pos stringPos(const JValue &v, uint32_t offset) {
  if (!v.isString() || v.escaped) return v.pos;
  Pos p = v.pos;
  p.col += 1 + offset; // past the opening quote; a JSON string has no raw line breaks
  return p;
}

bool DescriptionReader::isPlainRef(GraphCtx &c, const JValue &v) const {
  if (!v.isString() || v.text.empty() || v.text[0] != '$') return false;
  const std::string name = v.text.substr(1);
  uint64_t iter;
  return repeatVar(c, name, &iter) || c.g().findParam(name) != kNone ||
         name.find_first_not_of(
             "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") ==
             std::string::npos;
}

bool DescriptionReader::repeatVar(const GraphCtx &c, const std::string &name,
                                  uint64_t *value) const {
  for (size_t k = c.frames.size(); k-- > 0;)
    if (c.frames[k].var == name) {
      *value = c.frames[k].iter;
      return true;
    }
  return false;
}

int64_t DescriptionReader::foldExpr(GraphCtx &c, const JValue &v, const std::string &what) {
  return *foldOrStore(c, v, what, nullptr, nullptr);
}

std::optional<int64_t> DescriptionReader::foldOrStore(GraphCtx &c, const JValue &v,
                                                      const std::string &what,
                                                      std::vector<uint8_t> *stored,
                                                      std::optional<int64_t> *atDefaults) {
  const std::string &f = c.file;
  uint32_t off = 0;
  Expected<expr::Program> prog = expr::parse(v.text, &off);
  if (!prog) failAt(f, stringPos(v, off), what + ": " + prog.error().message());
  const expr::Program &p = *prog;
  auto firstUse = [&](uint32_t var) {
    for (size_t k = 0; k < p.code.size(); ++k)
      if (p.code[k].op == expr::Op::Var && p.code[k].operand == int64_t(var)) return p.offsets[k];
    return uint32_t(0);
  };
  expr::Bindings known;
  for (uint32_t i = 0; i < p.names.size(); ++i) {
    const std::string &name = p.names[i];
    uint64_t iter;
    if (repeatVar(c, name, &iter)) {
      known[name] = int64_t(iter); // iterations are below kMaxNodes
      continue;
    }
    uint32_t pi = c.g().findParam(name);
    if (pi == kNone) {
      std::vector<std::string> names;
      for (const Frame &fr : c.frames)
        if (!fr.var.empty()) names.push_back(fr.var);
      for (const Param &pp : c.g().params)
        names.push_back(pp.name);
      failAt(f, stringPos(v, firstUse(i)),
             what + ": unknown name '$" + name + "' (not a repeat variable or parameter)" +
                 suggest(name, names));
    }
    ScalarType t = c.g().params[pi].type;
    if (isFloat(t))
      failAt(f, stringPos(v, firstUse(i)),
             what + ": parameter '" + name + "' is " + scalarName(t) +
                 "; integer expressions need integer parameters");
  }
  Expected<expr::Program> folded = expr::fold(p, known, &off);
  if (!folded) failAt(f, stringPos(v, off), what + ": " + folded.error().message());
  if (std::optional<int64_t> value = folded->constant()) return *value;
  if (stored) {
    std::vector<uint32_t> newIndex;
    std::vector<int64_t> defaults;
    for (const std::string &n : folded->names) {
      const uint32_t pi = c.g().findParam(n);
      newIndex.push_back(pi);
      const Param &pp = c.g().params[pi];
      defaults.push_back(expr::integerValue(pp.type, pp.defaultBits));
    }
    Expected<int64_t> dv = expr::evaluate(*folded, defaults);
    if (atDefaults) *atDefaults = dv ? std::optional<int64_t>(*dv) : std::nullopt;
    Expected<expr::Program> mapped = expr::remapVariables(*folded, newIndex);
    if (!mapped) failAt(f, v, what + ": " + mapped.error().message());
    *stored = expr::encode(*mapped);
    return std::nullopt;
  }
  std::string list;
  for (const std::string &n : folded->names)
    list += (list.empty() ? "'$" : ", '$") + n + "'";
  uint32_t at = 0;
  for (size_t k = 0; k < folded->code.size(); ++k)
    if (folded->code[k].op == expr::Op::Var) {
      at = folded->offsets[k];
      break;
    }
  failAt(f, stringPos(v, at),
         what + ": expressions over parameters (" + list +
             ") are stored only in nd-ranges, integer kernel and host task arguments, copy and "
             "fill offsets and sizes, and slot sizes");
}

uint64_t DescriptionReader::readTransferUInt(GraphCtx &c, const JValue &v, const std::string &what,
                                             const std::string &context, ExprField field) {
  if (!v.isString() || !isExpressionText(v.text, false)) return toU64(c.file, v, what);
  const bool positive = field == ExprField::CopyBytes || field == ExprField::FillBytes;
  // A collective's count and peer may be 0 (a constant 0 count warns at validation).
  const std::string label = what + context;
  std::vector<uint8_t> code;
  std::optional<int64_t> atDefaults;
  std::optional<int64_t> value = foldOrStore(c, v, label, &code, &atDefaults);
  if (!value) {
    // Stored (.cgf 2.2): evaluated and range-checked per submission.
    FieldExpr fe;
    fe.field = field;
    fe.code = std::move(code);
    c.pendingExprs.push_back(std::move(fe));
    return uint64_t(atDefaults && *atDefaults >= 0 ? *atDefaults : 0);
  }
  if (*value < 1 && positive)
    failAt(c.file, v,
           label + " is " + std::to_string(*value) + " ('" + v.text + "'); it must be positive");
  if (*value < 0)
    failAt(c.file, v,
           label + " is " + std::to_string(*value) + " ('" + v.text +
               "'); it must not be negative");
  return uint64_t(*value);
}

uint64_t DescriptionReader::readUInt(GraphCtx &c, const JValue &v, const std::string &what,
                                     bool positive, const std::string &context) {
  if (!v.isString() || !isExpressionText(v.text, false)) return toU64(c.file, v, what);
  const std::string field = what + context;
  int64_t value = foldExpr(c, v, field);
  if (value < 1 && positive)
    failAt(c.file, v,
           field + " is " + std::to_string(value) + " ('" + v.text + "'); it must be positive");
  if (value < 0)
    failAt(c.file, v,
           field + " is " + std::to_string(value) + " ('" + v.text + "'); it must not be negative");
  return uint64_t(value);
}

} // namespace cgraph::desc
