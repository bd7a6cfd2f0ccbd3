// The GPU executable shared by cuda and hip (graph_executable.h).
#include "cgraph/backends/gpu_common/graph_executable.h"

#include "cgraph/backends/gpu_common/launch_plan.h"
#include "cgraph/backends/gpu_common/replay_steps.h"
#include "cgraph/graph/flatten.h"
#include "cgraph/graph/labels.h"
#include "cgraph/graph/order.h"

#include <algorithm>
#include <chrono>
#include <cstring>
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
  for (PartGraph &p : parts_) {
    if (p.exec) driver_->execDestroy(p.exec);
    if (p.graph) driver_->graphDestroy(p.graph);
  }
  for (Staging &st : staging_) {
    st.readBy.reset();
    if (st.host) driver_->hostFree(st.host);
  }
  ring_.clear();
  if (ringHost_) driver_->hostFree(ringHost_);
  ringHost_ = nullptr;
  for (void *p : retiredRings_) driver_->hostFree(p);
  retiredRings_.clear();
  if (ringLoaded_) driver_->hostFree(ringLoaded_);
  ringLoaded_ = nullptr;
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
  }
  auto f = driver_->function(mod, kern.name);
  if (!f) return f.error();
  fns_[k] = *f;
  fnWaits_[k] = driver_->waitsForGridDependencies(mod);
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
  builtinsWait_ = driver_->waitsForGridDependencies(builtins_);
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
  fnWaits_.assign(graph_.kernels.size(), 0);
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
  // Edges from kernel nodes into a kernel that waits for its grid dependencies are
  // programmatic (added after the node); the others are ordinary.
  std::vector<GraphNodeHandle> &ordinary = depScratch_[0], &programmatic = depScratch_[1]; // reused: no allocation per node
  ordinary.clear();
  programmatic.clear();
  const bool split = p < graph_.nodes.size() && driver_->programmaticEdges() && programmaticInto(p);
  for (GraphNodeHandle d : deps)
    (split && kernelHandles_.contains(d) ? programmatic : ordinary).push_back(d);
  Error e;
  if (plan.exprTransfer) {
    e = driver_->addKernelNodeWithEdges(&gn, g, ordinary, programmatic, plan.launch);
    isKernel = true;
  } else if (copy && copy3DFor(node, ownedBase(node.copy.srcSlot), ownedBase(node.copy.dstSlot), c3) &&
             directTransfer({node.copy.srcSlot, node.copy.dstSlot})) {
    e = driver_->addMemcpyNode(&gn, g, deps, c3);
  } else if (node.kind == NodeKind::Fill && memsetFor(node.fill, ownedBase(node.fill.slot), ms) &&
             directTransfer({node.fill.slot})) {
    e = driver_->addMemsetNode(&gn, g, deps, ms, node.fill.bytes);
  } else if (plan.kind == NodePlan::Kernel) {
    e = driver_->addKernelNodeWithEdges(&gn, g, ordinary, programmatic, plan.launch);
    isKernel = true;
  } else {
    e = driver_->addEmptyNode(&gn, g, deps);
    enableable = false;
  }
  if (e) return std::move(e).withContext(planLabel(p));
  if (isKernel && p < graph_.nodes.size()) {
    driver_->counters().programmaticEdges += programmatic.size();
    kernelHandles_.insert(gn);
  }
  if (part != kNone && p < graph_.nodes.size()) {
    if (isKernel) parts_[part].kernelNodes.push_back({p, gn});
    graphNodes_[p] = GraphNodeRef{part, gn, isKernel, enableable};
  }
  return gn;
}

// A ring of `depth` entries of table_.size() values (fixed once the plans are made) in
// one pinned allocation; the previous one, if any, is kept until the executable goes
// (launches in flight read it).
Error GraphExecutable::allocateRing(size_t depth) {
  const size_t entry = table_.size() * 8;
  void *host = nullptr;
  CGRAPH_RETURN_IF_ERROR(driver_->hostAlloc(&host, entry * depth).withContext("the table ring"));
  auto dev = driver_->hostDeviceAddress(host);
  if (!dev) {
    driver_->hostFree(host);
    return dev.error().withContext("the table ring");
  }
  if (ringHost_) retiredRings_.push_back(ringHost_);
  ringHost_ = host;
  ringDevice_ = *dev;
  ring_.assign(depth, Staging{});
  for (size_t i = 0; i < depth; ++i) {
    ring_[i].host = static_cast<char *>(ringHost_) + i * entry;
    std::memcpy(ring_[i].host, table_.data(), entry);
  }
  return Error::success();
}

