// Readable renderings of a Graph: JSON (`cgc --emit=json`, `cgc dump --json`) and a text
// listing. Blobs (slot data, kernel forms) are shown as size + xxh64 + the first bytes
// in hex, never in full. Not a serialization format: there is no reader for it.
//
// Pure functions; thread-safe on graphs nobody mutates; never fail or throw (names are
// emitted as given; invalid UTF-8 is replaced when dumping, see nlohmann dump options).
#pragma once

#include <cgraph/model.h>

#include <nlohmann/json.hpp>

#include <string>

namespace cgraph {

nlohmann::json toJson(const Graph &graph);
std::string listing(const Graph &graph);

} // namespace cgraph
