// The `.cgf` versions this build writes and reads, as the tools print them for
// `--version` (`writes .cgf 1.0 to 2.3 (the lowest a graph needs), reads majors 1 to 2`).
// Header-only; no state.
#pragma once

#include "cgraph/format/reader.h"

#include <string>

namespace cgraph {

inline std::string cgfVersionText() {
  const auto v = [](uint16_t major, uint16_t minor) { return std::to_string(major) + "." + std::to_string(minor); };
  return "writes .cgf " + v(kCgfMajorVersion, kCgfMinorVersion) + " to " +
         v(kCgfExprMajorVersion, kCgfCollectiveMinorVersion) + " (the lowest a graph needs), reads majors " +
         std::to_string(kCgfMajorVersion) + " to " + std::to_string(kCgfMaxMajorVersion);
}

} // namespace cgraph
