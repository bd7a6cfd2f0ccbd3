#include <cgraph/graph/hazards.h>

#include <algorithm>
#include <map>

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
  uint64_t rows, slices, extent;
  // Every step checked: a wrapped extent would let a copy run past its slot.
  if (__builtin_mul_overflow(rowPitch, h, &rows)) return kUnknownSize;
  if (slicePitch == 0) slicePitch = rows;
  if (__builtin_mul_overflow(d - 1, slicePitch, &slices) ||
      __builtin_mul_overflow(h - 1, rowPitch, &rows) ||
      __builtin_add_overflow(slices, rows, &extent) || __builtin_add_overflow(extent, w, &extent))
    return kUnknownSize;
  return extent;
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

// A collective reads its send side and writes its receive side. The extent is count
// elements, or unknown (to the end of the slot) where it scales with the world size
// (all_gather's receive side, reduce_scatter's send side) or the count or that side's
// offset is an expression; an offset that is an expression counts as 0.
void addCollectiveAccesses(const Graph &g, uint32_t node, AccessInfo &out) {
  const CollectiveOp &c = g.nodes[node].coll;
  bool sendExpr = false, recvExpr = false, countExpr = false;
  auto it = std::lower_bound(g.exprs.begin(), g.exprs.end(), node,
                             [](const FieldExpr &e, uint32_t n) { return e.node < n; });
  for (; it != g.exprs.end() && it->node == node; ++it) {
    sendExpr = sendExpr || it->field == ExprField::CollSendOffset;
    recvExpr = recvExpr || it->field == ExprField::CollRecvOffset;
    countExpr = countExpr || it->field == ExprField::CollCount;
  }
  uint64_t bytes;
  if (countExpr || __builtin_mul_overflow(c.count, uint64_t(scalarSize(c.type)), &bytes)) bytes = kUnknownSize;
  if (collHasSend(c.kind))
    out.accesses.push_back(SlotAccess{c.sendSlot, sendExpr ? 0 : c.sendOffset,
                                      sendExpr || c.kind == CollKind::ReduceScatter ? kUnknownSize : bytes,
                                      true, false});
  if (collHasRecv(c.kind))
    out.accesses.push_back(SlotAccess{c.recvSlot, recvExpr ? 0 : c.recvOffset,
                                      recvExpr || c.kind == CollKind::AllGather ? kUnknownSize : bytes,
                                      false, true});
}

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
  case NodeKind::Collective:
    addCollectiveAccesses(g, node, out);
    break;
  case NodeKind::Barrier:
    break;
  }
}

namespace {

constexpr uint32_t kNil = ~0u;

// Live read-only accesses, one treap per slot over a pool shared by all slots. A treap
// is keyed by (begin, record id) and every record carries the largest end in its
// subtree, so the reads overlapping a byte range are found in O(log n + k) whatever
// their mix of extents (a scan of a list was O(live reads) per write).
class ReadSet {
public:
  struct Rec {
    uint64_t begin, end, maxEnd;
    uint32_t node, left, right, prio;
    bool live;
  };

  const Rec &rec(uint32_t id) const { return recs_[id]; }

  uint32_t insert(uint32_t &root, uint64_t begin, uint64_t end, uint32_t node) {
    uint32_t id;
    if (!free_.empty()) {
      id = free_.back();
      free_.pop_back();
    } else {
      id = uint32_t(recs_.size());
      recs_.emplace_back();
    }
    rng_ ^= rng_ << 13;
    rng_ ^= rng_ >> 17;
    rng_ ^= rng_ << 5;
    recs_[id] = Rec{begin, end, end, node, kNil, kNil, rng_, true};
    root = insertAt(root, id);
    return id;
  }

  void erase(uint32_t &root, uint32_t id) {
    root = eraseAt(root, id);
    recs_[id].live = false;
    free_.push_back(id);
  }

  // Appends the ids of the records overlapping [begin, end) to `out`.
  void overlapping(uint32_t root, uint64_t begin, uint64_t end, std::vector<uint32_t> &out) const {
    if (root == kNil || recs_[root].maxEnd <= begin) return;
    const Rec &r = recs_[root];
    overlapping(r.left, begin, end, out);
    if (r.begin >= end) return; // the right subtree starts later still
    if (r.end > begin) out.push_back(root);
    overlapping(r.right, begin, end, out);
  }

