// Chrome trace event JSON writer (see trace.h).
#include "cgraph/runtime/trace.h"

#include "cgraph/format/output_file.h"

#include <cstdio>

namespace cgraph::rt {

std::string jsonQuote(const std::string &s) {
  std::string out = "\"";
  for (size_t i = 0; i < s.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += char(c);
    } else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else if (c < 0x80) {
      out += char(c);
    } else {
      // Copy a well-formed UTF-8 sequence; replace anything else so the output parses.
      int len = (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 0;
      bool ok = len > 0 && i + len <= s.size();
      for (int k = 1; ok && k < len; ++k)
        ok = (static_cast<unsigned char>(s[i + k]) & 0xC0) == 0x80;
      if (ok) {
        out.append(s, i, size_t(len));
        i += size_t(len - 1);
      } else {
        out += "\\ufffd";
      }
    }
  }
  out += '"';
  return out;
}

void TraceWriter::setProcessName(uint32_t pid, const std::string &name) {
  processNames_.emplace_back(pid, name);
}

void TraceWriter::addRun(const Graph &g, const std::vector<NodeTiming> &timings, uint64_t baseNs,
                         uint32_t pid, uint32_t iteration) {
  for (const NodeTiming &t : timings) {
    TraceEvent e;
    const bool known = t.node < g.nodes.size();
    e.name = known ? g.nodes[t.node].name : "";
    if (e.name.empty()) e.name = "node #" + std::to_string(t.node);
    e.category = known ? nodeKindName(g.nodes[t.node].kind) : "node";
    e.startNs = baseNs + t.startNs;
    e.durationNs = t.endNs > t.startNs ? t.endNs - t.startNs : 0;
    e.pid = pid;
    e.tid = t.lane;
    e.args = {{"node", std::to_string(t.node)}, {"iteration", std::to_string(iteration)}};
    if (known && g.nodes[t.node].kind == NodeKind::Kernel && g.nodes[t.node].kernel < g.kernels.size())
      e.args.emplace_back("kernel", g.kernels[g.nodes[t.node].kernel].name);
    events_.push_back(std::move(e));
  }
}

namespace {
std::string micros(uint64_t ns) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%llu.%03llu", static_cast<unsigned long long>(ns / 1000),
                static_cast<unsigned long long>(ns % 1000));
  return buf;
}
} // namespace

std::string TraceWriter::json() const {
  std::string out = "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[";
  bool first = true;
  auto sep = [&] {
    if (!first) out += ",";
    out += "\n";
    first = false;
  };
  for (const auto &p : processNames_) {
    sep();
    out += "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":" + std::to_string(p.first) +
           ",\"tid\":0,\"args\":{\"name\":" + jsonQuote(p.second) + "}}";
  }
  for (const TraceEvent &e : events_) {
    sep();
    out += "{\"ph\":\"X\",\"name\":" + jsonQuote(e.name) + ",\"cat\":" + jsonQuote(e.category) +
           ",\"ts\":" + micros(e.startNs) + ",\"dur\":" + micros(e.durationNs) +
           ",\"pid\":" + std::to_string(e.pid) + ",\"tid\":" + std::to_string(e.tid);
    if (!e.args.empty()) {
      out += ",\"args\":{";
      for (size_t i = 0; i < e.args.size(); ++i)
        out += (i ? "," : "") + jsonQuote(e.args[i].first) + ":" + jsonQuote(e.args[i].second);
      out += "}";
    }
    out += "}";
  }
  out += "\n]}\n";
  return out;
}

Error TraceWriter::writeFile(const std::string &path) const {
  const std::string s = json();
  return writeOutputFile(path, s.data(), s.size());
}

} // namespace cgraph::rt
