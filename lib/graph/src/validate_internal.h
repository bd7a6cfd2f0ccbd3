// Shared state of the validator (not installed).
#pragma once

#include <cgraph/graph/validate.h>

#include "graph_util.h"

namespace cgraph {
namespace detail {

struct Checker {
  const Graph &g;
  const ValidateOptions &opt;
  std::vector<Diagnostic> out;

  void error(uint32_t node, uint32_t slot, std::string msg) {
    out.push_back(Diagnostic{Diagnostic::Error, node, slot, std::move(msg)});
  }
  void warning(uint32_t node, uint32_t slot, std::string msg) {
    if (opt.warnings) out.push_back(Diagnostic{Diagnostic::Warning, node, slot, std::move(msg)});
  }
  std::string nodeName(uint32_t n) const { return nodeLabel(g, n); }
  std::string slotName(uint32_t s) const { return slotLabel(g, s); }
  // True (and no diagnostic) when slot index s is in range.
  bool checkSlotRef(uint32_t node, uint32_t s, const std::string &what);
  bool checkParamRef(uint32_t node, uint32_t p, const std::string &what);

  void checkNode(uint32_t n); // validate_nodes.cpp
};

} // namespace detail
} // namespace cgraph
