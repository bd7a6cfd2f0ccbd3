// Options from CGRAPH_* environment variables: the one parser every backend uses to fill
// the fields of its options struct that the program left unset (std::optional fields
// without a value). An explicit option always wins; the environment never overrides it.
//
// Values: an unset or empty variable is "not given". Flags take 1/0, on/off, true/false,
// yes/no (any case); counts a decimal integer; sizes a count with an optional K/M/G/T
// suffix (powers of 1024; a trailing B or iB accepted); choices one of a fixed list of
// words. Anything else is an Error (ErrorCode::Invalid) naming the variable and the
// value, e.g. `CGRAPH_CUDA_COARSEN_MIN: 'garbage' is not a count`; callers surface it
// when the backend is probed or a device is opened, never turning it into a default.
//
// Thread-safety: reads getenv; must not race with setenv (as getenv itself). Header-only
// and dependency-free beyond cgraph/error.h.
#pragma once

#include "cgraph/error.h"

#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace cgraph::rt {

// The kernel cache settings a backend's options carry (every backend's options struct
// has one). Unset fields follow lib/cache's environment rules (CGRAPH_CACHE_DIR, then
// XDG_CACHE_HOME / HOME; CGRAPH_CACHE_PERSISTENT); a set field wins over them. Tests
// give each backend its own directory this way instead of changing the environment.
struct KernelCacheOptions {
  std::optional<std::string> dir;  // root of the disk tier
  std::optional<bool> persistent;  // false: memory tier only
};

} // namespace cgraph::rt

namespace cgraph::rt::env {

// The value of `name`; nullopt when it is unset or empty.
inline std::optional<std::string> text(const char *name) {
  const char *v = std::getenv(name);
  if (!v || !*v) return std::nullopt;
  return std::string(v);
}

inline Error badValue(const char *name, const std::string &value, const std::string &what) {
  return makeError(ErrorCode::Invalid, std::string(name) + ": '" + value + "' is not " + what);
}

inline std::string lowerCase(std::string s) {
  for (char &c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// 1/0, on/off, true/false, yes/no.
inline Expected<bool> parseFlag(const char *name, const std::string &value) {
  const std::string v = lowerCase(value);
  if (v == "1" || v == "on" || v == "true" || v == "yes") return true;
  if (v == "0" || v == "off" || v == "false" || v == "no") return false;
  return badValue(name, value, "a flag (1/0, on/off, true/false, yes/no)");
}

// A decimal count that fits 64 bits.
inline Expected<uint64_t> parseCount(const char *name, const std::string &value) {
  if (value.empty() || value.size() > 20) return badValue(name, value, "a count");
  uint64_t n = 0;
  for (char c : value) {
    if (c < '0' || c > '9') return badValue(name, value, "a count");
    const uint64_t d = uint64_t(c - '0');
    if (n > (UINT64_MAX - d) / 10) return badValue(name, value, "a count (it exceeds 2^64 - 1)");
    n = n * 10 + d;
  }
  return n;
}

// A count with an optional K/M/G/T suffix (powers of 1024), "B" or "iB" after it.
inline Expected<uint64_t> parseSize(const char *name, const std::string &value) {
  std::string digits = value, unit;
  while (!digits.empty() && !std::isdigit(static_cast<unsigned char>(digits.back()))) {
    unit.insert(unit.begin(), char(std::toupper(static_cast<unsigned char>(digits.back()))));
    digits.pop_back();
  }
  auto n = parseCount(name, digits);
  if (!n) return badValue(name, value, "a size (a count with K, M, G or T)");
  if (unit.size() > 1 && unit.back() == 'B') unit.pop_back();
  if (unit.size() > 1 && unit.back() == 'I') unit.pop_back();
  unsigned shift = 0;
  if (unit.empty() || unit == "B") shift = 0;
  else if (unit == "K") shift = 10;
  else if (unit == "M") shift = 20;
  else if (unit == "G") shift = 30;
  else if (unit == "T") shift = 40;
  else return badValue(name, value, "a size (a count with K, M, G or T)");
  if (shift && *n > (UINT64_MAX >> shift)) return badValue(name, value, "a size (it exceeds 2^64 - 1)");
  return *n << shift;
}

// Each fill* leaves a field that holds a value alone; otherwise it reads `name` and,
// where the variable is given, stores its parsed value. Errors: a value that does not
// parse (the field is left unset).
// The shared step: `parse(name, text)` returns Expected<T>.
template <class T, class Parse> Error fillWith(std::optional<T> &field, const char *name, Parse parse) {
  if (field) return Error::success();
  auto v = text(name);
  if (!v) return Error::success();
  auto parsed = parse(name, *v);
  if (!parsed) return parsed.error();
  field = *parsed;
  return Error::success();
}

inline Error fillFlag(std::optional<bool> &field, const char *name) { return fillWith(field, name, parseFlag); }
inline Error fillCount(std::optional<uint64_t> &field, const char *name) { return fillWith(field, name, parseCount); }
inline Error fillSize(std::optional<uint64_t> &field, const char *name) { return fillWith(field, name, parseSize); }

inline Error fillText(std::optional<std::string> &field, const char *name) {
  if (!field) field = text(name);
  return Error::success();
}

// One of `choices` (word, value), compared exactly.
template <class E>
Error fillChoice(std::optional<E> &field, const char *name,
                 std::initializer_list<std::pair<std::string_view, E>> choices) {
  if (field) return Error::success();
  auto v = text(name);
  if (!v) return Error::success();
  std::string list;
  for (const auto &c : choices) {
    if (*v == c.first) {
      field = c.second;
      return Error::success();
    }
    list += (list.empty() ? "" : ", ") + std::string(c.first);
  }
  return badValue(name, *v, "one of " + list);
}

} // namespace cgraph::rt::env