// The ring's first allocation, and the loader's launch counter, zero like ringSeq_.
Error GraphExecutable::prepareRing() {
  if (ringHost_) {
    if (ringEntries_ != table_.size())
      return makeError("the table changed size after its ring was made (internal error)");
    return Error::success();
  }
  ringEntries_ = table_.size();
  CGRAPH_RETURN_IF_ERROR(allocateRing(kRingStartDepth));
  CGRAPH_RETURN_IF_ERROR(driver_->hostAlloc(&ringLoaded_, 64).withContext("the table ring's count"));
  *static_cast<volatile uint32_t *>(ringLoaded_) = 0;
  auto loadedDev = driver_->hostDeviceAddress(ringLoaded_);
  if (!loadedDev) return loadedDev.error().withContext("the table ring's count");
  ringLoadedDevice_ = *loadedDev;
  auto counter = device_->allocate(8, 8);
  if (!counter) return counter.error().withContext("the table ring's counter");
  const uint64_t zero = 0;
  CGRAPH_RETURN_IF_ERROR(device_->write(**counter, 0, &zero, 8).withContext("the table ring's counter"));
  ringCounter_ = std::move(*counter);
  ringSeq_ = 0;
  return Error::success();
}

Error GraphExecutable::addLoaderNode(GraphHandle g) {
  loaderNode_ = nullptr;
  ringMode_ = false;
  if (parts_.empty() || parts_[0].host || table_.empty()) return Error::success();
  if (auto ring = driver_->ringLoader()) {
    CGRAPH_RETURN_IF_ERROR(prepareRing());
    loader_ = Launch{};
    loader_.fn = *ring;
    loader_.vals = {tableAddress(), uint64_t(table_.size()), ringDevice_, uint64_t(ring_.size()),
                    driver_->address(*ringCounter_), ringLoadedDevice_};
    loader_.bind(); // the u32 cells are read as their low 4 bytes (little-endian)
    loader_.block[0] = 64;
    GraphNodeHandle n = nullptr;
    if (Error e = driver_->addKernelNode(&n, g, {}, loader_)) return std::move(e).withContext("the table loader node");
    loaderNode_ = n;
    ringMode_ = true;
    return Error::success();
  }
  size_t capacity = 0;
  auto fn = driver_->tableLoader(table_.size(), &capacity);
  if (!fn) return Error::success(); // the table goes up as a copy (uploadTable)
  loaderValues_.assign(capacity, 0);
  std::copy(table_.begin(), table_.end(), loaderValues_.begin());
  loader_ = Launch{};
  loader_.fn = *fn;
  loader_.vals = {tableAddress(), uint64_t(table_.size())};
  loader_.ptrs = {&loader_.vals[0], &loader_.vals[1], loaderValues_.data()};
  loader_.block[0] = 64;
  GraphNodeHandle n = nullptr;
  if (Error e = driver_->addKernelNode(&n, g, {}, loader_)) return std::move(e).withContext("the table loader node");
  loaderNode_ = n;
  return Error::success();
}

Expected<std::shared_ptr<void>> GraphExecutable::sharedPinned(size_t bytes) {
  void *p = nullptr;
  CGRAPH_RETURN_IF_ERROR(driver_->hostAlloc(&p, bytes));
  return std::shared_ptr<void>(p, [d = driver_](void *q) {
    (void)d->makeCurrent();
    d->hostFree(q);
  });
}

