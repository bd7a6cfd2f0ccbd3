#include "cgraph/description/diagnostics.h"

namespace cgraph::desc {

std::string formatDiag(const Diag &d, const std::string &tool) {
  if (d.verbatim) {
    std::string text = d.message;
    while (!text.empty() && text.back() == '\n') text.pop_back();
    return text;
  }
  std::string out;
  if (!d.loc.file.empty()) {
    out = d.loc.file + ":";
    if (d.loc.hasPos) out += std::to_string(d.loc.pos.line) + ":" + std::to_string(d.loc.pos.col) + ":";
    out += " ";
  } else if (!tool.empty()) {
    out = tool + ": ";
  }
  const char *severity = d.severity == Severity::Error ? "error" : d.severity == Severity::Warning ? "warning" : "note";
  return out + severity + ": " + d.message;
}

DiagHandler streamDiagHandler(std::ostream &out, std::string tool) {
  return [&out, tool = std::move(tool)](const Diag &d) {
    std::string text = formatDiag(d, tool);
    if (!text.empty()) out << text << "\n";
  };
}

void DiagSink::emit(Diag d) {
  if (d.severity == Severity::Error && errors_ == 1) firstError_ = formatDiag(d);
  if (handler_) handler_(d);
}

void DiagSink::error(const Location &loc, const std::string &message) {
  ++errors_;
  emit(Diag{Severity::Error, loc, message, false});
}

void DiagSink::warning(const Location &loc, const std::string &message) {
  ++warnings_;
  if (!quiet_) emit(Diag{Severity::Warning, loc, message, false});
}

void DiagSink::note(const Location &loc, const std::string &message) {
  if (!quiet_) emit(Diag{Severity::Note, loc, message, false});
}

void DiagSink::verbatim(const std::string &text, bool isError) {
  if (isError) ++errors_;
  else if (quiet_) return;
  if (text.empty()) return;
  emit(Diag{isError ? Severity::Error : Severity::Warning, Location{}, text, true});
}

} // namespace cgraph::desc
