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

// Splits the nodes into partitions, one command buffer each. Host tasks (and subgraph
// nodes whose child contains a host task) get a partition of their own; the other nodes
// are grouped by how many host tasks precede them on the longest path: the
// predecessors of a host task in one partition, the host task in the next, its
// successors after it (SYCL design). Partitions are numbered so that deps always point
// to lower indices; nodes inside a partition follow `order`; deps are the partitions
// of the nodes' predecessors (sorted, no self). `order` must be a topological order.
std::vector<Partition> computePartitions(const Graph &graph, const std::vector<uint32_t> &order);

// What cgc calls before writing a file: accumulateSlotRequirements, then order and
// partitions for the graph and, recursively, its subgraphs.
cgraph::Error finalizeForFile(Graph &graph, OrderKind kind = OrderKind::DepthFirst);

} // namespace cgraph
