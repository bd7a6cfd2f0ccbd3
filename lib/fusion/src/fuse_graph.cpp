// The graph side of fusion: fuseGraph, the driver. It validates (and specializes) the
// graph, builds the indexes one call shares (FuseState), fuses the explicit groups
// (groups.cpp), then the automatic chains (chains.cpp), each group through tryFuse
// (plan.cpp plans the request, the LLVM side builds the kernel), and rewrites the graph
// (rewrite.cpp). See cgraph/fusion/fusion.h for the contract.
#include "cgraph/fusion/fusion.h"

#include "cgraph/graph/order.h"
#include "cgraph/graph/validate.h"
#include "graph_internal.h"

#include <algorithm>

namespace cgraph {
namespace fusion {
namespace detail {

FuseState::FuseState(Graph &graph, const FuseOptions &options, FuseReport &report,
                     const ExprIndex &exprs, const std::vector<uint32_t> &executionOrder,
                     const ScratchSlots &scratchNames)
    : g(graph), o(options), rep(report), ex(exprs), order(executionOrder), scratch(scratchNames),
      adj(graph), checker(graph, adj, executionOrder), users(graph),
      taken(graph.nodes.size(), false) {
  groupFree = [this](uint32_t n) {
    const Node &node = g.nodes[n];
    if (node.kind != NodeKind::Kernel || node.kernel >= g.kernels.size()) return false;
    const Kernel &k = g.kernels[node.kernel];
    auto it = groupUse.find(k.module);
    if (it == groupUse.end()) {
      Expected<std::map<std::string, bool>> use = workGroupUse(g.modules[k.module]);
      it = groupUse.emplace(k.module, use ? *use : std::map<std::string, bool>()).first;
    }
    auto f = it->second.find(k.name);
    return f != it->second.end() && !f->second;
  };
  for (uint32_t n = 0; n < g.nodes.size(); ++n) {
    newNames.insert(g.nodes[n].name);
    nodeIndex.emplace(g.nodes[n].name, n);
  }
  for (const Kernel &k : g.kernels)
    newNames.insert(k.name);
}

uint32_t tryFuse(FuseState &st, const std::vector<uint32_t> &grp, bool automatic,
                 const GroupRequest *gr, const std::map<uint32_t, uint64_t> &constants) {
  const Graph &g = st.g;
  FuseReport &rep = st.rep;
  std::string gname = join(g, grp);
  Planned pl =
      plan(g, grp, st.o, st.newNames, gr, constants, st.groupFree, st.users, st.scratch, st.ex);
  Expected<IrResult> res = buildFusedKernel(pl.req);
  if (!res) {
    rep.remarks.push_back(
        {Remark::Refused, gname, "cannot build the fused kernel: " + res.error().message()});
    return 0;
  }
  if (!res->hazard.empty()) {
    if (automatic) {
      rep.remarks.push_back({Remark::Refused, gname,
                             res->hazard + ": a work-group barrier cannot order work-items of "
                                           "different work-groups"});
      return res->hazardSplit;
    }
    rep.remarks.push_back({Remark::Note, gname,
                           res->hazard + ": fused with work-group barriers as requested; "
                                         "correct only if work-groups do not share data"});
  }
  if (automatic && res->privateBytes > kPrivateLimit) {
    for (const std::string &r : res->remarks)
      rep.remarks.push_back({Remark::Note, gname, r});
    rep.remarks.push_back({Remark::Refused, gname,
                           "cost: the fused kernel keeps " + std::to_string(res->privateBytes) +
                               " bytes of private arrays per work-item, over the limit of " +
                               std::to_string(kPrivateLimit)});
    return 0;
  }
  for (const std::string &r : res->remarks)
    rep.remarks.push_back({Remark::Note, gname, r});
  for (const std::string &r : pl.notes)
    rep.remarks.push_back({Remark::Note, gname, r});
  if (!pl.unnamed.empty()) {
    std::string list;
    for (const std::string &x : pl.unnamed)
      list += (list.empty() ? "" : ",") + x;
    rep.remarks.push_back(
        {Remark::Note, gname,
         "kept " + list + " in the graph with " + (pl.unnamed.size() > 1 ? "their" : "its") +
             " final contents: transient and used only by the group, but not named scratch "
             "(internalize " +
             (pl.unnamed.size() > 1 ? "them" : "it") + " with --internalize " + list + ")"});
  }
  pl.res = std::move(*res);
  for (uint32_t n : grp)
    st.taken[n] = true;
  st.newNames.insert(pl.nodeName);
  st.done.push_back(std::move(pl));
  return 0;
}

} // namespace detail

Expected<FuseReport> fuseGraph(Graph &g, const FuseOptions &o) {
  using namespace detail;
  FuseReport rep;
  CGRAPH_RETURN_IF_ERROR(
      firstError(validateGraph(g, {false, true, true})).withContext("input graph"));
  if (!o.paramValues.empty()) CGRAPH_RETURN_IF_ERROR(specialize(g, o.paramValues, rep));
  // Stored parameter expressions (.cgf 2.0) stay with their fields: nodes whose nd-ranges
  // have them fuse only with nodes of the same nd-range, arguments keep them.
  const ExprIndex ex(g);
  Expected<std::vector<uint32_t>> order = executionOrder(g);
  if (!order) return order.error();
  Expected<ScratchSlots> scratch = scratchSlots(g, o, rep);
  if (!scratch) return scratch.error();
  FuseState st(g, o, rep, ex, *order, *scratch);
  CGRAPH_RETURN_IF_ERROR(fuseExplicitGroups(st));
  if (o.autoFuse) fuseChains(st);
  CGRAPH_RETURN_IF_ERROR(rewriteGraph(st));
  return rep;
}

std::vector<std::string> splitNames(const std::string &list) {
  std::vector<std::string> out;
  size_t from = 0;
  while (from <= list.size()) {
    const size_t comma = std::min(list.find(',', from), list.size());
    if (comma > from) out.push_back(list.substr(from, comma - from));
    from = comma + 1;
  }
  return out;
}

const char *remarkKindName(Remark::Kind kind) {
  return kind == Remark::Fused ? "fused" : kind == Remark::Refused ? "refused" : "note";
}

} // namespace fusion
} // namespace cgraph