Error GraphExecutable::addDoneNode(GraphHandle g, const std::vector<GraphNodeHandle> &sinks) {
  auto fn = driver_->doneMarker();
  if (!fn) return Error::success(); // completion is an event per submission
  if (!doneWord_) {
    auto w = sharedPinned(64);
    if (!w) return w.error().withContext("the done word");
    doneWord_ = std::move(*w);
    *static_cast<volatile uint32_t *>(doneWord_.get()) = 0; // the device counter starts at zero too
  }
  auto dev = driver_->hostDeviceAddress(doneWord_.get());
  if (!dev) return dev.error().withContext("the done word");
  doneLaunch_ = Launch{};
  doneLaunch_.fn = *fn;
  doneLaunch_.vals = {driver_->address(*ringCounter_), *dev};
  doneLaunch_.bind();
  GraphNodeHandle n = nullptr;
  if (Error e = driver_->addKernelNode(&n, g, sinks, doneLaunch_)) return std::move(e).withContext("the done marker node");
  doneNode_ = n;
  return Error::success();
}

bool GraphExecutable::programmaticInto(uint32_t p) const {
  if (p >= graph_.nodes.size() || p >= plans_.size()) return false;
  const Node &node = graph_.nodes[p];
  const NodePlan &plan = plans_[p];
  if (plan.kind != NodePlan::Kernel) return false;
  if (node.kind != NodeKind::Kernel) return builtinsWait_; // a copy or fill as the builtin kernel
  if (node.kernel >= fnWaits_.size() || !fnWaits_[node.kernel]) return false;
  for (uint32_t k : node.alternatives)
    if (k >= fnWaits_.size() || !fnWaits_[k]) return false;
  return true;
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
  kernelHandles_.reset(pg.nodes.size()); // handles of destroyed graphs may come back
  CGRAPH_RETURN_IF_ERROR(driver_->graphCreate(&pg.graph));
  if (pi == 0) CGRAPH_RETURN_IF_ERROR(addLoaderNode(pg.graph));
  GraphNodeHandle loader = pi == 0 ? loaderNode_ : nullptr;
  // The last partition with nodes, when a graph in ring mode, ends with the done marker.
  uint32_t lastPart = kNone;
  for (uint32_t k = 0; k < parts_.size(); ++k)
    if (!parts_[k].nodes.empty()) lastPart = k;
  if (pi == lastPart) doneNode_ = nullptr;
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
  if (pi == lastPart && ringMode_) {
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
    CGRAPH_RETURN_IF_ERROR(addDoneNode(pg.graph, sinks));
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

Error GraphExecutable::runExtensionEager(uint32_t p, const std::vector<uint64_t> &) {
  return makeError(ErrorCode::Internal, planLabel(p) + ": no eager form of this node");
}

Error GraphExecutable::reclaim(Staging &st) {
  if (st.readBy) {
    // Its copy ran before that submission's work; the submission's own failure is
    // its caller's to see (Event::wait returns it to them too).
    (void)st.readBy->wait();
    st.readBy.reset();
  } else if (st.unsynced) {
    CGRAPH_RETURN_IF_ERROR(driver_->streamSynchronize());
  }
  st.unsynced = false;
  return Error::success();
}

// Whether the ring entry of the next launch (ringSeq_ % depth) is free: launch
// ringSeq_ - depth, its last reader, has loaded it. The last count read
// (ringLoadedSeen_) often answers without reading memory the device writes (a cache
// miss).
bool GraphExecutable::ringEntryFree() {
  const uint64_t depth = ring_.size();
  if (ringSeq_ < depth) return true;
  const uint32_t need = uint32_t(ringSeq_ - depth + 1); // loaded >= seq - depth + 1
  if (uint32_t(ringLoadedSeen_ - need) < 0x80000000u) return true;
  ringLoadedSeen_ = *static_cast<volatile const uint32_t *>(ringLoaded_);
  return uint32_t(ringLoadedSeen_ - need) < 0x80000000u;
}

// Ring mode: the next launch of partition 0 loads entry ringSeq_ % depth, whatever it
// holds, so the table goes there on every submission. An entry still unread means
// depth submissions are in flight: the ring doubles (one update of the loader node;
// launches already made keep reading the old ring) up to kRingMaxBytes, past which
// the host waits for that submission.
Error GraphExecutable::writeRing() {
  if (!ringEntryFree()) {
    if (ring_.size() * 2 * table_.size() * 8 <= kRingMaxBytes) {
      CGRAPH_RETURN_IF_ERROR(allocateRing(ring_.size() * 2));
      loader_.vals[2] = ringDevice_;
      loader_.vals[3] = ring_.size();
      if (Error e = driver_->execKernelNodeSetParams(parts_[0].exec, loaderNode_, loader_))
        return std::move(e).withContext("the table loader node");
      ++driver_->counters().ringGrowths;
    } else {
      Staging &old = ring_[ringSeq_ % ring_.size()];
      if (old.readBy) (void)old.readBy->wait(); // its failure is its caller's to see
      old.readBy.reset();
      if (!ringEntryFree()) CGRAPH_RETURN_IF_ERROR(driver_->streamSynchronize());
      if (!ringEntryFree()) return makeError("the table ring's loader did not run (internal error)");
    }
  }
  Staging &st = ring_[ringSeq_ % ring_.size()];
  st.readBy.reset();
  std::memcpy(st.host, table_.data(), table_.size() * 8);
  uploading_ = &st;
  if (table_ != uploaded_) {
    uploaded_ = table_;
    ++driver_->counters().tableUploads;
  }
  return Error::success();
}

// One upload when the table differs from what the device holds, from pinned memory (an
// async copy from pageable memory is staged by the driver: ~17 us on an H100) that is
// reused only after the previous upload from it completed. Ordered on the stream after
// every earlier submission that reads the table. In ring mode, writeRing.
Error GraphExecutable::uploadTable() {
  if (ringMode_ && mode_ == rt::ExecMode::Replay && parts_[0].exec) return writeRing();
  if (table_ == uploaded_) return Error::success();
  if (loaderNode_ && mode_ == rt::ExecMode::Replay && parts_[0].exec) { // capacity >= table size (addLoaderNode)
    // Partition 0's graph loads the table first: new values for its loader node only.
    std::copy(table_.begin(), table_.end(), loaderValues_.begin());
    if (Error e = driver_->execKernelNodeSetParams(parts_[0].exec, loaderNode_, loader_))
      return std::move(e).withContext("the table loader node");
    uploaded_ = table_;
    ++driver_->counters().tableUploads;
    return Error::success();
  }
  const size_t bytes = table_.size() * 8;
  if (staging_.empty()) {
    staging_.resize(std::max<size_t>(1, driver_->stagingSlots()));
    for (Staging &st : staging_)
      CGRAPH_RETURN_IF_ERROR(driver_->hostAlloc(&st.host, std::max<size_t>(8, bytes)));
  }
  Staging &st = staging_[nextStaging_++ % staging_.size()];
  CGRAPH_RETURN_IF_ERROR(reclaim(st));
  std::memcpy(st.host, table_.data(), bytes);
  CGRAPH_RETURN_IF_ERROR(driver_->copyToDevice(tableAddress(), st.host, bytes));
  uploading_ = &st;
  uploaded_ = table_;
  ++driver_->counters().tableUploads;
  ++driver_->counters().tableCopies;
  return Error::success();
}

// Nd-ranges that read parameters: recomputed; only the nodes whose launch changed are
// set again on the instantiated graph.
Error GraphExecutable::updateParamRanges(const std::vector<uint64_t> &params) {
  return gpu::updateParamRanges(
      params, rangeParams_, rangesResolved_, parts_, plans_,
      [&](uint32_t n, const std::vector<uint64_t> &ps, Launch &l) { return rangeOf(n, ps, l); },
      [&](PartGraph &pg, GraphNodeHandle node, uint32_t n, Launch &l) -> Error {
        if (Error e = driver_->execKernelNodeSetParams(pg.exec, node, l)) return std::move(e).withContext(planLabel(n));
        ++driver_->counters().nodeUpdates;
        return Error::success();
      });
}

bool GraphExecutable::patchTransfer(uint32_t n, const Transfer &t) {
  std::vector<uint64_t> &v = plans_[n].launch.vals;
  // cgraph_fill: {table, dst a, dst m, bytes a, bytes m, ...};
  // cgraph_copy: {table, dst a, dst m, src a, src m, width a, width m, ...} (1D: the
  // pitches are not read).
  const bool fill = nodeAt(n).kind == NodeKind::Fill;
  const uint64_t want[3] = {t.dstOffset, fill ? t.bytes : t.srcOffset, t.bytes};
  const size_t at[3] = {1, 3, 5};
  bool changed = false;
  for (int i = 0; i < (fill ? 2 : 3); ++i)
    if (v[at[i]] != want[i]) {
      v[at[i]] = want[i];
      changed = true;
    }
  return changed;
}

Error GraphExecutable::updateTransfers(const std::vector<uint64_t> &params) {
  // Only the copy/fill nodes with stored expressions: O(those), not O(nodes), per submission.
  for (uint32_t n : exprTransferNodes_) {
    if (!patchTransfer(n, transfer(n, params))) continue;
    const GraphNodeRef &ref = graphNodes_[n];
    if (!ref.node || ref.part == kNone || !parts_[ref.part].exec) continue;
    if (Error e = driver_->execKernelNodeSetParams(parts_[ref.part].exec, ref.node, plans_[n].launch))
      return e.withContext(planLabel(n));
    ++driver_->counters().nodeUpdates;
  }
  return Error::success();
}

Error GraphExecutable::runHost(uint32_t n, const std::vector<uint64_t> &params) {
  return rt::runStagedHostTask(
      graph_, n, nSlots_, *hostTasks_, params, [&](uint32_t slot) { return slotLength_[slot]; },
      [&]() { return driver_->streamSynchronize(); },
      [&](void *dst, uint32_t slot, size_t bytes) { return driver_->copyToHost(dst, slotBase(slot), bytes); },
      [&](uint32_t slot, const void *src, size_t bytes) { return driver_->copyToDevice(slotBase(slot), src, bytes); });
}

Error GraphExecutable::runNodeEager(uint32_t n, const std::vector<uint64_t> &params) {
  if (!nodeEnabled(n)) return Error::success(); // disabled: its edges still order
  const Node &node = graph_.nodes[n];
  NodePlan &p = plans_[n];
  if (node.kind == NodeKind::Host) return runHost(n, params); // HostTasks' errors name the node
  if (p.kind == NodePlan::Extension) return runExtensionEager(n, params);
  if (p.kind != NodePlan::Kernel) return Error::success();
  if (node.kind == NodeKind::Kernel && p.paramRange) CGRAPH_RETURN_IF_ERROR(rangeOf(n, params, p.launch));
  if (p.exprTransfer) patchTransfer(n, transfer(n, params));
  Copy3D c3;
  Memset ms;
  Error e;
  if (p.exprTransfer)
    e = driver_->launchKernel(p.launch);
  else if ((node.kind == NodeKind::Copy || node.kind == NodeKind::CopyRect) &&
      copy3DFor(node, slotBase(node.copy.srcSlot), slotBase(node.copy.dstSlot), c3))
    e = driver_->memcpy3D(c3);
  else if (node.kind == NodeKind::Fill && memsetFor(node.fill, slotBase(node.fill.slot), ms))
    e = driver_->memset(ms);
  else
    e = driver_->launchKernel(p.launch);
  if (e) return std::move(e).withContext(planLabel(n));
  return Error::success();
}

Expected<rt::EventPtr> GraphExecutable::submit(const std::vector<ResolvedSlot> &slots,
                                               const std::vector<uint64_t> &params,
                                               const rt::SubmitOptions &opts) {
  uploading_ = nullptr;
  // A submission that fails after its upload leaves that staging buffer without an
  // event: it is free once the stream is idle.
  struct UploadGuard {
    GraphExecutable *x;
    ~UploadGuard() {
      if (!x->uploading_) return;
      (void)x->driver_->streamSynchronize();
      x->uploading_ = nullptr;
    }
  } guard{this};
  CGRAPH_RETURN_IF_ERROR(checkSubmit(opts));
  for (const rt::EventPtr &e : opts.waitFor) {
    // Submissions of this device are ordered on its one stream already.
    if (!e || ownEvent(*e)) continue;
    CGRAPH_RETURN_IF_ERROR(e->wait().withContext("waiting for a prior submission"));
  }
  CGRAPH_RETURN_IF_ERROR(driver_->makeCurrent());
  if (opts.stream) CGRAPH_RETURN_IF_ERROR(driver_->streamJoin(opts.stream));
  // The slots and values of the last submission, which completed its steps: the
  // table, nd-ranges and transfer cells derived from them hold already.
  const bool same = sameAsLastSubmit() && lastSubmitDone_;
  lastSubmitDone_ = false;
  if (!same) {
    for (uint32_t s = 0; s < nSlots_ && s < slots.size(); ++s) {
      const ResolvedSlot &r = slots[s];
      if (r.buffer) {
        table_[s] = driver_->address(*r.buffer) + r.offset; // the runtime checked the owner
        slotLength_[s] = r.length;
      } else if (slotOwned(s)) { // its own storage again after a submission bound it over
        table_[s] = ownedAddress_[s];
        slotLength_[s] = owned_[s]->size();
      }
    }
    for (uint32_t p = 0; p < nParams_ && p < params.size(); ++p)
      table_[nSlots_ + p] = params[p];
    if (mode_ == rt::ExecMode::Replay) CGRAPH_RETURN_IF_ERROR(checkDirectTransfers());
  }
  CGRAPH_RETURN_IF_ERROR(uploadTable());
  CGRAPH_RETURN_IF_ERROR(submissionStarted(opts));
  if (mode_ == rt::ExecMode::Replay && !same) {
    CGRAPH_RETURN_IF_ERROR(bindingsChanged(params));
    CGRAPH_RETURN_IF_ERROR(updateParamRanges(params));
    CGRAPH_RETURN_IF_ERROR(updateTransfers(params));
  }
  if (mode_ == rt::ExecMode::Replay) {
    for (PartGraph &pg : parts_) {
      if (pg.host) {
        for (uint32_t n : pg.nodes)
          CGRAPH_RETURN_IF_ERROR(runNodeEager(n, params));
      } else if (pg.exec) {
        CGRAPH_RETURN_IF_ERROR(launchPartition(uint32_t(&pg - parts_.data())));
      }
    }
  } else {
    for (PartGraph &pg : parts_)
      for (uint32_t n : pg.nodes) {
        CGRAPH_RETURN_IF_ERROR(eagerNodeStarting(n, opts));
        CGRAPH_RETURN_IF_ERROR(runNodeEager(n, params));
        CGRAPH_RETURN_IF_ERROR(eagerNodeDone(n, opts));
        if (opts.afterNode) {
          if (Error e = driver_->streamSynchronize()) return std::move(e).withContext(planLabel(n));
          CGRAPH_RETURN_IF_ERROR(opts.afterNode(n));
        }
      }
  }
  auto ev = finishSubmission(opts);
  if (ev && uploading_) {
    uploading_->readBy = *ev;
    uploading_ = nullptr;
  }
  lastSubmitDone_ = bool(ev);
  if (ev && opts.stream) CGRAPH_RETURN_IF_ERROR(driver_->streamSignal(opts.stream));
  return ev;
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

Error GraphExecutable::launchPartition(uint32_t pi) {
  CGRAPH_RETURN_IF_ERROR(driver_->graphLaunch(parts_[pi].exec));
  if (pi == 0 && ringMode_) {
    ++ringSeq_;
    ++driver_->counters().ringLaunches;
  }
  return Error::success();
}

Error GraphExecutable::launchReplayGraphsOnly() {
  if (mode_ != rt::ExecMode::Replay) return makeError("launching the replay graphs of an eager executable");
  uploading_ = nullptr;
  CGRAPH_RETURN_IF_ERROR(uploadTable());
  Error e;
  for (uint32_t pi = 0; pi < parts_.size() && !e; ++pi)
    if (parts_[pi].exec) e = launchPartition(pi);
  if (uploading_ && !ringMode_) uploading_->unsynced = true; // ring entries: the loader's count
  uploading_ = nullptr;
  return e;
}

} // namespace cgraph::gpu
