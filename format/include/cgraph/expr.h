// Integer expressions of graph descriptions: `"align_up($n - $k - 1, 256)"`.
//
// A description may write an integer field (an nd-range entry, a scalar argument, a
// copy or fill offset or size, a slot size) as an expression over literals, repeat
// variables and integer parameters. This module parses such a string into a small
// postfix Program, folds what is known (cgc folds literals and repeat variables at
// compile time) and evaluates what is left (at enqueue: .cgf 2.0 stores programs over
// parameters per field, format/SPEC.md section 4a; lib/runtime evaluates them). It
// lives in format because the .cgf reader decodes every stored program;
// cgraph/graph/expr.h forwards here.
//
// Syntax (whitespace: spaces and tabs, anywhere between tokens):
//   expr    := term (('+' | '-') term)*
//   term    := unary (('*' | '/' | '%') unary)*
//   unary   := '-' unary | primary
//   primary := INTEGER | '$' NAME | FUNC '(' expr ',' expr ')' | '(' expr ')'
//   INTEGER := decimal digits, at most INT64_MAX (use unary minus for negatives)
//   NAME    := [A-Za-z_][A-Za-z0-9_]*          a variable (repeat variable or parameter)
//   FUNC    := min | max | ceil_div | align_up
// Precedence as in C: unary minus, then * / %, then + -, each left-associative.
//
// Semantics: signed 64-bit integers, C semantics where C defines them, an error where
// C has undefined behaviour:
//   a + b, a - b, a * b, -a   error on overflow of int64
//   a / b                     truncates toward zero (C); error when b == 0 or on
//                             INT64_MIN / -1
//   a % b                     remainder with the sign of a (C): a == (a / b) * b + a % b;
//                             error when b == 0 (INT64_MIN % -1 is 0)
//   min(a, b), max(a, b)
//   ceil_div(a, b)            the mathematical ceiling of a / b (for b > 0 and a >= 0:
//                             (a + b - 1) / b without its overflow); error when b == 0
//   align_up(a, b)            the smallest multiple of b that is >= a; error when b <= 0
//                             or when the result overflows
//
// Encoding (what .cgf 2.0 stores per field, XPRS section):
// a Program is a sequence of instructions on an evaluation stack. Serialized
// (`encode`), each instruction is one opcode byte (enum Op below), followed for
// Op::Lit by its value as signed LEB128 and for Op::Var by the variable's index as
// unsigned LEB128 (at most 32 bits). Operators pop their operands (the right operand is
// on top) and push the result. A well-formed program leaves exactly one value; its
// stack never exceeds `maxStack`, so evaluation is one pass over the code with a stack
// bounded by the code length: O(expression length). `decode` checks all of this and is
// safe on untrusted bytes. Variable indices are whatever the owner of the program
// numbers them by: after `parse` they index Program::names; a stored program would
// use graph parameter indices (`remapVariables`).
//
// Limits (so that no input crashes or exhausts anything): expression text up to
// kMaxExprText bytes, parenthesis/unary nesting up to kMaxExprDepth, at most
// kMaxExprCode instructions.
//
// Ownership: Programs are plain values. Thread-safety: all functions are pure; distinct
// or const objects may be used from any thread.
// Failure modes: every function returns cgraph::Error / Expected and never throws (bar
// std::bad_alloc) or crashes; where an error has a place in the source text, the
// caller's `errorOffset` (when not null) receives its 0-based byte offset into the
// text. Messages are lower-case with no final period (`division by zero`,
// `unknown function 'foo'`).
#pragma once

#include <cgraph/error.h>
#include <cgraph/model.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cgraph::expr {

constexpr size_t kMaxExprText = 4096;
constexpr uint32_t kMaxExprDepth = 64;
constexpr size_t kMaxExprCode = 4096;

// Opcodes; the numeric values are the serialized form and must not change.
enum class Op : uint8_t {
  Lit = 0, // push the literal `operand`
  Var = 1, // push variable number `operand`
  Neg = 2, // unary minus
  Add = 3,
  Sub = 4,
  Mul = 5,
  Div = 6, // truncating
  Rem = 7, // sign of the dividend
  Min = 8,
  Max = 9,
  CeilDiv = 10,
  AlignUp = 11,
};
constexpr uint8_t kOpCount = 12;

// How many values `op` pops (0 for Lit/Var, 1 for Neg, else 2).
uint32_t arity(Op op);
// "+", "-", "min", ... ; "lit"/"var" for the pushes; "neg" for unary minus.
const char *opName(Op op);

struct Instr {
  Op op = Op::Lit;
  int64_t operand = 0; // Lit: the value; Var: the variable index; otherwise 0
  bool operator==(const Instr &o) const { return op == o.op && operand == o.operand; }
};

