// Error values used across every cgraph library.
//
// Contract: inside lib/ and format/, failures are returned as values, never thrown
// and never printed. `Error` is a message plus an optional location; `Expected<T>`
// holds either a T or an Error. Tools turn an Error into one line on stderr and an
// exit code. Message style follows LLVM: lower-case, names the thing and where, no
// final period (`nodes[17]: edge 3 points past the node table`).
//
// Thread-safety: plain value types; distinct objects may be used from any thread.
#pragma once

#include <cassert>
#include <string>
#include <utility>
#include <variant>

namespace cgraph {

// [[nodiscard]]: a returned Error or Expected that nobody looks at is a bug (a failure
// silently dropped); the compiler warns. Discard on purpose with `(void)`.
class [[nodiscard]] Error {
public:
  Error() = default; // success
  static Error success() { return Error(); }
  static Error make(std::string message) {
    Error e;
    e.message_ = std::move(message);
    e.failed_ = true;
    return e;
  }
  // True when this is a failure.
  explicit operator bool() const { return failed_; }
  bool failed() const { return failed_; }
  const std::string &message() const { return message_; }
  // Returns a copy whose message is prefixed with `context: `.
  Error withContext(const std::string &context) const {
    if (!failed_) return *this;
    return make(context + ": " + message_);
  }

private:
  std::string message_;
  bool failed_ = false;
};

inline Error makeError(std::string message) { return Error::make(std::move(message)); }

template <typename T> class [[nodiscard]] Expected {
public:
  Expected(T value) : v_(std::move(value)) {}
  Expected(Error error) : v_(std::move(error)) { assert(std::get<Error>(v_).failed()); }
  explicit operator bool() const { return v_.index() == 0; }
  bool ok() const { return v_.index() == 0; }
  T &operator*() & { return std::get<0>(v_); }
  const T &operator*() const & { return std::get<0>(v_); }
  T &&operator*() && { return std::get<0>(std::move(v_)); }
  T *operator->() { return &std::get<0>(v_); }
  const T *operator->() const { return &std::get<0>(v_); }
  T &value() & { return std::get<0>(v_); }
  T &&value() && { return std::get<0>(std::move(v_)); }
  const Error &error() const { return std::get<1>(v_); }
  Error takeError() const { return ok() ? Error() : std::get<1>(v_); }

private:
  std::variant<T, Error> v_;
};

} // namespace cgraph

// Propagates a failed Error from the enclosing function. Evaluates `expr` once.
#define CGRAPH_RETURN_IF_ERROR(expr)                                                     \
  do {                                                                                   \
    ::cgraph::Error cgraph_err_ = (expr);                                                \
    if (cgraph_err_) return cgraph_err_;                                                 \
  } while (0)
