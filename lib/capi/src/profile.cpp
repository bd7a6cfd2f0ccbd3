// Node times of profiled submissions, their Chrome trace, the executable's nodes, and
// the kernel cache's process-wide counters.
#include "internal.h"

#include "cgraph/cache/kernel_cache.h"
#include "cgraph/runtime/trace.h"

using namespace cgraph;
using capi::fail;
using capi::guard;
using capi::nullArgument;

namespace {

// The event's timings that name a node of its executable's graph (a backend may leave
// entries of nodes that did not run unset), after the submission completed.
cgraph_status timedNodes(cgraph_event event, std::vector<rt::NodeTiming> *out) {
  if (Error e = event->event->wait()) return fail(e);
  const size_t nodes = event->exe ? event->exe->graph().nodes.size() : 0;
  out->clear();
  for (const rt::NodeTiming &t : event->event->nodeTimings())
    if (t.node < nodes) out->push_back(t);
  return CGRAPH_OK;
}

} // namespace

extern "C" {

cgraph_status cgraph_event_node_times(cgraph_event event, cgraph_node_time *out, size_t capacity,
                                      size_t *count) {
  return guard([&] {
    if (!event) return nullArgument("event");
    if (!count) return nullArgument("count");
    if (!out && capacity) return nullArgument("out");
    *count = 0;
    std::vector<rt::NodeTiming> timed;
    if (cgraph_status st = timedNodes(event, &timed)) return st;
    for (size_t i = 0; i < timed.size() && i < capacity; ++i)
      out[i] = cgraph_node_time{timed[i].node, timed[i].lane, timed[i].startNs,
                                timed[i].endNs < timed[i].startNs ? timed[i].startNs : timed[i].endNs};
    *count = timed.size();
    return CGRAPH_OK;
  });
}

cgraph_status cgraph_event_write_trace(cgraph_event event, const char *path, const char *process_name) {
  return guard([&] {
    if (!event) return nullArgument("event");
    if (!path) return nullArgument("path");
    std::vector<rt::NodeTiming> timed;
    if (cgraph_status st = timedNodes(event, &timed)) return st;
    if (timed.empty())
      return fail(CGRAPH_ERROR_INVALID, "the submission has no node times (enqueue it with profile set)");
    rt::TraceWriter trace;
    trace.setProcessName(1, process_name ? process_name : "cgraph");
    trace.addRun(event->exe->graph(), timed);
    return fail(trace.writeFile(path));
  });
}

uint32_t cgraph_executable_node_count(cgraph_executable exe) {
  return exe ? static_cast<uint32_t>(exe->exe->graph().nodes.size()) : 0;
}

cgraph_status cgraph_executable_node_info(cgraph_executable exe, uint32_t index, cgraph_node_info *out) {
  return guard([&] {
    if (!exe) return nullArgument("exe");
    if (!out) return nullArgument("out");
    const Graph &g = exe->exe->graph();
    if (index >= g.nodes.size())
      return fail(CGRAPH_ERROR_INVALID, "node index " + std::to_string(index) +
                                            " is out of range (the executable has " +
                                            std::to_string(g.nodes.size()) + " nodes)");
    const Node &n = g.nodes[index];
    out->name = n.name.c_str();
    out->kind = nodeKindName(n.kind);
    out->kernel = n.kind == NodeKind::Kernel && n.kernel < g.kernels.size() ? g.kernels[n.kernel].name.c_str() : "";
    return CGRAPH_OK;
  });
}

cgraph_status cgraph_cache_stats(cgraph_cache_counters *out) {
  return guard([&] {
    if (!out) return nullArgument("out");
    const cache::ProcessCacheCounters c = cache::processCacheCounters();
    *out = cgraph_cache_counters{c.memoryHits, c.memoryMisses, c.diskHits, c.diskRejects, c.builds, c.buildFailures};
    return CGRAPH_OK;
  });
}

} // extern "C"
