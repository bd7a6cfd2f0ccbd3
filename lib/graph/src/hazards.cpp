#include <cgraph/graph/hazards.h>

#include <algorithm>

namespace cgraph {

bool hostOpReadsOnly(const std::string &op) {
  return op == "checksum" || op == "print" || op == "write_file" || op == "compare";
}
bool hostOpWritesOnly(const std::string &op) {
  return op == "read_file";
}

uint64_t rectExtent(const uint64_t region[3], uint64_t rowPitch, uint64_t slicePitch) {
  uint64_t w = region[0], h = region[1], d = region[2];
  if (w == 0 || h == 0 || d == 0) return 0;
  if (rowPitch == 0) rowPitch = w;
  if (slicePitch == 0) slicePitch = rowPitch * h;
  return (d - 1) * slicePitch + (h - 1) * rowPitch + w;
}

namespace {

void addSlotArgs(const Graph &g, const Node &n, AccessInfo &out) {
  const Kernel *k =
      n.kind == NodeKind::Kernel && n.kernel < g.kernels.size() ? &g.kernels[n.kernel] : nullptr;
  bool hostRead = n.kind == NodeKind::Host && hostOpReadsOnly(n.host.op);
  bool hostWrite = n.kind == NodeKind::Host && hostOpWritesOnly(n.host.op);
  for (size_t i = 0; i < n.args.size(); ++i) {
    const Arg &a = n.args[i];
    if (a.kind != ArgKind::Slot) continue;
    SlotAccess s;
    s.slot = a.index;
    s.offset = a.value;
    s.read = s.write = true;
    if (k && i < k->params.size()) {
      const KernelParam &p = k->params[i];
      if (p.kind == ParamKind::ConstantBuffer ||
          (p.kind == ParamKind::GlobalBuffer && (p.qualifiers & kQualConst)))
        s.write = false;
    } else if (hostRead) {
      s.write = false;
    } else if (hostWrite) {
      s.read = false;
    }
    out.accesses.push_back(s);
  }
}

void addSubgraphAccesses(const Graph &g, const Node &n, AccessInfo &out) {
  if (n.subgraph >= g.subgraphs.size()) return;
  const Graph &child = g.subgraphs[n.subgraph];
  size_t first = out.accesses.size();
  for (uint32_t c = 0; c < child.nodes.size(); ++c) {
    for (const SlotAccess &ca : nodeAccesses(child, c).accesses) {
      if (ca.slot >= n.subgraphSlots.size()) continue;
      uint32_t parentSlot = n.subgraphSlots[ca.slot];
      auto it = std::find_if(out.accesses.begin() + first, out.accesses.end(),
                             [&](const SlotAccess &s) { return s.slot == parentSlot; });
      if (it == out.accesses.end()) {
        SlotAccess s = ca;
        s.slot = parentSlot;
        out.accesses.push_back(s);
        continue;
      }
      uint64_t end = std::max(it->end(), ca.end());
      it->offset = std::min(it->offset, ca.offset);
      it->size = end == kUnknownSize ? kUnknownSize : end - it->offset;
      it->read |= ca.read;
      it->write |= ca.write;
    }
  }
}

bool overlaps(uint64_t aBegin, uint64_t aEnd, uint64_t bBegin, uint64_t bEnd) {
  return aBegin < bEnd && bBegin < aEnd;
}

// Bit f set: field f (< 32) of node `node` is a stored parameter expression (Graph::exprs
// is sorted by node). Copy and fill fields that are expressions have no known value
// before a submission, so their accesses are widened below.
uint32_t exprFieldMask(const Graph &g, uint32_t node) {
  if (g.exprs.empty()) return 0;
  uint32_t mask = 0;
  auto it = std::lower_bound(g.exprs.begin(), g.exprs.end(), node,
                             [](const FieldExpr &e, uint32_t n) { return e.node < n; });
  for (; it != g.exprs.end() && it->node == node; ++it)
    if (uint16_t(it->field) < 32) mask |= 1u << uint16_t(it->field);
  return mask;
}

bool has(uint32_t mask, ExprField f) { return (mask >> uint16_t(f)) & 1u; }

} // namespace

AccessInfo nodeAccesses(const Graph &g, uint32_t node) {
  AccessInfo out;
  nodeAccesses(g, node, out);
  return out;
}

void nodeAccesses(const Graph &g, uint32_t node, AccessInfo &out) {
  out.accesses.clear();
  if (node >= g.nodes.size()) return;
  const Node &n = g.nodes[node];
  switch (n.kind) {
  case NodeKind::Kernel:
  case NodeKind::Host:
    addSlotArgs(g, n, out);
    break;
  case NodeKind::Copy:
  case NodeKind::CopyRect: {
    const CopyOp &c = n.copy;
    uint64_t srcSize = c.bytes, dstSize = c.bytes;
    if (n.kind == NodeKind::CopyRect) {
      srcSize = rectExtent(c.region, c.srcRowPitch, c.srcSlicePitch);
      dstSize = rectExtent(c.region, c.dstRowPitch, c.dstSlicePitch);
    }
    SlotAccess src{c.srcSlot, c.srcOffset, srcSize, true, false};
    SlotAccess dst{c.dstSlot, c.dstOffset, dstSize, false, true};
    if (const uint32_t m = n.kind == NodeKind::Copy ? exprFieldMask(g, node) : 0) {
      // Offsets or size known only per submission: from the offset (or the start) to
      // the end of the slot.
      if (has(m, ExprField::CopySrcOffset)) src.offset = 0;
      if (has(m, ExprField::CopyDstOffset)) dst.offset = 0;
      if (m & ((1u << 20) | (1u << 21) | (1u << 22))) src.size = dst.size = kUnknownSize;
    }
    out.accesses.push_back(src);
    out.accesses.push_back(dst);
    break;
  }
  case NodeKind::Fill: {
    SlotAccess a{n.fill.slot, n.fill.offset, n.fill.bytes, false, true};
    if (const uint32_t m = exprFieldMask(g, node)) {
      if (has(m, ExprField::FillOffset)) a.offset = 0;
      if (m & ((1u << 24) | (1u << 25))) a.size = kUnknownSize;
    }
    out.accesses.push_back(a);
    break;
  }
  case NodeKind::Subgraph:
    addSubgraphAccesses(g, n, out);
    break;
  case NodeKind::Conditional:
    // The condition is read (4 bytes), then the body's accesses, as a subgraph's.
    out.accesses.push_back(SlotAccess{n.cond.slot, n.cond.offset, 4, true, false});
    addSubgraphAccesses(g, n, out);
    break;
  case NodeKind::Barrier:
    break;
  }
}

std::vector<uint32_t> HazardTracker::add(const Graph &graph, uint32_t node) {
  if (preds_.size() <= node) {
    preds_.resize(node + 1);
    hasSucc_.resize(node + 1, 0);
  }
  std::vector<uint32_t> cands;
  bool isBarrier = node < graph.nodes.size() && graph.nodes[node].kind == NodeKind::Barrier;
  if (isBarrier) {
    // SYCL barrier without a wait list: waits for everything submitted since the previous
    // barrier; its leaves suffice since the rest reaches them.
    for (uint32_t n : sinceBarrier_)
      if (!hasSucc_[n]) cands.push_back(n);
    if (cands.empty() && lastBarrier_ != kNone) cands.push_back(lastBarrier_);
    // Everything earlier is an ancestor of this barrier, so it absorbs all hazards.
    for (auto &l : live_) {
      l.writes.clear();
      l.reads.clear();
    }
    lastBarrier_ = node;
    sinceBarrier_.clear();
  } else {
    AccessInfo info = nodeAccesses(graph, node);
    // Out-of-range slots (unvalidated graphs) take no part in hazards.
    info.accesses.erase(
        std::remove_if(info.accesses.begin(), info.accesses.end(),
                       [&](const SlotAccess &a) { return a.slot >= graph.slots.size(); }),
        info.accesses.end());
    if (live_.size() < graph.slots.size()) live_.resize(graph.slots.size());
    for (const SlotAccess &a : info.accesses) {
      const SlotLive &l = live_[a.slot];
      for (const Record &r : l.writes)
        if (overlaps(r.offset, r.end, a.offset, a.end())) cands.push_back(r.node);
      if (a.write)
        for (const Record &r : l.reads)
          if (overlaps(r.offset, r.end, a.offset, a.end())) cands.push_back(r.node);
    }
    for (const SlotAccess &a : info.accesses) {
      SlotLive &l = live_[a.slot];
      uint64_t b = a.offset, e = a.end();
      if (a.write) {
        // A record inside this write's range is now reached through this node.
        auto covered = [&](const Record &r) { return r.offset >= b && r.end <= e; };
        l.writes.erase(std::remove_if(l.writes.begin(), l.writes.end(), covered), l.writes.end());
        l.reads.erase(std::remove_if(l.reads.begin(), l.reads.end(), covered), l.reads.end());
        l.writes.push_back(Record{node, b, e, true});
      } else {
        l.reads.push_back(Record{node, b, e, false});
      }
    }
    bool afterBarrier = false;
    for (uint32_t c : cands)
      afterBarrier |= lastBarrier_ == kNone || c > lastBarrier_;
    if (lastBarrier_ != kNone && !afterBarrier) cands.push_back(lastBarrier_);
    sinceBarrier_.push_back(node);
  }

  std::sort(cands.begin(), cands.end(), std::greater<uint32_t>());
  cands.erase(std::unique(cands.begin(), cands.end()), cands.end());
  // Transitive reduction: drop a candidate that is an ancestor of a higher candidate.
  // Edges returned by this tracker always go from lower to higher index, so the
  // backward search can stop below the lowest candidate.
  std::vector<uint32_t> kept;
  if (!cands.empty()) {
    uint32_t low = cands.back();
    if (visitMark_.size() < preds_.size()) visitMark_.resize(preds_.size(), 0);
    ++stamp_;
    std::vector<uint32_t> stack;
    for (uint32_t c : cands) {
      if (visitMark_[c] == stamp_) continue;
      kept.push_back(c);
      stack.push_back(c);
      while (!stack.empty()) {
        uint32_t x = stack.back();
        stack.pop_back();
        for (uint32_t p : preds_[x]) {
          if (p < low || visitMark_[p] == stamp_) continue;
          visitMark_[p] = stamp_;
          stack.push_back(p);
        }
      }
    }
  }
  std::sort(kept.begin(), kept.end());
  preds_[node] = kept;
  for (uint32_t p : kept)
    hasSucc_[p] = 1;
  return kept;
}

std::vector<Edge> inferHazardEdges(const Graph &graph) {
  HazardTracker t;
  std::vector<Edge> edges;
  for (uint32_t n = 0; n < graph.nodes.size(); ++n)
    for (uint32_t p : t.add(graph, n))
      edges.push_back(Edge{p, n});
  return edges;
}

std::vector<Edge> barrierEdges(const Graph &graph) {
  std::vector<Edge> edges;
  uint32_t last = kNone;
  std::vector<uint32_t> since;
  for (uint32_t n = 0; n < graph.nodes.size(); ++n) {
    if (graph.nodes[n].kind == NodeKind::Barrier) {
      for (uint32_t p : since)
        edges.push_back(Edge{p, n});
      if (since.empty() && last != kNone) edges.push_back(Edge{last, n});
      last = n;
      since.clear();
    } else {
      if (last != kNone) edges.push_back(Edge{last, n});
      since.push_back(n);
    }
  }
  return edges;
}

std::vector<SlotRequirement> slotRequirements(const Graph &graph) {
  std::vector<SlotRequirement> req(graph.slots.size());
  AccessInfo scratch; // reused: no allocation per node
  for (size_t s = 0; s < graph.slots.size(); ++s) {
    req[s].minSize = graph.slots[s].size;
    req[s].alignment = graph.slots[s].alignment;
  }
  for (uint32_t i = 0; i < graph.nodes.size(); ++i) {
    const Node &n = graph.nodes[i];
    if (n.kind == NodeKind::Conditional && n.cond.slot < req.size()) {
      req[n.cond.slot].minSize = std::max(req[n.cond.slot].minSize, n.cond.offset + 4);
      req[n.cond.slot].usage |= kUsageRead;
    }
    if (n.kind == NodeKind::Subgraph || n.kind == NodeKind::Conditional) {
      if (n.subgraph >= graph.subgraphs.size()) continue;
      std::vector<SlotRequirement> child = slotRequirements(graph.subgraphs[n.subgraph]);
      for (size_t c = 0; c < child.size() && c < n.subgraphSlots.size(); ++c) {
        uint32_t s = n.subgraphSlots[c];
        if (s >= req.size()) continue;
        req[s].minSize = std::max(req[s].minSize, child[c].minSize);
        req[s].alignment = std::max(req[s].alignment, child[c].alignment);
        req[s].usage |= child[c].usage;
        req[s].written = req[s].written || child[c].written;
      }
      continue;
    }
    bool transfer =
        n.kind == NodeKind::Copy || n.kind == NodeKind::CopyRect || n.kind == NodeKind::Fill;
    nodeAccesses(graph, i, scratch);
    for (const SlotAccess &a : scratch.accesses) {
      if (a.slot >= req.size()) continue;
      SlotRequirement &r = req[a.slot];
      uint64_t end = a.size == kUnknownSize ? a.offset : a.end();
      r.minSize = std::max(r.minSize, end);
      r.written = r.written || a.write;
      if (transfer)
        r.usage |= kUsageTransfer;
      else
        r.usage |= (a.read ? kUsageRead : 0u) | (a.write ? kUsageWrite : 0u);
    }
  }
  return req;
}

void accumulateSlotRequirements(Graph &graph) {
  for (Graph &child : graph.subgraphs)
    accumulateSlotRequirements(child);
  std::vector<SlotRequirement> req = slotRequirements(graph);
  for (size_t s = 0; s < graph.slots.size(); ++s)
    graph.slots[s].usage = req[s].usage;
}

} // namespace cgraph
