// Error values used across every cgraph library.
//
// Contract: inside lib/ and format/, failures are returned as values, never thrown
// and never printed. `Error` is a message plus a machine-readable `ErrorCode` (and,
// for I/O failures, the errno value); `Expected<T>` holds either a T or an Error.
// Tools turn an Error into one line on stderr and an exit code; the C API and the
// Python package turn the code into a status and an exception type. Code that must
// tell failures apart tests the code, never the message text. Message style follows
// LLVM: lower-case, names the thing and where, no final period
// (`nodes[17]: edge 3 points past the node table`).
//
// Thread-safety: plain value types; distinct objects may be used from any thread.
#pragma once

#include <cassert>
#include <string>
#include <utility>
#include <variant>

namespace cgraph {

// What kind of failure an Error is. Stable values: the C API exposes them.
enum class ErrorCode : int {
  Invalid = 1,     // bad input: a malformed file or description, a wrong argument or binding
  OutOfMemory = 2, // an allocation failed (host or device)
  DeviceLost = 3,  // the device or its driver failed (a fault, a lost context)
  Unsupported = 4, // valid, but this backend, device or build cannot do it
  Io = 5,          // a file operation failed; Error::sysErrno() holds errno
  Timeout = 6,     // a wait ran past its limit
  Internal = 7,    // a broken invariant of cgraph itself
};

// The code's name as the C API and the tools spell it ("invalid", "out_of_memory", ...).
inline const char *errorCodeName(ErrorCode c) {
  switch (c) {
  case ErrorCode::Invalid: return "invalid";
  case ErrorCode::OutOfMemory: return "out_of_memory";
  case ErrorCode::DeviceLost: return "device_lost";
  case ErrorCode::Unsupported: return "unsupported";
  case ErrorCode::Io: return "io";
  case ErrorCode::Timeout: return "timeout";
  case ErrorCode::Internal: return "internal";
  }
  return "invalid";
}

// [[nodiscard]]: a returned Error or Expected that nobody looks at is a bug (a failure
// silently dropped); the compiler warns. Discard on purpose with `(void)`.
class [[nodiscard]] Error {
public:
  Error() = default; // success
  static Error success() { return Error(); }
  static Error make(std::string message, ErrorCode code = ErrorCode::Invalid, int sysErrno = 0) {
    Error e;
    e.message_ = std::move(message);
    e.failed_ = true;
    e.code_ = code;
    e.errno_ = sysErrno;
    return e;
  }
  // True when this is a failure.
  explicit operator bool() const { return failed_; }
  bool failed() const { return failed_; }
  const std::string &message() const { return message_; }
  // The kind of failure (meaningless on success).
  ErrorCode code() const { return code_; }
  // errno of a failed system call (ErrorCode::Io, sometimes OutOfMemory), else 0.
  int sysErrno() const { return errno_; }
  // Returns a copy whose message is prefixed with `context: ` (code and errno kept).
  Error withContext(const std::string &context) const {
    if (!failed_) return *this;
    return make(context + ": " + message_, code_, errno_);
  }

private:
  std::string message_;
  bool failed_ = false;
  ErrorCode code_ = ErrorCode::Invalid;
  int errno_ = 0;
};

inline Error makeError(std::string message) { return Error::make(std::move(message)); }
inline Error makeError(ErrorCode code, std::string message) { return Error::make(std::move(message), code); }
// A failed file operation: `message` names the file and the operation.
inline Error makeIoError(int sysErrno, std::string message) {
  return Error::make(std::move(message), ErrorCode::Io, sysErrno);
}

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
