// Subgraph inlining and the execution plan (runtimes call it at finalize).
//
// Returns a copy of the graph where every Subgraph node is replaced, recursively, by its
// child's nodes: child slots map to the parent slots named by the node's binding, child
// params bind by name to parent params, child kernels and modules are appended. Entry/
// exit edges: every child root depends on the subgraph node's predecessors, and the
// node's successors depend on every child leaf. An empty child becomes a Barrier node.
// Inlined nodes are named `<subgraph node>/<child node>`. The result's order is the
// parent's stored order (or, if it has none, its depth-first order) with each subgraph
// node replaced by its child's order, so `cgc --order` survives flattening; its
// partitions are the stored ones when no subgraph was inlined and they pass
// checkPartitions (order.h), else computed from that order. This is the graph backends
// execute. Graph::subgraphs of the result holds only the bodies of Conditional nodes
// (unflattened; each node's `subgraph` indexes it, its `subgraphSlots` and `cond.slot`
// are remapped); it is empty for a graph without conditionals.
// Thread-safety: pure. Failure modes: a binding with the wrong count or an out-of-range
// slot, a child param without a parent param of the same name, nesting deeper than 64,
// a cycle.
#pragma once

#include <cgraph/error.h>
#include <cgraph/model.h>

namespace cgraph {

Expected<Graph> flattenSubgraphs(const Graph &graph);
// The same, consuming `graph`: a graph without Subgraph nodes is moved into the result
// (nothing is copied but the conditional bodies in use); on error `graph` may have been
// changed (its edges deduplicated, conditional bodies renumbered).
Expected<Graph> flattenSubgraphs(Graph &&graph);

} // namespace cgraph
