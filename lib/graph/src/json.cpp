#include <cgraph/graph/json.h>

#include <cgraph/expr.h>
#include <cgraph/graph/hazards.h>
#include <cgraph/graph/memory_plan.h>
#include <cgraph/graph/placement.h>

#include "graph_util.h"
#include "render_util.h"

#include <xxhash.h>

#include <algorithm>
#include <cstdio>

namespace cgraph {

using detail::argText;
using detail::hexBytes;
using nlohmann::json;

namespace {

constexpr size_t kHeadBytes = 16;

json blobJson(const std::vector<uint8_t> &b) {
  char hash[17];
  snprintf(hash, sizeof hash, "%016llx",
           static_cast<unsigned long long>(XXH64(b.data(), b.size(), 0)));
  return json{{"size", b.size()},
              {"xxh64", hash},
              {"head", hexBytes(b.data(), std::min(b.size(), kHeadBytes))}};
}

json nameOr(const std::string &name, uint32_t index, size_t count) {
  if (index < count && !name.empty()) return name;
  if (index == kNone) return nullptr;
  return index;
}

json dimJson(const Graph &g, const Dim &d) {
  if (d.param == kNone) return d.value;
  return detail::paramRef(g, d.param);
}

json rangeJson(const Graph &g, const NDRange &r) {
  json j{{"dims", r.dims}};
  uint32_t dims = r.dims >= 1 && r.dims <= 3 ? r.dims : 3;
  json gl = json::array(), lo = json::array(), of = json::array();
  for (uint32_t i = 0; i < dims; ++i) {
    gl.push_back(dimJson(g, r.global[i]));
    lo.push_back(dimJson(g, r.local[i]));
    of.push_back(dimJson(g, r.offset[i]));
  }
  j["global"] = gl;
  if (r.hasLocal()) j["local"] = lo;
  j["offset"] = of;
  return j;
}

json argJson(const Graph &g, const Arg &a) {
  switch (a.kind) {
  case ArgKind::Slot: {
    const std::string &n = a.index < g.slots.size() ? g.slots[a.index].name : std::string();
    return json{{"slot", nameOr(n, a.index, g.slots.size())}, {"offset", a.value}};
  }
  case ArgKind::Scalar:
    return json{{"type", scalarSize(a.type) ? scalarName(a.type) : "invalid"},
                {"value", detail::scalarText(a.type, a.value)},
                {"bits", a.value}};
  case ArgKind::Param: {
    const std::string &n = a.index < g.params.size() ? g.params[a.index].name : std::string();
    return json{{"param", nameOr(n, a.index, g.params.size())}};
  }
  case ArgKind::LocalMem: return json{{"local", a.value}};
  case ArgKind::String: return json{{"string", a.text}};
  }
  return json{{"invalid", int(a.kind)}};
}

json slotName(const Graph &g, uint32_t s) {
  return nameOr(s < g.slots.size() ? g.slots[s].name : std::string(), s, g.slots.size());
}

// "all_reduce sum f32 x 256  grad+0 -> grad+0", "send f32 x 64  act+0  peer 1".
std::string collectiveText(const Graph &g, const CollectiveOp &c) {
  std::string t = collKindName(c.kind);
  if (collReduces(c.kind)) t += std::string(" ") + reduceOpName(c.op);
  t += std::string(" ") + (scalarSize(c.type) ? scalarName(c.type) : "invalid") + " x " + std::to_string(c.count) + " ";
  if (collHasSend(c.kind)) t += " " + detail::slotRef(g, c.sendSlot) + "+" + std::to_string(c.sendOffset);
  if (collHasSend(c.kind) && collHasRecv(c.kind)) t += " ->";
  if (collHasRecv(c.kind)) t += " " + detail::slotRef(g, c.recvSlot) + "+" + std::to_string(c.recvOffset);
  if (collHasPeer(c.kind)) t += std::string(c.kind == CollKind::Broadcast ? "  root " : "  peer ") + std::to_string(c.peer);
  return t;
}

json nodeJson(const Graph &g, uint32_t i) {
  const Node &n = g.nodes[i];
  const char *kind = nodeKindName(n.kind);
  json j{{"index", i}, {"name", n.name}, {"kind", kind ? kind : "invalid"}};
  if (n.device != 0) j["device"] = n.device;
  switch (n.kind) {
  case NodeKind::Kernel:
    j["kernel"] = nameOr(n.kernel < g.kernels.size() ? g.kernels[n.kernel].name : std::string(),
                         n.kernel, g.kernels.size());
    j["range"] = rangeJson(g, n.range);
    if (!n.alternatives.empty()) {
      json alts = json::array();
      for (uint32_t k : n.alternatives)
        alts.push_back(nameOr(k < g.kernels.size() ? g.kernels[k].name : std::string(), k, g.kernels.size()));
      j["alternatives"] = alts;
    }
    break;
  case NodeKind::Copy:
  case NodeKind::CopyRect:
    j["copy"] = json{{"src", slotName(g, n.copy.srcSlot)}, {"srcOffset", n.copy.srcOffset},
                     {"dst", slotName(g, n.copy.dstSlot)}, {"dstOffset", n.copy.dstOffset}};
    if (n.kind == NodeKind::Copy) {
      j["copy"]["bytes"] = n.copy.bytes;
    } else {
      j["copy"]["region"] = {n.copy.region[0], n.copy.region[1], n.copy.region[2]};
      j["copy"]["srcPitch"] = {n.copy.srcRowPitch, n.copy.srcSlicePitch};
      j["copy"]["dstPitch"] = {n.copy.dstRowPitch, n.copy.dstSlicePitch};
    }
    break;
  case NodeKind::Fill:
    j["fill"] = json{{"slot", slotName(g, n.fill.slot)}, {"offset", n.fill.offset},
                     {"bytes", n.fill.bytes}, {"pattern", hexBytes(n.fill.pattern.data(), n.fill.pattern.size())}};
    break;
  case NodeKind::Host:
    j["host"] = json{{"op", n.host.op}, {"library", n.host.library}};
    break;
  case NodeKind::Collective: {
    const CollectiveOp &c = n.coll;
    json cj{{"kind", collKindName(c.kind)}, {"type", scalarSize(c.type) ? scalarName(c.type) : "invalid"},
            {"count", c.count}};
    if (collReduces(c.kind)) cj["op"] = reduceOpName(c.op);
    if (collHasSend(c.kind)) cj["send"] = json{{"slot", slotName(g, c.sendSlot)}, {"offset", c.sendOffset}};
    if (collHasRecv(c.kind)) cj["recv"] = json{{"slot", slotName(g, c.recvSlot)}, {"offset", c.recvOffset}};
    if (collHasPeer(c.kind)) cj[c.kind == CollKind::Broadcast ? "root" : "peer"] = c.peer;
    j["collective"] = cj;
    break;
  }
  case NodeKind::Conditional:
    j["condition"] = json{{"kind", condKindName(n.cond.kind)}, {"slot", slotName(g, n.cond.slot)},
                          {"offset", n.cond.offset}};
    if (n.cond.kind == CondKind::While) j["condition"]["maxTrips"] = n.cond.maxTrips;
    [[fallthrough]];
  case NodeKind::Subgraph: {
    j["subgraph"] = n.subgraph;
    json b = json::array();
    for (uint32_t s : n.subgraphSlots) b.push_back(slotName(g, s));
    j["slotBinding"] = b;
    break;
  }
  default: break;
  }
  if (n.kind == NodeKind::Kernel || n.kind == NodeKind::Host) {
    json args = json::array();
    for (const Arg &a : n.args) args.push_back(argJson(g, a));
    j["args"] = args;
  }
  json acc = json::array();
  for (const SlotAccess &a : nodeAccesses(g, i).accesses) {
    json x{{"slot", slotName(g, a.slot)}, {"offset", a.offset},
           {"mode", std::string(a.read ? "r" : "") + (a.write ? "w" : "")}};
    x["size"] = a.size == kUnknownSize ? json(nullptr) : json(a.size);
    acc.push_back(x);
  }
  j["accesses"] = acc;
  return j;
}

// A stored expression as written ("align_up($n - 1, 64)"), its variables named after
// the graph's parameters; "<invalid>" for code that does not decode.
std::string exprText(const Graph &g, const FieldExpr &fe) {
  Expected<expr::Program> p = expr::decode(fe.code.data(), fe.code.size(), uint32_t(g.params.size()));
  if (!p) return "<invalid>";
  p->names.clear();
  for (const Param &param : g.params) p->names.push_back(param.name);
  return p->toString();
}

// "global[0] = ($n * 4)" for a node's field, "slot 'x' size = ..." for a slot size.
std::string exprLine(const Graph &g, const FieldExpr &fe) {
  std::string what = fe.field == ExprField::SlotSize
                         ? "slot " + (fe.arg < g.slots.size() ? "'" + g.slots[fe.arg].name + "'" : "#" + std::to_string(fe.arg)) + " size"
                         : exprFieldName(fe.field, fe.arg);
  return what + " = " + exprText(g, fe);
}

json qualifiersJson(uint32_t q) {
  json j = json::array();
  if (q & kQualConst) j.push_back("const");
  if (q & kQualRestrict) j.push_back("restrict");
  if (q & kQualVolatile) j.push_back("volatile");
  return j;
}

const char *paramKindName(ParamKind k) {
  switch (k) {
  case ParamKind::GlobalBuffer: return "global";
  case ParamKind::ConstantBuffer: return "constant";
  case ParamKind::LocalBuffer: return "local";
  case ParamKind::Scalar: return "scalar";
  }
  return "invalid";
}

json toJsonRec(const Graph &g, int depth) {
  json j;
  j["name"] = g.name;
  json meta = json::object();
  for (const auto &kv : g.metadata) meta[kv.first] = kv.second;
  j["metadata"] = meta;
  json slots = json::array();
  for (size_t i = 0; i < g.slots.size(); ++i) {
    const Slot &s = g.slots[i];
    json x{{"index", i}, {"name", s.name}, {"size", s.size}, {"alignment", s.alignment},
           {"usage", detail::usageText(s.usage)}, {"init", detail::initName(s.init)}};
    if (s.init == SlotInit::Data || s.init == SlotInit::Fill) x["data"] = blobJson(s.data);
    if (s.init == SlotInit::File) x["path"] = s.path;
    slots.push_back(x);
  }
  j["slots"] = slots;
  json params = json::array();
  for (size_t i = 0; i < g.params.size(); ++i) {
    const Param &p = g.params[i];
    params.push_back(json{{"index", i}, {"name", p.name},
                          {"type", scalarSize(p.type) ? scalarName(p.type) : "invalid"},
                          {"default", detail::scalarText(p.type, p.defaultBits)}});
  }
  j["params"] = params;
  json modules = json::array();
  for (size_t i = 0; i < g.modules.size(); ++i) {
    json forms = json::array();
    for (const KernelForm &f : g.modules[i].forms) {
      const char *k = formKindName(f.kind);
      forms.push_back(json{{"kind", k ? k : "invalid"}, {"target", f.target},
                           {"options", f.options}, {"bytes", blobJson(f.bytes)}});
    }
    modules.push_back(json{{"index", i}, {"name", g.modules[i].name}, {"forms", forms}});
  }
  j["modules"] = modules;
  json kernels = json::array();
  for (size_t i = 0; i < g.kernels.size(); ++i) {
    const Kernel &k = g.kernels[i];
    json ps = json::array();
    for (const KernelParam &p : k.params)
      ps.push_back(json{{"name", p.name}, {"type", p.typeName}, {"kind", paramKindName(p.kind)},
                        {"size", p.size}, {"qualifiers", qualifiersJson(p.qualifiers)}});
    json x{{"index", i}, {"name", k.name}, {"module", k.module == kNone ? json(nullptr) : json(k.module)},
           {"params", ps}};
    if (k.reqdLocal[0]) x["reqdLocal"] = {k.reqdLocal[0], k.reqdLocal[1], k.reqdLocal[2]};
    kernels.push_back(x);
  }
  j["kernels"] = kernels;
  json nodes = json::array();
  for (uint32_t i = 0; i < g.nodes.size(); ++i) nodes.push_back(nodeJson(g, i));
  j["nodes"] = nodes;
  json edges = json::array();
  for (const Edge &e : g.edges) edges.push_back({e.from, e.to});
  j["edges"] = edges;
  j["order"] = g.order;
  json parts = json::array();
  for (const Partition &p : g.partitions) parts.push_back(json{{"nodes", p.nodes}, {"deps", p.deps}});
  j["partitions"] = parts;
  json exprs = json::array();
  for (const FieldExpr &fe : g.exprs) {
    json e{{"field", exprFieldName(fe.field, fe.arg)}, {"expr", exprText(g, fe)}};
    if (fe.node != kNone) e["node"] = fe.node;
    if (fe.field == ExprField::SlotSize) e["slot"] = fe.arg;
    exprs.push_back(e);
  }
  j["exprs"] = exprs;
  json subs = json::array();
  for (const Graph &c : g.subgraphs)
    subs.push_back(depth < 64 ? toJsonRec(c, depth + 1) : json{{"name", c.name}, {"truncated", true}});
  j["subgraphs"] = subs;
  return j;
}

void listingRec(const Graph &g, const std::string &ind, std::string &o, int depth) {
  auto line = [&](const std::string &s) { o += ind + s + "\n"; };
  line("graph '" + g.name + "': " + std::to_string(g.slots.size()) + " slots, " +
       std::to_string(g.params.size()) + " params, " + std::to_string(g.kernels.size()) +
       " kernels, " + std::to_string(g.nodes.size()) + " nodes, " +
       std::to_string(g.edges.size()) + " edges");
  for (const auto &kv : g.metadata) line("  meta " + kv.first + " = " + kv.second);
  line("slots:");
  for (size_t i = 0; i < g.slots.size(); ++i) {
    const Slot &s = g.slots[i];
    std::string t = "  [" + std::to_string(i) + "] " + s.name + "  size " + std::to_string(s.size) +
                    "  align " + std::to_string(s.alignment) + "  init " + detail::initName(s.init) +
                    "  usage " + detail::usageText(s.usage);
    if (s.init == SlotInit::File) t += "  path " + s.path;
    if (s.init == SlotInit::Data || s.init == SlotInit::Fill)
      t += "  data " + std::to_string(s.data.size()) + " bytes " +
           hexBytes(s.data.data(), std::min(s.data.size(), kHeadBytes));
    line(t);
  }
  line("params:");
  for (size_t i = 0; i < g.params.size(); ++i) {
    const Param &p = g.params[i];
    line("  [" + std::to_string(i) + "] " + p.name + " " +
         (scalarSize(p.type) ? scalarName(p.type) : "invalid") + " = " +
         detail::scalarText(p.type, p.defaultBits));
  }
  line("modules:");
  for (size_t i = 0; i < g.modules.size(); ++i) {
    std::string t = "  [" + std::to_string(i) + "] " + g.modules[i].name + "  forms:";
    for (const KernelForm &f : g.modules[i].forms)
      t += std::string(" ") + (formKindName(f.kind) ? formKindName(f.kind) : "invalid") + "(" +
           f.target + ", " + std::to_string(f.bytes.size()) + " bytes)";
    line(t);
  }
  line("kernels:");
  for (size_t i = 0; i < g.kernels.size(); ++i) {
    const Kernel &k = g.kernels[i];
    std::string t = "  [" + std::to_string(i) + "] " + k.name + "(";
    for (size_t p = 0; p < k.params.size(); ++p) {
      const KernelParam &kp = k.params[p];
      bool spelled = kp.typeName.find("const") != std::string::npos;
      t += (p ? ", " : "") + std::string(paramKindName(kp.kind)) + " " +
           ((kp.qualifiers & kQualConst) && !spelled ? "const " : "") + kp.typeName +
           (kp.name.empty() ? "" : " " + kp.name);
    }
    t += ")  module " + (k.module == kNone ? std::string("-") : std::to_string(k.module));
    if (k.reqdLocal[0])
      t += "  reqd (" + std::to_string(k.reqdLocal[0]) + "," + std::to_string(k.reqdLocal[1]) +
           "," + std::to_string(k.reqdLocal[2]) + ")";
    line(t);
  }
  line(g.order.empty() ? "nodes:" : "nodes (execution order):");
  std::vector<uint32_t> seq = g.order;
  if (seq.empty())
    for (uint32_t i = 0; i < g.nodes.size(); ++i) seq.push_back(i);
  for (uint32_t i : seq) {
    if (i >= g.nodes.size()) continue;
    const Node &n = g.nodes[i];
    std::string t = "  [" + std::to_string(i) + "] " + n.name + "  " +
                    (n.device != 0 ? "@device " + std::to_string(n.device) + "  " : std::string()) +
                    (nodeKindName(n.kind) ? nodeKindName(n.kind) : "invalid");
    switch (n.kind) {
    case NodeKind::Kernel:
      t += " " + (n.kernel < g.kernels.size() ? g.kernels[n.kernel].name : "#" + std::to_string(n.kernel)) +
           "  " + detail::rangeText(g, n.range);
      if (!n.alternatives.empty()) {
        t += "  alternatives:";
        for (uint32_t k : n.alternatives)
          t += " " + (k < g.kernels.size() ? g.kernels[k].name : "#" + std::to_string(k));
      }
      break;
    case NodeKind::Copy:
      t += " " + detail::slotRef(g, n.copy.srcSlot) + "+" + std::to_string(n.copy.srcOffset) + " -> " +
           detail::slotRef(g, n.copy.dstSlot) + "+" + std::to_string(n.copy.dstOffset) + "  " +
           std::to_string(n.copy.bytes) + " bytes";
      break;
    case NodeKind::CopyRect:
      t += " " + detail::slotRef(g, n.copy.srcSlot) + "+" + std::to_string(n.copy.srcOffset) + " -> " +
           detail::slotRef(g, n.copy.dstSlot) + "+" + std::to_string(n.copy.dstOffset) + "  region (" +
           std::to_string(n.copy.region[0]) + "," + std::to_string(n.copy.region[1]) + "," +
           std::to_string(n.copy.region[2]) + ")";
      break;
    case NodeKind::Fill:
      t += " " + detail::slotRef(g, n.fill.slot) + "+" + std::to_string(n.fill.offset) + "  " +
           std::to_string(n.fill.bytes) + " bytes  pattern " +
           hexBytes(n.fill.pattern.data(), n.fill.pattern.size());
      break;
    case NodeKind::Host:
      t += " " + n.host.op + (n.host.library.empty() ? "" : " from " + n.host.library);
      break;
    case NodeKind::Collective:
      t += " " + collectiveText(g, n.coll);
      break;
    case NodeKind::Conditional:
      t += std::string(" ") + condKindName(n.cond.kind) + " " + detail::slotRef(g, n.cond.slot) + "+" +
           std::to_string(n.cond.offset) + " != 0" +
           (n.cond.kind == CondKind::While ? "  max " + std::to_string(n.cond.maxTrips) + " trips" : "") +
           "  body";
      [[fallthrough]];
    case NodeKind::Subgraph: {
      t += " #" + std::to_string(n.subgraph) + "  slots (";
      for (size_t s = 0; s < n.subgraphSlots.size(); ++s)
        t += (s ? "," : "") + detail::slotRef(g, n.subgraphSlots[s]);
      t += ")";
      break;
    }
    default: break;
    }
    if (!n.args.empty()) {
      t += "  args:";
      for (const Arg &a : n.args) t += " " + argText(g, a);
    }
    line(t);
    // Stored expressions (.cgf 2.x): the fields above show their default values.
    auto first = std::lower_bound(g.exprs.begin(), g.exprs.end(), i,
                                  [](const FieldExpr &e, uint32_t node) { return e.node < node; });
    for (auto it = first; it != g.exprs.end() && it->node == i; ++it) line("      " + exprLine(g, *it));
  }
  for (const FieldExpr &fe : g.exprs)
    if (fe.field == ExprField::SlotSize) line("  " + exprLine(g, fe));
  line("edges:");
  for (const Edge &e : g.edges) line("  " + std::to_string(e.from) + " -> " + std::to_string(e.to));
  if (!g.partitions.empty()) {
    line("partitions:");
    for (size_t p = 0; p < g.partitions.size(); ++p) {
      std::string t = "  [" + std::to_string(p) + "] nodes";
      for (uint32_t x : g.partitions[p].nodes) t += " " + std::to_string(x);
      t += "  deps";
      if (g.partitions[p].deps.empty()) t += " -";
      for (uint32_t d : g.partitions[p].deps) t += " " + std::to_string(d);
      line(t);
    }
  }
  for (size_t i = 0; i < g.subgraphs.size() && depth < 64; ++i) {
    line("subgraph " + std::to_string(i) + ":");
    listingRec(g.subgraphs[i], ind + "    ", o, depth + 1);
  }
}

} // namespace

json toJson(const Graph &graph) {
  json j = toJsonRec(graph, 0);
  const std::vector<uint64_t> bytes = detail::storedBytes(graph);
  const MemoryPlan p = planMemory(graph, bytes);
  json plan = {{"slots", p.slots}, {"bytes_before", p.bytesBefore}, {"bytes_after", p.bytesAfter}};
  if (!p.skipped.empty()) plan["skipped"] = p.skipped;
  std::vector<uint64_t> offsets;
  packMemory(p, bytes, 1, &offsets);
  json at = json::object();
  for (uint32_t s = 0; s < p.planned.size(); ++s)
    if (p.planned[s]) at[graph.slots[s].name] = {{"offset", offsets[s]}, {"bytes", bytes[s]}};
  plan["offsets"] = at;
  j["memory_plan"] = plan;
  const PlacementReport pr = placementReport(graph, bytes);
  if (pr.devices > 1) {
    json crossing = json::array();
    for (const PlacementReport::SlotCrossing &c : pr.slots)
      crossing.push_back({{"slot", graph.slots[c.slot].name}, {"bytes", c.bytes}, {"devices", c.devices}});
    j["placement"] = {{"devices", pr.devices}, {"work", pr.work}, {"bytes_crossing", pr.bytesCrossing},
                      {"slots_crossing", crossing}};
  }
  return j;
}

namespace {

// "placement: 2 devices, work 50.0% / 50.0%; 4096 bytes cross devices" and a line per
// slot used on more than one device; nothing for a graph on one device.
std::string placementText(const Graph &graph, const std::vector<uint64_t> &bytes) {
  const PlacementReport pr = placementReport(graph, bytes);
  if (pr.devices < 2) return "";
  double total = 0;
  for (double w : pr.work) total += w;
  std::string o = "placement: " + std::to_string(pr.devices) + " devices, work";
  for (size_t d = 0; d < pr.work.size(); ++d) {
    char pct[32];
    std::snprintf(pct, sizeof pct, "%s%.1f%%", d ? " / " : " ", total > 0 ? 100.0 * pr.work[d] / total : 0.0);
    o += pct;
  }
  o += "; " + std::to_string(pr.bytesCrossing) + " bytes cross devices\n";
  for (const PlacementReport::SlotCrossing &c : pr.slots) {
    o += "  " + detail::slotRef(graph, c.slot) + " (" + std::to_string(c.bytes) + " bytes) on devices";
    for (size_t i = 0; i < c.devices.size(); ++i) o += (i ? ", " : " ") + std::to_string(c.devices[i]);
    o += "\n";
  }
  return o;
}

} // namespace

std::string listing(const Graph &graph) {
  std::string o;
  listingRec(graph, "", o, 0);
  const std::vector<uint64_t> bytes = detail::storedBytes(graph);
  o += placementText(graph, bytes);
  const MemoryPlan p = planMemory(graph, bytes);
  if (p.slots == 0) {
    o += "memory plan: none (" + p.skipped + ")\n";
    return o;
  }
  o += "memory plan: " + std::to_string(p.slots) + " transient slots share one arena, " +
       std::to_string(p.bytesBefore) + " -> " + std::to_string(p.bytesAfter) +
       " bytes (expression sizes at the parameters' defaults)\n";
  std::vector<uint64_t> offsets;
  packMemory(p, bytes, 1, &offsets);
  for (uint32_t s = 0; s < p.planned.size(); ++s)
    if (p.planned[s])
      o += "  " + detail::slotRef(graph, s) + " @ " + std::to_string(offsets[s]) + " (" + std::to_string(bytes[s]) +
           " bytes)\n";
  return o;
}

} // namespace cgraph
