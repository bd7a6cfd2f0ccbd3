#include <cgraph/graph/order.h>

#include <cgraph/graph/hazards.h>

#include "graph_util.h"

#include <algorithm>
#include <map>
#include <tuple>

namespace cgraph {
namespace detail {

namespace {
Adjacency adjacency(const Graph &g, bool forward) {
  const size_t n = g.nodes.size();
  Adjacency a;
  a.start.assign(n + 1, 0);
  for (const Edge &e : g.edges)
    if (e.from < n && e.to < n) ++a.start[(forward ? e.from : e.to) + 1];
  for (size_t x = 0; x < n; ++x)
    a.start[x + 1] += a.start[x];
  a.list.resize(a.start[n]);
  std::vector<uint32_t> fill(a.start.begin(), a.start.end() - 1);
  for (const Edge &e : g.edges)
    if (e.from < n && e.to < n) a.list[fill[forward ? e.from : e.to]++] = forward ? e.to : e.from;
  // Sort and deduplicate each list, compacting in place.
  uint32_t out = 0;
  for (size_t x = 0; x < n; ++x) {
    uint32_t *b = a.list.data() + a.start[x], *e = a.list.data() + a.start[x + 1];
    if (e - b > 1) std::sort(b, e);
    a.start[x] = out;
    for (uint32_t *p = b; p != e; ++p)
      if (p == b || *p != p[-1]) a.list[out++] = *p;
  }
  a.start[n] = out;
  a.list.resize(out);
  return a;
}
} // namespace

Adjacency successors(const Graph &g) { return adjacency(g, true); }
Adjacency predecessors(const Graph &g) { return adjacency(g, false); }

std::vector<uint32_t> findCycle(const Graph &g) { return findCycle(g, successors(g)); }

std::vector<uint32_t> findCycle(const Graph &g, const Adjacency &succ) {
  size_t n = g.nodes.size();
  std::vector<uint8_t> color(n, 0); // 0 new, 1 on stack, 2 done
  std::vector<std::pair<uint32_t, size_t>> stack;
  for (uint32_t root = 0; root < n; ++root) {
    if (color[root]) continue;
    stack.push_back({root, 0});
    color[root] = 1;
    while (!stack.empty()) {
      auto &[x, i] = stack.back();
      if (i == succ[x].size()) {
        color[x] = 2;
        stack.pop_back();
        continue;
      }
      uint32_t y = succ[x][i++];
      if (color[y] == 1) {
        std::vector<uint32_t> cycle;
        size_t k = 0;
        while (stack[k].first != y) ++k;
        for (; k < stack.size(); ++k) cycle.push_back(stack[k].first);
        cycle.push_back(y);
        return cycle;
      }
      if (color[y] == 0) {
        color[y] = 1;
        stack.push_back({y, 0});
      }
    }
  }
  return {};
}

std::string cyclePath(const Graph &g, const std::vector<uint32_t> &cycle) {
  std::string s;
  for (size_t i = 0; i < cycle.size(); ++i) {
    if (i) s += " -> ";
    uint32_t n = cycle[i];
    s += g.nodes[n].name.empty() ? "#" + std::to_string(n) : "'" + g.nodes[n].name + "'";
  }
  return s;
}

bool containsHostTask(const Graph &g, int depth) {
  if (depth > 64) return false;
  for (const Node &n : g.nodes) {
    if (n.kind == NodeKind::Host || n.kind == NodeKind::Conditional || n.kind == NodeKind::Collective)
      return true;
    if (n.kind == NodeKind::Subgraph && n.subgraph < g.subgraphs.size() &&
        containsHostTask(g.subgraphs[n.subgraph], depth + 1))
      return true;
  }
  return false;
}

} // namespace detail

using namespace detail;

Expected<std::vector<uint32_t>> executionOrder(const Graph &g, OrderKind kind) {
  size_t n = g.nodes.size();
  for (size_t i = 0; i < g.edges.size(); ++i) {
    const Edge &e = g.edges[i];
    if (e.from >= n || e.to >= n)
      return makeError("edge " + std::to_string(i) + " (" + std::to_string(e.from) + " -> " +
                       std::to_string(e.to) + ") points past the node table (" +
                       std::to_string(n) + " nodes)");
  }
  const Adjacency succ = successors(g);
  std::vector<uint32_t> cycle = findCycle(g, succ);
  if (!cycle.empty())
    return makeError("graph has a cycle through " + nodeLabel(g, cycle[0]) + ": " +
                     cyclePath(g, cycle));
  std::vector<uint32_t> indeg(n, 0);
  for (uint32_t y : succ.list) ++indeg[y];

  std::vector<uint32_t> order;
  order.reserve(n);
  if (kind == OrderKind::BreadthFirst) {
    std::vector<uint32_t> level;
    for (uint32_t i = 0; i < n; ++i)
      if (indeg[i] == 0) level.push_back(i);
    while (!level.empty()) {
      std::vector<uint32_t> next;
      for (uint32_t x : level) {
        order.push_back(x);
        for (uint32_t y : succ[x])
          if (--indeg[y] == 0) next.push_back(y);
      }
      std::sort(next.begin(), next.end());
      level.swap(next);
    }
    return order;
  }

  // Roots and successors are visited in descending index so that, after reversing the
  // post-order, lower indices come first.
  std::vector<uint8_t> seen(n, 0);
  std::vector<uint32_t> post;
  post.reserve(n);
  std::vector<std::pair<uint32_t, size_t>> stack;
  for (uint32_t r = uint32_t(n); r-- > 0;) {
    if (indeg[r] != 0 || seen[r]) continue;
    seen[r] = 1;
    stack.push_back({r, 0});
    while (!stack.empty()) {
      auto &[x, i] = stack.back();
      const Adjacency::Range s = succ[x];
      if (i == s.size()) {
        post.push_back(x);
        stack.pop_back();
        continue;
      }
      uint32_t y = s[s.size() - 1 - i++];
      if (!seen[y]) {
        seen[y] = 1;
        stack.push_back({y, 0});
      }
    }
  }
  order.assign(post.rbegin(), post.rend());
  return order;
}

bool isTopologicalOrder(const Graph &g, const std::vector<uint32_t> &order) {
  const size_t n = g.nodes.size();
  if (order.size() != n) return false;
  std::vector<uint32_t> pos(n, kNone);
  for (uint32_t i = 0; i < n; ++i) {
    if (order[i] >= n || pos[order[i]] != kNone) return false;
    pos[order[i]] = i;
  }
  for (const Edge &e : g.edges)
    if (e.from >= n || e.to >= n || pos[e.from] >= pos[e.to]) return false;
  return true;
}

namespace {

uint32_t findRoot(std::vector<uint32_t> &parent, uint32_t x) {
  while (parent[x] != x) {
    parent[x] = parent[parent[x]];
    x = parent[x];
  }
  return x;
}

} // namespace

std::vector<Partition> computePartitions(const Graph &g, const std::vector<uint32_t> &order) {
  const size_t n = g.nodes.size();
  auto preds = predecessors(g);
  std::vector<uint8_t> isHost(n, 0);
  for (uint32_t i = 0; i < n; ++i) {
    const Node &nd = g.nodes[i];
    // Runtime-driven nodes (host tasks, conditionals, collectives) get partitions of
    // their own.
    isHost[i] = nd.kind == NodeKind::Host || nd.kind == NodeKind::Conditional || nd.kind == NodeKind::Collective ||
                (nd.kind == NodeKind::Subgraph && nd.subgraph < g.subgraphs.size() &&
                 containsHostTask(g.subgraphs[nd.subgraph]));
  }
  std::vector<uint64_t> pos(n, 0);
  for (size_t i = 0; i < order.size(); ++i)
    if (order[i] < n) pos[order[i]] = i;

  // Stage 1: annotate every node with a group number, visiting nodes in topological
  // order. A node's group is the largest over its predecessors of (their group, plus
  // one past a host task): a host task's predecessors end up in one group, the host task
  // after them and its successors in the next. A make_edge that creates a backward
  // dependency (a node of an earlier group made a successor of a later host task) raises
  // that node, and everything after it, into the later group, where it merges with the
  // nodes already there: the seed's group merge, done by the propagation itself, so no
  // partition ever depends on a later one.
  std::vector<uint32_t> group(n, 0);
  for (uint32_t x : order) {
    if (x >= n) continue;
    uint32_t l = 0;
    for (uint32_t p : preds[x]) l = std::max(l, group[p] + (isHost[p] ? 1u : 0u));
    group[x] = l;
  }
  // Device nodes of one group that wait for different host tasks stay in separate
  // partitions, so that a branch waits only for its own host tasks (the seed's
  // multiple-roots case: dependencies between partitions only where needed). Nodes
  // joined by an edge inside a group share a partition; so do nodes that wait for the
  // same nearest host tasks (all of group 0, for one), so a wide graph without host
  // tasks is still one partition.
  std::vector<uint32_t> parent(n);
  for (uint32_t i = 0; i < n; ++i) parent[i] = i;
  auto unite = [&](uint32_t a, uint32_t b) {
    a = findRoot(parent, a);
    b = findRoot(parent, b);
    if (a != b) parent[std::max(a, b)] = std::min(a, b);
  };
  constexpr size_t kMaxFrontier = 64; // past this, "many": such nodes share a partition
  std::vector<std::vector<uint32_t>> frontier(n); // nearest host-task ancestors
  std::map<std::pair<uint32_t, std::vector<uint32_t>>, uint32_t> bySignature;
  std::map<uint32_t, uint32_t> noFrontier; // group -> its first node without host ancestors
  for (uint32_t x : order) {
    if (x >= n || isHost[x]) continue;
    std::vector<uint32_t> &f = frontier[x];
    for (uint32_t p : preds[x]) {
      if (isHost[p]) {
        f.push_back(p);
      } else {
        f.insert(f.end(), frontier[p].begin(), frontier[p].end());
        if (group[p] == group[x]) unite(p, x);
      }
    }
    std::sort(f.begin(), f.end());
    f.erase(std::unique(f.begin(), f.end()), f.end());
    if (f.size() > kMaxFrontier) f.assign(1, kNone);
    if (f.empty()) { // no host-task ancestor (every node of a graph without host tasks)
      auto it = noFrontier.emplace(group[x], x).first;
      unite(it->second, x);
      continue;
    }
    auto it = bySignature.emplace(std::make_pair(group[x], f), x).first;
    unite(it->second, x);
  }
  // Stage 2: one partition per (group, device component) and per host task, numbered by
  // (group, device before host, first position in `order`), so deps point backwards.
  struct Key {
    uint32_t group;
    uint32_t host;
    uint64_t first;
    bool operator<(const Key &o) const {
      return std::tie(group, host, first) < std::tie(o.group, o.host, o.first);
    }
  };
  std::vector<uint64_t> firstOfRoot(n, ~uint64_t(0));
  for (uint32_t x : order)
    if (x < n && !isHost[x]) {
      uint32_t r = findRoot(parent, x);
      firstOfRoot[r] = std::min(firstOfRoot[r], pos[x]);
    }
  auto keyOf = [&](uint32_t x) {
    return Key{group[x], isHost[x] ? 1u : 0u, isHost[x] ? pos[x] : firstOfRoot[findRoot(parent, x)]};
  };
  std::map<Key, uint32_t> keyToPart;
  for (uint32_t x : order)
    if (x < n) keyToPart[keyOf(x)] = 0;
  std::vector<Partition> parts;
  for (auto &kv : keyToPart) {
    kv.second = uint32_t(parts.size());
    parts.emplace_back();
  }
  std::vector<uint32_t> partOf(n, kNone);
  for (uint32_t x : order) {
    if (x >= n) continue;
    uint32_t p = keyToPart[keyOf(x)];
    partOf[x] = p;
    parts[p].nodes.push_back(x);
  }
  for (uint32_t x : order) {
    if (x >= n) continue;
    for (uint32_t p : preds[x])
      if (partOf[p] != partOf[x] && partOf[p] != kNone) parts[partOf[x]].deps.push_back(partOf[p]);
  }
  for (Partition &p : parts) {
    std::sort(p.deps.begin(), p.deps.end());
    p.deps.erase(std::unique(p.deps.begin(), p.deps.end()), p.deps.end());
  }
  return parts;
}

Error checkPartitions(const Graph &g) {
  const size_t n = g.nodes.size();
  std::vector<uint32_t> partOf(n, kNone), posIn(n, 0);
  for (uint32_t p = 0; p < g.partitions.size(); ++p) {
    const Partition &part = g.partitions[p];
    const std::string where = "partitions[" + std::to_string(p) + "]";
    if (part.nodes.empty()) return makeError(where + ": has no nodes");
    for (uint32_t i = 0; i < part.nodes.size(); ++i) {
      const uint32_t x = part.nodes[i];
      if (x >= n) return makeError(where + ": node " + std::to_string(x) + " points past the node table");
      if (partOf[x] != kNone)
        return makeError(where + ": " + nodeLabel(g, x) + " is already in partitions[" +
                         std::to_string(partOf[x]) + "]");
      partOf[x] = p;
      posIn[x] = i;
      const NodeKind k = g.nodes[x].kind;
      if ((k == NodeKind::Host || k == NodeKind::Conditional || k == NodeKind::Collective) &&
          part.nodes.size() != 1)
        return makeError(where + ": " +
                         (k == NodeKind::Host ? "host task " : k == NodeKind::Conditional ? "conditional " : "collective ") +
                         nodeLabel(g, x) + " shares its partition with " +
                         std::to_string(part.nodes.size() - 1) + " other nodes");
    }
    for (uint32_t d : part.deps)
      if (d >= p)
        return makeError(where + ": dep " + std::to_string(d) + " is not an earlier partition");
  }
  for (uint32_t x = 0; x < n; ++x)
    if (partOf[x] == kNone) return makeError(nodeLabel(g, x) + " is in no partition");
  for (const Edge &e : g.edges) {
    if (e.from >= n || e.to >= n) continue;
    const uint32_t a = partOf[e.from], b = partOf[e.to];
    if (a == b) {
      if (posIn[e.from] >= posIn[e.to])
        return makeError("partitions[" + std::to_string(a) + "]: " + nodeLabel(g, e.to) +
                         " comes before its predecessor " + nodeLabel(g, e.from));
      continue;
    }
    const auto &deps = g.partitions[b].deps;
    if (!std::binary_search(deps.begin(), deps.end(), a) && std::find(deps.begin(), deps.end(), a) == deps.end())
      return makeError("partitions[" + std::to_string(b) + "]: " + nodeLabel(g, e.to) + " depends on " +
                       nodeLabel(g, e.from) + " in partitions[" + std::to_string(a) +
                       "], which is not among its deps");
  }
  return Error::success();
}

namespace {
Error finalizeRec(Graph &g, OrderKind kind, int depth) {
  if (depth > 64) return makeError("subgraphs nested deeper than 64 levels");
  for (size_t i = 0; i < g.subgraphs.size(); ++i)
    CGRAPH_RETURN_IF_ERROR(finalizeRec(g.subgraphs[i], kind, depth + 1)
                               .withContext("subgraphs[" + std::to_string(i) + "]"));
  Expected<std::vector<uint32_t>> order = executionOrder(g, kind);
  if (!order) return order.error();
  g.order = std::move(*order);
  g.partitions = computePartitions(g, g.order);
  return Error::success();
}
} // namespace

Error finalizeForFile(Graph &g, OrderKind kind) {
  accumulateSlotRequirements(g);
  return finalizeRec(g, kind, 0);
}

} // namespace cgraph
