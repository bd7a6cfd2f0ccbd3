#include "test_helpers.h"

#include <cgraph/graph/order.h>

#include <catch2/catch.hpp>

using namespace cgraph;
using namespace cgraph::test;

namespace {

// Barrier nodes named n0..n(count-1) with the given edges.
Graph dag(uint32_t count, std::vector<std::pair<uint32_t, uint32_t>> edges) {
  GraphBuilder b("dag");
  for (uint32_t i = 0; i < count; ++i) b.addBarrier("n" + std::to_string(i));
  for (auto [f, t] : edges) b.addEdge(f, t);
  return b.take();
}

std::vector<uint32_t> order(const Graph &g, OrderKind k) {
  auto o = executionOrder(g, k);
  REQUIRE(o.ok());
  return *o;
}

} // namespace

TEST_CASE("depth-first order is reverse post-order from the lowest root", "[graph][order]") {
  SECTION("diamond") {
    Graph g = dag(4, {{0, 1}, {0, 2}, {1, 3}, {2, 3}});
    CHECK(order(g, OrderKind::DepthFirst) == std::vector<uint32_t>{0, 1, 2, 3});
    CHECK(order(g, OrderKind::BreadthFirst) == std::vector<uint32_t>{0, 1, 2, 3});
  }
  SECTION("two chains stay together depth-first, interleave breadth-first") {
    Graph g = dag(6, {{0, 2}, {2, 4}, {1, 3}, {3, 5}});
    CHECK(order(g, OrderKind::DepthFirst) == std::vector<uint32_t>{0, 2, 4, 1, 3, 5});
    CHECK(order(g, OrderKind::BreadthFirst) == std::vector<uint32_t>{0, 1, 2, 3, 4, 5});
  }
  SECTION("uneven branches: BFS levels follow the longest path") {
    // 0 -> 1 -> 2 -> 5, 0 -> 3 -> 5, 4 -> 5, 4 -> 6
    Graph g = dag(7, {{0, 1}, {1, 2}, {2, 5}, {0, 3}, {3, 5}, {4, 5}, {4, 6}});
    CHECK(order(g, OrderKind::DepthFirst) == std::vector<uint32_t>{0, 1, 2, 3, 4, 5, 6});
    CHECK(order(g, OrderKind::BreadthFirst) == std::vector<uint32_t>{0, 4, 1, 3, 6, 2, 5});
  }
  SECTION("edges against index order") {
    Graph g = dag(5, {{4, 0}, {3, 1}, {0, 2}, {1, 2}});
    CHECK(order(g, OrderKind::DepthFirst) == std::vector<uint32_t>{3, 1, 4, 0, 2});
    CHECK(order(g, OrderKind::BreadthFirst) == std::vector<uint32_t>{3, 4, 0, 1, 2});
  }
  SECTION("no edges: index order") {
    Graph g = dag(3, {});
    CHECK(order(g, OrderKind::DepthFirst) == std::vector<uint32_t>{0, 1, 2});
    CHECK(order(g, OrderKind::BreadthFirst) == std::vector<uint32_t>{0, 1, 2});
  }
  SECTION("empty graph") {
    Graph g;
    CHECK(order(g, OrderKind::DepthFirst).empty());
    CHECK(order(g, OrderKind::BreadthFirst).empty());
  }
}

TEST_CASE("order is deterministic and independent of edge insertion order", "[graph][order]") {
  Graph a = dag(6, {{0, 3}, {0, 1}, {1, 4}, {2, 4}, {3, 5}, {4, 5}, {0, 1}});
  Graph b = dag(6, {{4, 5}, {3, 5}, {2, 4}, {1, 4}, {0, 1}, {0, 3}});
  for (OrderKind k : {OrderKind::DepthFirst, OrderKind::BreadthFirst}) {
    std::vector<uint32_t> first = order(a, k);
    for (int i = 0; i < 5; ++i) CHECK(order(a, k) == first);
    CHECK(order(b, k) == first);
  }
  CHECK(order(a, OrderKind::DepthFirst) == std::vector<uint32_t>{0, 1, 3, 2, 4, 5});
  CHECK(order(a, OrderKind::BreadthFirst) == std::vector<uint32_t>{0, 2, 1, 3, 4, 5});
}

