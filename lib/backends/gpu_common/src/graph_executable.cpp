// The GPU executable shared by cuda and hip (graph_executable.h): its lifetime, the
// kernel and node plans, and prepare (finalize). The driver graphs are built in
// graph_build.cpp, the slot table goes up in table_upload.cpp, eager nodes run in
// eager.cpp, submissions in submit.cpp.
#include "cgraph/backends/gpu_common/graph_executable.h"

#include "cgraph/backends/gpu_common/launch_plan.h"
#include "cgraph/backends/gpu_common/replay_steps.h"
#include "cgraph/graph/flatten.h"
#include "cgraph/graph/labels.h"
#include "cgraph/graph/order.h"

#include <algorithm>
#include <chrono>
#include <functional>

namespace cgraph::gpu {

namespace {

// How many nodes flattenSubgraphs makes of `g` (an empty subgraph is one barrier).
uint64_t flatCount(const Graph &g, int depth) {
  uint64_t c = 0;
  for (const Node &node : g.nodes) {
    if (node.kind != NodeKind::Subgraph || node.subgraph >= g.subgraphs.size() || depth > 64) {
      ++c;
      continue;
    }
    const uint64_t k = flatCount(g.subgraphs[node.subgraph], depth + 1);
    c += k == 0 ? 1 : k;
  }
  return c;
}

// The flattened nodes of each top-level Subgraph node of `original` (flatten.h: a
// subgraph's nodes are appended in one run, named "<subgraph node>/<child node>").
// Empty where `flat` does not match that layout (then every subgraph stays flattened).
std::vector<std::vector<uint32_t>> subgraphRuns(const Graph &original, const Graph &flat) {
  std::vector<std::vector<uint32_t>> runs;
  uint64_t x = 0;
  for (const Node &node : original.nodes) {
    if (node.kind != NodeKind::Subgraph || node.subgraph >= original.subgraphs.size()) {
      ++x;
      continue;
    }
    const uint64_t k = flatCount(original.subgraphs[node.subgraph], 1);
    if (k == 0) {
      ++x;
      continue;
    }
    std::vector<uint32_t> run;
    const std::string prefix = node.name + "/";
    for (uint64_t i = x; i < x + k; ++i) {
      if (i >= flat.nodes.size() || flat.nodes[i].name.compare(0, prefix.size(), prefix) != 0) return {};
      run.push_back(uint32_t(i));
    }
    runs.push_back(std::move(run));
    x += k;
  }
  if (x != flat.nodes.size()) return {};
  return runs;
}

} // namespace

// Appends the time since `t` to `phases` under `name` (finalizePhases) and restarts `t`.
static void phaseDone(std::vector<rt::Executable::Phase> &phases, const char *name,
               std::chrono::steady_clock::time_point &t) {
  const auto now = std::chrono::steady_clock::now();
  phases.push_back({name, std::chrono::duration<double, std::micro>(now - t).count()});
  t = now;
}

GraphExecutable::GraphExecutable(rt::Device &device, Driver &driver, Graph flattened,
                                 const rt::FinalizeOptions &opts)
    : rt::Executable(device, std::move(flattened), opts.mode), driver_(&driver) {}

GraphExecutable::~GraphExecutable() { releaseDriverObjects(); }

void GraphExecutable::releaseDriverObjects() {
  if (released_) return;
  released_ = true;
  if (driver_->makeCurrent()) return;
  (void)driver_->streamSynchronize();
  hostStaging_.reset(); // its pinned blocks, freed with the context current
  for (PartGraph &p : parts_) {
    if (p.exec) driver_->execDestroy(p.exec);
    if (p.graph) driver_->graphDestroy(p.graph);
  }
  for (Staging &st : staging_) {
    st.readBy.reset();
    if (st.host) driver_->hostFree(st.host);
  }
}

Expected<GraphNodeHandle> GraphExecutable::addExtensionNode(GraphHandle, uint32_t p,
                                                            const std::vector<GraphNodeHandle> &, uint32_t) {
  return makeError(planLabel(p) + ": no graph node for this plan (internal error)");
}

std::string GraphExecutable::planLabel(uint32_t p) const {
  if (p >= graph_.nodes.size()) return lifted_[p - graph_.nodes.size()].label;
  return nodeLabel(graph_, p);
}

bool GraphExecutable::readsParams(const Node &node) {
  for (uint32_t d = 0; d < 3; ++d)
    if (node.range.global[d].param != kNone || node.range.local[d].param != kNone ||
        node.range.offset[d].param != kNone)
      return true;
  return false;
}

Expected<FunctionHandle> GraphExecutable::kernelFunction(uint32_t k, bool useCache) {
  if (fns_[k]) return fns_[k];
  const Kernel &kern = graph_.kernels[k];
  ModuleRef &mod = byModule_[kern.module];
  if (!mod) {
    auto m = driver_->loadModule(graph_.modules[kern.module], useCache);
    if (!m) return m.error();
    mod = *m;
    modules_.push_back(mod);
    progress_.ready(kern.module);
  }
  auto f = driver_->function(mod, kern.name);
  if (!f) return f.error();
  fns_[k] = *f;
  return *f;
}

Error GraphExecutable::rangeOf(uint32_t p, const std::vector<uint64_t> &params, Launch &l) const {
  return planRange(nodeAt(p), kernelAt(p), params, [this, p] { return planLabel(p); }, driver_->apiName(), l);
}

Error GraphExecutable::planKernel(uint32_t p, const std::vector<uint64_t> &params, Launch &l, bool paramRange) {
  CGRAPH_RETURN_IF_ERROR(planKernelArgs(nodeAt(p), kernelAt(p), tableAddress(), nSlots_, [this, p] { return planLabel(p); },
                                        driver_->maxSharedMemory(), l));
  // A range from parameters is computed again before the first launch (submit); the
  // values at hand (defaults, placeholders) need not give a launchable one.
  if (Error e = rangeOf(p, params, l); e && !paramRange) return e;
  if (!paramRange) coarsen(p, l);
  l.bind();
  return Error::success();
}

void GraphExecutable::coarsen(uint32_t p, Launch &l) {
  const uint64_t minItems = driver_->coarsenMinItems();
  if (minItems == 0 || p >= graph_.nodes.size() || l.smem != 0) return;
  const Node &node = graph_.nodes[p];
  const uint64_t n = uint64_t(l.grid[0]) * l.block[0];
  if (node.range.dims > 1 || n < minItems || node.kernel >= coarseFns_.size()) return;
  const uint32_t k = node.kernel;
  if (!coarseLooked_[k]) {
    coarseLooked_[k] = 1;
    // The module is loaded (kernelFunction ran for this kernel). Modules from an older
    // lowering, and kernels coarsen.h rules out, have no entry.
    auto f = driver_->function(byModule_[graph_.kernels[k].module], kCoarseEntryPrefix + graph_.kernels[k].name);
    coarseFns_[k] = f ? *f : nullptr;
  }
  if (!coarseFns_[k]) return;
  l.fn = coarseFns_[k];
  planCoarse(n, l);
  ++driver_->counters().coarsePlans;
}

Error GraphExecutable::ensureBuiltins() {
  if (builtins_) return Error::success();
  auto b = driver_->builtinModule();
  if (!b) return b.error();
  builtins_ = *b;
  return Error::success();
}

// Copies and fills: the builtin kernel launch (always prepared: replay uses it when a
// binding-table slot is involved, eager when a driver memcpy/memset cannot express it).
Error GraphExecutable::planCopyOrFill(uint32_t p) {
  const Node &node = nodeAt(p);
  NodePlan &plan = plans_[p];
  CGRAPH_RETURN_IF_ERROR(ensureBuiltins());
  if (node.kind == NodeKind::Fill) {
    const FillOp &f = node.fill;
    auto fn = driver_->function(builtins_, "cgraph_fill");
    if (!fn) return fn.error().withContext(planLabel(p));
    const uint64_t patIndex = nSlots_ + nParams_ + patterns_.size();
    if (8 * (table_.size() + 1) > tableBuf_->size())
      return makeError(planLabel(p) + ": no room for the fill pattern in the slot table (internal error)");
    auto pb = device_->allocate(std::max<size_t>(1, f.pattern.size()), 16);
    if (!pb) return pb.error().withContext(planLabel(p));
    if (!f.pattern.empty())
      CGRAPH_RETURN_IF_ERROR(device_->write(**pb, 0, f.pattern.data(), f.pattern.size()));
    table_.push_back(driver_->address(**pb));
    patterns_.push_back(std::move(*pb));
    plan.launch.fn = *fn;
    planFillLaunch(f, tableAddress(), patIndex, plan.launch);
  } else {
    auto fn = driver_->function(builtins_, "cgraph_copy");
    if (!fn) return fn.error().withContext(planLabel(p));
    plan.launch.fn = *fn;
    planCopyLaunch(node, tableAddress(), plan.launch);
  }
  // Replaced by a memcpy/memset node in addGraphNode where possible.
  plan.kind = NodePlan::Kernel;
  if (plan.exprTransfer) {
    // The size changes per submission: the largest grid stridedGrid gives (its loops
    // stride over any size), the cells from the values at hand until submit patches.
    stridedGrid(~uint64_t(0) >> 8, plan.launch);
    patchTransfer(p, transfer(p, rangeParams_));
  }
  plan.launch.bind();
  return Error::success();
}

Error GraphExecutable::planNode(uint32_t p, FunctionHandle fn, bool paramRange) {
  NodePlan &plan = plans_[p];
  switch (nodeAt(p).kind) {
  case NodeKind::Kernel:
    plan.kind = NodePlan::Kernel;
    plan.launch.fn = fn;
    plan.paramRange = paramRange;
    return planKernel(p, rangeParams_, plan.launch, paramRange);
  case NodeKind::Copy:
  case NodeKind::CopyRect:
  case NodeKind::Fill:
    return planCopyOrFill(p);
  case NodeKind::Host:
    plan.kind = NodePlan::Host;
    return Error::success();
  case NodeKind::Conditional:
  case NodeKind::Collective:
    return Error::success(); // a backend's extension plans it (prepareExtensions)
  default:
    plan.kind = NodePlan::Nop;
    return Error::success();
  }
}

Error GraphExecutable::prepare(const rt::FinalizeOptions &opts, const Graph *original, double flattenUs) {
  const uint32_t nn = uint32_t(graph_.nodes.size());
  if (flattenUs >= 0) phases_.push_back({"validated and flattened", flattenUs});
  progress_ = rt::ModuleProgress(opts, graph_.modules.size());
  auto t = std::chrono::steady_clock::now();
  // The partitions as stored (flatten keeps them); computed where the file has none.
  std::vector<Partition> partitions = graph_.partitions;
  if (partitions.empty() && nn > 0) {
    std::vector<uint32_t> order = graph_.order;
    if (order.size() != nn) {
      auto o = executionOrder(graph_);
      if (!o) return o.error();
      order = std::move(*o);
    }
    partitions = computePartitions(graph_, order);
  }
  preds_.assign(nn, {});
  for (const Edge &e : graph_.edges)
    if (e.from < nn && e.to < nn) preds_[e.to].push_back(e.from);

  // Kernels: every node's kernel and its alternatives (a switch is then an update).
  useCache_ = opts.useCache;
  byModule_.assign(graph_.modules.size(), nullptr);
  fns_.assign(graph_.kernels.size(), nullptr);
  coarseFns_.assign(graph_.kernels.size(), nullptr);
  coarseLooked_.assign(graph_.kernels.size(), 0);
  bool anyHost = false, anyCopy = false;
  for (uint32_t n = 0; n < nn; ++n) {
    const Node &node = graph_.nodes[n];
    anyHost |= node.kind == NodeKind::Host;
    anyCopy |= node.kind == NodeKind::Copy || node.kind == NodeKind::CopyRect || node.kind == NodeKind::Fill;
    if (node.kind != NodeKind::Kernel) continue;
    auto f = kernelFunction(node.kernel, opts.useCache);
    if (!f) return f.error().withContext(planLabel(n));
    for (uint32_t k : node.alternatives) {
      auto a = kernelFunction(k, opts.useCache);
      if (!a) return a.error().withContext(planLabel(n) + ": alternative '" + graph_.kernels[k].name + "'");
    }
  }
  if (anyCopy) CGRAPH_RETURN_IF_ERROR(ensureBuiltins());
  progress_ = rt::ModuleProgress(); // the caller's callback is not kept past finalize
  phaseDone(phases_, "kernels (modules loaded)", t);
  if (anyHost) {
    auto h = rt::HostTasks::prepare(graph_, opts.host);
    if (!h) return h.error();
    hostTasks_ = std::move(*h);
  }

  // Slots and the table.
  auto owned = allocateOwnedSlots(opts.host, 16, opts.planMemory);
  if (!owned) return owned.error();
  owned_ = std::move(*owned);
  initTable(
      graph_,
      [&](uint32_t s, uint64_t *address, uint64_t *bytes) {
        if (!slotOwned(s)) return false;
        *address = driver_->address(*owned_[s]);
        *bytes = owned_[s]->size();
        return true;
      },
      table_, slotLength_, nSlots_, nParams_);
  ownedAddress_.assign(nSlots_, 0);
  directSlots_.assign(nSlots_, 0);
  for (uint32_t s = 0; s < nSlots_; ++s)
    if (slotOwned(s)) ownedAddress_[s] = table_[s];
  // One table entry per fill pattern, the fills of bodies a backend lifts included.
  std::function<uint64_t(const Graph &, int)> countFills = [&](const Graph &g, int depth) -> uint64_t {
    uint64_t c = 0;
    for (const Node &node : g.nodes)
      c += node.kind == NodeKind::Fill;
    if (depth < 64)
      for (const Graph &sub : g.subgraphs)
        c += countFills(sub, depth + 1);
    return c;
  };
  auto tb = device_->allocate(8 * std::max<uint64_t>(1, table_.size() + countFills(graph_, 0)), 16);
  if (!tb) return tb.error().withContext("slot table");
  tableBuf_ = std::move(*tb);
  rangeParams_ = std::vector<uint64_t>(table_.begin() + nSlots_, table_.end());
  phaseDone(phases_, "slots and table allocated", t);

  // Node plans.
  plans_.resize(nn);
  for (const FieldExpr &fe : graph_.exprs)
    if (isTransferField(fe.field) && fe.node < nn && !plans_[fe.node].exprTransfer) {
      plans_[fe.node].exprTransfer = true;
      exprTransferNodes_.push_back(fe.node);
    }
  for (uint32_t n = 0; n < nn; ++n) {
    const Node &node = graph_.nodes[n];
    const bool kernel = node.kind == NodeKind::Kernel;
    CGRAPH_RETURN_IF_ERROR(planNode(n, kernel ? fns_[node.kernel] : nullptr, kernel && readsParams(node)));
  }
  CGRAPH_RETURN_IF_ERROR(prepareExtensions());

  for (const Partition &part : partitions) {
    PartGraph pg;
    pg.nodes = part.nodes;
    for (uint32_t n : part.nodes)
      pg.host |= graph_.nodes[n].kind == NodeKind::Host;
    parts_.push_back(std::move(pg));
  }
  // Subgraphs as child graphs (replay only; ChildGroup says where not).
  groupOf_.assign(nn, kNone);
  if (original && mode_ == rt::ExecMode::Replay) {
    std::vector<uint32_t> partOf(nn, kNone), position(nn, 0);
    for (uint32_t pi = 0; pi < parts_.size(); ++pi)
      for (uint32_t i = 0; i < parts_[pi].nodes.size(); ++i) {
        partOf[parts_[pi].nodes[i]] = pi;
        position[parts_[pi].nodes[i]] = i;
      }
    for (std::vector<uint32_t> &run : subgraphRuns(*original, graph_)) {
      ChildGroup cg;
      cg.part = partOf[run.front()];
      uint32_t first = position[run.front()];
      for (uint32_t m : run) {
        const NodePlan &p = plans_[m];
        cg.flatten |= partOf[m] != cg.part || p.kind == NodePlan::Host || p.kind == NodePlan::Extension ||
                      graph_.nodes[m].kind == NodeKind::Conditional || p.paramRange ||
                      p.exprTransfer;
        first = std::min(first, position[m]);
      }
      const uint32_t gi = uint32_t(groups_.size());
      for (uint32_t m : run) groupOf_[m] = gi;
      for (uint32_t m : run)
        for (uint32_t q : preds_[m])
          cg.flatten |= groupOf_[q] != gi && partOf[q] == cg.part && position[q] > first;
      if (cg.part == kNone || parts_[cg.part].host) cg.flatten = true;
      cg.nodes = std::move(run);
      groups_.push_back(std::move(cg));
    }
  }
  phaseDone(phases_, "node plans", t);
  CGRAPH_RETURN_IF_ERROR(uploadTable());
  if (uploading_) {
    // No submission reads this upload: its buffer is free once the stream gets there.
    CGRAPH_RETURN_IF_ERROR(driver_->streamSynchronize());
    uploading_ = nullptr;
  }
  phaseDone(phases_, "table upload", t);
  if (mode_ == rt::ExecMode::Replay) CGRAPH_RETURN_IF_ERROR(buildGraphs());
  return Error::success();
}

} // namespace cgraph::gpu
