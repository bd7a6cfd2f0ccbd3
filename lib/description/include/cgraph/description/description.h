// Graph descriptions (docs/graph-json.md) -> cgraph::Graph: the description compiler
// as a library (the cgc tool, the C API's cgraph_graph_compile_* and the Python
// package's cgraph.compile all call it).
//
// loadDescription parses the JSON (positions tracked), compiles or loads the kernel
// files it names (OpenCL C through lib/kernel compileOpenCL, SPIR-V validated and
// reflected), expands repeat blocks, builds the graph with explicit and/or
// hazard-inferred edges (lib/graph), and validates it (lib/graph validateGraph), each
// subgraph against its own description. compileDescription* do that and then what a
// .cgf needs (finalizeForFile: hazards, order, partitions, slot usage), so that the
// Graph can be written with writeCgf or handed to a runtime.
//
// Diagnostics: every problem is reported to `diags` (a sink with the caller's
// handler, diagnostics.h) as `file:line:col: error|warning: ...` pointing at the JSON
// element concerned; clang's diagnostics for kernel sources pass through verbatim.
// Files: the description may read files (kernels, data_file, subgraphs, OpenCL C
// includes) only inside its own folder (for text: the base directory), the include
// directories and DescriptionOptions::allowDirs; others are refused before they are
// read. Relative paths resolve against the description's folder (the base directory).
//
// Ownership: the returned Graph is the caller's; nothing is kept between calls.
// Thread-safety: concurrent calls with distinct sinks are safe (kernel compilation is,
// lib/kernel opencl_compiler.h); the sink's handler runs on the calling thread.
// Failure modes: never throws, never crashes on malformed input (bounded nesting,
// sizes and repeat expansion). loadDescription* return false after at least one error
// was reported; compileDescription* return an Error whose message is the first error
// as formatDiag writes it, with ErrorCode::Io when the description file itself cannot
// be read, ErrorCode::Invalid for everything wrong in the description (the full list
// went to `diags`).
#pragma once

#include "cgraph/description/diagnostics.h"

#include "cgraph/error.h"
#include "cgraph/graph/order.h"
#include "cgraph/kernel/opencl_compiler.h"
#include "cgraph/model.h"

#include <functional>
#include <string>
#include <vector>

namespace cgraph::desc {

// How far long work got, for a caller that shows it (cgc on a terminal): step `done`
// of `total` of `what` is about to start on `item` (done == total: finished).
struct Progress {
  const char *what = "";
  uint64_t done = 0, total = 0;
  std::string item;
};

struct DescriptionOptions {
  CompileOptions compile;   // include dirs, defines, OpenCL C version (every .cl file)
  bool keepSource = false;  // also store the OpenCL C source form
  bool keepBitcode = false; // also store the spir64 LLVM bitcode form
  bool validate = true;     // run validateGraph and report its diagnostics
  // More directories files named by the description may be read from (cgc's
  // --allow-dir), besides the description's own folder and compile.includeDirs; files
  // elsewhere are refused before they are read.
  std::vector<std::string> allowDirs;
  // The end of the message refusing a file outside them: how this program's user allows
  // a directory (cgc: "add its directory with --allow-dir").
  std::string allowDirsHint = "add its directory to the allowed directories";
  // Called on the loading thread before each kernel file of a "kernels" list is
  // compiled and once after the last; must not throw. Empty: nothing is reported.
  std::function<void(const Progress &)> progress;
};

// Limits that keep hostile descriptions from exhausting memory.
constexpr uint64_t kMaxDescriptionBytes = 64ull << 20;
constexpr uint64_t kMaxKernelFileBytes = 64ull << 20;
constexpr uint64_t kMaxEmbeddedBytes = 1ull << 30; // data / data_file slot contents
constexpr uint64_t kMaxNodes = 1000000;            // after repeat expansion, per graph
constexpr uint32_t kMaxSubgraphDepth = 8;          // the .cgf reader's default

// The description in the file at `path` (its folder is the base directory).
bool loadDescription(const std::string &path, const DescriptionOptions &opts, DiagSink &diags,
                     Graph *out);
// The description `text` (JSON); `name` is the file name diagnostics show, `baseDir`
// the directory relative paths resolve against ("" = the current directory).
bool loadDescriptionText(const std::string &text, const std::string &name, const std::string &baseDir,
                         const DescriptionOptions &opts, DiagSink &diags, Graph *out);

// loadDescription + finalizeForFile(order): a graph ready for writeCgf.
Expected<Graph> compileDescription(const std::string &path, const DescriptionOptions &opts, DiagSink &diags,
                                   OrderKind order = OrderKind::DepthFirst);
// loadDescriptionText + finalizeForFile(order).
Expected<Graph> compileDescriptionText(const std::string &text, const std::string &name,
                                       const std::string &baseDir, const DescriptionOptions &opts,
                                       DiagSink &diags, OrderKind order = OrderKind::DepthFirst);

} // namespace cgraph::desc
