// Semantic validation of a Graph: everything a runtime or cgc must reject before use.
//
// Pure function over a const Graph. Thread-safety: safe on graphs nobody mutates.
// Failure modes: never fails itself; problems come back as Diagnostics (errors first in
// graph order, then warnings), with messages that quote names and give indices, e.g.
// `node 'k2': arg 1 refers to slot 7 but the graph has 3 slots`. Unnamed nodes/slots
// are shown as `node #3` / `slot #3`. Subgraphs are validated recursively; their
// messages are prefixed `subgraph 'name': ` and carry node = slot = kNone.
//
// Checks: cycles (with the cycle path); dangling references (kernel, module, slot,
// param, subgraph, edge endpoints, order and partition entries, nd-range params); order
// being a topological permutation; args vs kernel signature (count, buffer vs scalar,
// scalar size and type class, LocalMem only for __local params); nd-range sanity (dims
// 1..3, global > 0, local divides global, reqd_work_group_size, integer range params);
// copy/fill ranges inside sized slots (size 0 = unsized, not checked); rect copy pitches;
// fill pattern 1..128 bytes, offset and bytes multiples of it; duplicate node/slot/param
// names; subgraph slot binding count and param binding by name; warnings for transient
// slots read before written (along the execution order) and slots never used.
#pragma once

#include <cgraph/error.h>
#include <cgraph/model.h>

#include <string>
#include <vector>

namespace cgraph {

struct Diagnostic {
  enum Severity { Error, Warning } severity = Error;
  uint32_t node = kNone;
  uint32_t slot = kNone;
  std::string message;
};

struct ValidateOptions {
  bool warnings = true;        // produce Warning diagnostics
  bool checkSignatures = true; // args vs kernel params
  bool recurseSubgraphs = true;
};

std::vector<Diagnostic> validateGraph(const Graph &graph, const ValidateOptions &options = {});

// The first Error-severity diagnostic as an Error (success when there is none).
cgraph::Error firstError(const std::vector<Diagnostic> &diagnostics);
// "error: <message>" / "warning: <message>".
std::string formatDiagnostic(const Diagnostic &d);

} // namespace cgraph
