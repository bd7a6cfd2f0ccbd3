// HazardTracker against a reference: the straightforward tracker (per slot, lists of the
// live reads and writes, scanned for every access; every candidate searched for
// redundancy without a bound) on random programs. Below the tracker's search bound the
// edge sets must be equal (both are the transitive reduction of the same hazards); on
// larger programs their transitive closures must be.
#include "test_helpers.h"

#include <cgraph/graph/hazards.h>
#include <cgraph/graph/recorder.h>

#include <catch2/catch.hpp>

#include <algorithm>
#include <random>

using namespace cgraph;
using namespace cgraph::test;

namespace {

// The reference tracker: quadratic in the live accesses of a slot, obviously right.
class ReferenceTracker {
public:
  std::vector<uint32_t> add(const Graph &graph, uint32_t node) {
    if (preds_.size() <= node) {
      preds_.resize(node + 1);
      hasSucc_.resize(node + 1, 0);
    }
    std::vector<uint32_t> cands;
    if (graph.nodes[node].kind == NodeKind::Barrier) {
      for (uint32_t n : sinceBarrier_)
        if (!hasSucc_[n]) cands.push_back(n);
      if (cands.empty() && lastBarrier_ != kNone) cands.push_back(lastBarrier_);
      for (auto &l : live_) l.clear();
      lastBarrier_ = node;
      sinceBarrier_.clear();
    } else {
      AccessInfo info = nodeAccesses(graph, node);
      if (live_.size() < graph.slots.size()) live_.resize(graph.slots.size());
      for (const SlotAccess &a : info.accesses)
        for (const Record &r : live_[a.slot])
          if ((r.write || a.write) && r.offset < a.end() && a.offset < r.end) cands.push_back(r.node);
      for (const SlotAccess &a : info.accesses) {
        std::vector<Record> &l = live_[a.slot];
        const uint64_t b = a.offset, e = a.end();
        if (a.write)
          l.erase(std::remove_if(l.begin(), l.end(),
                                 [&](const Record &r) { return r.offset >= b && r.end <= e; }),
                  l.end());
        l.push_back(Record{node, b, e, a.write});
      }
      bool afterBarrier = false;
      for (uint32_t c : cands) afterBarrier |= lastBarrier_ == kNone || c > lastBarrier_;
      if (lastBarrier_ != kNone && !afterBarrier) cands.push_back(lastBarrier_);
      sinceBarrier_.push_back(node);
    }
    std::sort(cands.begin(), cands.end(), std::greater<uint32_t>());
    cands.erase(std::unique(cands.begin(), cands.end()), cands.end());
    std::vector<uint32_t> kept;
    std::vector<uint8_t> seen(node + 1, 0);
    for (uint32_t c : cands) {
      if (seen[c]) continue;
      kept.push_back(c);
      std::vector<uint32_t> stack{c};
      while (!stack.empty()) {
        uint32_t x = stack.back();
        stack.pop_back();
        for (uint32_t p : preds_[x])
          if (!seen[p]) {
            seen[p] = 1;
            stack.push_back(p);
          }
      }
    }
    std::sort(kept.begin(), kept.end());
    preds_[node] = kept;
    for (uint32_t p : kept) hasSucc_[p] = 1;
    return kept;
  }

private:
  struct Record {
    uint32_t node;
    uint64_t offset, end;
    bool write;
  };
  std::vector<std::vector<Record>> live_;
  std::vector<std::vector<uint32_t>> preds_;
  std::vector<uint8_t> hasSucc_;
  uint32_t lastBarrier_ = kNone;
  std::vector<uint32_t> sinceBarrier_;
};

EdgeSet referenceEdges(const Graph &g) {
  ReferenceTracker t;
  EdgeSet out;
  for (uint32_t n = 0; n < g.nodes.size(); ++n)
    for (uint32_t p : t.add(g, n)) out.insert({p, n});
  return out;
}

EdgeSet trackerEdges(const Graph &g) {
  EdgeSet out;
  for (const Edge &e : inferHazardEdges(g)) out.insert({e.from, e.to});
  return out;
}

// Per node, the set of its ancestors (bit i of row n: i reaches n).
std::vector<std::vector<uint64_t>> closure(uint32_t nodes, const EdgeSet &edges) {
  const size_t words = (nodes + 63) / 64;
  std::vector<std::vector<uint64_t>> anc(nodes, std::vector<uint64_t>(words, 0));
  std::vector<std::vector<uint32_t>> preds(nodes);
  for (const auto &[from, to] : edges) preds[to].push_back(from);
  for (uint32_t n = 0; n < nodes; ++n)
    for (uint32_t p : preds[n]) {
      REQUIRE(p < n);
      for (size_t w = 0; w < words; ++w) anc[n][w] |= anc[p][w];
      anc[n][p / 64] |= uint64_t(1) << (p % 64);
    }
  return anc;
}

// A random program over `slots` slots of 256 bytes: fills, copies and rect copies of
// random non-empty ranges, kernels that read or update a slot from an offset on, host
// tasks, and now and then a barrier. `wide` makes most ranges start at 0 and run far.
Graph randomProgram(std::mt19937 &rng, uint32_t nodes, uint32_t slots, bool barriers) {
  GraphBuilder b("random");
  for (uint32_t s = 0; s < slots; ++s) b.addSlot(slot("s" + std::to_string(s), 256));
  b.addModule(KernelModule{"m.cl", {}});
  Kernel map;
  map.name = "map";
  map.module = 0;
  map.params = {bufferParam("in", true), bufferParam("out")};
  b.addKernel(map);
  Kernel acc;
  acc.name = "acc";
  acc.module = 0;
  acc.params = {bufferParam("x")};
  b.addKernel(acc);
  auto pick = [&](uint32_t n) { return uint32_t(rng() % n); };
  auto range = [&](uint64_t *off, uint64_t *bytes) {
    *off = pick(4) == 0 ? 0 : pick(16) * 16;
    *bytes = 1 + pick(uint32_t(256 - *off));
  };
  for (uint32_t i = 0; i < nodes; ++i) {
    const std::string name = "n" + std::to_string(i);
    switch (pick(barriers ? 20 : 19) % 20) {
    case 0: case 1: case 2: case 3: {
      uint64_t off, bytes;
      range(&off, &bytes);
      b.addFill(name, fillOp(pick(slots), off, bytes, {0}));
      break;
    }
    case 4: case 5: case 6: case 7: {
      uint64_t so, dOff, bytes;
      range(&so, &bytes);
      dOff = pick(uint32_t(256 - bytes + 1));
      uint32_t src = pick(slots), dst = pick(slots);
      if (src == dst) dst = (dst + 1) % slots;
      if (src == dst) break; // one slot: no copy
      b.addCopy(name, copyOp(src, so, dst, dOff, bytes));
      break;
    }
    case 8: {
      CopyOp r;
      r.srcSlot = pick(slots);
      r.dstSlot = (r.srcSlot + 1) % slots;
      r.srcOffset = pick(4) * 16;
      r.dstOffset = pick(4) * 16;
      r.region[0] = 1 + pick(16);
      r.region[1] = 1 + pick(4);
      r.srcRowPitch = 32;
      r.dstRowPitch = 16 + pick(3) * 16;
      if (r.dstRowPitch < r.region[0]) r.dstRowPitch = 0;
      b.addCopyRect(name, r);
      break;
    }
    case 9: case 10: case 11: case 12:
      b.addKernelNode(name, 0, range1D(64),
                      {Arg::slot(pick(slots), pick(8) * 32), Arg::slot(pick(slots), pick(8) * 32)});
      break;
    case 13: case 14: case 15:
      b.addKernelNode(name, 1, range1D(64), {Arg::slot(pick(slots), pick(4) * 64)});
      break;
    case 16: case 17:
      b.addHost(name, HostOp{"checksum", ""}, {Arg::slot(pick(slots), pick(4) * 64)});
      break;
    case 18:
      b.addHost(name, HostOp{"read_file", ""}, {Arg::slot(pick(slots), pick(4) * 64), Arg::string("f")});
      break;
    default:
      b.addBarrier(name);
    }
  }
  return b.take();
}

} // namespace

