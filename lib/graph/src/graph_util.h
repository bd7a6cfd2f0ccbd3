// Small helpers shared by the graph library sources (not installed).
#pragma once

#include <cgraph/model.h>

#include <string>
#include <vector>

namespace cgraph {
namespace detail {

// `node 'name'` or `node #3` for an unnamed node.
std::string nodeLabel(const Graph &g, uint32_t n);
std::string slotLabel(const Graph &g, uint32_t s);
// Successor / predecessor lists (ascending, duplicates removed); edges with an endpoint
// past the node table are skipped.
std::vector<std::vector<uint32_t>> successors(const Graph &g);
std::vector<std::vector<uint32_t>> predecessors(const Graph &g);
// A cycle as a node path whose last element equals the first; empty when acyclic.
std::vector<uint32_t> findCycle(const Graph &g);
std::string cyclePath(const Graph &g, const std::vector<uint32_t> &cycle);
bool containsHostTask(const Graph &g, int depth = 0);

} // namespace detail
} // namespace cgraph
