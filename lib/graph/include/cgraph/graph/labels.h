// How messages name a node or a slot of a graph: `node 'name'`, or `node #3` for an
// unnamed node (and an index past the table); `slot 'name'`, or `slot #3`. Every
// library, backend and tool builds its messages with these, so one node reads the same
// in every error.
//
// Pure functions; thread-safety: safe on graphs nobody mutates. They never fail.
#pragma once

#include <cgraph/model.h>

#include <cstdint>
#include <string>

namespace cgraph {

std::string nodeLabel(const Graph &graph, uint32_t node);
std::string slotLabel(const Graph &graph, uint32_t slot);

} // namespace cgraph
