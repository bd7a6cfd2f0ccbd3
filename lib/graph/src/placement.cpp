// Placement of top-level nodes on logical devices and its report (placement.h).
#include <cgraph/graph/placement.h>

#include <cgraph/graph/hazards.h>
#include <cgraph/graph/order.h>

#include "graph_util.h"

#include <algorithm>
#include <cmath>

namespace cgraph {

namespace detail {

std::vector<uint64_t> storedBytes(const Graph &g) {
  std::vector<SlotRequirement> reqs = slotRequirements(g);
  std::vector<uint64_t> bytes(g.slots.size());
  for (size_t s = 0; s < g.slots.size(); ++s)
    bytes[s] = std::max<uint64_t>({g.slots[s].size, s < reqs.size() ? reqs[s].minSize : 0, 1});
  return bytes;
}

} // namespace detail

namespace {

// Per slot of g: the slots every node of `order` touches, as (first, last) positions in
// the order; first == kNone for a slot no node touches.
std::vector<std::pair<uint32_t, uint32_t>> slotSpans(const Graph &g, const std::vector<uint32_t> &order) {
  std::vector<std::pair<uint32_t, uint32_t>> span(g.slots.size(), {kNone, kNone});
  AccessInfo acc;
  auto touch = [&](uint32_t s, uint32_t pos) {
    if (s >= span.size()) return;
    if (span[s].first == kNone) span[s].first = pos;
    span[s].second = pos;
  };
  for (uint32_t pos = 0; pos < order.size(); ++pos) {
    nodeAccesses(g, order[pos], acc);
    for (const SlotAccess &a : acc.accesses) touch(a.slot, pos);
    for (uint32_t s : g.nodes[order[pos]].subgraphSlots) touch(s, pos);
  }
  return span;
}

// crossing[c] for c in [0, n]: the bytes of slots used both before position c and at or
// after it (what a cut before order[c] moves between its two sides).
std::vector<uint64_t> crossingBytes(const Graph &g, const std::vector<uint32_t> &order) {
  const std::vector<uint64_t> bytes = detail::storedBytes(g);
  std::vector<int64_t> delta(order.size() + 2, 0);
  const auto spans = slotSpans(g, order);
  for (size_t s = 0; s < spans.size(); ++s) {
    if (spans[s].first == kNone || spans[s].first == spans[s].second) continue;
    delta[spans[s].first + 1] += int64_t(bytes[s]);
    delta[spans[s].second + 1] -= int64_t(bytes[s]);
  }
  std::vector<uint64_t> crossing(order.size() + 1, 0);
  int64_t run = 0;
  for (size_t c = 0; c <= order.size(); ++c) {
    run += delta[c];
    crossing[c] = uint64_t(run);
  }
  return crossing;
}

// Cut positions (cuts[d] = the first order position on device d + 1) of runs of about
// equal work; MinBytes moves each within a quarter of a device's share to the cheapest
// crossing.
std::vector<size_t> runCuts(const Graph &g, uint32_t devices, bool minBytes) {
  const std::vector<uint32_t> &order = g.order;
  std::vector<double> before(order.size() + 1, 0); // work of order[0, c)
  for (size_t i = 0; i < order.size(); ++i) before[i + 1] = before[i] + nodeWork(g.nodes[order[i]]);
  const double total = before.back(), share = total / devices;
  std::vector<uint64_t> crossing;
  if (minBytes) crossing = crossingBytes(g, order);
  std::vector<size_t> cuts;
  size_t lo = 0;
  for (uint32_t d = 1; d < devices; ++d) {
    const double ideal = share * d;
    // The balanced cut: the first position whose node's midpoint lies past `ideal`.
    size_t balanced = lo;
    while (balanced < order.size() && (before[balanced] + before[balanced + 1]) / 2 < ideal) ++balanced;
    size_t best = balanced;
    if (minBytes) {
      for (size_t c = lo; c <= order.size(); ++c) {
        if (std::fabs(before[c] - ideal) > share / 4) {
          if (before[c] > ideal) break;
          continue;
        }
        const size_t dc = c > balanced ? c - balanced : balanced - c;
        const size_t db = best > balanced ? best - balanced : balanced - best;
        if (crossing[c] < crossing[best] || (crossing[c] == crossing[best] && dc < db)) best = c;
      }
    }
    cuts.push_back(best);
    lo = best;
  }
  return cuts;
}

} // namespace

double nodeWork(const Node &n) {
  switch (n.kind) {
  case NodeKind::Kernel: {
    double w = 1;
    for (uint32_t d = 0; d < n.range.dims && d < 3; ++d) w *= double(std::max<uint64_t>(1, n.range.global[d].value));
    return w;
  }
  case NodeKind::Copy: return double(n.copy.bytes) / 4 + 1;
  case NodeKind::CopyRect:
    return double(n.copy.region[0]) * double(std::max<uint64_t>(1, n.copy.region[1])) *
               double(std::max<uint64_t>(1, n.copy.region[2])) / 4 + 1;
  case NodeKind::Fill: return double(n.fill.bytes) / 4 + 1;
  default: return 1;
  }
}

Error placeNodes(Graph &g, uint32_t devices, PlaceRule rule) {
  if (devices < 1 || devices > kMaxDevices)
    return makeError("placement over " + std::to_string(devices) + " devices (must be 1 to " +
                     std::to_string(kMaxDevices) + ")");
  if (!isTopologicalOrder(g, g.order)) return makeError("placement needs the graph's execution order");
  if (rule == PlaceRule::RoundRobin) {
    if (checkPartitions(g)) return makeError("placement needs the graph's partitions");
    for (uint32_t p = 0; p < g.partitions.size(); ++p)
      for (uint32_t n : g.partitions[p].nodes) g.nodes[n].device = p % devices;
    return Error::success();
  }
  const std::vector<size_t> cuts = runCuts(g, devices, rule == PlaceRule::MinBytes);
  uint32_t d = 0;
  for (size_t pos = 0; pos < g.order.size(); ++pos) {
    while (d < cuts.size() && pos >= cuts[d]) ++d;
    g.nodes[g.order[pos]].device = d;
  }
  return Error::success();
}

PlacementReport placementReport(const Graph &g, const std::vector<uint64_t> &slotBytes) {
  PlacementReport r;
  for (const Node &n : g.nodes) r.devices = std::max(r.devices, n.device + 1);
  r.work.assign(r.devices, 0);
  std::vector<std::vector<uint32_t>> users(g.slots.size());
  AccessInfo acc;
  auto use = [&](uint32_t s, uint32_t dev) {
    if (s >= users.size()) return;
    std::vector<uint32_t> &u = users[s];
    if (std::find(u.begin(), u.end(), dev) == u.end()) u.push_back(dev);
  };
  for (uint32_t n = 0; n < g.nodes.size(); ++n) {
    const Node &node = g.nodes[n];
    r.work[node.device] += nodeWork(node);
    nodeAccesses(g, n, acc);
    for (const SlotAccess &a : acc.accesses) use(a.slot, node.device);
    for (uint32_t s : node.subgraphSlots) use(s, node.device);
  }
  for (uint32_t s = 0; s < users.size(); ++s) {
    if (users[s].size() < 2) continue;
    PlacementReport::SlotCrossing c;
    c.slot = s;
    c.bytes = s < slotBytes.size() ? slotBytes[s] : g.slots[s].size;
    c.devices = users[s];
    std::sort(c.devices.begin(), c.devices.end());
    r.bytesCrossing += c.bytes * (c.devices.size() - 1);
    r.slots.push_back(std::move(c));
  }
  return r;
}

} // namespace cgraph
