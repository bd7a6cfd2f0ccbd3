// Loading graphs and describing their slots and parameters.
#include "internal.h"

#include "cgraph/format/reader.h"
#include "cgraph/graph/hazards.h"
#include "cgraph/graph/slot_types.h"

#include <algorithm>
#include <cctype>
#include <cstring>

namespace cgraph::capi {

namespace {

// The element type every kernel argument bound to a slot agrees on; UNKNOWN when none
// types it or two disagree.
std::vector<cgraph_type> slotElements(const Graph &g) {
  std::vector<cgraph_type> out(g.slots.size(), CGRAPH_TYPE_UNKNOWN);
  std::vector<uint8_t> mixed(g.slots.size(), 0);
  for (const Node &n : g.nodes) {
    if (n.kind != NodeKind::Kernel || n.kernel >= g.kernels.size()) continue;
    const Kernel &k = g.kernels[n.kernel];
    for (size_t i = 0; i < n.args.size() && i < k.params.size(); ++i) {
      const Arg &a = n.args[i];
      ScalarType t;
      if (a.kind != ArgKind::Slot || a.index >= g.slots.size() ||
          !scalarFromKernelTypeName(k.params[i].typeName, &t))
        continue;
      const auto c = static_cast<cgraph_type>(t);
      if (out[a.index] != CGRAPH_TYPE_UNKNOWN && out[a.index] != c) mixed[a.index] = 1;
      out[a.index] = c;
    }
  }
  for (size_t s = 0; s < out.size(); ++s)
    if (mixed[s]) out[s] = CGRAPH_TYPE_UNKNOWN;
  return out;
}

} // namespace

std::vector<SlotMeta> describeSlots(const Graph &g) {
  const std::vector<SlotRequirement> reqs = slotRequirements(g);
  const std::vector<cgraph_type> elements = slotElements(g);
  std::vector<SlotMeta> out(g.slots.size());
  for (size_t s = 0; s < g.slots.size(); ++s) {
    const Slot &slot = g.slots[s];
    SlotMeta &m = out[s];
    const SlotRequirement r = s < reqs.size() ? reqs[s] : SlotRequirement{};
    m.size = std::max(slot.size, r.minSize);
    m.alignment =
        std::max<uint32_t>({slot.alignment ? slot.alignment : 1, r.alignment ? r.alignment : 1});
    m.element = elements[s];
    m.external = slot.init == SlotInit::External;
    m.read = ((slot.usage | r.usage) & kUsageRead) != 0;
    m.written = r.written || ((slot.usage | r.usage) & kUsageWrite) != 0;
  }
  for (const FieldExpr &fe : g.exprs)
    if (fe.field == ExprField::SlotSize && fe.arg < out.size()) out[fe.arg].sizeExpr = true;
  return out;
}

} // namespace cgraph::capi

using namespace cgraph;
using capi::fail;
using capi::guard;
using capi::nullArgument;

namespace {

cgraph_status adopt(Expected<Graph> g, cgraph_graph *out) {
  if (!g) return fail(g.error());
  auto h = std::make_unique<cgraph_graph_s>();
  h->graph = std::move(*g);
  h->slots = capi::describeSlots(h->graph);
  *out = h.release();
  return CGRAPH_OK;
}

std::string knownNames(const std::vector<std::string> &names) {
  std::string known;
  for (const std::string &n : names)
    known += (known.empty() ? "" : ", ") + n;
  return known.empty() ? std::string("it has none") : known;
}

} // namespace

extern "C" {

cgraph_status cgraph_graph_load(const char *path, cgraph_graph *out) {
  return guard([&] {
    if (!out) return nullArgument("out");
    *out = nullptr;
    if (!path) return nullArgument("path");
    return adopt(readCgfFile(path), out);
  });
}

cgraph_status cgraph_graph_load_memory(const void *data, size_t size, cgraph_graph *out) {
  return guard([&] {
    if (!out) return nullArgument("out");
    *out = nullptr;
    if (!data && size) return nullArgument("data");
    return adopt(readCgf(static_cast<const uint8_t *>(data), size), out);
  });
}

void cgraph_graph_release(cgraph_graph graph) {
  delete graph;
}

const char *cgraph_graph_name(cgraph_graph graph) {
  return graph ? graph->graph.name.c_str() : "";
}

uint32_t cgraph_graph_slot_count(cgraph_graph graph) {
  return graph ? uint32_t(graph->graph.slots.size()) : 0;
}

uint32_t cgraph_graph_param_count(cgraph_graph graph) {
  return graph ? uint32_t(graph->graph.params.size()) : 0;
}

uint32_t cgraph_graph_node_count(cgraph_graph graph) {
  return graph ? uint32_t(graph->graph.nodes.size()) : 0;
}

cgraph_status cgraph_graph_slot_info(cgraph_graph graph, uint32_t index, cgraph_slot_info *out) {
  return guard([&] {
    if (!graph) return nullArgument("graph");
    if (!out) return nullArgument("out");
    if (index >= graph->slots.size())
      return fail(CGRAPH_ERROR_INVALID, "slot index " + std::to_string(index) +
                                            " is out of range (the graph has " +
                                            std::to_string(graph->slots.size()) + " slots)");
    const capi::SlotMeta &m = graph->slots[index];
    *out = cgraph_slot_info{graph->graph.slots[index].name.c_str(),
                            m.size,
                            m.alignment,
                            m.element,
                            m.external,
                            m.read,
                            m.written, m.sizeExpr ? 1 : 0};
    return CGRAPH_OK;
  });
}

cgraph_status cgraph_graph_find_slot(cgraph_graph graph, const char *name, uint32_t *index) {
  return guard([&] {
    if (!graph) return nullArgument("graph");
    if (!name) return nullArgument("name");
    if (!index) return nullArgument("index");
    const uint32_t s = graph->graph.findSlot(name);
    if (s == kNone) {
      std::vector<std::string> names;
      for (const Slot &sl : graph->graph.slots)
        names.push_back(sl.name);
      return fail(CGRAPH_ERROR_INVALID,
                  "graph has no slot '" + std::string(name) + "' (" + knownNames(names) + ")");
    }
    *index = s;
    return CGRAPH_OK;
  });
}

cgraph_status cgraph_graph_param_info(cgraph_graph graph, uint32_t index, cgraph_param_info *out) {
  return guard([&] {
    if (!graph) return nullArgument("graph");
    if (!out) return nullArgument("out");
    if (index >= graph->graph.params.size())
      return fail(CGRAPH_ERROR_INVALID,
                  "param index " + std::to_string(index) + " is out of range (the graph has " +
                      std::to_string(graph->graph.params.size()) + " params)");
    const Param &p = graph->graph.params[index];
    *out = cgraph_param_info{p.name.c_str(), static_cast<cgraph_type>(p.type), 0, 0.0};
    capi::paramDefault(p, &out->default_int, &out->default_float);
    return CGRAPH_OK;
  });
}

cgraph_status cgraph_graph_find_param(cgraph_graph graph, const char *name, uint32_t *index) {
  return guard([&] {
    if (!graph) return nullArgument("graph");
    if (!name) return nullArgument("name");
    if (!index) return nullArgument("index");
    const uint32_t p = graph->graph.findParam(name);
    if (p == kNone) {
      std::vector<std::string> names;
      for (const Param &q : graph->graph.params)
        names.push_back(q.name);
      return fail(CGRAPH_ERROR_INVALID,
                  "graph has no param '" + std::string(name) + "' (" + knownNames(names) + ")");
    }
    *index = p;
    return CGRAPH_OK;
  });
}

} // extern "C"