  void clear(uint32_t &root) {
    if (root == kNil) return;
    std::vector<uint32_t> stack{root};
    while (!stack.empty()) {
      uint32_t t = stack.back();
      stack.pop_back();
      if (recs_[t].left != kNil) stack.push_back(recs_[t].left);
      if (recs_[t].right != kNil) stack.push_back(recs_[t].right);
      recs_[t].live = false;
      free_.push_back(t);
    }
    root = kNil;
  }

private:
  bool before(uint32_t a, uint32_t b) const {
    return recs_[a].begin < recs_[b].begin || (recs_[a].begin == recs_[b].begin && a < b);
  }
  void pull(uint32_t t) {
    Rec &r = recs_[t];
    r.maxEnd = r.end;
    if (r.left != kNil) r.maxEnd = std::max(r.maxEnd, recs_[r.left].maxEnd);
    if (r.right != kNil) r.maxEnd = std::max(r.maxEnd, recs_[r.right].maxEnd);
  }
  // Records of `t` before `key` into `l`, the others into `r`.
  void split(uint32_t t, uint32_t key, uint32_t &l, uint32_t &r) {
    if (t == kNil) {
      l = r = kNil;
      return;
    }
    if (before(t, key)) {
      split(recs_[t].right, key, recs_[t].right, r);
      l = t;
    } else {
      split(recs_[t].left, key, l, recs_[t].left);
      r = t;
    }
    pull(t);
  }
  uint32_t merge(uint32_t l, uint32_t r) {
    if (l == kNil) return r;
    if (r == kNil) return l;
    if (recs_[l].prio > recs_[r].prio) {
      recs_[l].right = merge(recs_[l].right, r);
      pull(l);
      return l;
    }
    recs_[r].left = merge(l, recs_[r].left);
    pull(r);
    return r;
  }
  uint32_t insertAt(uint32_t t, uint32_t id) {
    if (t == kNil) return id;
    if (recs_[id].prio > recs_[t].prio) {
      split(t, id, recs_[id].left, recs_[id].right);
      pull(id);
      return id;
    }
    if (before(id, t))
      recs_[t].left = insertAt(recs_[t].left, id);
    else
      recs_[t].right = insertAt(recs_[t].right, id);
    pull(t);
    return t;
  }
  uint32_t eraseAt(uint32_t t, uint32_t id) {
    if (t == kNil) return kNil;
    if (t == id) return merge(recs_[t].left, recs_[t].right);
    if (before(id, t))
      recs_[t].left = eraseAt(recs_[t].left, id);
    else
      recs_[t].right = eraseAt(recs_[t].right, id);
    pull(t);
    return t;
  }

  std::vector<Rec> recs_;
  std::vector<uint32_t> free_;
  uint32_t rng_ = 0x9e3779b9u; // deterministic: the same graph gives the same treaps
};

// The last writer of a byte range, and the newest node that read part of it since:
// that reader depends on the writer, so a node that depends on the reader needs no edge
// from the writer.
struct WriteSeg {
  uint64_t end;
  uint32_t writer;
  uint32_t lastReader;
};

struct SlotState {
  std::map<uint64_t, WriteSeg> writes; // disjoint ranges, keyed by their first byte
  uint32_t readRoot = kNil;            // live read-only accesses (ReadSet)
  uint32_t lastRead = kNil;            // the newest read record, for collapsing
  uint32_t epoch = 0;                  // state older than the last barrier is dropped
};

// Makes x a boundary between write ranges (the range that straddles it is cut in two).
void splitAt(std::map<uint64_t, WriteSeg> &m, uint64_t x) {
  auto it = m.upper_bound(x);
  if (it == m.begin()) return;
  --it;
  if (it->first < x && it->second.end > x) {
    WriteSeg tail = it->second;
    it->second.end = x;
    m.emplace_hint(std::next(it), x, tail);
  }
}

// The first write range that overlaps [begin, ...).
std::map<uint64_t, WriteSeg>::iterator firstOverlap(std::map<uint64_t, WriteSeg> &m,
                                                    uint64_t begin) {
  auto it = m.upper_bound(begin);
  if (it != m.begin() && std::prev(it)->second.end > begin) --it;
  return it;
}

// A search for redundant candidates examines at most this many edges (plus a few per
// candidate): beyond it, a candidate not yet found redundant is kept as an edge.
constexpr size_t kReductionBudget = 512;

} // namespace