TEST_CASE("long chains do not overflow the stack", "[graph][order]") {
  GraphBuilder b;
  const uint32_t n = 200000;
  for (uint32_t i = 0; i < n; ++i) b.addBarrier("");
  for (uint32_t i = 0; i + 1 < n; ++i) b.graph().edges.push_back(Edge{i, i + 1});
  auto o = executionOrder(b.graph(), OrderKind::DepthFirst);
  REQUIRE(o.ok());
  REQUIRE(o->size() == n);
  CHECK((*o)[0] == 0);
  CHECK((*o)[n - 1] == n - 1);
}

TEST_CASE("order reports cycles and bad edges", "[graph][order]") {
  Graph g = dag(4, {{0, 1}, {1, 2}, {2, 1}, {2, 3}});
  auto o = executionOrder(g);
  REQUIRE_FALSE(o.ok());
  CHECK(o.error().message() == "graph has a cycle through node 'n1': 'n1' -> 'n2' -> 'n1'");
  Graph self = dag(2, {{1, 1}});
  auto s = executionOrder(self, OrderKind::BreadthFirst);
  REQUIRE_FALSE(s.ok());
  CHECK(s.error().message() == "graph has a cycle through node 'n1': 'n1' -> 'n1'");
  Graph bad = dag(2, {{0, 5}});
  auto b = executionOrder(bad);
  REQUIRE_FALSE(b.ok());
  CHECK(b.error().message() == "edge 0 (0 -> 5) points past the node table (2 nodes)");
}

namespace {
Graph withHosts(uint32_t count, std::vector<uint32_t> hosts,
                std::vector<std::pair<uint32_t, uint32_t>> edges) {
  Graph g = dag(count, std::move(edges));
  for (uint32_t h : hosts) {
    g.nodes[h].kind = NodeKind::Host;
    g.nodes[h].host.op = "print";
  }
  return g;
}
} // namespace

