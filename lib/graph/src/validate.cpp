// Graph-level checks of validateGraph(); per-node checks live in validate_nodes.cpp.
#include "validate_internal.h"

#include <cgraph/graph/hazards.h>
#include <cgraph/graph/order.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <string_view>
#include <unordered_map>

namespace cgraph {
namespace detail {
namespace {


void checkDuplicates(Checker &c) {
  const Graph &g = c.g;
  // which: 0 node, 1 slot, 2 param (decides the Diagnostic field that gets the index)
  // An open-addressing table of indices (one allocation, not one per name); each
  // repeat is reported, in index order, against the first of its name.
  auto scan = [&](const char *what, int which, size_t count, auto nameOf) {
    size_t cap = 16;
    while (cap < 2 * count) cap <<= 1;
    std::vector<size_t> table(cap, SIZE_MAX);
    for (size_t i = 0; i < count; ++i) {
      const std::string &name = nameOf(i);
      if (name.empty()) continue;
      size_t h = std::hash<std::string_view>()(name) & (cap - 1);
      while (table[h] != SIZE_MAX && nameOf(table[h]) != name) h = (h + 1) & (cap - 1);
      if (table[h] == SIZE_MAX) {
        table[h] = i;
        continue;
      }
      c.error(which == 0 ? uint32_t(i) : kNone, which == 1 ? uint32_t(i) : kNone,
              std::string("duplicate ") + what + " name '" + name + "' (" + what + "s " + s(table[h]) + " and " +
                  s(i) + ")");
    }
  };
  scan("node", 0, g.nodes.size(), [&](size_t i) -> const std::string & { return g.nodes[i].name; });
  scan("slot", 1, g.slots.size(), [&](size_t i) -> const std::string & { return g.slots[i].name; });
  scan("param", 2, g.params.size(), [&](size_t i) -> const std::string & { return g.params[i].name; });
}

// Returns false when the edges reference nodes out of range or form a cycle.
bool checkEdges(Checker &c) {
  const Graph &g = c.g;
  bool ok = true;
  for (size_t i = 0; i < g.edges.size(); ++i) {
    const Edge &e = g.edges[i];
    if (e.from >= g.nodes.size() || e.to >= g.nodes.size()) {
      c.error(kNone, kNone, "edge " + s(i) + " (" + s(e.from) + " -> " + s(e.to) +
                                ") points past the node table (" + s(g.nodes.size()) + " nodes)");
      ok = false;
    }
  }
  std::vector<uint32_t> cycle = findCycle(g);
  if (!cycle.empty()) {
    c.error(cycle[0], kNone, "graph has a cycle through " + nodeLabel(g, cycle[0]) + ": " +
                                 cyclePath(g, cycle));
    ok = false;
  }
  return ok;
}

// Returns true when g.order is a usable execution order.
bool checkOrder(Checker &c, bool edgesOk) {
  const Graph &g = c.g;
  if (g.order.empty()) return false;
  bool ok = true;
  if (g.order.size() != g.nodes.size()) {
    c.error(kNone, kNone, "order has " + s(g.order.size()) + " entries but the graph has " +
                              s(g.nodes.size()) + " nodes");
    ok = false;
  }
  std::vector<size_t> pos(g.nodes.size(), SIZE_MAX);
  for (size_t i = 0; i < g.order.size(); ++i) {
    uint32_t x = g.order[i];
    if (x >= g.nodes.size()) {
      c.error(kNone, kNone, "order[" + s(i) + "] refers to node " + s(x) + " but the graph has " +
                                s(g.nodes.size()) + " nodes");
      ok = false;
    } else if (pos[x] != SIZE_MAX) {
      c.error(x, kNone, "order lists " + nodeLabel(g, x) + " twice");
      ok = false;
    } else {
      pos[x] = i;
    }
  }
  if (!ok || !edgesOk) return false;
  for (const Edge &e : g.edges)
    if (pos[e.to] < pos[e.from]) {
      c.error(e.to, kNone, "order places " + nodeLabel(g, e.to) + " before its predecessor " +
                               nodeLabel(g, e.from));
      ok = false;
    }
  return ok;
}

void checkPartitions(Checker &c) {
  const Graph &g = c.g;
  if (g.partitions.empty()) return;
  std::vector<uint32_t> partOf(g.nodes.size(), kNone);
  for (size_t p = 0; p < g.partitions.size(); ++p) {
    const Partition &part = g.partitions[p];
    for (size_t i = 0; i < part.nodes.size(); ++i) {
      uint32_t x = part.nodes[i];
      if (x >= g.nodes.size()) {
        c.error(kNone, kNone, "partitions[" + s(p) + "].nodes[" + s(i) + "] refers to node " +
                                  s(x) + " but the graph has " + s(g.nodes.size()) + " nodes");
      } else if (partOf[x] != kNone) {
        c.error(x, kNone, nodeLabel(g, x) + " is in partitions " + s(partOf[x]) + " and " + s(p));
      } else {
        partOf[x] = uint32_t(p);
      }
    }
    for (size_t i = 0; i < part.deps.size(); ++i)
      if (part.deps[i] >= g.partitions.size())
        c.error(kNone, kNone, "partitions[" + s(p) + "].deps[" + s(i) + "] refers to partition " +
                                  s(part.deps[i]) + " but there are " + s(g.partitions.size()) +
                                  " partitions");
  }
  for (uint32_t x = 0; x < g.nodes.size(); ++x)
    if (partOf[x] == kNone) c.error(x, kNone, nodeLabel(g, x) + " is in no partition");
}

void checkKernels(Checker &c) {
  const Graph &g = c.g;
  for (size_t k = 0; k < g.kernels.size(); ++k)
    if (g.kernels[k].module >= g.modules.size())
      c.error(kNone, kNone, "kernel '" + g.kernels[k].name + "': module index " +
                                s(g.kernels[k].module) + " but the graph has " +
                                s(g.modules.size()) + " modules");
}

void checkSlotUse(Checker &c, const std::vector<uint32_t> *order) {
  const Graph &g = c.g;
  std::vector<uint8_t> used(g.slots.size(), 0);
  for (uint32_t n = 0; n < g.nodes.size(); ++n) {
    for (const SlotAccess &a : nodeAccesses(g, n).accesses)
      if (a.slot < used.size()) used[a.slot] = 1;
    if (g.nodes[n].kind == NodeKind::Subgraph || g.nodes[n].kind == NodeKind::Conditional)
      for (uint32_t sl : g.nodes[n].subgraphSlots)
        if (sl < used.size()) used[sl] = 1;
  }
  for (uint32_t sl = 0; sl < g.slots.size(); ++sl)
    if (!used[sl]) c.warning(kNone, sl, slotLabel(g, sl) + " is never used");
  if (!order) return;
  // Only a read-only first access is reported: a kernel's non-const buffer counts as
  // read+write, and most such first accesses are the kernel producing the data.
  std::vector<uint8_t> seen(g.slots.size(), 0);
  for (uint32_t n : *order) {
    for (const SlotAccess &a : nodeAccesses(g, n).accesses) {
      if (a.slot >= g.slots.size() || seen[a.slot]) continue;
      seen[a.slot] = 1;
      if (g.slots[a.slot].init == SlotInit::Transient && a.read && !a.write)
        c.warning(n, a.slot, nodeLabel(g, n) + ": reads transient " + slotLabel(g, a.slot) +
                                 " before any node writes it");
    }
  }
}

std::vector<Diagnostic> run(const Graph &g, const ValidateOptions &opt, int depth) {
  Checker c{g, opt, {}};
  checkDuplicates(c);
  checkKernels(c);
  bool edgesOk = checkEdges(c);
  bool orderOk = checkOrder(c, edgesOk);
  checkPartitions(c);
  for (uint32_t n = 0; n < g.nodes.size(); ++n) c.checkNode(n);
  if (opt.warnings) { // warnings only: the order they follow is computed for them alone
    std::vector<uint32_t> computed;
    const std::vector<uint32_t> *order = nullptr;
    if (orderOk) {
      order = &g.order;
    } else if (edgesOk) {
      auto o = executionOrder(g);
      if (o) {
        computed = std::move(*o);
        order = &computed;
      }
    }
    checkSlotUse(c, order);
  }
  if (opt.recurseSubgraphs) {
    for (size_t i = 0; i < g.subgraphs.size(); ++i) {
      const Graph &child = g.subgraphs[i];
      std::string prefix = "subgraph " + (child.name.empty() ? "#" + s(i) : "'" + child.name + "'") + ": ";
      if (depth >= 64) {
        c.error(kNone, kNone, prefix + "subgraphs nested deeper than 64 levels");
        break;
      }
      for (Diagnostic d : run(child, opt, depth + 1)) {
        d.message = prefix + d.message;
        d.node = d.slot = kNone;
        c.out.push_back(std::move(d));
      }
    }
  }
  std::stable_partition(c.out.begin(), c.out.end(),
                        [](const Diagnostic &d) { return d.severity == Diagnostic::Error; });
  return std::move(c.out);
}

} // namespace
} // namespace detail

std::vector<Diagnostic> validateGraph(const Graph &graph, const ValidateOptions &options) {
  return detail::run(graph, options, 0);
}

Error firstError(const std::vector<Diagnostic> &diagnostics) {
  for (const Diagnostic &d : diagnostics)
    if (d.severity == Diagnostic::Error) return makeError(d.message);
  return Error::success();
}

std::string formatDiagnostic(const Diagnostic &d) {
  return (d.severity == Diagnostic::Error ? "error: " : "warning: ") + d.message;
}

} // namespace cgraph
