// The graph conformance suite, the kernel suite's companion (conformance.h): what a
// backend does with a graph besides running kernels. Each case is a small graph built
// here, run in replay and in eager mode through a sequence of submissions on one
// executable, with the expected contents of its external slots computed here:
//   node kinds        kernel, copy (whole and at offsets), fill, barrier, subgraph and
//                     a host task (checksum) between device nodes
//   slot inits        embedded data, a fill pattern, transient memory written first
//   parameters        a kernel range and a scalar from parameters, new values per run
//   updates           a scalar argument, disable and enable, a new range (Executable::update)
//   conditionals      while and if nodes over a counter the kernels write, a loop over
//                     its trip limit failing the submission
// A backend joins with one call of runGraphSuite in its test. What it does not run is
// an entry of the skip table (skips.cpp, case id "graph:NAME"), reported with its
// reason on every run.
//
// Catch2 assertions inside: call from a TEST_CASE only. Each case is a DYNAMIC_SECTION
// named "BACKEND graph: NAME (MODE)".
#pragma once

#include "conformance.h"

#include <string>
#include <vector>

namespace cgraph::conformance {

// Every graph case not skipped on `t.backend`, on `t.device`, in replay and eager mode.
// At least one case runs.
void runGraphSuite(const Target &t);

// The names of the graph cases ("node kinds", ...), for the skip table's check.
std::vector<std::string> graphCaseNames();

// The entry that skips graph case `name` on `backend` ("graph:NAME"), or null.
const Skip *findGraphSkip(const std::string &name, const std::string &backend);

} // namespace cgraph::conformance