TEST_CASE("hazard tracker matches the reference on small random programs", "[graph][hazards]") {
  std::mt19937 rng(1234);
  for (int round = 0; round < 600; ++round) {
    const uint32_t slots = 1 + round % 5;
    Graph g = randomProgram(rng, 10 + uint32_t(rng() % 110), slots, round % 3 == 0);
    INFO("round " << round << ", " << g.nodes.size() << " nodes, " << slots << " slots");
    REQUIRE(trackerEdges(g) == referenceEdges(g));
  }
}

TEST_CASE("hazard tracker keeps the reference's ordering on large random programs",
          "[graph][hazards]") {
  std::mt19937 rng(99);
  for (int round = 0; round < 6; ++round) {
    const uint32_t slots = 1 + round;
    Graph g = randomProgram(rng, 3000, slots, round % 2 == 1);
    INFO("round " << round);
    const EdgeSet mine = trackerEdges(g), ref = referenceEdges(g);
    CHECK(closure(uint32_t(g.nodes.size()), mine) == closure(uint32_t(g.nodes.size()), ref));
    // Redundant edges only where the search was cut short: never many.
    CHECK(mine.size() <= ref.size() + g.nodes.size());
  }
}

TEST_CASE("the recorder gives the reference's edges", "[graph][hazards][recorder]") {
  std::mt19937 rng(7);
  Graph g = randomProgram(rng, 100, 3, true);
  Recorder r("again");
  for (const Slot &s : g.slots) r.addSlot(s);
  r.addModule(g.modules[0]);
  for (const Kernel &k : g.kernels) r.addKernel(k);
  for (const Node &n : g.nodes) {
    switch (n.kind) {
    case NodeKind::Fill: r.addFill(n.name, n.fill); break;
    case NodeKind::Copy: r.addCopy(n.name, n.copy); break;
    case NodeKind::CopyRect: r.addCopyRect(n.name, n.copy); break;
    case NodeKind::Kernel: r.addKernelNode(n.name, n.kernel, n.range, n.args); break;
    case NodeKind::Host: r.addHost(n.name, n.host, n.args); break;
    case NodeKind::Barrier: r.addBarrier(n.name); break;
    default: FAIL("unexpected node kind");
    }
  }
  Graph recorded = r.take();
  CHECK(edgeSet(recorded) == referenceEdges(g));
  // A copy of a tracker carries on where the original is.
  HazardTracker t;
  for (uint32_t n = 0; n < 50; ++n) t.add(g, n);
  HazardTracker copy = t;
  for (uint32_t n = 50; n < g.nodes.size(); ++n) CHECK(copy.add(g, n) == t.add(g, n));
}