struct HazardTracker::State {
  std::vector<SlotState> slots;
  ReadSet reads;
  uint32_t epoch = 0;
  // Edges returned so far, per node in index order (compressed rows).
  std::vector<uint32_t> predStart{0};
  std::vector<uint32_t> preds;
  std::vector<uint8_t> hasSucc;
  uint32_t lastBarrier = kNone;
  std::vector<uint32_t> sinceBarrier; // nodes added after lastBarrier
  // Per node, equal to `stamp` when: a candidate of the node being added, redundant by
  // a later reader (WriteSeg::lastReader), visited by the reduction search.
  std::vector<uint32_t> candMark, domMark, visitMark;
  uint32_t stamp = 0;
  // Scratch, kept to reuse its storage.
  AccessInfo info;
  std::vector<uint32_t> cands, found, stack;
  std::vector<std::pair<uint32_t, uint32_t>> dominated; // (writer, reader after it)

  SlotState &slot(uint32_t i) {
    SlotState &s = slots[i];
    if (s.epoch != epoch) {
      s.writes.clear();
      reads.clear(s.readRoot);
      s.lastRead = kNil;
      s.epoch = epoch;
    }
    return s;
  }
  bool knownAncestor(uint32_t x) const { return candMark[x] == stamp || visitMark[x] == stamp; }

  void collect(const SlotAccess &a);
  void applyWrite(SlotState &s, uint64_t b, uint64_t e, uint32_t node);
  void applyRead(SlotState &s, uint64_t b, uint64_t e, uint32_t node);
  std::vector<uint32_t> reduce();
};

// Candidates of one access: the writers of the overlapping ranges and, for a write, the
// overlapping live reads.
void HazardTracker::State::collect(const SlotAccess &a) {
  SlotState &s = slot(a.slot);
  const uint64_t b = a.offset, e = a.end();
  for (auto it = firstOverlap(s.writes, b); it != s.writes.end() && it->first < e; ++it) {
    cands.push_back(it->second.writer);
    if (it->second.lastReader != kNil) dominated.emplace_back(it->second.writer, it->second.lastReader);
  }
  if (!a.write) return;
  found.clear();
  reads.overlapping(s.readRoot, b, e, found);
  for (uint32_t id : found) cands.push_back(reads.rec(id).node);
}

// `node` wrote [b, e): it becomes the range's writer, and the reads inside it are now
// ordered before it (a later access that conflicts with them conflicts with `node`).
void HazardTracker::State::applyWrite(SlotState &s, uint64_t b, uint64_t e, uint32_t node) {
  found.clear();
  reads.overlapping(s.readRoot, b, e, found);
  for (uint32_t id : found) {
    const ReadSet::Rec r = reads.rec(id);
    reads.erase(s.readRoot, id);
    if (s.lastRead == id) s.lastRead = kNil;
    if (r.begin < b) reads.insert(s.readRoot, r.begin, b, r.node);
    if (r.end > e) reads.insert(s.readRoot, e, r.end, r.node);
  }
  splitAt(s.writes, b);
  splitAt(s.writes, e);
  s.writes.erase(s.writes.lower_bound(b), s.writes.lower_bound(e));
  s.writes.emplace(b, WriteSeg{e, node, kNil});
}

void HazardTracker::State::applyRead(SlotState &s, uint64_t b, uint64_t e, uint32_t node) {
  for (auto it = firstOverlap(s.writes, b); it != s.writes.end() && it->first < e; ++it)
    it->second.lastReader = node;
  // A previous read inside this one by an ancestor of `node` is implied by this one: a
  // later write that overlaps it overlaps this read and so is ordered after both. Only
  // the newest record is looked at, which collapses the reads of a slot along a chain.
  if (s.lastRead != kNil) {
    const ReadSet::Rec &r = reads.rec(s.lastRead);
    if (r.live && r.begin >= b && r.end <= e && r.node != node && knownAncestor(r.node))
      reads.erase(s.readRoot, s.lastRead);
  }
  s.lastRead = reads.insert(s.readRoot, b, e, node);
}

// The candidates less those that are ancestors of another candidate (found by a search
// over the edges returned so far, bounded by kReductionBudget), ascending.
std::vector<uint32_t> HazardTracker::State::reduce() {
  std::vector<uint32_t> kept;
  for (uint32_t c : cands) candMark[c] = stamp;
  for (const auto &[w, reader] : dominated)
    if (reader != w && candMark[reader] == stamp) domMark[w] = stamp;
  std::sort(cands.begin(), cands.end(), std::greater<uint32_t>());
  cands.erase(std::unique(cands.begin(), cands.end()), cands.end());
  if (cands.empty()) return kept;
  // Edges go from lower to higher index, so the backward search stops below the lowest
  // candidate.
  const uint32_t low = cands.back();
  size_t budget = kReductionBudget + 4 * cands.size();
  for (uint32_t c : cands) {
    if (visitMark[c] == stamp || domMark[c] == stamp) continue;
    kept.push_back(c);
    stack.clear();
    stack.push_back(c);
    while (!stack.empty() && budget) {
      uint32_t x = stack.back();
      stack.pop_back();
      // Predecessors are ascending: walk down and stop below `low`.
      for (uint32_t i = predStart[x + 1]; i-- > predStart[x] && budget;) {
        --budget;
        uint32_t p = preds[i];
        if (p < low) break;
        if (visitMark[p] == stamp) continue;
        visitMark[p] = stamp;
        stack.push_back(p);
      }
    }
  }
  std::sort(kept.begin(), kept.end());
  return kept;
}

