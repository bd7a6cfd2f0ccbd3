// Graphviz DOT rendering of a Graph, for humans (`cgc --emit=dot`).
//
// Pure function; thread-safe on graphs nobody mutates; never fails (out-of-range indices
// are printed as numbers). Per node: kind, kernel name, nd-range, slots used (with r/w);
// edges; partitions (when computed) as clusters.
#pragma once

#include <cgraph/model.h>

#include <string>

namespace cgraph {

std::string toDot(const Graph &graph);

} // namespace cgraph
