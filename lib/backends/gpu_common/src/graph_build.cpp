// The GPU executable's driver graphs (graph_executable.h): one per partition, its
// nodes, the backend's table loader and completion nodes, child graphs for subgraphs, and the
// rebuilds when a child graph must be flattened or a direct transfer's slot moved.
#include "cgraph/backends/gpu_common/graph_executable.h"

#include "cgraph/backends/gpu_common/launch_plan.h"

#include <algorithm>
#include <chrono>

namespace cgraph::gpu {

Expected<GraphNodeHandle> GraphExecutable::addGraphNode(GraphHandle g, uint32_t p,
                                                        const std::vector<GraphNodeHandle> &deps, uint32_t part) {
  const Node &node = nodeAt(p);
  NodePlan &plan = plans_[p];
  if (plan.kind == NodePlan::Extension) return addExtensionNode(g, p, deps, part);
  GraphNodeHandle gn = nullptr;
  Copy3D c3;
  Memset ms;
  const bool copy = node.kind == NodeKind::Copy || node.kind == NodeKind::CopyRect;
  bool isKernel = false, enableable = true;
  Error e;
  if (plan.exprTransfer) {
    e = addKernelGraphNode(&gn, g, p, deps, plan.launch);
    isKernel = true;
  } else if (copy && copy3DFor(node, ownedBase(node.copy.srcSlot), ownedBase(node.copy.dstSlot), c3) &&
             directTransfer({node.copy.srcSlot, node.copy.dstSlot})) {
    e = driver_->addMemcpyNode(&gn, g, deps, c3);
  } else if (node.kind == NodeKind::Fill && memsetFor(node.fill, ownedBase(node.fill.slot), ms) &&
             directTransfer({node.fill.slot})) {
    e = driver_->addMemsetNode(&gn, g, deps, ms, node.fill.bytes);
  } else if (plan.kind == NodePlan::Kernel) {
    e = addKernelGraphNode(&gn, g, p, deps, plan.launch);
    isKernel = true;
  } else {
    e = driver_->addEmptyNode(&gn, g, deps);
    enableable = false;
  }
  if (e) return std::move(e).withContext(planLabel(p));
  if (part != kNone && p < graph_.nodes.size()) {
    if (isKernel) parts_[part].kernelNodes.push_back({p, gn});
    graphNodes_[p] = GraphNodeRef{part, gn, isKernel, enableable};
  }
  return gn;
}

Expected<std::shared_ptr<void>> GraphExecutable::sharedPinned(size_t bytes) {
  void *p = nullptr;
  CGRAPH_RETURN_IF_ERROR(driver_->hostAlloc(&p, bytes));
  return std::shared_ptr<void>(p, [d = driver_](void *q) {
    (void)d->makeCurrent();
    d->hostFree(q);
  });
}

Error GraphExecutable::buildGraphs() {
  graphNodes_.assign(graph_.nodes.size(), GraphNodeRef{});
  buildUs_ = instantiateUs_ = 0;
  for (uint32_t pi = 0; pi < parts_.size(); ++pi)
    CGRAPH_RETURN_IF_ERROR(buildPartition(pi));
  phases_.push_back({"graph nodes added", buildUs_});
  phases_.push_back({"graphs instantiated and uploaded", instantiateUs_});
  return Error::success();
}

// One driver graph for the partition: its nodes in order with the graph's edges inside
// it as dependencies; a child graph group at the place of its first member (its
// external dependencies are all added by then: ChildGroup), standing in for each of its
// members as a dependency of later nodes.
Error GraphExecutable::buildPartition(uint32_t pi) {
  PartGraph &pg = parts_[pi];
  if (pg.host || pg.nodes.empty()) return Error::success();
  const auto t0 = std::chrono::steady_clock::now();
  partitionBuildStarting(pi);
  CGRAPH_RETURN_IF_ERROR(driver_->graphCreate(&pg.graph));
  GraphNodeHandle loader = nullptr;
  if (pi == 0) {
    auto l = addTableLoaderNode(pg.graph);
    if (!l) return l.error();
    loader = *l;
  }
  // The last partition with nodes may end with the backend's completion node.
  uint32_t lastPart = kNone;
  for (uint32_t k = 0; k < parts_.size(); ++k)
    if (!parts_[k].nodes.empty()) lastPart = k;
  std::vector<char> fed(graph_.nodes.size(), 0); // nodes whose handle has a successor here
  bool loaderFed = false;
  std::vector<GraphNodeHandle> gnode(graph_.nodes.size(), nullptr);
  auto depsOf = [&](uint32_t n, uint32_t group, std::vector<GraphNodeHandle> &deps) {
    for (uint32_t p : preds_[n])
      if (gnode[p] && (group == kNone || groupOf_[p] != group)) {
        fed[p] = 1;
        if (std::find(deps.begin(), deps.end(), gnode[p]) == deps.end()) deps.push_back(gnode[p]);
      }
  };
  std::vector<GraphNodeHandle> deps; // reused: no allocation per node
  for (uint32_t n : pg.nodes) {
    if (gnode[n]) continue; // a member of a child graph added before
    const uint32_t gi = groupOf_[n];
    deps.clear();
    if (gi == kNone || groups_[gi].flatten) {
      depsOf(n, kNone, deps);
      if (deps.empty() && loader) { // a root: after the table load
        deps.push_back(loader);
        loaderFed = true;
      }
      auto gn = addGraphNode(pg.graph, n, deps, pi);
      if (!gn) return gn.error();
      gnode[n] = *gn;
      continue;
    }
    // The child graph: members in the partition's order, edges among them inside.
    const ChildGroup &cg = groups_[gi];
    GraphHandle child = nullptr;
    CGRAPH_RETURN_IF_ERROR(driver_->graphCreate(&child));
    std::vector<GraphNodeHandle> inner(graph_.nodes.size(), nullptr);
    Error e;
    for (uint32_t m : pg.nodes) {
      if (groupOf_[m] != gi) continue;
      depsOf(m, kNone, deps);
      std::vector<GraphNodeHandle> d;
      for (uint32_t p : preds_[m])
        if (groupOf_[p] == gi && inner[p] && std::find(d.begin(), d.end(), inner[p]) == d.end())
          d.push_back(inner[p]);
      auto gn = addGraphNode(child, m, d, kNone);
      if (!gn) {
        e = gn.error();
        break;
      }
      inner[m] = *gn;
    }
    GraphNodeHandle cn = nullptr;
    if (!e) {
      // deps gathered every member's external predecessors (nodes already added).
      std::vector<GraphNodeHandle> external;
      for (GraphNodeHandle h : deps)
        if (std::find(external.begin(), external.end(), h) == external.end()) external.push_back(h);
      if (external.empty() && loader) {
        external.push_back(loader);
        loaderFed = true;
      }
      e = driver_->addChildGraphNode(&cn, pg.graph, external, child);
      if (e) e = e.withContext(planLabel(cg.nodes.front()) + " (child graph of its subgraph)");
    }
    driver_->graphDestroy(child); // the node holds a copy
    if (e) return e;
    for (uint32_t m : cg.nodes) gnode[m] = cn;
  }
  if (pi == lastPart && hasCompletionNode()) {
    // Handles none of whose nodes feed another (a child graph's handle stands for all
    // its members).
    std::vector<GraphNodeHandle> fedHandles, sinks;
    for (uint32_t n : pg.nodes)
      if (gnode[n] && fed[n]) fedHandles.push_back(gnode[n]);
    std::sort(fedHandles.begin(), fedHandles.end());
    for (uint32_t n : pg.nodes)
      if (gnode[n] && !std::binary_search(fedHandles.begin(), fedHandles.end(), gnode[n])) sinks.push_back(gnode[n]);
    std::sort(sinks.begin(), sinks.end());
    sinks.erase(std::unique(sinks.begin(), sinks.end()), sinks.end());
    if (loader && !loaderFed) sinks.push_back(loader);
    CGRAPH_RETURN_IF_ERROR(addCompletionNode(pg.graph, sinks));
  }
  const auto t1 = std::chrono::steady_clock::now();
  CGRAPH_RETURN_IF_ERROR(driver_->instantiate(&pg.exec, pg.graph));
  ++driver_->counters().graphsInstantiated;
  buildUs_ += std::chrono::duration<double, std::micro>(t1 - t0).count();
  instantiateUs_ += std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t1).count();
  return Error::success();
}

