// Graph descriptions (docs/graph-json.md) -> cgraph::Graph.
//
// loadDescription parses the JSON file (positions tracked, json_pos.h), compiles or
// loads the kernel files it names (OpenCL C through lib/kernel compileOpenCL, SPIR-V
// validated and reflected), expands repeat blocks, builds the graph with explicit and/
// or hazard-inferred edges (lib/graph), and validates it (lib/graph validateGraph),
// each subgraph against its own description. Every problem is reported to `diags`
// as `file:line:col: error|warning: ...` pointing at the JSON element concerned;
// clang's diagnostics for kernel sources pass through verbatim.
//
// Ownership: the returned Graph is the caller's. Thread-safety: none needed (one call
// per run). Failure modes: false after at least one error was reported; never throws,
// never crashes on malformed input (bounded nesting, sizes and repeat expansion).
#pragma once

#include "diagnostics.h"

#include "cgraph/kernel/opencl_compiler.h"
#include "cgraph/model.h"

#include <string>
#include <vector>

namespace cgraph::cgc {

struct DescriptionOptions {
  CompileOptions compile;   // command-line -I, -D, --cl-std (applied to every .cl file)
  bool keepSource = false;  // also store the OpenCL C source form
  bool keepBitcode = false; // also store the spir64 LLVM bitcode form
  bool validate = true;     // run validateGraph and report its diagnostics
  // More directories files named by the description may be read from (--allow-dir),
  // besides the description's own folder and compile.includeDirs (-I); files
  // elsewhere are refused before they are read.
  std::vector<std::string> allowDirs;
};

// Limits that keep hostile descriptions from exhausting memory.
constexpr uint64_t kMaxDescriptionBytes = 64ull << 20;
constexpr uint64_t kMaxKernelFileBytes = 64ull << 20;
constexpr uint64_t kMaxEmbeddedBytes = 1ull << 30; // data / data_file slot contents
constexpr uint64_t kMaxNodes = 1000000;            // after repeat expansion, per graph
constexpr uint32_t kMaxSubgraphDepth = 8;          // the .cgf reader's default

bool loadDescription(const std::string &path, const DescriptionOptions &opts, DiagSink &diags,
                     Graph *out);

} // namespace cgraph::cgc
