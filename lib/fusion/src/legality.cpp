// Legality of a group's shape in the graph (GroupChecker: kernels only, nothing
// between its nodes, edges forward, only the last node's results used outside), and
// which nodes use which slots (SlotUsers).
#include "graph_internal.h"

#include <algorithm>

namespace cgraph {
namespace fusion {
namespace detail {

// "a,b,c"; long groups as "a,b,...,z (1000 nodes)" so that remarks stay one line.
std::string join(const Graph &g, const std::vector<uint32_t> &nodes) {
  std::string s;
  if (nodes.size() > 8)
    return g.nodes[nodes[0]].name + "," + g.nodes[nodes[1]].name + ",...," +
           g.nodes[nodes.back()].name + " (" + std::to_string(nodes.size()) + " nodes)";
  for (uint32_t n : nodes)
    s += (s.empty() ? "" : ",") + g.nodes[n].name;
  return s;
}

GroupChecker::GroupChecker(const Graph &g, const Adjacency &adj, const std::vector<uint32_t> &order)
    : g_(g), adj_(adj), topo_(g.nodes.size(), 0), pos_(g.nodes.size(), -1),
      mark_(g.nodes.size(), 0) {
  for (uint32_t i = 0; i < order.size(); ++i)
    topo_[order[i]] = i;
}

std::string GroupChecker::whyNot(const std::vector<uint32_t> &grp) {
  if (grp.size() < 2) return "a group needs at least two nodes";
  for (uint32_t n : grp)
    if (g_.nodes[n].kind != NodeKind::Kernel)
      return "'" + g_.nodes[n].name + "' is a " + nodeKindName(g_.nodes[n].kind) +
             " node, not a kernel";
  for (size_t i = 0; i < grp.size(); ++i)
    pos_[grp[i]] = int(i);
  std::string why = between(grp);
  if (why.empty()) why = edgeRules(grp);
  for (uint32_t n : grp)
    pos_[n] = -1;
  return why;
}

// A node outside the group that depends on one node of the group while another
// depends on it: fusing would need it to run inside the fused kernel. Such a node
// lies strictly between the group's first and last node in execution order, and so
// does every node on the paths through it, which bounds both searches.
std::string GroupChecker::between(const std::vector<uint32_t> &grp) {
  uint32_t lo = topo_[grp[0]], hi = lo;
  for (uint32_t n : grp) {
    lo = std::min(lo, topo_[n]);
    hi = std::max(hi, topo_[n]);
  }
  std::vector<uint32_t> touched, stack;
  auto search = [&](const std::vector<std::vector<uint32_t>> &adj, uint8_t bit, bool down) {
    for (uint32_t n : grp)
      for (uint32_t s : adj[n])
        stack.push_back(s);
    while (!stack.empty()) {
      uint32_t n = stack.back();
      stack.pop_back();
      if ((mark_[n] & bit) || (down ? topo_[n] > hi : topo_[n] < lo)) continue;
      if (!mark_[n]) touched.push_back(n);
      mark_[n] |= bit;
      for (uint32_t s : adj[n])
        stack.push_back(s);
    }
  };
  search(adj_.succ, 1, true);
  search(adj_.pred, 2, false);
  uint32_t first = kNone;
  for (uint32_t n : touched) {
    if (mark_[n] == 3 && pos_[n] < 0) first = std::min(first, n);
    mark_[n] = 0;
  }
  if (first == kNone) return {};
  return "'" + g_.nodes[first].name + "' (" + nodeKindName(g_.nodes[first].kind) +
         ") sits between nodes of the group";
}

// The group's own edges go forward in the requested order, and only its last node
// has successors outside it.
std::string GroupChecker::edgeRules(const std::vector<uint32_t> &grp) {
  for (uint32_t from : grp)
    for (uint32_t to : adj_.succ[from])
      if (pos_[to] >= 0 && pos_[from] > pos_[to])
        return "'" + g_.nodes[from].name + "' must run before '" + g_.nodes[to].name + "'";
  for (uint32_t from : grp)
    for (uint32_t to : adj_.succ[from])
      if (pos_[from] + 1 < int(grp.size()) && pos_[to] < 0)
        return "'" + g_.nodes[to].name + "' depends on intermediate node '" + g_.nodes[from].name +
               "'";
  return {};
}

SlotUsers::SlotUsers(const Graph &g) : slotsOf(g.nodes.size()), users(g.slots.size(), 0) {
  for (uint32_t n = 0; n < g.nodes.size(); ++n) {
    const Node &node = g.nodes[n];
    std::vector<uint32_t> &v = slotsOf[n];
    for (const Arg &a : node.args)
      if (a.kind == ArgKind::Slot) v.push_back(a.index);
    if (node.kind == NodeKind::Copy || node.kind == NodeKind::CopyRect) {
      v.push_back(node.copy.srcSlot);
      v.push_back(node.copy.dstSlot);
    }
    if (node.kind == NodeKind::Fill) v.push_back(node.fill.slot);
    for (uint32_t s : node.subgraphSlots)
      v.push_back(s);
    if (node.kind == NodeKind::Conditional) v.push_back(node.cond.slot);
    v.erase(std::remove_if(v.begin(), v.end(), [&](uint32_t s) { return s >= users.size(); }),
            v.end());
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
    for (uint32_t s : v)
      ++users[s];
  }
}

std::set<uint32_t> SlotUsers::outside(const std::vector<uint32_t> &grp) const {
  std::map<uint32_t, uint32_t> inGroup;
  for (uint32_t n : grp)
    for (uint32_t s : slotsOf[n])
      ++inGroup[s];
  std::set<uint32_t> out;
  for (auto [s, count] : inGroup)
    if (users[s] > count) out.insert(s);
  return out;
}

} // namespace detail
} // namespace fusion
} // namespace cgraph
