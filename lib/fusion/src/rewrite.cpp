// Rewriting the graph once the fused kernels exist: each done group replaced by its
// fused node (a new module and kernel, its arguments and stored expressions, metadata
// and remarks saying what was fused), the slots that left the graph dropped, edges and
// expressions remapped, unused kernels and modules collected, and the graph finalized
// and validated again.
#include "graph_internal.h"

#include <algorithm>
#include <tuple>

#include "cgraph/graph/order.h"
#include "cgraph/graph/validate.h"
#include "cgraph/kernel/spirv.h"

namespace cgraph {
namespace fusion {
namespace detail {
namespace {

void remapSlots(Graph &g, const std::vector<uint32_t> &map) {
  for (Node &n : g.nodes) {
    for (Arg &a : n.args)
      if (a.kind == ArgKind::Slot) a.index = map[a.index];
    if (n.kind == NodeKind::Copy || n.kind == NodeKind::CopyRect) {
      n.copy.srcSlot = map[n.copy.srcSlot];
      n.copy.dstSlot = map[n.copy.dstSlot];
    }
    if (n.kind == NodeKind::Fill) n.fill.slot = map[n.fill.slot];
    for (uint32_t &s : n.subgraphSlots)
      s = map[s];
  }
}

// Drops kernels no node uses, then modules no kernel uses.
void collectKernels(Graph &g) {
  std::vector<bool> usedK(g.kernels.size(), false), usedM(g.modules.size(), false);
  for (const Node &n : g.nodes)
    if (n.kind == NodeKind::Kernel && n.kernel < usedK.size()) usedK[n.kernel] = true;
  std::vector<uint32_t> kmap(g.kernels.size(), kNone), mmap(g.modules.size(), kNone);
  std::vector<Kernel> ks;
  for (uint32_t k = 0; k < g.kernels.size(); ++k)
    if (usedK[k]) {
      kmap[k] = uint32_t(ks.size());
      ks.push_back(std::move(g.kernels[k]));
      if (ks.back().module < usedM.size()) usedM[ks.back().module] = true;
    }
  std::vector<KernelModule> ms;
  for (uint32_t m = 0; m < g.modules.size(); ++m)
    if (usedM[m]) {
      mmap[m] = uint32_t(ms.size());
      ms.push_back(std::move(g.modules[m]));
    }
  for (Kernel &k : ks)
    k.module = mmap[k.module];
  for (Node &n : g.nodes)
    if (n.kind == NodeKind::Kernel) n.kernel = kmap[n.kernel];
  g.kernels = std::move(ks);
  g.modules = std::move(ms);
}

// Done group pl's kernel (reflected from its SPIR-V) and module appended to the graph,
// and the fused node that runs it, without arguments: the range of the node with the
// most work-items, with the group's local size.
Expected<Node> fusedNodeOf(Graph &g, const Planned &pl) {
  Expected<std::vector<Kernel>> ks = reflectKernels(pl.res.spirv.data(), pl.res.spirv.size());
  if (!ks) return ks.error().withContext("fused kernel '" + pl.nodeName + "'");
  auto it =
      std::find_if(ks->begin(), ks->end(), [&](const Kernel &k) { return k.name == pl.nodeName; });
  if (it == ks->end())
    return makeError("fused kernel '" + pl.nodeName + "' missing from its module");
  KernelModule km;
  km.name = pl.nodeName + ".spv";
  KernelForm form;
  form.kind = FormKind::SpirV;
  form.target = "spirv64";
  form.bytes = pl.res.spirv;
  km.forms.push_back(std::move(form));
  Kernel k = *it;
  k.module = uint32_t(g.modules.size());
  g.modules.push_back(std::move(km));
  Node fused;
  fused.name = pl.nodeName;
  fused.kind = NodeKind::Kernel;
  fused.kernel = uint32_t(g.kernels.size());
  fused.range = g.nodes[pl.grp.front()].range;
  if (pl.req.literal) {
    // the range of the node with the most work-items, with the group's local size
    const Range &r = pl.req.fused;
    for (uint32_t m : pl.grp) {
      Range x = toRange(g.nodes[m].range);
      if (sameVec(x, x.global, r, r.global)) {
        fused.range = g.nodes[m].range;
        break;
      }
    }
    if (r.hasLocal())
      for (uint32_t d = 0; d < r.dims; ++d)
        fused.range.local[d].value = r.local[d];
  }
  g.kernels.push_back(std::move(k));
  return fused;
}

// The slots leaving the graph with group pl: a remark naming them and why they may,
// fg's lists and `dropSlots`; a slot promoted to local memory becomes a __local
// argument. Returns the global memory traffic saved per run.
uint64_t slotsLeaving(FuseState &st, Planned &pl, FusedGroup &fg,
                      std::vector<uint32_t> &dropSlots) {
  Graph &g = st.g;
  uint64_t savedTraffic = 0;
  std::string gone; // the slots leaving the graph, and why they may
  auto leaves = [&](uint32_t slot) {
    const std::string &why = st.scratch[slot];
    gone += (gone.empty() ? "" : ", ") + g.slots[slot].name + " (" +
            (why.empty() ? std::string("listed by the plan") : why) + ")";
  };
  for (uint32_t p : pl.res.internalized)
    leaves(uint32_t(pl.req.params[p].slotKey));
  for (auto &lp : pl.res.localized)
    leaves(uint32_t(pl.req.params[lp.first].slotKey));
  if (!gone.empty())
    st.rep.remarks.push_back(
        {Remark::Note, join(g, pl.grp),
         "slots leaving the graph: " + gone + "; scratch, transient and used only by the group"});
  for (uint32_t p : pl.res.internalized) {
    fg.internalized.push_back(g.slots[pl.req.params[p].slotKey].name);
    dropSlots.push_back(uint32_t(pl.req.params[p].slotKey));
    savedTraffic += 2 * g.slots[pl.req.params[p].slotKey].size;
  }
  for (auto &[p, bytes] : pl.res.localized) {
    // the slot leaves the graph; the fused node passes a __local tile instead
    fg.localized.push_back(g.slots[pl.req.params[p].slotKey].name);
    dropSlots.push_back(uint32_t(pl.req.params[p].slotKey));
    savedTraffic += 2 * g.slots[pl.req.params[p].slotKey].size;
    pl.paramArgs[p] = Arg::localMem(bytes);
  }
  return savedTraffic;
}

// The fused node's arguments (the kept parameters) and stored expressions: the nd-range
// the group shares (planRanges took the first node's where any is an expression) and
// those of its arguments. `fusedIndex`: the node's index in the new graph.
void fusedArgs(const FuseState &st, const Planned &pl, uint32_t fusedIndex, Node &fused,
               std::vector<FieldExpr> &newExprs) {
  const Graph &g = st.g;
  if (!pl.req.literal)
    for (unsigned fld = 0; fld < 9; ++fld)
      if (int32_t e = st.ex.field(pl.grp.front(), fld); e >= 0)
        newExprs.push_back({fusedIndex, ExprField(fld), 0, g.exprs[size_t(e)].code});
  for (size_t p = 0; p < pl.req.params.size(); ++p)
    if (pl.res.kept[p]) {
      if (pl.paramExpr[p] >= 0)
        newExprs.push_back({fusedIndex, ExprField::ScalarArg, uint32_t(fused.args.size()),
                            g.exprs[size_t(pl.paramExpr[p])].code});
      fused.args.push_back(pl.paramArgs[p]);
    }
}

// Group pl's FusedGroup completed, its metadata (fused.<node>, .baked-params, .private,
// .local) and its cost and fused remarks.
void recordGroup(FuseState &st, Planned &pl, const Node &fused, uint64_t savedTraffic,
                 FusedGroup &fg) {
  Graph &g = st.g;
  std::string bakedParams;
  for (uint32_t p : pl.res.baked) {
    fg.constants.push_back(pl.req.params[p].name);
    if (pl.paramArgs[p].kind == ArgKind::Param)
      bakedParams += (bakedParams.empty() ? "" : ",") + g.params[pl.paramArgs[p].index].name;
  }
  size_t total = 0;
  for (const Instance &in : pl.req.insts)
    total += in.bind.size();
  fg.elided = unsigned(total - pl.req.params.size());
  fg.barriers = pl.res.barriers;
  fg.ir = std::move(pl.res.ir);
  std::string from;
  for (const std::string &s : fg.from)
    from += (from.empty() ? "" : ",") + s;
  g.metadata.push_back({"fused." + pl.nodeName, from});
  // a graph parameter baked in no longer follows the values a submission gives it
  if (!bakedParams.empty())
    g.metadata.push_back({"fused." + pl.nodeName + ".baked-params", bakedParams});
  if (!fg.internalized.empty()) {
    std::string s;
    for (const std::string &x : fg.internalized)
      s += (s.empty() ? "" : ",") + x;
    g.metadata.push_back({"fused." + pl.nodeName + ".private", s});
  }
  if (!fg.localized.empty()) {
    std::string s;
    for (const std::string &x : fg.localized)
      s += (s.empty() ? "" : ",") + x;
    g.metadata.push_back({"fused." + pl.nodeName + ".local", s});
  }
  st.rep.remarks.push_back(
      {Remark::Note, join(g, pl.grp),
       "cost: " + std::to_string(fg.from.size() - 1) + " fewer launches, about " +
           std::to_string(savedTraffic) + " bytes less global memory traffic per run, " +
           std::to_string(pl.res.privateBytes) + " bytes of private arrays per work-item"});
  st.rep.remarks.push_back(
      {Remark::Fused, join(g, pl.grp),
       "fused into '" + pl.nodeName + "' (" + std::to_string(fg.from.size()) + " kernels, " +
           std::to_string(fused.args.size()) + " arguments, " + std::to_string(fg.elided) +
           " elided, " + std::to_string(fg.constants.size()) + " constant, " +
           std::to_string(fg.internalized.size() + fg.localized.size()) + " internalized, " +
           (fg.barriers ? "barriers between kernels" : "no barriers") + ")"});
}

// Done group pl as one fused node, appended to `nodes`.
Error replaceGroup(FuseState &st, Planned &pl, std::vector<Node> &nodes,
                   std::vector<uint32_t> &dropSlots, std::vector<FieldExpr> &newExprs) {
  Expected<Node> fused = fusedNodeOf(st.g, pl);
  if (!fused) return fused.error();
  FusedGroup fg;
  fg.node = pl.nodeName;
  fg.kernel = pl.nodeName;
  for (uint32_t m : pl.grp)
    fg.from.push_back(st.g.nodes[m].name);
  uint64_t savedTraffic = slotsLeaving(st, pl, fg, dropSlots);
  fusedArgs(st, pl, uint32_t(nodes.size()), *fused, newExprs);
  recordGroup(st, pl, *fused, savedTraffic, fg);
  st.rep.fused.push_back(std::move(fg));
  nodes.push_back(std::move(*fused));
  return Error();
}

// The slots in `dropSlots` removed, every slot index remapped (nodes and the slot-size
// expressions of `newExprs`; those of removed slots go).
void dropSlotsFrom(Graph &g, std::vector<uint32_t> &dropSlots, std::vector<FieldExpr> &newExprs) {
  std::sort(dropSlots.begin(), dropSlots.end());
  std::vector<uint32_t> map(g.slots.size(), kNone);
  std::vector<Slot> slots;
  for (uint32_t s = 0; s < g.slots.size(); ++s)
    if (!std::binary_search(dropSlots.begin(), dropSlots.end(), s)) {
      map[s] = uint32_t(slots.size());
      slots.push_back(std::move(g.slots[s]));
    }
  g.slots = std::move(slots);
  remapSlots(g, map);
  std::vector<FieldExpr> kept;
  for (FieldExpr &e : newExprs) {
    if (e.node == kNone && e.field == ExprField::SlotSize) {
      if (e.arg >= map.size() || map[e.arg] == kNone) continue; // the slot left the graph
      e.arg = map[e.arg];
    }
    kept.push_back(std::move(e));
  }
  newExprs = std::move(kept);
}

} // namespace

Error rewriteGraph(FuseState &st) {
  Graph &g = st.g;
  std::vector<Planned> &done = st.done;
  if (done.empty() && st.o.paramValues.empty()) return Error();
  std::vector<uint32_t> owner(g.nodes.size(), kNone);
  for (uint32_t f = 0; f < done.size(); ++f)
    for (uint32_t n : done[f].grp)
      owner[n] = f;
  std::vector<Node> nodes;
  std::vector<uint32_t> nodeMap(g.nodes.size(), kNone), fusedNode(done.size(), kNone);
  std::vector<uint32_t> dropSlots;
  std::vector<FieldExpr> newExprs;
  for (uint32_t n = 0; n < g.nodes.size(); ++n) {
    uint32_t f = owner[n];
    if (f == kNone) {
      nodeMap[n] = uint32_t(nodes.size());
      nodes.push_back(std::move(g.nodes[n]));
      continue;
    }
    if (fusedNode[f] == kNone) {
      fusedNode[f] = uint32_t(nodes.size());
      CGRAPH_RETURN_IF_ERROR(replaceGroup(st, done[f], nodes, dropSlots, newExprs));
    }
    nodeMap[n] = fusedNode[f];
  }
  g.nodes = std::move(nodes);
  for (const FieldExpr &e : g.exprs)
    if (e.node != kNone && owner[e.node] == kNone) {
      newExprs.push_back(e);
      newExprs.back().node = nodeMap[e.node];
    } else if (e.node == kNone) {
      newExprs.push_back(e); // a slot's size: remapped with the slots below
    }
  std::set<std::pair<uint32_t, uint32_t>> seen;
  std::vector<Edge> edges;
  for (const Edge &e : g.edges) {
    Edge ne{nodeMap[e.from], nodeMap[e.to]};
    if (ne.from == ne.to || !seen.insert({ne.from, ne.to}).second) continue;
    edges.push_back(ne);
  }
  g.edges = std::move(edges);
  if (!dropSlots.empty()) dropSlotsFrom(g, dropSlots, newExprs);
  std::sort(newExprs.begin(), newExprs.end(), [](const FieldExpr &a, const FieldExpr &b) {
    return std::make_tuple(a.node, uint16_t(a.field), a.arg) <
           std::make_tuple(b.node, uint16_t(b.field), b.arg);
  });
  g.exprs = std::move(newExprs);
  collectKernels(g);
  g.order.clear();
  g.partitions.clear();
  CGRAPH_RETURN_IF_ERROR(finalizeForFile(g).withContext("fused graph"));
  CGRAPH_RETURN_IF_ERROR(
      firstError(validateGraph(g, {false, true, true})).withContext("fused graph"));
  return Error();
}

} // namespace detail
} // namespace fusion
} // namespace cgraph
