// Explicit groups (FuseOptions::groups: --fuse, --plan): the named nodes resolved, the
// group's constants read, its shape checked (an Error where a rule is broken), notes
// for the slots it cannot internalize, then fused unless its nd-ranges are refused.
#include "graph_internal.h"

namespace cgraph {
namespace fusion {
namespace detail {
namespace {

// The nodes the group names, in its order.
Expected<std::vector<uint32_t>> groupNodes(const FuseState &st, const GroupRequest &gr,
                                           const std::string &gname) {
  const std::vector<std::string> &names = gr.nodes;
  std::vector<uint32_t> grp;
  std::set<uint32_t> inGroup;
  for (const std::string &n : names) {
    auto found = st.nodeIndex.find(n);
    if (found == st.nodeIndex.end())
      return makeError("group '" + gname + "': no node named '" + n + "'");
    uint32_t idx = found->second;
    if (!inGroup.insert(idx).second)
      return makeError("group '" + gname + "': node '" + n + "' is named twice");
    if (st.taken[idx]) return makeError("group '" + gname + "': node '" + n + "' is already fused");
    grp.push_back(idx);
  }
  return grp;
}

// The group's constants: parameter index -> value bits.
Expected<std::map<uint32_t, uint64_t>> groupConstants(const Graph &g, const GroupRequest &gr,
                                                      const std::string &gname) {
  std::map<uint32_t, uint64_t> constants;
  for (const auto &[pname, text] : gr.constants) {
    uint32_t p = g.findParam(pname);
    if (p == kNone) return makeError("group '" + gname + "': no parameter named '" + pname + "'");
    Expected<uint64_t> bits = constantBits(g.params[p], text);
    if (!bits) return bits.error().withContext("group '" + gname + "'");
    constants[p] = *bits;
  }
  return constants;
}

// A note for each slot the group asks to internalize that cannot leave the graph.
Error internalizeNotes(FuseState &st, const GroupRequest &gr, const std::string &gname,
                       const std::vector<uint32_t> &grp) {
  const Graph &g = st.g;
  std::set<uint32_t> outside = st.users.outside(grp);
  for (const std::string &sname : gr.internalize) {
    uint32_t s = g.findSlot(sname);
    if (s == kNone) return makeError("group '" + gname + "': no slot named '" + sname + "'");
    bool used = false;
    for (uint32_t n : grp)
      for (const Arg &a : g.nodes[n].args)
        used = used || (a.kind == ArgKind::Slot && a.index == s);
    if (!used)
      st.rep.remarks.push_back(
          {Remark::Note, gname, sname + " is not used by the group: cannot internalize"});
    else if (g.slots[s].init != SlotInit::Transient)
      st.rep.remarks.push_back(
          {Remark::Note, gname, sname + " is not transient: cannot internalize"});
    else if (outside.count(s))
      st.rep.remarks.push_back(
          {Remark::Note, gname, sname + " is used outside the group: cannot internalize"});
  }
  return Error();
}

} // namespace

Error fuseExplicitGroups(FuseState &st) {
  for (const GroupRequest &gr : st.o.groups) {
    std::string gname;
    for (const std::string &n : gr.nodes)
      gname += (gname.empty() ? "" : ",") + n;
    Expected<std::vector<uint32_t>> grp = groupNodes(st, gr, gname);
    if (!grp) return grp.error();
    Expected<std::map<uint32_t, uint64_t>> constants = groupConstants(st.g, gr, gname);
    if (!constants) return constants.error();
    std::string why = st.checker.whyNot(*grp);
    if (!why.empty()) return makeError("group '" + gname + "': " + why);
    CGRAPH_RETURN_IF_ERROR(internalizeNotes(st, gr, gname, *grp));
    why = rangeWhyNot(st.g, st.ex, *grp, st.groupFree);
    if (!why.empty()) {
      st.rep.remarks.push_back({Remark::Refused, gname, why});
      continue;
    }
    (void)tryFuse(st, *grp, false, &gr, *constants);
  }
  return Error();
}

} // namespace detail
} // namespace fusion
} // namespace cgraph