TEST_CASE("partitions split around host tasks", "[graph][order]") {
  SECTION("no host task: one partition") {
    Graph g = dag(3, {{0, 1}, {1, 2}});
    auto p = computePartitions(g, order(g, OrderKind::DepthFirst));
    REQUIRE(p.size() == 1);
    CHECK(p[0].nodes == std::vector<uint32_t>{0, 1, 2});
    CHECK(p[0].deps.empty());
  }
  SECTION("predecessors, host task, successors") {
    // 0 -> 1 -> H2 -> 3 -> 4, and 5 independent
    Graph g = withHosts(6, {2}, {{0, 1}, {1, 2}, {2, 3}, {3, 4}});
    auto p = computePartitions(g, order(g, OrderKind::DepthFirst));
    REQUIRE(p.size() == 3);
    CHECK(p[0].nodes == std::vector<uint32_t>{0, 1, 5});
    CHECK(p[0].deps.empty());
    CHECK(p[1].nodes == std::vector<uint32_t>{2});
    CHECK(p[1].deps == std::vector<uint32_t>{0});
    CHECK(p[2].nodes == std::vector<uint32_t>{3, 4});
    CHECK(p[2].deps == std::vector<uint32_t>{1});
  }
  SECTION("two roots with a host task each") {
    // a0 -> HA1 -> a2 ; b3 -> HB4 -> b5 ; a2 -> b5
    Graph g = withHosts(6, {1, 4}, {{0, 1}, {1, 2}, {3, 4}, {4, 5}, {2, 5}});
    auto p = computePartitions(g, order(g, OrderKind::BreadthFirst));
    REQUIRE(p.size() == 4);
    CHECK(p[0].nodes == std::vector<uint32_t>{0, 3});
    CHECK(p[1].nodes == std::vector<uint32_t>{1});
    CHECK(p[1].deps == std::vector<uint32_t>{0});
    CHECK(p[2].nodes == std::vector<uint32_t>{4});
    CHECK(p[2].deps == std::vector<uint32_t>{0});
    CHECK(p[3].nodes == std::vector<uint32_t>{2, 5});
    CHECK(p[3].deps == std::vector<uint32_t>{1, 2});
  }
  SECTION("host tasks in a row and an edge from a device node to a later host task") {
    // 0 -> H1 -> H2 -> 3 ; 0 -> 4 -> H2
    Graph g = withHosts(5, {1, 2}, {{0, 1}, {1, 2}, {2, 3}, {0, 4}, {4, 2}});
    CHECK(order(g, OrderKind::DepthFirst) == std::vector<uint32_t>{0, 1, 4, 2, 3});
    auto p = computePartitions(g, order(g, OrderKind::DepthFirst));
    REQUIRE(p.size() == 4);
    CHECK(p[0].nodes == std::vector<uint32_t>{0, 4});
    CHECK(p[0].deps.empty());
    CHECK(p[1].nodes == std::vector<uint32_t>{1});
    CHECK(p[1].deps == std::vector<uint32_t>{0});
    CHECK(p[2].nodes == std::vector<uint32_t>{2});
    CHECK(p[2].deps == std::vector<uint32_t>{0, 1});
    CHECK(p[3].nodes == std::vector<uint32_t>{3});
    CHECK(p[3].deps == std::vector<uint32_t>{2});
  }
  SECTION("a subgraph holding a host task gets its own partition") {
    GraphBuilder b;
    b.addBarrier("a");
    GraphBuilder child;
    child.addHost("h", HostOp{"print", ""}, {});
    b.addSubgraph("s", child.take(), {});
    b.addBarrier("c");
    b.addEdge(0, 1);
    b.addEdge(1, 2);
    Graph g = b.take();
    auto p = computePartitions(g, order(g, OrderKind::DepthFirst));
    REQUIRE(p.size() == 3);
    CHECK(p[1].nodes == std::vector<uint32_t>{1});
  }
}

TEST_CASE("partitions follow the seed's shapes", "[graph][order][partitions]") {
  auto partOf = [](const std::vector<Partition> &parts, uint32_t node) {
    for (uint32_t p = 0; p < parts.size(); ++p)
      for (uint32_t x : parts[p].nodes)
        if (x == node) return p;
    return kNone;
  };
  SECTION("a backward make_edge moves a node after the host task and merges it") {
    // 0 -> H1 -> 2 and an independent chain 3 -> 4; then make_edge(H1, 4): node 4 must
    // now run after the host task, in the successors' partition.
    Graph g = withHosts(5, {1}, {{0, 1}, {1, 2}, {3, 4}});
    auto before = computePartitions(g, order(g, OrderKind::DepthFirst));
    REQUIRE(before.size() == 3);
    CHECK(partOf(before, 4) == partOf(before, 0));
    g.edges.push_back(Edge{1, 4});
    g.partitions = computePartitions(g, order(g, OrderKind::DepthFirst));
    const auto &p = g.partitions;
    REQUIRE(p.size() == 3);
    CHECK(partOf(p, 0) == partOf(p, 3));
    CHECK(partOf(p, 1) > partOf(p, 3));
    CHECK(partOf(p, 4) == partOf(p, 2));
    CHECK(partOf(p, 4) > partOf(p, 1));
    CHECK(p[partOf(p, 4)].deps == std::vector<uint32_t>{partOf(p, 3), partOf(p, 1)}); // sorted: 0, 1
    CHECK_FALSE(checkPartitions(g).failed());
  }
  SECTION("two roots with a host task each: each branch waits only for its own") {
    // a0 -> HA1 -> a2 ; b3 -> HB4 -> b5
    Graph g = withHosts(6, {1, 4}, {{0, 1}, {1, 2}, {3, 4}, {4, 5}});
    g.partitions = computePartitions(g, order(g, OrderKind::DepthFirst));
    const auto &p = g.partitions;
    REQUIRE(p.size() == 5);
    CHECK(partOf(p, 0) == partOf(p, 3)); // roots: nothing to wait for, one partition
    CHECK(partOf(p, 2) != partOf(p, 5));
    CHECK(p[partOf(p, 2)].deps == std::vector<uint32_t>{partOf(p, 1)});
    CHECK(p[partOf(p, 5)].deps == std::vector<uint32_t>{partOf(p, 4)});
    CHECK_FALSE(checkPartitions(g).failed());
  }
  SECTION("many independent device nodes and no host task: one partition") {
    Graph g = dag(50, {});
    auto p = computePartitions(g, order(g, OrderKind::DepthFirst));
    REQUIRE(p.size() == 1);
    CHECK(p[0].nodes.size() == 50);
  }
}

