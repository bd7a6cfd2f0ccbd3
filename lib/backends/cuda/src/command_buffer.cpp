// What the CUDA executable adds to gpu_common's GraphExecutable (exec.h): native
// conditional nodes (bodies lifted into the executable's plans, set-condition kernels,
// CUDA IF/WHILE nodes) and executable updates.
#include "exec.h"

#include "cgraph/graph/flatten.h"
#include "cgraph/graph/labels.h"
#include "cgraph/graph/order.h"

#include <cstdlib>
#include <cstring>
#include <unordered_map>

namespace cgraph::cuda {

CudaExecutable::~CudaExecutable() {
  // The stream drained and the graphs gone before the conditional state is freed.
  releaseDriverObjects();
  releaseRing();
  dropSubmissionEvents();
  if (captureStream_) api_->cuStreamDestroy(captureStream_);
}

Error CudaExecutable::prepareExtensions() {
  CGRAPH_RETURN_IF_ERROR(prepareCollectives());
  prepareProgrammatic();
  const uint32_t nn = uint32_t(graph_.nodes.size());
  std::vector<uint32_t> identityParams(graph_.params.size());
  for (uint32_t q = 0; q < identityParams.size(); ++q) identityParams[q] = q;
  for (uint32_t n = 0; n < nn; ++n)
    if (graph_.nodes[n].kind == NodeKind::Conditional)
      CGRAPH_RETURN_IF_ERROR(liftConditional(n, graph_, identityParams));
  if (conds_.empty()) return Error::success();
  auto st = dev_->allocate(8 * conds_.size(), 16);
  if (!st) return st.error().withContext("conditional state");
  condState_ = std::move(*st);
  CGRAPH_RETURN_IF_ERROR(dev_->makeCurrent());
  CGRAPH_CU_CHECK(*api_, "cuMemsetD32Async",
                  api_->cuMemsetD32Async(static_cast<CudaBuffer *>(condState_.get())->ptr(), 0,
                                         2 * conds_.size(), dev_->stream()));
  for (CondPlan &c : conds_) {
    CGRAPH_RETURN_IF_ERROR(planSetCondition(c, c.op.kind == CondKind::While ? 1 : 0, c.pre));
    if (c.op.kind == CondKind::While) CGRAPH_RETURN_IF_ERROR(planSetCondition(c, 2, c.post));
  }
  return Error::success();
}

Expected<gpu::GraphNodeHandle> CudaExecutable::addExtensionNode(gpu::GraphHandle graph, uint32_t p,
                                                                const std::vector<gpu::GraphNodeHandle> &deps,
                                                                uint32_t part) {
  if (p < graph_.nodes.size() && graph_.nodes[p].kind == NodeKind::Collective)
    return addCollectiveNode(CUgraph(graph), p, deps, part);
  CUcontext ctx = dev_->context();
  CUgraph g = CUgraph(graph);
  CondPlan &c = conds_[plans_[p].ext];
  const std::string what = planLabel(p);
  CUgraphNode gn = nullptr;
  // The handle resets to 0 at every launch of the graph (CU_GRAPH_COND_ASSIGN_DEFAULT),
  // so a disabled set-condition kernel (the node disabled) skips the body.
  CUresult rc = api_->cuGraphConditionalHandleCreate(&c.handle, g, ctx, 0, CU_GRAPH_COND_ASSIGN_DEFAULT);
  if (rc != CUDA_SUCCESS) return cuError(*api_, "cuGraphConditionalHandleCreate", rc).withContext(what);
  c.pre.vals[3] = c.handle;
  if (c.op.kind == CondKind::While) c.post.vals[3] = c.handle; // `if` has no end-of-trip kernel
  gpu::GraphNodeHandle pre = nullptr;
  if (Error e = driver_->addKernelNode(&pre, graph, deps, c.pre)) return e.withContext(what + ": set-condition");
  CUgraphNodeParams np;
  std::memset(&np, 0, sizeof(np));
  np.type = CU_GRAPH_NODE_TYPE_CONDITIONAL;
  np.conditional.handle = c.handle;
  np.conditional.type = c.op.kind == CondKind::While ? CU_GRAPH_COND_TYPE_WHILE : CU_GRAPH_COND_TYPE_IF;
  np.conditional.size = 1;
  np.conditional.ctx = ctx;
  CUgraphNode preNode = CUgraphNode(pre);
  rc = api_->cuGraphAddNode(&gn, g, &preNode, nullptr, 1, &np);
  if (rc != CUDA_SUCCESS) return cuError(*api_, "cuGraphAddNode (conditional)", rc).withContext(what);
  CUgraph body = np.conditional.phGraph_out[0];
  ++dev_->counters().conditionalNodes;
  std::unordered_map<uint32_t, gpu::GraphNodeHandle> inBody;
  std::unordered_map<uint32_t, bool> hasSucc;
  for (uint32_t q : c.body) {
    std::vector<gpu::GraphNodeHandle> d;
    for (uint32_t x : preds_[q]) {
      auto it = inBody.find(x);
      if (it != inBody.end()) {
        d.push_back(it->second);
        hasSucc[x] = true;
      }
    }
    auto bn = addGraphNode(body, q, d, kNone);
    if (!bn) return bn.error();
    inBody[q] = *bn;
  }
  std::vector<gpu::GraphNodeHandle> sinks;
  for (uint32_t q : c.body)
    if (!hasSucc.count(q)) sinks.push_back(inBody[q]);
  gpu::GraphNodeHandle last = nullptr;
  if (c.op.kind == CondKind::While) {
    if (Error e = driver_->addKernelNode(&last, body, sinks, c.post)) return e.withContext(what + ": end of trip");
  } else if (c.body.empty()) {
    if (Error e = driver_->addEmptyNode(&last, body, {})) return e.withContext(what + ": body");
  }
  if (part != kNone && p < graphNodes_.size()) graphNodes_[p] = GraphNodeRef{part, pre, false, true};
  return gpu::GraphNodeHandle(gn);
}

// ---- conditional nodes ---------------------------------------------------------------

namespace {

// Why the conditionals of `g` (a flattened graph or body) cannot be CUDA conditional
// nodes (ErrorCode::Unsupported); success where they can; another code for a graph
// that is wrong whatever runs it.
Error bodiesNative(const Graph &g, int depth) {
  if (depth > 16) return makeError(ErrorCode::Unsupported, "conditional nodes nested deeper than 16 levels");
  for (uint32_t n = 0; n < g.nodes.size(); ++n) {
    const Node &node = g.nodes[n];
    if (node.kind != NodeKind::Conditional) continue;
    const std::string what = nodeLabel(g, n);
    if (node.subgraph >= g.subgraphs.size()) return makeError(what + ": no body");
    auto body = flattenSubgraphs(g.subgraphs[node.subgraph]);
    if (!body) return body.error().withContext(what + ": body");
    if (!body->exprs.empty()) return makeError(ErrorCode::Unsupported, what + ": its body has stored expressions");
    for (const Node &b : body->nodes) {
      if (b.kind == NodeKind::Host) return makeError(ErrorCode::Unsupported, what + ": its body has a host task");
      if (b.kind == NodeKind::Kernel)
        for (uint32_t d = 0; d < 3; ++d)
          if (b.range.global[d].param != kNone || b.range.local[d].param != kNone ||
              b.range.offset[d].param != kNone)
            return makeError(ErrorCode::Unsupported, what + ": an nd-range in its body reads a parameter");
    }
    CGRAPH_RETURN_IF_ERROR(bodiesNative(*body, depth + 1));
  }
  return Error::success();
}

Error remapIndex(uint32_t &i, const std::vector<uint32_t> &map, const std::string &what) {
  if (i == kNone) return Error::success();
  if (i >= map.size() || map[i] == kNone) return makeError(what + " " + std::to_string(i) + " is not bound");
  i = map[i];
  return Error::success();
}

} // namespace

Error nativeConditionals(CudaDevice &device, const Graph &flattened, rt::ExecMode mode) {
  if (mode != rt::ExecMode::Replay) return makeError(ErrorCode::Unsupported, "eager mode runs conditionals node by node on the host");
  if (!device.nativeConditionals())
    return makeError(ErrorCode::Unsupported, "native conditionals are off (CudaBackendOptions::nativeConditionals)");
  auto k = device.setConditionKernel(); // needs the nvcc-built fatbin and a 12.3 driver
  if (!k) return makeError(ErrorCode::Unsupported, k.error().message());
  return bodiesNative(flattened, 0);
}

Error CudaExecutable::liftConditional(uint32_t p, const Graph &owner, const std::vector<uint32_t> &paramMap) {
  const Node cn = nodeAt(p); // a copy: lifting grows lifted_
  const std::string what = planLabel(p);
  CondPlan c;
  c.node = p;
  c.op = cn.cond; // already in graph()'s numbering (remapped by the caller for bodies)
  if (cn.subgraph >= owner.subgraphs.size()) return makeError(what + ": no body");
  auto flat = flattenSubgraphs(owner.subgraphs[cn.subgraph]);
  if (!flat) return flat.error().withContext(what + ": body");
  bodies_.push_back(std::move(*flat));
  const Graph &body = bodies_.back();
  std::vector<uint32_t> bodySlots(body.slots.size(), kNone), bodyParams(body.params.size(), kNone);
  for (size_t i = 0; i < body.slots.size() && i < cn.subgraphSlots.size(); ++i) bodySlots[i] = cn.subgraphSlots[i];
  // cn is already lifted: its subgraphSlots are graph()'s slots. Body params bind by name.
  for (size_t i = 0; i < body.params.size(); ++i) {
    const uint32_t q = owner.findParam(body.params[i].name);
    if (q == kNone || q >= paramMap.size())
      return makeError(what + ": body parameter '" + body.params[i].name + "' is not a parameter of its graph");
    bodyParams[i] = paramMap[q];
  }
  std::vector<uint32_t> order = body.order;
  if (order.size() != body.nodes.size()) {
    auto o = executionOrder(body);
    if (!o) return o.error().withContext(what + ": body");
    order = std::move(*o);
  }
  const uint32_t ci = uint32_t(conds_.size());
  conds_.push_back(c);
  plans_[p].kind = NodePlan::Extension;
  plans_[p].ext = ci;
  const uint32_t base = uint32_t(graph_.nodes.size() + lifted_.size());
  std::vector<uint32_t> planOf(body.nodes.size());
  for (uint32_t b = 0; b < body.nodes.size(); ++b) planOf[b] = base + b;
  // Lift every node first (plan indices are stable), then plan them in order.
  for (uint32_t b = 0; b < body.nodes.size(); ++b) {
    LiftedNode ln;
    ln.node = body.nodes[b];
    Node &x = ln.node;
    ln.label = nodeLabel(body, b) + " (body of " + what + ")";
    for (Arg &a : x.args) {
      if (a.kind == ArgKind::Slot) CGRAPH_RETURN_IF_ERROR(remapIndex(a.index, bodySlots, ln.label + ": slot"));
      if (a.kind == ArgKind::Param) CGRAPH_RETURN_IF_ERROR(remapIndex(a.index, bodyParams, ln.label + ": parameter"));
    }
    if (x.kind == NodeKind::Copy || x.kind == NodeKind::CopyRect) {
      CGRAPH_RETURN_IF_ERROR(remapIndex(x.copy.srcSlot, bodySlots, ln.label + ": slot"));
      CGRAPH_RETURN_IF_ERROR(remapIndex(x.copy.dstSlot, bodySlots, ln.label + ": slot"));
    }
    if (x.kind == NodeKind::Fill) CGRAPH_RETURN_IF_ERROR(remapIndex(x.fill.slot, bodySlots, ln.label + ": slot"));
    if (x.kind == NodeKind::Conditional) {
      CGRAPH_RETURN_IF_ERROR(remapIndex(x.cond.slot, bodySlots, ln.label + ": condition slot"));
      for (uint32_t &s : x.subgraphSlots) CGRAPH_RETURN_IF_ERROR(remapIndex(s, bodySlots, ln.label + ": slot"));
    }
    if (x.kind == NodeKind::Kernel) {
      if (x.kernel >= body.kernels.size()) return makeError(ln.label + ": no kernel");
      ln.kernel = &body.kernels[x.kernel];
    }
    lifted_.push_back(std::move(ln));
    plans_.emplace_back();
    preds_.emplace_back();
  }
  for (const Edge &e : body.edges)
    if (e.from < body.nodes.size() && e.to < body.nodes.size()) preds_[planOf[e.to]].push_back(planOf[e.from]);
  for (uint32_t b : order) conds_[ci].body.push_back(planOf[b]);
  for (uint32_t b : order) {
    const uint32_t q = planOf[b];
    const Node &x = nodeAt(q);
    if (x.kind == NodeKind::Conditional) {
      CGRAPH_RETURN_IF_ERROR(liftConditional(q, body, bodyParams));
      continue;
    }
    gpu::FunctionHandle fn = nullptr;
    if (x.kind == NodeKind::Kernel) {
      const Kernel &kern = kernelAt(q);
      auto m = driver_->loadModule(body.modules[kern.module], useCache_);
      if (!m) return m.error().withContext(planLabel(q));
      modules_.push_back(*m);
      auto f = driver_->function(*m, kern.name);
      if (!f) return f.error().withContext(planLabel(q));
      fn = *f;
    }
    CGRAPH_RETURN_IF_ERROR(planNode(q, fn, false));
  }
  return Error::success();
}

Error CudaExecutable::planSetCondition(CondPlan &c, uint32_t mode, Launch &l) {
  auto fn = dev_->setConditionKernel();
  if (!fn) return fn.error().withContext(planLabel(c.node));
  const uint32_t ci = uint32_t(&c - conds_.data());
  l.fn = *fn;
  // table, slot, offset, handle (set when the graph is built), state, mode, max trips
  l.vals = {tableAddress(), c.op.slot, c.op.offset, 0,
            static_cast<CudaBuffer *>(condState_.get())->ptr() + 8 * ci, mode, c.op.maxTrips};
  l.grid[0] = l.grid[1] = l.grid[2] = 1;
  l.block[0] = l.block[1] = l.block[2] = 1;
  l.smem = 0;
  l.bind();
  return Error::success();
}

Error CudaExecutable::updateEveryKernelNode() {
  CGRAPH_RETURN_IF_ERROR(dev_->makeCurrent());
  for (PartGraph &pg : parts_)
    for (auto &kn : pg.kernelNodes) {
      if (Error e = driver_->execKernelNodeSetParams(pg.exec, kn.second, plans_[kn.first].launch))
        return e.withContext(planLabel(kn.first));
      ++dev_->counters().nodeUpdates;
    }
  return Error::success();
}

Error CudaExecutable::partitionRebuilt(uint32_t pi) {
  for (uint32_t m : parts_[pi].nodes) {
    const GraphNodeRef &r = graphNodes_[m];
    if (nodeEnabled(m) || !r.node || !r.enableable) continue;
    CUresult rc = api_->cuGraphNodeSetEnabled(CUgraphExec(parts_[pi].exec), CUgraphNode(r.node), 0u);
    if (rc != CUDA_SUCCESS) return cuError(*api_, "cuGraphNodeSetEnabled", rc).withContext(planLabel(m));
  }
  return Error::success();
}

Error CudaExecutable::applyUpdate(const std::vector<uint32_t> &nodes) {
  CGRAPH_RETURN_IF_ERROR(dev_->makeCurrent());
  for (uint32_t n : nodes) {
    // A node inside a child graph has no exec node of its own: its subgraph is
    // flattened into the partition's graph first (one rebuild, then node updates);
    // nodes disabled on the old executable graph are disabled on the new one.
    uint32_t rebuilt = kNone;
    CGRAPH_RETURN_IF_ERROR(flattenGroupOf(n, &rebuilt));
    if (rebuilt != kNone) CGRAPH_RETURN_IF_ERROR(partitionRebuilt(rebuilt));
    const Node &node = graph_.nodes[n];
    NodePlan &p = plans_[n];
    const GraphNodeRef *ref = n < graphNodes_.size() && graphNodes_[n].node ? &graphNodes_[n] : nullptr;
    if (node.kind == NodeKind::Kernel) {
      auto f = kernelFunction(node.kernel, useCache_);
      if (!f) return f.error().withContext(planLabel(n));
      Launch l;
      l.fn = *f;
      p.paramRange = readsParams(node);
      CGRAPH_RETURN_IF_ERROR(planKernel(n, rangeParams_, l, p.paramRange));
      p.launch = std::move(l);
      p.launch.bind();
      if (ref && ref->kernel) {
        if (Error e = driver_->execKernelNodeSetParams(parts_[ref->part].exec, ref->node, p.launch))
          return e.withContext(planLabel(n));
        ++dev_->counters().nodeUpdates;
      }
    }
    // Enable state: set on every update of the node (cheap, and idempotent). Nodes
    // that are empty graph nodes (barriers) do nothing either way.
    if (ref && ref->enableable) {
      CUresult rc = api_->cuGraphNodeSetEnabled(CUgraphExec(parts_[ref->part].exec), CUgraphNode(ref->node),
                                                nodeEnabled(n) ? 1u : 0u);
      if (rc != CUDA_SUCCESS) return cuError(*api_, "cuGraphNodeSetEnabled", rc).withContext(planLabel(n));
    }
  }
  return Error::success();
}

Error CudaExecutable::launchGraphsOnly() {
  for (PartGraph &pg : parts_)
    if (pg.host) return makeError("launchGraphsOnly: the graph has a host-task partition");
  return launchReplayGraphsOnly();
}

Error launchGraphsOnly(rt::Executable &exe) {
  auto *e = dynamic_cast<CudaExecutable *>(&exe);
  if (!e) return makeError("launchGraphsOnly: not a cuda executable");
  return e->launchGraphsOnly();
}

Error updateEveryKernelNode(rt::Executable &exe) {
  auto *e = dynamic_cast<CudaExecutable *>(&exe);
  if (!e) return makeError("updateEveryKernelNode: not a cuda executable");
  return e->updateEveryKernelNode();
}

Expected<std::unique_ptr<rt::Executable>> makeExecutable(CudaDevice &device, const Graph *original, Graph flattened,
                                                         const rt::FinalizeOptions &opts, double flattenUs) {
  auto exe = std::make_unique<CudaExecutable>(device, std::move(flattened), opts);
  CGRAPH_RETURN_IF_ERROR(exe->prepare(opts, original, flattenUs));
  return std::unique_ptr<rt::Executable>(std::move(exe));
}

} // namespace cgraph::cuda
