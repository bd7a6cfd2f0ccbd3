#include <cgraph/expr.h>

#include <algorithm>
#include <limits>

namespace cgraph::expr {

namespace {

constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

struct FuncInfo {
  const char *name;
  Op op;
};
constexpr FuncInfo kFuncs[] = {
    {"min", Op::Min}, {"max", Op::Max}, {"ceil_div", Op::CeilDiv}, {"align_up", Op::AlignUp}};

bool isIdentStart(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
bool isIdentChar(char c) {
  return isIdentStart(c) || (c >= '0' && c <= '9');
}
bool isDigit(char c) {
  return c >= '0' && c <= '9';
}

std::string shown(std::string_view s) {
  // For messages: printable ASCII as is, anything else as \xNN.
  std::string out;
  for (char ch : s) {
    unsigned char c = static_cast<unsigned char>(ch);
    if (c >= 0x20 && c < 0x7f) {
      out += ch;
    } else {
      const char *hex = "0123456789abcdef";
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

class Parser {
public:
  explicit Parser(std::string_view text) : s_(text) {}

  Expected<Program> run(uint32_t *errorOffset) {
    if (s_.size() > kMaxExprText)
      return fail(0, "expression longer than " + std::to_string(kMaxExprText) + " bytes",
                  errorOffset);
    skipSpace();
    if (i_ == s_.size()) return fail(uint32_t(i_), "empty expression", errorOffset);
    bool ok = parseExpr(0);
    if (ok) {
      skipSpace();
      if (i_ != s_.size()) ok = expectedEnd();
    }
    if (!ok) {
      if (errorOffset) *errorOffset = errOff_;
      return makeError(err_);
    }
    Program p;
    p.code = std::move(code_);
    p.offsets = std::move(offs_);
    p.names = std::move(names_);
    p.maxStack = maxDepth_;
    return p;
  }

private:
  Expected<Program> fail(uint32_t off, std::string msg, uint32_t *errorOffset) {
    if (errorOffset) *errorOffset = off;
    return makeError(std::move(msg));
  }
  bool error(size_t off, std::string msg) {
    if (!failed_) {
      failed_ = true;
      errOff_ = uint32_t(off);
      err_ = std::move(msg);
    }
    return false;
  }
  // Called when input is left after a complete expression.
  bool expectedEnd() {
    char c = s_[i_];
    if (c == ')') return error(i_, "unbalanced ')'");
    return error(i_, "unexpected " + describe(i_) + " after the expression");
  }
  std::string describe(size_t at) {
    if (at >= s_.size()) return "end of expression";
    char c = s_[at];
    if (isDigit(c)) {
      size_t e = at;
      while (e < s_.size() && isIdentChar(s_[e]))
        ++e;
      return "number '" + shown(s_.substr(at, e - at)) + "'";
    }
    if (isIdentStart(c)) {
      size_t e = at;
      while (e < s_.size() && isIdentChar(s_[e]))
        ++e;
      return "name '" + shown(s_.substr(at, e - at)) + "'";
    }
    return "'" + shown(s_.substr(at, 1)) + "'";
  }
  void skipSpace() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t'))
      ++i_;
  }
  bool emit(Op op, int64_t operand, size_t off) {
    if (code_.size() >= kMaxExprCode)
      return error(off, "expression longer than " + std::to_string(kMaxExprCode) + " operations");
    code_.push_back(Instr{op, operand});
    offs_.push_back(uint32_t(off));
    if (op == Op::Lit || op == Op::Var) {
      ++depth_;
      maxDepth_ = std::max(maxDepth_, depth_);
    } else {
      depth_ -= arity(op) - 1;
    }
    return true;
  }

  bool parseExpr(uint32_t nest) {
    if (nest > kMaxExprDepth)
      return error(i_,
                   "expression nested deeper than " + std::to_string(kMaxExprDepth) + " levels");
    if (!parseTerm(nest)) return false;
    for (;;) {
      skipSpace();
      if (i_ >= s_.size() || (s_[i_] != '+' && s_[i_] != '-')) return true;
      size_t at = i_;
      Op op = s_[i_] == '+' ? Op::Add : Op::Sub;
      ++i_;
      if (!parseTerm(nest) || !emit(op, 0, at)) return false;
    }
  }

  bool parseTerm(uint32_t nest) {
    if (!parseUnary(nest)) return false;
    for (;;) {
      skipSpace();
      if (i_ >= s_.size() || (s_[i_] != '*' && s_[i_] != '/' && s_[i_] != '%')) return true;
      size_t at = i_;
      Op op = s_[i_] == '*' ? Op::Mul : s_[i_] == '/' ? Op::Div : Op::Rem;
      ++i_;
      if (!parseUnary(nest) || !emit(op, 0, at)) return false;
    }
  }

  bool parseUnary(uint32_t nest) {
    skipSpace();
    if (i_ < s_.size() && s_[i_] == '-') {
      if (nest + 1 > kMaxExprDepth)
        return error(i_,
                     "expression nested deeper than " + std::to_string(kMaxExprDepth) + " levels");
      size_t at = i_++;
      return parseUnary(nest + 1) && emit(Op::Neg, 0, at);
    }
    return parsePrimary(nest);
  }

  bool expectChar(char want, const char *what) {
    skipSpace();
    if (i_ < s_.size() && s_[i_] == want) {
      ++i_;
      return true;
    }
    return error(i_, std::string("expected ") + what + ", found " + describe(i_));
  }

  bool parsePrimary(uint32_t nest) {
    skipSpace();
    if (i_ >= s_.size()) return error(i_, "unexpected end of expression; expected a value");
    const size_t at = i_;
    char c = s_[i_];
    if (isDigit(c)) {
      uint64_t v = 0;
      while (i_ < s_.size() && isDigit(s_[i_])) {
        unsigned d = unsigned(s_[i_] - '0');
        if (v > (uint64_t(std::numeric_limits<int64_t>::max()) - d) / 10) {
          while (i_ < s_.size() && isDigit(s_[i_]))
            ++i_;
          return error(at, "integer literal '" + std::string(s_.substr(at, i_ - at)) +
                               "' does not fit in 64-bit signed integers");
        }
        v = v * 10 + d;
        ++i_;
      }
      if (i_ < s_.size() && isIdentChar(s_[i_])) return error(at, "invalid " + describe(at));
      return emit(Op::Lit, int64_t(v), at);
    }
    if (c == '$') {
      ++i_;
      if (i_ >= s_.size() || !isIdentStart(s_[i_]))
        return error(at, "expected a variable name after '$'");
      size_t b = i_;
      while (i_ < s_.size() && isIdentChar(s_[i_]))
        ++i_;
      std::string name(s_.substr(b, i_ - b));
      auto it = std::find(names_.begin(), names_.end(), name);
      int64_t index = int64_t(it - names_.begin());
      if (it == names_.end()) names_.push_back(name);
      return emit(Op::Var, index, at);
    }
    if (c == '(') {
      ++i_;
      if (!parseExpr(nest + 1)) return false;
      skipSpace();
      if (i_ >= s_.size()) return error(at, "unbalanced '('");
      return expectChar(')', "')'");
    }
    if (isIdentStart(c)) {
      while (i_ < s_.size() && isIdentChar(s_[i_]))
        ++i_;
      std::string name(s_.substr(at, i_ - at));
      skipSpace();
      bool call = i_ < s_.size() && s_[i_] == '(';
      const FuncInfo *f = nullptr;
      for (const FuncInfo &fi : kFuncs)
        if (name == fi.name) f = &fi;
      if (!call) {
        if (f) return error(at, "function '" + name + "' needs arguments: " + name + "(a, b)");
        return error(at, "unexpected name '" + shown(name) + "' (variables are written '$" +
                             shown(name) + "'; functions are min, max, ceil_div, align_up)");
      }
      if (!f)
        return error(at, "unknown function '" + shown(name) +
                             "' (expected min, max, ceil_div or align_up)");
      size_t open = i_++;
      uint32_t args = 0;
      skipSpace();
      if (i_ < s_.size() && s_[i_] == ')') {
        ++i_;
      } else {
        for (;;) {
          if (!parseExpr(nest + 1)) return false;
          ++args;
          skipSpace();
          if (i_ < s_.size() && s_[i_] == ',') {
            ++i_;
            continue;
          }
          if (i_ >= s_.size()) return error(open, "unbalanced '('");
          if (!expectChar(')', "',' or ')'")) return false;
          break;
        }
      }
      if (args != 2)
        return error(at, "'" + name + "' takes 2 arguments, found " + std::to_string(args));
      return emit(f->op, 0, at);
    }
    if (c == ')') return error(at, "unexpected ')'; expected a value");
    return error(at, "unexpected " + describe(at) + "; expected a value");
  }

  std::string_view s_;
  size_t i_ = 0;
  std::vector<Instr> code_;
  std::vector<uint32_t> offs_;
  std::vector<std::string> names_;
  uint32_t depth_ = 0, maxDepth_ = 0;
  bool failed_ = false;
  uint32_t errOff_ = 0;
  std::string err_;
};

// Stack depth check shared by decode and evaluate: true when every operator has its
// operands and one value is left; `maxStack` receives the peak.
bool wellFormed(const std::vector<Instr> &code, uint32_t *maxStack) {
  uint32_t depth = 0, peak = 0;
  for (const Instr &in : code) {
    uint32_t a = arity(in.op);
    if (depth < a) return false;
    depth = depth - a + 1;
    peak = std::max(peak, depth);
  }
  if (maxStack) *maxStack = peak;
  return depth == 1;
}

bool isOp(uint8_t b) {
  return b < kOpCount;
}

} // namespace

uint32_t arity(Op op) {
  switch (op) {
  case Op::Lit:
  case Op::Var:
    return 0;
  case Op::Neg:
    return 1;
  default:
    return 2;
  }
}

const char *opName(Op op) {
  switch (op) {
  case Op::Lit:
    return "lit";
  case Op::Var:
    return "var";
  case Op::Neg:
    return "neg";
  case Op::Add:
    return "+";
  case Op::Sub:
    return "-";
  case Op::Mul:
    return "*";
  case Op::Div:
    return "/";
  case Op::Rem:
    return "%";
  case Op::Min:
    return "min";
  case Op::Max:
    return "max";
  case Op::CeilDiv:
    return "ceil_div";
  case Op::AlignUp:
    return "align_up";
  }
  return "?";
}

std::optional<int64_t> Program::constant() const {
  if (code.size() == 1 && code[0].op == Op::Lit) return code[0].operand;
  return std::nullopt;
}

std::vector<uint32_t> Program::usedVariables() const {
  std::vector<uint32_t> out;
  for (const Instr &in : code)
    if (in.op == Op::Var) out.push_back(uint32_t(in.operand));
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::string Program::toString() const {
  // Precedence: 1 additive, 2 multiplicative, 3 unary, 4 atoms and calls.
  struct Item {
    std::string text;
    int prec;
  };
  std::vector<Item> st;
  for (const Instr &in : code) {
    if (in.op == Op::Lit) {
      if (in.operand == kMin)
        st.push_back({"(-9223372036854775807 - 1)", 4});
      else if (in.operand < 0)
        st.push_back({std::to_string(in.operand), 3});
      else
        st.push_back({std::to_string(in.operand), 4});
      continue;
    }
    if (in.op == Op::Var) {
      size_t i = size_t(in.operand);
      st.push_back(
          {"$" + (in.operand >= 0 && i < names.size() ? names[i] : std::to_string(in.operand)), 4});
      continue;
    }
    if (st.size() < arity(in.op)) return "<malformed>";
    if (in.op == Op::Neg) {
      Item a = st.back();
      st.pop_back();
      st.push_back({"-" + (a.prec >= 3 ? a.text : "(" + a.text + ")"), 3});
      continue;
    }
    Item b = st.back();
    st.pop_back();
    Item a = st.back();
    st.pop_back();
    if (in.op >= Op::Min) {
      st.push_back({std::string(opName(in.op)) + "(" + a.text + ", " + b.text + ")", 4});
      continue;
    }
    int p = (in.op == Op::Add || in.op == Op::Sub) ? 1 : 2;
    std::string l = a.prec >= p ? a.text : "(" + a.text + ")";
    std::string r = b.prec > p ? b.text : "(" + b.text + ")";
    st.push_back({l + " " + opName(in.op) + " " + r, p});
  }
  return st.size() == 1 ? st[0].text : "<malformed>";
}

Expected<Program> parse(std::string_view text, uint32_t *errorOffset) {
  return Parser(text).run(errorOffset);
}

Expected<int64_t> apply(Op op, int64_t a, int64_t b) {
  int64_t r = 0;
  switch (op) {
  case Op::Neg:
    if (a == kMin) return makeError("integer overflow in -(" + std::to_string(a) + ")");
    return -a;
  case Op::Add:
    if (__builtin_add_overflow(a, b, &r))
      return makeError("integer overflow in " + std::to_string(a) + " + " + std::to_string(b));
    return r;
  case Op::Sub:
    if (__builtin_sub_overflow(a, b, &r))
      return makeError("integer overflow in " + std::to_string(a) + " - " + std::to_string(b));
    return r;
  case Op::Mul:
    if (__builtin_mul_overflow(a, b, &r))
      return makeError("integer overflow in " + std::to_string(a) + " * " + std::to_string(b));
    return r;
  case Op::Div:
    if (b == 0) return makeError("division by zero");
    if (a == kMin && b == -1)
      return makeError("integer overflow in " + std::to_string(a) + " / -1");
    return a / b;
  case Op::Rem:
    if (b == 0) return makeError("remainder by zero");
    if (b == -1) return int64_t(0);
    return a % b;
  case Op::Min:
    return std::min(a, b);
  case Op::Max:
    return std::max(a, b);
  case Op::CeilDiv: {
    if (b == 0) return makeError("division by zero in ceil_div");
    if (a == kMin && b == -1)
      return makeError("integer overflow in ceil_div(" + std::to_string(a) + ", -1)");
    int64_t q = a / b;
    if (a % b != 0 && ((a < 0) == (b < 0))) ++q; // exact quotient positive: round up
    return q;
  }
  case Op::AlignUp: {
    if (b <= 0) return makeError("align_up to a non-positive alignment " + std::to_string(b));
    int64_t q = a / b;
    if (a % b != 0 && a > 0) ++q;
    if (__builtin_mul_overflow(q, b, &r))
      return makeError("integer overflow in align_up(" + std::to_string(a) + ", " +
                       std::to_string(b) + ")");
    return r;
  }
  case Op::Lit:
  case Op::Var:
    break;
  }
  return makeError(std::string("'") + opName(op) + "' is not an operator");
}

Expected<Program> fold(const Program &program, const Bindings &values, uint32_t *errorOffset) {
  if (!wellFormed(program.code, nullptr)) return makeError("malformed expression program");
  const bool haveOffsets = program.offsets.size() == program.code.size();
  struct Frag {
    bool known = false;
    int64_t value = 0;
    uint32_t offset = 0;     // where the fragment starts in the source
    std::vector<Instr> code; // when !known
    std::vector<uint32_t> offs;
  };
  auto fragCode = [](Frag &f, std::vector<Instr> &code, std::vector<uint32_t> &offs) {
    if (f.known) {
      code.push_back(Instr{Op::Lit, f.value});
      offs.push_back(f.offset);
    } else {
      code.insert(code.end(), f.code.begin(), f.code.end());
      offs.insert(offs.end(), f.offs.begin(), f.offs.end());
    }
  };
  std::vector<Frag> st;
  for (size_t k = 0; k < program.code.size(); ++k) {
    const Instr &in = program.code[k];
    const uint32_t off = haveOffsets ? program.offsets[k] : 0;
    auto failHere = [&](const Error &e) -> Expected<Program> {
      if (errorOffset) *errorOffset = off;
      return e;
    };
    if (in.op == Op::Lit) {
      Frag f;
      f.known = true;
      f.value = in.operand;
      f.offset = off;
      st.push_back(std::move(f));
      continue;
    }
    if (in.op == Op::Var) {
      Frag f;
      f.offset = off;
      size_t i = size_t(in.operand);
      if (in.operand >= 0 && i < program.names.size()) {
        auto it = values.find(program.names[i]);
        if (it != values.end()) {
          f.known = true;
          f.value = it->second;
          st.push_back(std::move(f));
          continue;
        }
      }
      f.code.push_back(in);
      f.offs.push_back(off);
      st.push_back(std::move(f));
      continue;
    }
    if (in.op == Op::Neg) {
      Frag &a = st.back();
      if (a.known) {
        auto r = apply(Op::Neg, a.value, 0);
        if (!r) return failHere(r.error());
        a.value = *r;
        a.offset = std::min(a.offset, off);
      } else {
        a.code.push_back(in);
        a.offs.push_back(off);
        a.offset = std::min(a.offset, off);
      }
      continue;
    }
    Frag b = std::move(st.back());
    st.pop_back();
    Frag a = std::move(st.back());
    st.pop_back();
    Frag out;
    out.offset = std::min(a.offset, off);
    if (a.known && b.known) {
      auto r = apply(in.op, a.value, b.value);
      if (!r) return failHere(r.error());
      out.known = true;
      out.value = *r;
    } else {
      // A known divisor or alignment is checked even when the other operand is not.
      if (b.known) {
        if ((in.op == Op::Div || in.op == Op::Rem || in.op == Op::CeilDiv) && b.value == 0)
          return failHere(apply(in.op, 1, 0).error());
        if (in.op == Op::AlignUp && b.value <= 0) return failHere(apply(in.op, 0, b.value).error());
      }
      fragCode(a, out.code, out.offs);
      fragCode(b, out.code, out.offs);
      out.code.push_back(in);
      out.offs.push_back(off);
    }
    st.push_back(std::move(out));
  }
  Program p;
  fragCode(st.back(), p.code, p.offsets);
  // Renumber the variables left, in order of first use.
  std::vector<int64_t> renumber(program.names.size(), -1);
  for (Instr &in : p.code) {
    if (in.op != Op::Var) continue;
    size_t i = size_t(in.operand);
    if (in.operand < 0 || i >= program.names.size()) continue; // unnamed: kept as is
    if (renumber[i] < 0) {
      renumber[i] = int64_t(p.names.size());
      p.names.push_back(program.names[i]);
    }
    in.operand = renumber[i];
  }
  if (!haveOffsets) p.offsets.clear();
  (void)wellFormed(p.code, &p.maxStack);
  return p;
}

Expected<int64_t> evaluate(const Program &program, const int64_t *values, size_t count,
                           uint32_t *errorOffset) {
  uint32_t peak = 0;
  if (program.code.size() > kMaxExprCode || !wellFormed(program.code, &peak))
    return makeError("malformed expression program");
  const bool haveOffsets = program.offsets.size() == program.code.size();
  for (size_t k = 0; k < program.code.size(); ++k) {
    const Instr &in = program.code[k];
    if (in.op != Op::Var || (in.operand >= 0 && uint64_t(in.operand) < count)) continue;
    if (errorOffset && haveOffsets) *errorOffset = program.offsets[k];
    size_t i = size_t(in.operand);
    std::string name = in.operand >= 0 && i < program.names.size() ? "'$" + program.names[i] + "'"
                                                                   : std::to_string(in.operand);
    return makeError("no value for variable " + name);
  }
  std::vector<int64_t> stack(std::max<uint32_t>(peak, 1));
  size_t failedAt = 0;
  Expected<int64_t> r = evaluateChecked(
      program, stack.data(), [&](uint32_t i) { return values[i]; }, &failedAt);
  if (!r && errorOffset && haveOffsets) *errorOffset = program.offsets[failedAt];
  return r;
}

Expected<Program> remapVariables(const Program &program, const std::vector<uint32_t> &newIndex) {
  Program p = program;
  for (Instr &in : p.code) {
    if (in.op != Op::Var) continue;
    if (in.operand < 0 || uint64_t(in.operand) >= newIndex.size())
      return makeError("variable " + std::to_string(in.operand) + " has no new index");
    in.operand = newIndex[size_t(in.operand)];
  }
  p.names.clear();
  return p;
}

std::vector<uint8_t> encode(const Program &program) {
  std::vector<uint8_t> out;
  for (const Instr &in : program.code) {
    out.push_back(uint8_t(in.op));
    if (in.op == Op::Lit) {
      int64_t v = in.operand;
      for (;;) {
        uint8_t byte = uint8_t(v & 0x7f);
        v >>= 7; // arithmetic shift (C++20 guarantees it; every supported compiler does it)
        bool done = (v == 0 && !(byte & 0x40)) || (v == -1 && (byte & 0x40));
        out.push_back(done ? byte : uint8_t(byte | 0x80));
        if (done) break;
      }
    } else if (in.op == Op::Var) {
      uint64_t v = uint64_t(in.operand);
      do {
        uint8_t byte = uint8_t(v & 0x7f);
        v >>= 7;
        out.push_back(v ? uint8_t(byte | 0x80) : byte);
      } while (v);
    }
  }
  return out;
}

Expected<Program> decode(const uint8_t *data, size_t size, uint32_t varCount) {
  Program p;
  size_t i = 0;
  while (i < size) {
    const size_t at = i;
    uint8_t b = data[i++];
    if (!isOp(b))
      return makeError("expression byte " + std::to_string(at) + ": unknown opcode " +
                       std::to_string(b));
    if (p.code.size() >= kMaxExprCode)
      return makeError("expression longer than " + std::to_string(kMaxExprCode) + " operations");
    Instr in{Op(b), 0};
    if (in.op == Op::Lit) {
      uint64_t v = 0;
      unsigned shift = 0;
      uint8_t byte;
      do {
        if (i >= size)
          return makeError("expression byte " + std::to_string(at) + ": truncated literal");
        if (shift >= 64)
          return makeError("expression byte " + std::to_string(at) +
                           ": literal longer than 10 bytes");
        byte = data[i++];
        uint64_t bits = uint64_t(byte & 0x7f);
        if (shift == 63 && bits != 0 && bits != 0x7f)
          return makeError("expression byte " + std::to_string(at) + ": literal out of range");
        v |= bits << shift;
        shift += 7;
      } while (byte & 0x80);
      if (shift < 64 && (byte & 0x40)) v |= ~uint64_t(0) << shift; // sign-extend
      in.operand = int64_t(v);
    } else if (in.op == Op::Var) {
      uint64_t v = 0;
      unsigned shift = 0;
      uint8_t byte;
      do {
        if (i >= size)
          return makeError("expression byte " + std::to_string(at) + ": truncated variable index");
        if (shift >= 35)
          return makeError("expression byte " + std::to_string(at) +
                           ": variable index longer than 5 bytes");
        byte = data[i++];
        v |= uint64_t(byte & 0x7f) << shift;
        shift += 7;
      } while (byte & 0x80);
      if (v >= varCount)
        return makeError("expression byte " + std::to_string(at) + ": variable " +
                         std::to_string(v) + " out of range (" + std::to_string(varCount) +
                         " variables)");
      in.operand = int64_t(v);
    }
    p.code.push_back(in);
  }
  if (p.code.empty()) return makeError("empty expression program");
  if (!wellFormed(p.code, &p.maxStack))
    return makeError("malformed expression program: operands do not match operators");
  return p;
}

int64_t integerValue(ScalarType type, uint64_t bits) {
  switch (type) {
  case ScalarType::I8:
    return int8_t(bits);
  case ScalarType::I16:
    return int16_t(bits);
  case ScalarType::I32:
    return int32_t(bits);
  case ScalarType::U8:
    return uint8_t(bits);
  case ScalarType::U16:
    return uint16_t(bits);
  case ScalarType::U32:
    return uint32_t(bits);
  default:
    return int64_t(bits);
  }
}

} // namespace cgraph::expr
