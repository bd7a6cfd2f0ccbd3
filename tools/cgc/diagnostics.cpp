#include "diagnostics.h"

namespace cgraph::cgc {

void DiagSink::emit(const Location &loc, const char *severity, const std::string &message) {
  if (loc.file.empty()) {
    out_ << "cgc: ";
  } else {
    out_ << loc.file << ":";
    if (loc.hasPos) out_ << loc.pos.line << ":" << loc.pos.col << ":";
    out_ << " ";
  }
  out_ << severity << ": " << message << "\n";
}

void DiagSink::error(const Location &loc, const std::string &message) {
  ++errors_;
  emit(loc, "error", message);
}

void DiagSink::warning(const Location &loc, const std::string &message) {
  ++warnings_;
  if (!quiet_) emit(loc, "warning", message);
}

void DiagSink::note(const Location &loc, const std::string &message) {
  if (!quiet_) emit(loc, "note", message);
}

void DiagSink::verbatim(const std::string &text, bool isError) {
  if (isError) ++errors_;
  else if (quiet_) return;
  if (text.empty()) return;
  out_ << text;
  if (text.back() != '\n') out_ << "\n";
}

} // namespace cgraph::cgc
