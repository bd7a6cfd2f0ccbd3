// Collective nodes in lib/graph: builder, validation messages, hazard edges, their own
// partition and the memory planner leaving their slots alone.
#include "test_helpers.h"

#include <cgraph/graph/hazards.h>
#include <cgraph/graph/memory_plan.h>
#include <cgraph/graph/order.h>
#include <cgraph/graph/validate.h>

#include <catch2/catch.hpp>

#include <algorithm>

using namespace cgraph;
using namespace cgraph::test;

namespace {

CollectiveOp coll(CollKind kind, uint32_t send, uint64_t sendOff, uint32_t recv, uint64_t recvOff, uint64_t count) {
  CollectiveOp c;
  c.kind = kind;
  c.sendSlot = send;
  c.sendOffset = sendOff;
  c.recvSlot = recv;
  c.recvOffset = recvOff;
  c.count = count;
  return c;
}

std::vector<std::string> collectiveErrors(const Graph &g) {
  std::vector<std::string> m;
  for (const Diagnostic &d : validateGraph(g))
    if (d.severity == Diagnostic::Error) m.push_back(d.message);
  return m;
}

// Slots: 0 'g' (256 bytes), 1 't' (transient, 256), 2 'out' (1024).
GraphBuilder collectiveBase() {
  GraphBuilder b("coll");
  b.addSlot(slot("g", 256));
  b.addSlot(slot("t", 256, SlotInit::Transient));
  b.addSlot(slot("out", 1024));
  return b;
}

} // namespace

TEST_CASE("collective nodes: builder and a valid graph", "[graph][collective]") {
  GraphBuilder b = collectiveBase();
  uint32_t ar = b.addCollective("sum", coll(CollKind::AllReduce, 0, 0, 0, 0, 64));
  CollectiveOp tx = coll(CollKind::Send, 0, 0, kNone, 0, 16);
  tx.peer = 1;
  uint32_t s = b.addCollective("tx", tx);
  Graph g = b.take();
  CHECK(g.nodes[ar].kind == NodeKind::Collective);
  CHECK(g.nodes[s].coll.peer == 1);
  CHECK(collectiveErrors(g).empty());
}

TEST_CASE("collective nodes: validation names the node and field", "[graph][collective]") {
  auto one = [](CollectiveOp op) {
    GraphBuilder b = collectiveBase();
    b.addCollective("c", op);
    std::vector<std::string> e = collectiveErrors(b.take());
    return e.empty() ? std::string("<valid>") : e[0];
  };
  CHECK(one(coll(CollKind::AllReduce, 0, 16, 0, 16, 64)) ==
        "node 'c': all_reduce send side reads bytes [16, 272) of slot 'g' which has 256 bytes");
  CHECK(one(coll(CollKind::AllReduce, 0, 0, 0, 4, 8)) ==
        "node 'c': all_reduce send and receive sides overlap in slot 'g' (in place needs the same offset)");
  CHECK(one(coll(CollKind::AllGather, 2, 0, 2, 0, 8)) ==
        "node 'c': all_gather send and receive sides overlap in slot 'out'");
  CHECK(one(coll(CollKind::AllGather, 2, 0, 2, 32, 8)) == "<valid>");
  CHECK(one(coll(CollKind::Recv, 0, 0, 9, 0, 8)) == "node 'c': recv receive side refers to slot 9 but the graph has 3 slots");
  CHECK(one(coll(CollKind::Recv, 0, 0, 2, 0, 8)) == "node 'c': recv has no send side");
  CollectiveOp bad = coll(CollKind::AllGather, 0, 0, 2, 0, 8);
  bad.op = ReduceOp::Prod;
  CHECK(one(bad) == "node 'c': all_gather has no reduction (found prod)");
  bad = coll(CollKind::AllReduce, 0, 0, 2, 0, 8);
  bad.peer = 2;
  CHECK(one(bad) == "node 'c': all_reduce has no peer or root (found 2)");
  bad.peer = 0;
  bad.kind = CollKind(17);
  CHECK(one(bad) == "node 'c': unknown collective kind 17");
  bad = coll(CollKind::AllReduce, 0, 0, 2, 0, uint64_t(1) << 62);
  CHECK(one(bad) == "node 'c': all_reduce count 4611686018427387904 * 4 bytes overflows 64 bits");
}

TEST_CASE("collective nodes: hazards, own partitions, never planned", "[graph][collective]") {
  GraphBuilder b = collectiveBase();
  FillOp f;
  f.slot = 1;
  f.bytes = 256;
  f.pattern = {0, 0, 0, 0};
  b.addFill("zero", f);                                                      // 0 writes t
  b.addCollective("sum", coll(CollKind::AllReduce, 1, 0, 1, 0, 64));         // 1 reads + writes t
  b.addCollective("gather", coll(CollKind::AllGather, 1, 0, 2, 0, 64));      // 2 reads t, writes out
  b.addCollective("peer", coll(CollKind::Broadcast, 0, 0, 0, 0, 64));        // 3: g only
  Graph g = b.take();
  std::vector<Edge> edges = inferHazardEdges(g);
  auto hasEdge = [&](uint32_t from, uint32_t to) {
    return std::any_of(edges.begin(), edges.end(), [&](const Edge &e) { return e.from == from && e.to == to; });
  };
  CHECK(hasEdge(0, 1));
  CHECK(hasEdge(1, 2));
  CHECK_FALSE(hasEdge(2, 3));
  CHECK_FALSE(hasEdge(1, 3));
  AccessInfo acc = nodeAccesses(g, 2);
  REQUIRE(acc.accesses.size() == 2);
  CHECK(acc.accesses[0].read);
  CHECK(acc.accesses[0].size == 256);
  CHECK(acc.accesses[1].write);
  CHECK(acc.accesses[1].size == kUnknownSize); // count * world
  g.edges = edges;
  auto order = executionOrder(g);
  REQUIRE(order.ok());
  std::vector<Partition> parts = computePartitions(g, *order);
  for (const Partition &p : parts)
    for (uint32_t n : p.nodes)
      if (g.nodes[n].kind == NodeKind::Collective) CHECK(p.nodes.size() == 1);
  g.order = *order;
  g.partitions = parts;
  CHECK_FALSE(checkPartitions(g));
  // The transient slot a collective touches is not planned.
  MemoryPlan plan = planMemory(g, {256, 256, 1024});
  CHECK_FALSE(plan.isPlanned(1));
}