Error GraphExecutable::flattenGroupOf(uint32_t n, uint32_t *rebuilt) {
  *rebuilt = kNone;
  if (n >= groupOf_.size() || groupOf_[n] == kNone || groups_[groupOf_[n]].flatten) return Error::success();
  ChildGroup &cg = groups_[groupOf_[n]];
  cg.flatten = true;
  if (!parts_[cg.part].graph) return Error::success(); // eager: no graphs
  *rebuilt = cg.part;
  return rebuildPartition(cg.part);
}

Error GraphExecutable::rebuildPartition(uint32_t pi) {
  PartGraph &pg = parts_[pi];
  CGRAPH_RETURN_IF_ERROR(driver_->streamSynchronize());
  if (pg.exec) driver_->execDestroy(pg.exec);
  if (pg.graph) driver_->graphDestroy(pg.graph);
  pg.exec = nullptr;
  pg.graph = nullptr;
  pg.kernelNodes.clear();
  for (uint32_t m : pg.nodes)
    graphNodes_[m] = GraphNodeRef{};
  return buildPartition(pi);
}

bool GraphExecutable::directTransfer(std::initializer_list<uint32_t> slots) {
  if (!directTransfers_) return false;
  for (uint32_t s : slots)
    if (!slotOwned(s)) return false;
  for (uint32_t s : slots) directSlots_[s] = 1;
  return true;
}

Error GraphExecutable::checkDirectTransfers() {
  if (!directTransfers_) return Error::success();
  bool moved = false;
  for (uint32_t s = 0; s < nSlots_ && !moved; ++s)
    moved = directSlots_[s] && table_[s] != ownedAddress_[s];
  if (!moved) return Error::success();
  directTransfers_ = false;
  CGRAPH_RETURN_IF_ERROR(driver_->streamSynchronize());
  for (uint32_t pi = 0; pi < parts_.size(); ++pi) {
    PartGraph &pg = parts_[pi];
    if (!pg.graph) continue;
    if (pg.exec) driver_->execDestroy(pg.exec);
    driver_->graphDestroy(pg.graph);
    pg.exec = nullptr;
    pg.graph = nullptr;
    pg.kernelNodes.clear();
  }
  CGRAPH_RETURN_IF_ERROR(buildGraphs());
  for (uint32_t pi = 0; pi < parts_.size(); ++pi)
    if (parts_[pi].exec) CGRAPH_RETURN_IF_ERROR(partitionRebuilt(pi));
  return Error::success();
}

} // namespace cgraph::gpu
