// Diagnostics of cgc, in clang's format: `file:line:col: error: message`.
//
// The tool boundary: everything cgc reports goes through one DiagSink, which writes
// to a stream (stderr in the tool, a string stream in tests) and counts errors.
// Thread-safety: none; one sink per run.
#pragma once

#include "json_pos.h"

#include <cstdint>
#include <ostream>
#include <string>

namespace cgraph::cgc {

// A place in a description file; `file` empty = no file (tool-level message).
struct Location {
  std::string file;
  Pos pos;
  bool hasPos = false;
  static Location at(std::string file, Pos p) { return Location{std::move(file), p, true}; }
  static Location inFile(std::string file) { return Location{std::move(file), Pos{}, false}; }
};

class DiagSink {
public:
  explicit DiagSink(std::ostream &out) : out_(out) {}

  void error(const Location &loc, const std::string &message);
  void warning(const Location &loc, const std::string &message);
  void note(const Location &loc, const std::string &message);
  // Text produced by another tool's diagnostics engine (clang), passed through as is.
  void verbatim(const std::string &text, bool isError);

  void setQuiet(bool quiet) { quiet_ = quiet; } // drops warnings and notes
  uint32_t errorCount() const { return errors_; }
  uint32_t warningCount() const { return warnings_; }

private:
  void emit(const Location &loc, const char *severity, const std::string &message);
  std::ostream &out_;
  bool quiet_ = false;
  uint32_t errors_ = 0;
  uint32_t warnings_ = 0;
};

} // namespace cgraph::cgc
