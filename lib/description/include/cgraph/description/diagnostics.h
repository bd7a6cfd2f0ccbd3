// Diagnostics of the description reader, in clang's format: `file:line:col: error: message`.
//
// Everything the reader reports goes through one DiagSink, which counts errors and
// warnings and hands each diagnostic to a handler the caller supplies (a tool prints it,
// the C API collects it, a test keeps it in a string). Without a handler diagnostics are
// only counted: the library never prints.
//
// Ownership: the sink owns a copy of its handler; the handler must stay callable while
// the sink is used. Thread-safety: none; one sink per compilation (the handler is called
// on the compiling thread). Failure modes: none; a handler must not throw.
#pragma once

#include <cstdint>
#include <functional>
#include <ostream>
#include <string>

namespace cgraph::desc {

// A 1-based line and byte column in a description file.
struct Pos {
  uint32_t line = 1;
  uint32_t col = 1;
};

// A place in a description file; `file` empty = no file (a message about the run).
struct Location {
  std::string file;
  Pos pos;
  bool hasPos = false;
  static Location at(std::string file, Pos p) { return Location{std::move(file), p, true}; }
  static Location inFile(std::string file) { return Location{std::move(file), Pos{}, false}; }
};

enum class Severity : uint8_t { Error, Warning, Note };

struct Diag {
  Severity severity = Severity::Error;
  Location loc;
  std::string message;
  // `message` is another tool's diagnostics text (clang's), complete with its own
  // locations and severities, possibly several lines; `loc` is then empty.
  bool verbatim = false;
};

// `file:line:col: error: message`; without a file `<tool>: error: message`, or
// `error: message` when `tool` is empty. Verbatim text is returned as is. No newline at
// the end.
std::string formatDiag(const Diag &d, const std::string &tool = "");

using DiagHandler = std::function<void(const Diag &)>;

// A handler that writes each diagnostic to `out` (formatDiag with `tool`, one line each).
// `out` must outlive the handler.
DiagHandler streamDiagHandler(std::ostream &out, std::string tool = "");

class DiagSink {
public:
  DiagSink() = default;                                  // counts only
  explicit DiagSink(DiagHandler handler) : handler_(std::move(handler)) {}

  void error(const Location &loc, const std::string &message);
  void warning(const Location &loc, const std::string &message);
  void note(const Location &loc, const std::string &message);
  // Text produced by another tool's diagnostics engine (clang), passed through as is.
  void verbatim(const std::string &text, bool isError);

  void setQuiet(bool quiet) { quiet_ = quiet; } // drops warnings and notes
  uint32_t errorCount() const { return errors_; }
  uint32_t warningCount() const { return warnings_; }
  // The first error reported (formatDiag without a tool), "" when none.
  const std::string &firstError() const { return firstError_; }

private:
  void emit(Diag d);
  DiagHandler handler_;
  bool quiet_ = false;
  uint32_t errors_ = 0;
  uint32_t warnings_ = 0;
  std::string firstError_;
};

} // namespace cgraph::desc
