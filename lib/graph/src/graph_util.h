// Small helpers shared by the graph library sources (not installed).
#pragma once

#include <cgraph/graph/labels.h>
#include <cgraph/model.h>

#include <string>
#include <vector>

namespace cgraph {
namespace detail {

// Successor or predecessor lists of every node in two arrays (ascending, duplicates
// removed; edges with an endpoint past the node table skipped): two allocations for
// the whole graph instead of one per node, which dominated validation and ordering.
struct Adjacency {
  struct Range {
    const uint32_t *b, *e;
    const uint32_t *begin() const { return b; }
    const uint32_t *end() const { return e; }
    size_t size() const { return size_t(e - b); }
    uint32_t operator[](size_t i) const { return b[i]; }
  };
  std::vector<uint32_t> start; // node x's list is list[start[x], start[x + 1])
  std::vector<uint32_t> list;
  Range operator[](uint32_t x) const { return {list.data() + start[x], list.data() + start[x + 1]}; }
  size_t size() const { return start.empty() ? 0 : start.size() - 1; }
};
Adjacency successors(const Graph &g);
Adjacency predecessors(const Graph &g);
// A cycle as a node path whose last element equals the first; empty when acyclic.
std::vector<uint32_t> findCycle(const Graph &g);
std::vector<uint32_t> findCycle(const Graph &g, const Adjacency &succ);
std::string cyclePath(const Graph &g, const std::vector<uint32_t> &cycle);
bool containsHostTask(const Graph &g, int depth = 0);
// Slot sizes as stored (expression sizes at the parameters' defaults, at least 1), as
// the memory plan and placement report see them (placement.cpp).
std::vector<uint64_t> storedBytes(const Graph &g);
// A number in a message.
inline std::string s(uint64_t v) { return std::to_string(v); }

} // namespace detail
} // namespace cgraph
