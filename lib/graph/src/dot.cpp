#include <cgraph/graph/dot.h>

#include <cgraph/graph/hazards.h>

#include "render_util.h"

#include <cmath>
#include <cstdio>
#include <cstring>

namespace cgraph {
namespace detail {

std::string slotRef(const Graph &g, uint32_t s) {
  if (s < g.slots.size() && !g.slots[s].name.empty()) return g.slots[s].name;
  return "#" + std::to_string(s);
}

std::string paramRef(const Graph &g, uint32_t p) {
  if (p < g.params.size() && !g.params[p].name.empty()) return "$" + g.params[p].name;
  return "$#" + std::to_string(p);
}

std::string dimText(const Graph &g, const Dim &d) {
  return d.param != kNone ? paramRef(g, d.param) : std::to_string(d.value);
}

std::string rangeText(const Graph &g, const NDRange &r) {
  uint32_t dims = r.dims >= 1 && r.dims <= 3 ? r.dims : 3;
  auto tuple = [&](const Dim *d) {
    std::string t = "(";
    for (uint32_t i = 0; i < dims; ++i) t += (i ? "," : "") + dimText(g, d[i]);
    return t + ")";
  };
  std::string t = "global " + tuple(r.global);
  if (r.hasLocal()) t += " local " + tuple(r.local);
  bool hasOffset = false;
  for (uint32_t i = 0; i < dims; ++i) hasOffset |= r.offset[i].value != 0 || r.offset[i].param != kNone;
  if (hasOffset) t += " offset " + tuple(r.offset);
  return t;
}

namespace {
double halfToDouble(uint16_t h) {
  int exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  double v;
  if (exp == 0) v = std::ldexp(double(mant), -24);
  else if (exp == 31) v = mant ? NAN : INFINITY;
  else v = std::ldexp(double(mant | 0x400), exp - 25);
  return (h & 0x8000) ? -v : v;
}
} // namespace

std::string scalarText(ScalarType t, uint64_t bits) {
  char buf[64];
  switch (t) {
  case ScalarType::I8: return std::to_string(int8_t(bits));
  case ScalarType::I16: return std::to_string(int16_t(bits));
  case ScalarType::I32: return std::to_string(int32_t(bits));
  case ScalarType::I64: return std::to_string(int64_t(bits));
  case ScalarType::U8: return std::to_string(uint8_t(bits));
  case ScalarType::U16: return std::to_string(uint16_t(bits));
  case ScalarType::U32: return std::to_string(uint32_t(bits));
  case ScalarType::U64: return std::to_string(bits);
  case ScalarType::F16:
    snprintf(buf, sizeof buf, "%g", halfToDouble(uint16_t(bits)));
    return buf;
  case ScalarType::F32: {
    float f;
    uint32_t b = uint32_t(bits);
    std::memcpy(&f, &b, 4);
    snprintf(buf, sizeof buf, "%.9g", double(f));
    return buf;
  }
  case ScalarType::F64: {
    double d;
    std::memcpy(&d, &bits, 8);
    snprintf(buf, sizeof buf, "%.17g", d);
    return buf;
  }
  }
  return "0x" + hexBytes(reinterpret_cast<const uint8_t *>(&bits), 8);
}

std::string argText(const Graph &g, const Arg &a) {
  switch (a.kind) {
  case ArgKind::Slot: return slotRef(g, a.index) + (a.value ? "+" + std::to_string(a.value) : "");
  case ArgKind::Scalar:
    return std::string(scalarSize(a.type) ? scalarName(a.type) : "?") + " " + scalarText(a.type, a.value);
  case ArgKind::Param: return paramRef(g, a.index);
  case ArgKind::LocalMem: return "local " + std::to_string(a.value);
  case ArgKind::String: return "\"" + a.text + "\"";
  }
  return "?";
}

std::string usageText(uint32_t usage) {
  std::string t;
  if (usage & kUsageRead) t += "read";
  if (usage & kUsageWrite) t += t.empty() ? "write" : "|write";
  if (usage & kUsageTransfer) t += t.empty() ? "transfer" : "|transfer";
  return t.empty() ? "-" : t;
}

const char *initName(SlotInit i) {
  switch (i) {
  case SlotInit::External: return "external";
  case SlotInit::Data: return "data";
  case SlotInit::Fill: return "fill";
  case SlotInit::File: return "file";
  case SlotInit::Transient: return "transient";
  }
  return "unknown";
}

std::string hexBytes(const uint8_t *p, size_t n) {
  static const char kHex[] = "0123456789abcdef";
  std::string t;
  for (size_t i = 0; i < n; ++i) {
    t += kHex[p[i] >> 4];
    t += kHex[p[i] & 15];
  }
  return t;
}

} // namespace detail

namespace {

std::string escape(const std::string &s) {
  std::string t;
  for (char c : s) {
    if (c == '"' || c == '\\') t += '\\';
    if (c == '\n') { t += "\\n"; continue; }
    t += c;
  }
  return t;
}

std::string nodeLabelText(const Graph &g, uint32_t i) {
  using namespace detail;
  const Node &n = g.nodes[i];
  std::string l = (n.name.empty() ? "#" + std::to_string(i) : n.name) + "\n" +
                  (nodeKindName(n.kind) ? nodeKindName(n.kind) : "?");
  switch (n.kind) {
  case NodeKind::Kernel:
    l += " " + (n.kernel < g.kernels.size() ? g.kernels[n.kernel].name : "#" + std::to_string(n.kernel));
    l += "\n" + rangeText(g, n.range);
    break;
  case NodeKind::Copy:
  case NodeKind::CopyRect:
    l += " " + std::to_string(n.kind == NodeKind::Copy ? n.copy.bytes
                                                       : n.copy.region[0] * n.copy.region[1] * n.copy.region[2]) +
         " bytes";
    break;
  case NodeKind::Fill: l += " " + std::to_string(n.fill.bytes) + " bytes"; break;
  case NodeKind::Host: l += " " + n.host.op; break;
  case NodeKind::Collective:
    l += std::string(" ") + collKindName(n.coll.kind) + " x " + std::to_string(n.coll.count);
    break;
  case NodeKind::Conditional:
    l += std::string(" ") + condKindName(n.cond.kind) + " " + slotRef(g, n.cond.slot) +
         (n.cond.kind == CondKind::While ? " (max " + std::to_string(n.cond.maxTrips) + ")" : "");
    [[fallthrough]];
  case NodeKind::Subgraph:
    l += " " + (n.subgraph < g.subgraphs.size() ? g.subgraphs[n.subgraph].name : "#" + std::to_string(n.subgraph));
    break;
  default: break;
  }
  std::string slots;
  for (const SlotAccess &a : nodeAccesses(g, i).accesses) {
    slots += slots.empty() ? "" : ", ";
    slots += std::string(a.read ? "r" : "") + (a.write ? "w" : "") + " " + slotRef(g, a.slot);
  }
  if (!slots.empty()) l += "\n" + slots;
  return l;
}

} // namespace

std::string toDot(const Graph &g) {
  std::string o = "digraph \"" + escape(g.name) + "\" {\n  node [shape=box, fontname=\"monospace\"];\n";
  std::vector<uint8_t> clustered(g.nodes.size(), 0);
  for (size_t p = 0; p < g.partitions.size(); ++p) {
    o += "  subgraph cluster_p" + std::to_string(p) + " {\n    label=\"partition " + std::to_string(p) + "\";\n";
    for (uint32_t x : g.partitions[p].nodes) {
      if (x >= g.nodes.size()) continue;
      clustered[x] = 1;
      o += "    n" + std::to_string(x) + " [label=\"" + escape(nodeLabelText(g, x)) + "\"];\n";
    }
    o += "  }\n";
  }
  for (uint32_t i = 0; i < g.nodes.size(); ++i)
    if (!clustered[i]) o += "  n" + std::to_string(i) + " [label=\"" + escape(nodeLabelText(g, i)) + "\"];\n";
  for (const Edge &e : g.edges)
    o += "  n" + std::to_string(e.from) + " -> n" + std::to_string(e.to) + ";\n";
  o += "}\n";
  return o;
}

} // namespace cgraph