HazardTracker::HazardTracker() : s_(std::make_unique<State>()) {}
HazardTracker::~HazardTracker() = default;
HazardTracker::HazardTracker(const HazardTracker &other)
    : s_(std::make_unique<State>(other.s_ ? *other.s_ : State())) {}
HazardTracker::HazardTracker(HazardTracker &&other) noexcept = default;
HazardTracker &HazardTracker::operator=(const HazardTracker &other) {
  if (this != &other) s_ = std::make_unique<State>(other.s_ ? *other.s_ : State());
  return *this;
}
HazardTracker &HazardTracker::operator=(HazardTracker &&other) noexcept = default;

std::vector<uint32_t> HazardTracker::add(const Graph &graph, uint32_t node) {
  if (!s_) s_ = std::make_unique<State>(); // moved from
  State &st = *s_;
  if (st.candMark.size() <= node) {
    const size_t n = std::max<size_t>(node + 1, st.candMark.size() * 2);
    st.candMark.resize(n, 0);
    st.domMark.resize(n, 0);
    st.visitMark.resize(n, 0);
    st.hasSucc.resize(n, 0);
  }
  // Nodes skipped over get no edges; a node added again is answered but not recorded.
  while (st.predStart.size() <= node) st.predStart.push_back(uint32_t(st.preds.size()));
  const bool record = st.predStart.size() == size_t(node) + 1;
  if (++st.stamp == 0) { // wrapped: old marks could alias the new stamp
    std::fill(st.candMark.begin(), st.candMark.end(), 0);
    std::fill(st.domMark.begin(), st.domMark.end(), 0);
    std::fill(st.visitMark.begin(), st.visitMark.end(), 0);
    st.stamp = 1;
  }
  st.cands.clear();
  st.dominated.clear();
  std::vector<SlotAccess> &acc = st.info.accesses;
  const bool isBarrier = node < graph.nodes.size() && graph.nodes[node].kind == NodeKind::Barrier;
  if (isBarrier) {
    acc.clear();
    // SYCL barrier without a wait list: waits for everything submitted since the previous
    // barrier; its leaves suffice since the rest reaches them.
    for (uint32_t n : st.sinceBarrier)
      if (!st.hasSucc[n]) st.cands.push_back(n);
    if (st.cands.empty() && st.lastBarrier != kNone) st.cands.push_back(st.lastBarrier);
    // Everything earlier is an ancestor of this barrier, so it absorbs all hazards: the
    // slots' state is dropped lazily, when each is next touched.
    ++st.epoch;
    st.lastBarrier = node;
    st.sinceBarrier.clear();
  } else {
    nodeAccesses(graph, node, st.info);
    // Out-of-range slots (unvalidated graphs) and empty ranges take no part in hazards.
    acc.erase(std::remove_if(acc.begin(), acc.end(),
                             [&](const SlotAccess &a) {
                               return a.slot >= graph.slots.size() || a.offset >= a.end();
                             }),
              acc.end());
    if (st.slots.size() < graph.slots.size()) st.slots.resize(graph.slots.size());
    for (const SlotAccess &a : acc) st.collect(a);
    // Candidates all follow the last barrier (older state was dropped).
    if (st.cands.empty() && st.lastBarrier != kNone) st.cands.push_back(st.lastBarrier);
    st.sinceBarrier.push_back(node);
  }
  std::vector<uint32_t> kept = st.reduce();
  for (const SlotAccess &a : acc) {
    SlotState &s = st.slot(a.slot);
    if (a.write)
      st.applyWrite(s, a.offset, a.end(), node);
    else
      st.applyRead(s, a.offset, a.end(), node);
  }
  if (record) st.preds.insert(st.preds.end(), kept.begin(), kept.end());
  if (record) st.predStart.push_back(uint32_t(st.preds.size()));
  for (uint32_t p : kept) st.hasSucc[p] = 1;
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