TEST_CASE("checkPartitions refuses plans a backend cannot execute", "[graph][order][partitions]") {
  Graph g = withHosts(4, {1}, {{0, 1}, {1, 2}, {2, 3}});
  REQUIRE_FALSE(finalizeForFile(g).failed());
  REQUIRE(g.partitions.size() == 3);
  CHECK_FALSE(checkPartitions(g).failed());
  SECTION("a node in no partition") {
    g.partitions[2].nodes.pop_back();
    CHECK(checkPartitions(g).message() == "node 'n3' is in no partition");
  }
  SECTION("a node twice") {
    g.partitions[2].nodes.push_back(0);
    CHECK(checkPartitions(g).message() == "partitions[2]: node 'n0' is already in partitions[0]");
  }
  SECTION("a host task sharing its partition") {
    g.partitions[1].nodes.push_back(3);
    g.partitions[2].nodes = {2};
    CHECK(checkPartitions(g).message() == "partitions[1]: host task node 'n1' shares its partition with 1 other nodes");
  }
  SECTION("a missing dep") {
    g.partitions[2].deps.clear();
    CHECK(checkPartitions(g).message() ==
          "partitions[2]: node 'n2' depends on node 'n1' in partitions[1], which is not among its deps");
  }
  SECTION("nodes out of order inside a partition") {
    g.partitions[2].nodes = {3, 2};
    CHECK(checkPartitions(g).message() == "partitions[2]: node 'n3' comes before its predecessor node 'n2'");
  }
  SECTION("a dep on a later partition") {
    g.partitions[0].deps = {2};
    CHECK(checkPartitions(g).message() == "partitions[0]: dep 2 is not an earlier partition");
  }
}

TEST_CASE("finalizeForFile sets usage, order and partitions recursively", "[graph][order]") {
  GraphBuilder b;
  b.addSlot(slot("a", 64));
  b.addFill("f", fillOp(0, 0, 64, {1}));
  b.addHost("p", HostOp{"print", ""}, {Arg::slot(0)});
  GraphBuilder child;
  child.addBarrier("x");
  child.addBarrier("y");
  child.addEdge(1, 0);
  b.addSubgraph("s", child.take(), {});
  b.addEdge(0, 1);
  b.addEdge(1, 2);
  Graph g = b.take();
  REQUIRE_FALSE(finalizeForFile(g, OrderKind::DepthFirst).failed());
  CHECK(g.slots[0].usage == (kUsageTransfer | kUsageRead));
  CHECK(g.order == std::vector<uint32_t>{0, 1, 2});
  REQUIRE(g.partitions.size() == 3);
  CHECK(g.partitions[2].deps == std::vector<uint32_t>{1});
  CHECK(g.subgraphs[0].order == std::vector<uint32_t>{1, 0});
  CHECK(g.subgraphs[0].partitions.size() == 1);

  g.subgraphs[0].edges.push_back(Edge{0, 1});
  Error e = finalizeForFile(g);
  REQUIRE(e.failed());
  CHECK(e.message() == "subgraphs[0]: graph has a cycle through node 'x': 'x' -> 'y' -> 'x'");
}