struct Program {
  std::vector<Instr> code;
  // Variable names ("n", not "$n") indexed by Var operands, in order of first use.
  // Decoded programs have none (their indices belong to whoever stored them).
  std::vector<std::string> names;
  // Byte offset into the source text of each instruction's token (operators: the
  // operator or function name); same length as `code` after parse/fold, empty after
  // decode. Used only for diagnostics.
  std::vector<uint32_t> offsets;
  // The most values live on the evaluation stack at once.
  uint32_t maxStack = 0;

  // The value when the program is one literal.
  std::optional<int64_t> constant() const;
  // Indices (into names) of the variables still referenced, ascending.
  std::vector<uint32_t> usedVariables() const;
  // Infix text that parses back to an equivalent program: "align_up($n - 1, 256)".
  // Variables without a name print as "$<index>".
  std::string toString() const;
};

// Parses `text`. Errors: empty expression, unexpected characters, a name without '$'
// that is not a function, unknown function, wrong argument count, unbalanced
// parentheses, literal out of range, too long or too deep. `errorOffset` gets the byte
// offset of the offending token (text.size() for "unexpected end").
Expected<Program> parse(std::string_view text, uint32_t *errorOffset = nullptr);

// Known values by variable name.
using Bindings = std::map<std::string, int64_t, std::less<>>;

// Replaces every variable in `values` by its value and computes every operation whose
// operands are then known. The result is either a single literal (constant()) or a
// reduced program over the remaining variables (renumbered, `names` holds only them).
// Errors, with the operator's offset: division or remainder by a known zero (even when
// the dividend is unknown), ceil_div by a known zero, align_up to a known alignment
// <= 0, overflow of a known operation.
Expected<Program> fold(const Program &program, const Bindings &values,
                       uint32_t *errorOffset = nullptr);

// Evaluates `program` with values[i] for variable i (`count` values). Errors: a
// variable index >= count, a malformed program, division by zero, overflow,
// align_up to an alignment <= 0; `errorOffset` gets the operator's offset when the
// program has offsets.
Expected<int64_t> evaluate(const Program &program, const int64_t *values, size_t count,
                           uint32_t *errorOffset = nullptr);
inline Expected<int64_t> evaluate(const Program &program, const std::vector<int64_t> &values,
                                  uint32_t *errorOffset = nullptr) {
  return evaluate(program, values.data(), values.size(), errorOffset);
}

// Applies one operator (not Lit/Var) to its operands (`b` unused for Neg), with the
// errors described above. Shared by fold and evaluate; exposed for stage 2.
Expected<int64_t> apply(Op op, int64_t a, int64_t b);

// The evaluation loop itself, for a caller that evaluates one program many times (the
// runtime, once per submission): no checks and no allocation. `program` must be well
// formed (parse, fold, decode and remapVariables return only such programs) and every
// Var operand valid for `value` (value(i): variable i's value); `stack` holds at least
// program.maxStack values. On an arithmetic error, `failedAt` (when not null) receives
// the index of the instruction. `evaluate` is this plus its checks.
template <class ValueFn>
Expected<int64_t> evaluateChecked(const Program &program, int64_t *stack, const ValueFn &value,
                                  size_t *failedAt = nullptr) {
  size_t sp = 0;
  for (size_t k = 0; k < program.code.size(); ++k) {
    const Instr &in = program.code[k];
    if (in.op == Op::Lit) {
      stack[sp++] = in.operand;
      continue;
    }
    if (in.op == Op::Var) {
      stack[sp++] = value(uint32_t(in.operand));
      continue;
    }
    const bool binary = arity(in.op) == 2;
    Expected<int64_t> r =
        binary ? apply(in.op, stack[sp - 2], stack[sp - 1]) : apply(in.op, stack[sp - 1], 0);
    if (!r) {
      if (failedAt) *failedAt = k;
      return r;
    }
    if (binary) --sp;
    stack[sp - 1] = *r;
  }
  return stack[0];
}

// Renumbers the Var operands: variable i becomes newIndex[i]. Errors when a variable
// has no entry in newIndex. `names` is cleared (the indices now belong to the caller).
Expected<Program> remapVariables(const Program &program, const std::vector<uint32_t> &newIndex);

// An integer parameter's stored bits (Param::defaultBits, a ParamValues entry) as the
// int64 expressions compute with: sign- or zero-extended from the type's width; I64 and
// U64 bits as they are (a U64 above INT64_MAX reads as negative). Float types: the bits
// unchanged (callers refuse float parameters before they get here).
int64_t integerValue(ScalarType type, uint64_t bits);

// The serialized form described above.
std::vector<uint8_t> encode(const Program &program);
// Reads the serialized form; checks opcodes, LEB128 lengths, variable indices
// (< varCount), stack underflow, a single result and kMaxExprCode. `maxStack` is
// recomputed; `names` and `offsets` stay empty.
Expected<Program> decode(const uint8_t *data, size_t size, uint32_t varCount);

} // namespace cgraph::expr
