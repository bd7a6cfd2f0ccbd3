// Execution order and partitioning of a Graph (SYCL graph design, finalize stage).
//
// Pure functions; deterministic for a given graph. Thread-safety: safe on graphs nobody
// mutates. Failure modes: executionOrder/finalizeForFile fail on a cycle (the message
// names a node on it and the cycle path) or an edge pointing past the node table.
//
// DepthFirst: reverse post-order of an iterative depth-first search that starts from the
// roots (nodes without predecessors) and visits roots and successors in descending node
// index, so the subgraph reachable from the lowest root comes first and chains stay
// together (SYCL's default "reversed depth-first" linearization).
// BreadthFirst: Kahn's algorithm by levels (level = longest path from a root); within a
// level, ascending node index.
#pragma once

#include <cgraph/error.h>
#include <cgraph/model.h>

#include <vector>

namespace cgraph {

enum class OrderKind { DepthFirst, BreadthFirst };

Expected<std::vector<uint32_t>> executionOrder(const Graph &graph,
                                               OrderKind kind = OrderKind::DepthFirst);

// Splits the nodes into partitions, one command buffer each (the SYCL graph design's
// two stages). Stage 1 annotates each node with a group: the largest over its
// predecessors of their group, plus one past a host task; so a host task's
// predecessors share a group, the host task follows, its successors are in the next
// group, and a backward make_edge (an early node made a successor of a later host task)
// moves that node into the later group, merging with what is there. Stage 2 makes one
// partition per host task (and per subgraph node whose child contains one) and one per
// set of device nodes of a group that are joined by edges or wait for the same nearest
// host tasks, so independent branches (multiple roots) wait only for their own host
// tasks while a graph without host tasks stays one partition. Partitions are numbered so that
// deps always point to lower indices; nodes inside a partition follow `order`; deps are
// the partitions of the nodes' direct predecessors (sorted, no self). `order` must be a
// topological order.
std::vector<Partition> computePartitions(const Graph &graph, const std::vector<uint32_t> &order);

// True when `order` lists every node once and every edge goes forward in it.
bool isTopologicalOrder(const Graph &graph, const std::vector<uint32_t> &order);

// Checks graph.partitions as a plan a backend can execute: every node in exactly one
// partition, a host task alone in its own, deps only on earlier partitions, and every
// edge either forward inside one partition or from a partition listed in the
// successor's deps. Errors name the partition and the nodes. Files are untrusted: the
// runtimes call it (through flattenSubgraphs) before executing stored partitions.
cgraph::Error checkPartitions(const Graph &graph);

// What cgc calls before writing a file: accumulateSlotRequirements, then order and
// partitions for the graph and, recursively, its subgraphs.
cgraph::Error finalizeForFile(Graph &graph, OrderKind kind = OrderKind::DepthFirst);

} // namespace cgraph
