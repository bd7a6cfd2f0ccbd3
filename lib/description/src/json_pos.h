// A small strict JSON parser that remembers where every value came from.
//
// The reader needs `file:line:col: error: ...` diagnostics for graph descriptions, and
// nlohmann::json keeps no positions, so descriptions are parsed here into a tree of
// JValue, each with the 1-based line and byte column of its first character (object
// members also keep the position of their key).
//
// Strict RFC 8259 JSON: no comments, no trailing commas, no duplicate keys (an error,
// since a silently ignored duplicate is a typo nobody sees), strings must be valid
// UTF-8 after escapes are decoded. A UTF-8 byte order mark is skipped.
// Limits, so that no input crashes or exhausts the process: nesting depth
// (kMaxJsonDepth) and input size (checked by the caller that reads the file).
// Numbers keep their source text; the accessors convert with range checks.
//
// Ownership: a JValue owns its children. Thread-safety: plain values.
// Failure modes: parseJson returns false with the position and message of the first
// syntax error (the caller prefixes the file name); it never throws.
#pragma once

#include "cgraph/description/diagnostics.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace cgraph::desc {

constexpr uint32_t kMaxJsonDepth = 200;

class JValue {
public:
  enum class Kind { Null, Bool, Number, String, Array, Object };

  Kind kind = Kind::Null;
  Pos pos;
  bool boolean = false;
  std::string text; // String: the decoded value; Number: the source text
  // String: the source spelled it with escape sequences, so byte offsets into `text`
  // are not source columns (diagnostics inside the string then point at its quote).
  bool escaped = false;
  std::vector<JValue> items;                        // Array elements, Object values
  std::vector<std::pair<std::string, Pos>> keys;    // Object keys (same order as items)

  bool isNull() const { return kind == Kind::Null; }
  bool isBool() const { return kind == Kind::Bool; }
  bool isNumber() const { return kind == Kind::Number; }
  bool isString() const { return kind == Kind::String; }
  bool isArray() const { return kind == Kind::Array; }
  bool isObject() const { return kind == Kind::Object; }
  // A number written without fraction or exponent.
  bool isIntegerText() const;

  // Object member lookup; null when absent or not an object.
  const JValue *find(const std::string &key) const;
  size_t size() const { return items.size(); }

  // Conversions of a Number; false when not a number or out of range (the integer
  // forms also refuse fractions: 2.5 is not a valid u64).
  bool toU64(uint64_t *out) const;
  bool toI64(int64_t *out) const;
  bool toDouble(double *out) const; // false for values that overflow to infinity

  // "object", "array", "string", "number", "true/false" (for messages).
  const char *kindName() const;
};

struct JsonError {
  Pos pos;
  std::string message;
};

bool parseJson(const std::string &text, JValue *out, JsonError *error);

} // namespace cgraph::desc
