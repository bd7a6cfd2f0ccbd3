// Internal: the structural rules a Graph must satisfy to be written or returned by the
// reader (every index in range, enums known, dims 1..3, fill patterns 1..128 bytes,
// Data slots hold `size` bytes, subgraph slot bindings match the child's slots).
// Not recursive: subgraphs are checked when they are written or read themselves.
#pragma once

#include "cgraph/error.h"
#include "cgraph/model.h"

#include <string>

namespace cgraph {
namespace cgf {

// "table[i]", how messages name a row of a table.
inline std::string at(const char *table, size_t i) { return std::string(table) + "[" + std::to_string(i) + "]"; }

// `holder` names what the indices point into in messages: "file" or "graph".
Error checkStructure(const Graph &g, const char *holder);

} // namespace cgf
} // namespace cgraph
