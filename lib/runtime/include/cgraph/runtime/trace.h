// Chrome trace event JSON (the "JSON Object Format" that chrome://tracing and Perfetto
// open): one complete ("ph": "X") event per timed node, with the node name, its kind as
// category, the lane as tid, and the iteration and node index as args.
//
// Ownership: a TraceWriter owns its events. Thread-safety: none; one writer per thread.
// Failure modes: writeFile returns an Error naming the path; json() never fails (names
// are escaped, invalid UTF-8 bytes are replaced). writeFile writes through
// writeOutputFile (cgraph/format/output_file.h): "-" is standard output, a device or
// FIFO is written through, a file is replaced atomically.
#pragma once

#include "cgraph/error.h"
#include "cgraph/model.h"
#include "cgraph/runtime/runtime.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace cgraph::rt {

struct TraceEvent {
  std::string name;
  std::string category;
  uint64_t startNs = 0;
  uint64_t durationNs = 0;
  uint32_t pid = 1;
  uint32_t tid = 0;
  std::vector<std::pair<std::string, std::string>> args; // shown in the viewer's panel
};

class TraceWriter {
public:
  void setProcessName(uint32_t pid, const std::string &name);
  void add(TraceEvent e) { events_.push_back(std::move(e)); }
  // One event per entry of `timings` (nodes index `g`, e.g. Executable::graph()), shifted
  // by `baseNs` so that several runs line up on one time axis.
  void addRun(const Graph &g, const std::vector<NodeTiming> &timings, uint64_t baseNs = 0,
              uint32_t pid = 1, uint32_t iteration = 0);
  size_t eventCount() const { return events_.size(); }
  std::string json() const;
  Error writeFile(const std::string &path) const;

private:
  std::vector<TraceEvent> events_;
  std::vector<std::pair<uint32_t, std::string>> processNames_;
};

// `s` as a JSON string literal (quotes included).
std::string jsonQuote(const std::string &s);

} // namespace cgraph::rt
