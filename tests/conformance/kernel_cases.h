// The conformance cases as runnable graphs: the `// cgtest:` files of a list of
// directories, and each case as a one-node graph with its inputs. No Catch2 and no
// device: the suite (conformance.h) and benchmarks/cpu/bench_cases share it.
#pragma once

#include "kernel_manifest.h"

#include "cgraph/error.h"
#include "cgraph/model.h"

#include <cstdint>
#include <string>
#include <vector>

namespace cgraph::conformance {

// One kernel file and its cases.
struct ManifestFile {
  std::string path;   // DIR/NAME.cl, as found
  std::string source; // OpenCL C
  std::vector<ManifestCase> cases;
};

// Every `*.cl` file of each directory, by name within a directory, the directories in
// the order given. A missing directory, an unreadable file or a malformed manifest line
// (`file.cl:LINE: <what is wrong>`) is an error: the suite must never shrink unseen.
Expected<std::vector<ManifestFile>> loadManifestFiles(const std::vector<std::string> &dirs);

// The case as a graph: the file compiled from OpenCL C (its SPIR-V and source forms,
// every kernel of it), one kernel node with the case's nd-range and arguments, one
// external slot per buffer argument in argument order. Errors: the compiler's, or no
// kernel of the case's name in the file.
Expected<Graph> caseGraph(const ManifestFile &f, const ManifestCase &c);

// The case's buffer arguments in argument order: entry i is slot i of caseGraph().
std::vector<const ManifestArg *> bufferArgs(const ManifestCase &c);

// The initial contents of each buffer argument, in the order of bufferArgs(); the same
// in every process of one build (seeded from the case's label).
std::vector<std::vector<uint8_t>> caseInputs(const ManifestCase &c);

} // namespace cgraph::conformance