TEST_CASE("an access of no bytes conflicts with nothing", "[graph][hazards]") {
  GraphBuilder b;
  b.addSlot(slot("a", 256));
  b.addSlot(slot("b", 256));
  b.addFill("f", fillOp(0, 0, 256, {0}));
  b.addCopy("empty", copyOp(0, 64, 1, 64, 0)); // inside f's range, but no bytes
  b.addFill("g", fillOp(1, 0, 256, {0}));
  CHECK(trackerEdges(b.graph()) == EdgeSet{});
}

// One producer and many nodes that read its slot and write disjoint parts of another,
// then one node that overwrites the first slot: each reader depends on the producer
// alone and the last node on every reader. (The tracker used to scan every earlier
// write of the second slot for each reader.)
TEST_CASE("a wide fan-out keeps its exact edges", "[graph][hazards]") {
  const uint32_t readers = 100000;
  GraphBuilder b;
  b.addSlot(slot("x", 64));
  b.addSlot(slot("y", uint64_t(readers) * 16));
  b.addFill("produce", fillOp(0, 0, 64, {1}));
  for (uint32_t i = 0; i < readers; ++i)
    b.addCopy("c" + std::to_string(i), copyOp(0, 0, 1, uint64_t(i) * 16, 16));
  b.addFill("overwrite", fillOp(0, 0, 64, {2}));
  std::vector<Edge> edges = inferHazardEdges(b.graph());
  REQUIRE(edges.size() == 2 * size_t(readers));
  for (uint32_t i = 0; i < readers; ++i) {
    CHECK((edges[i].from == 0 && edges[i].to == i + 1));
    CHECK((edges[readers + i].from == i + 1 && edges[readers + i].to == readers + 1));
  }
}

// A chain through one slot whose nodes all also read a slot written once at the start:
// the first write reaches every node through the chain, so only the chain's edges remain
// (the reads of the shared slot collapse along the chain).
TEST_CASE("a chain that reads a shared slot has only the chain's edges", "[graph][hazards]") {
  const uint32_t length = 50000;
  GraphBuilder b;
  b.addSlot(slot("shared", 64));
  b.addSlot(slot("acc", 64));
  b.addModule(KernelModule{"m.cl", {}});
  Kernel k;
  k.name = "step";
  k.module = 0;
  k.params = {bufferParam("in", true), bufferParam("acc")};
  b.addKernel(k);
  b.addFill("init", fillOp(0, 0, 64, {1}));
  for (uint32_t i = 0; i < length; ++i)
    b.addKernelNode("k" + std::to_string(i), 0, range1D(16), {Arg::slot(0), Arg::slot(1)});
  b.addFill("reset", fillOp(0, 0, 64, {0})); // WAR on every reader: the last suffices
  std::vector<Edge> edges = inferHazardEdges(b.graph());
  REQUIRE(edges.size() == size_t(length) + 1);
  for (uint32_t i = 0; i <= length; ++i) CHECK((edges[i].from == i && edges[i].to == i + 1));
}
