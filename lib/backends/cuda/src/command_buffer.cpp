// The executable: the plan per node (kernel launches with the table ABI, memcpy/memset
// descriptions, host tasks), the slot/param table, and one instantiated CUDA graph per
// device partition (see exec.h for the table layout).
#include "exec.h"

#include "cgraph/backends/gpu_common/launch_plan.h"
#include "cgraph/backends/gpu_common/replay_steps.h"

#include "cgraph/graph/flatten.h"
#include "cgraph/graph/order.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <unordered_map>

namespace cgraph::cuda {

namespace {

CUDA_KERNEL_NODE_PARAMS kernelParams(Launch &l) {
  CUDA_KERNEL_NODE_PARAMS kp;
  std::memset(&kp, 0, sizeof(kp));
  kp.func = l.fn;
  kp.gridDimX = l.grid[0];
  kp.gridDimY = l.grid[1];
  kp.gridDimZ = l.grid[2];
  kp.blockDimX = l.block[0];
  kp.blockDimY = l.block[1];
  kp.blockDimZ = l.block[2];
  kp.sharedMemBytes = l.smem;
  kp.kernelParams = l.ptrs.data();
  return kp;
}

} // namespace

CudaExecutable::~CudaExecutable() {
  if (dev_->makeCurrent()) return;
  api_->cuStreamSynchronize(dev_->stream());
  for (PartGraph &p : parts_) {
    if (p.exec) api_->cuGraphExecDestroy(p.exec);
    if (p.graph) api_->cuGraphDestroy(p.graph);
  }
  for (Staging &st : staging_) {
    if (st.copied) api_->cuEventDestroy(st.copied);
    if (st.host) api_->cuMemFreeHost(st.host);
  }
}

std::string CudaExecutable::nodeLabel(uint32_t n) const {
  if (n >= graph_.nodes.size()) return lifted_[n - graph_.nodes.size()].label;
  const Node &node = graph_.nodes[n];
  return node.name.empty() ? "node #" + std::to_string(n) : "node '" + node.name + "'";
}

Error CudaExecutable::rangeOf(uint32_t n, const std::vector<uint64_t> &params, Launch &l) const {
  return gpu::planRange(nodeAt(n), kernelAt(n), params, nodeLabel(n), "CUDA", l);
}

Expected<CUfunction> CudaExecutable::kernelFunction(uint32_t k, bool useCache) {
  if (fns_[k]) return fns_[k];
  const Kernel &kern = graph_.kernels[k];
  auto &mod = byModule_[kern.module];
  if (!mod) {
    auto m = dev_->loadModule(graph_.modules[kern.module], useCache);
    if (!m) return m.error();
    mod = *m;
    modules_.push_back(mod);
  }
  auto f = mod->function(kern.name);
  if (!f) return f.error();
  fns_[k] = *f;
  return *f;
}

Error CudaExecutable::planKernel(uint32_t n, const std::vector<uint64_t> &params, Launch &l, bool paramRange) {
  const Node &node = nodeAt(n);
  const Kernel &kern = kernelAt(n);
  CGRAPH_RETURN_IF_ERROR(gpu::planKernelArgs(node, kern, static_cast<CudaBuffer *>(tableBuf_.get())->ptr(),
                                             nSlots_, nodeLabel(n), 48 * 1024, l));
  // A range from parameters is computed again before the first launch (submit); the
  // values at hand (defaults, placeholders) need not give a launchable one.
  if (Error e = rangeOf(n, params, l); e && !paramRange) return e;
  l.bind();
  return Error::success();
}

// Copies and fills: the builtin kernel launch (always prepared: replay uses it when a
// binding-table slot is involved, eager when cuMemcpy3D/cuMemset cannot express it).
Error CudaExecutable::planCopyOrFill(uint32_t n) {
  const Node &node = nodeAt(n);
  NodePlan &p = plans_[n];
  const uint64_t tbl = static_cast<CudaBuffer *>(tableBuf_.get())->ptr();
  if (node.kind == NodeKind::Fill) {
    const FillOp &f = node.fill;
    auto fn = builtins_->function("cgraph_fill");
    if (!fn) return fn.error().withContext(nodeLabel(n));
    // table, (dst), (bytes), (pattern), (psize), offsets x3, dim
    const uint64_t patIndex = nSlots_ + nParams_ + patterns_.size();
    if (8 * (table_.size() + 1) > tableBuf_->size())
      return makeError(nodeLabel(n) + ": no room for the fill pattern in the slot table (internal error)");
    auto pb = dev_->allocate(std::max<size_t>(1, f.pattern.size()), 16);
    if (!pb) return pb.error().withContext(nodeLabel(n));
    if (!f.pattern.empty()) CGRAPH_RETURN_IF_ERROR(dev_->write(**pb, 0, f.pattern.data(), f.pattern.size()));
    table_.push_back(static_cast<CudaBuffer *>(pb->get())->ptr());
    patterns_.push_back(std::move(*pb));
    p.launch.fn = *fn;
    gpu::planFillLaunch(f, tbl, patIndex, p.launch);
  } else {
    auto fn = builtins_->function("cgraph_copy");
    if (!fn) return fn.error().withContext(nodeLabel(n));
    p.launch.fn = *fn;
    gpu::planCopyLaunch(node, tbl, p.launch);
  }
  p.launch.bind();
  return Error::success();
}

Error CudaExecutable::prepare(const rt::FinalizeOptions &opts) {
  const uint32_t nn = uint32_t(graph_.nodes.size());
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
  bool anyHost = false, anyCopy = false;
  for (uint32_t n = 0; n < nn; ++n) {
    const Node &node = graph_.nodes[n];
    if (node.kind == NodeKind::Host) anyHost = true;
    if (node.kind == NodeKind::Copy || node.kind == NodeKind::CopyRect || node.kind == NodeKind::Fill) anyCopy = true;
    if (node.kind != NodeKind::Kernel) continue;
    auto f = kernelFunction(node.kernel, opts.useCache);
    if (!f) return f.error().withContext(nodeLabel(n));
    for (uint32_t k : node.alternatives) {
      auto a = kernelFunction(k, opts.useCache);
      if (!a) return a.error().withContext(nodeLabel(n) + ": alternative '" + graph_.kernels[k].name + "'");
    }
  }
  if (anyCopy) {
    auto b = dev_->builtinModule();
    if (!b) return b.error();
    builtins_ = *b;
  }
  if (anyHost) {
    auto h = rt::HostTasks::prepare(graph_, opts.host);
    if (!h) return h.error();
    hostTasks_ = std::move(*h);
  }

  // Slots and the table.
  auto owned = allocateOwnedSlots(opts.host, 16);
  if (!owned) return owned.error();
  owned_ = std::move(*owned);
  gpu::initTable(
      graph_,
      [&](uint32_t s, uint64_t *address, uint64_t *bytes) {
        if (!slotOwned(s)) return false;
        *address = static_cast<CudaBuffer *>(owned_[s].get())->ptr();
        *bytes = owned_[s]->size();
        return true;
      },
      table_, slotLength_, nSlots_, nParams_);
  // One table entry per fill pattern, the fills of conditional bodies included.
  std::function<uint64_t(const Graph &, int)> countFills = [&](const Graph &g, int depth) -> uint64_t {
    uint64_t c = 0;
    for (const Node &node : g.nodes) c += node.kind == NodeKind::Fill;
    if (depth < 64)
      for (const Graph &sub : g.subgraphs) c += countFills(sub, depth + 1);
    return c;
  };
  const uint64_t fills = countFills(graph_, 0);
  auto tb = dev_->allocate(8 * std::max<uint64_t>(1, table_.size() + fills), 16);
  if (!tb) return tb.error().withContext("slot table");
  tableBuf_ = std::move(*tb);
  rangeParams_ = std::vector<uint64_t>(table_.begin() + nSlots_, table_.end());

  // Node plans.
  plans_.resize(nn);
  for (uint32_t n = 0; n < nn; ++n) {
    const Node &node = graph_.nodes[n];
    NodePlan &p = plans_[n];
    switch (node.kind) {
    case NodeKind::Kernel: {
      p.kind = NodePlan::Kernel;
      p.launch.fn = fns_[node.kernel];
      for (uint32_t d = 0; d < 3; ++d)
        p.paramRange |= node.range.global[d].param != kNone || node.range.local[d].param != kNone ||
                        node.range.offset[d].param != kNone;
      CGRAPH_RETURN_IF_ERROR(planKernel(n, rangeParams_, p.launch, p.paramRange));
      break;
    }
    case NodeKind::Copy:
    case NodeKind::CopyRect:
    case NodeKind::Fill:
      CGRAPH_RETURN_IF_ERROR(planCopyOrFill(n));
      p.kind = NodePlan::Kernel; // replaced by a memcpy/memset node in buildGraphs where possible
      break;
    case NodeKind::Host: p.kind = NodePlan::Host; break;
    case NodeKind::Conditional: break; // lifted below
    default: p.kind = NodePlan::Nop; break;
    }
  }
  std::vector<uint32_t> identitySlots(nSlots_), identityParams(graph_.params.size());
  for (uint32_t s = 0; s < nSlots_; ++s) identitySlots[s] = s;
  for (uint32_t q = 0; q < identityParams.size(); ++q) identityParams[q] = q;
  for (uint32_t n = 0; n < nn; ++n)
    if (graph_.nodes[n].kind == NodeKind::Conditional)
      CGRAPH_RETURN_IF_ERROR(liftConditional(n, graph_, identitySlots, identityParams));
  if (!conds_.empty()) {
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
    pinned_ = std::make_shared<PinnedPool>(*dev_, 8 * conds_.size());
  }

  for (const Partition &part : partitions) {
    PartGraph pg;
    pg.nodes = part.nodes;
    for (uint32_t n : part.nodes) pg.host |= graph_.nodes[n].kind == NodeKind::Host;
    parts_.push_back(std::move(pg));
  }
  CGRAPH_RETURN_IF_ERROR(uploadTable(rangeParams_));
  if (mode_ == rt::ExecMode::Replay) CGRAPH_RETURN_IF_ERROR(buildGraphs());
  return Error::success();
}

// A copy/fill node as a memcpy/memset node: only when every slot it touches is
// runtime-owned (fixed address) and cuMemcpy3D/cuMemset can express it.
bool cudaMemcpyFor(const Node &node, CUdeviceptr src, CUdeviceptr dst, CUDA_MEMCPY3D &m) {
  gpu::Copy3D c;
  const bool ok = gpu::copy3DFor(node, src, dst, c);
  std::memset(&m, 0, sizeof(m));
  m.srcMemoryType = CU_MEMORYTYPE_DEVICE;
  m.dstMemoryType = CU_MEMORYTYPE_DEVICE;
  m.srcDevice = c.src;
  m.dstDevice = c.dst;
  if (!ok) return false;
  m.WidthInBytes = c.width;
  m.Height = c.height;
  m.Depth = c.depth;
  m.srcPitch = c.srcPitch;
  m.dstPitch = c.dstPitch;
  m.srcHeight = c.srcHeight;
  m.dstHeight = c.dstHeight;
  return true;
}

bool cudaMemsetFor(const FillOp &f, CUdeviceptr base, CUDA_MEMSET_NODE_PARAMS &m) {
  gpu::Memset g;
  if (!gpu::memsetFor(f, base, g)) return false;
  std::memset(&m, 0, sizeof(m));
  m.dst = g.dst;
  m.elementSize = g.elementSize;
  m.width = g.width;
  m.height = 1;
  m.pitch = f.bytes;
  m.value = g.value;
  return true;
}

Expected<CUgraphNode> CudaExecutable::addGraphNode(CUgraph g, uint32_t p, const std::vector<CUgraphNode> &deps,
                                                   uint32_t part) {
  CUcontext ctx = dev_->context();
  const Node &node = nodeAt(p);
  NodePlan &plan = plans_[p];
  CUgraphNode gn = nullptr;
  if (plan.kind == NodePlan::Cond) {
    CondPlan &c = conds_[plan.cond];
    const std::string what = nodeLabel(p);
    // The handle resets to 0 at every launch of the graph (CU_GRAPH_COND_ASSIGN_DEFAULT),
    // so a disabled set-condition kernel (the node disabled) skips the body.
    CUresult rc = api_->cuGraphConditionalHandleCreate(&c.handle, g, ctx, 0, CU_GRAPH_COND_ASSIGN_DEFAULT);
    if (rc != CUDA_SUCCESS) return cuError(*api_, "cuGraphConditionalHandleCreate", rc).withContext(what);
    c.pre.vals[3] = c.handle;
    if (c.op.kind == CondKind::While) c.post.vals[3] = c.handle; // `if` has no end-of-trip kernel
    CUgraphNode pre = nullptr;
    CUDA_KERNEL_NODE_PARAMS kp = kernelParams(c.pre);
    rc = api_->cuGraphAddKernelNode(&pre, g, deps.data(), deps.size(), &kp);
    if (rc != CUDA_SUCCESS) return cuError(*api_, "cuGraphAddKernelNode", rc).withContext(what + ": set-condition");
    CUgraphNodeParams np;
    std::memset(&np, 0, sizeof(np));
    np.type = CU_GRAPH_NODE_TYPE_CONDITIONAL;
    np.conditional.handle = c.handle;
    np.conditional.type = c.op.kind == CondKind::While ? CU_GRAPH_COND_TYPE_WHILE : CU_GRAPH_COND_TYPE_IF;
    np.conditional.size = 1;
    np.conditional.ctx = ctx;
    rc = api_->cuGraphAddNode(&gn, g, &pre, nullptr, 1, &np);
    if (rc != CUDA_SUCCESS) return cuError(*api_, "cuGraphAddNode (conditional)", rc).withContext(what);
    CUgraph body = np.conditional.phGraph_out[0];
    ++dev_->counters().conditionalNodes;
    std::unordered_map<uint32_t, CUgraphNode> inBody;
    std::unordered_map<uint32_t, bool> hasSucc;
    for (uint32_t q : c.body) {
      std::vector<CUgraphNode> d;
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
    std::vector<CUgraphNode> sinks;
    for (uint32_t q : c.body)
      if (!hasSucc.count(q)) sinks.push_back(inBody[q]);
    CUgraphNode last = nullptr;
    if (c.op.kind == CondKind::While) {
      CUDA_KERNEL_NODE_PARAMS pk = kernelParams(c.post);
      rc = api_->cuGraphAddKernelNode(&last, body, sinks.data(), sinks.size(), &pk);
      if (rc != CUDA_SUCCESS) return cuError(*api_, "cuGraphAddKernelNode", rc).withContext(what + ": end of trip");
    } else if (c.body.empty()) {
      rc = api_->cuGraphAddEmptyNode(&last, body, nullptr, 0);
      if (rc != CUDA_SUCCESS) return cuError(*api_, "cuGraphAddEmptyNode", rc).withContext(what + ": body");
    }
    if (part != kNone && p < graphNodes_.size()) graphNodes_[p] = GraphNodeRef{part, pre, false, true};
    return gn;
  }
  CUresult rc = CUDA_SUCCESS;
  const char *call = "";
  CUDA_MEMCPY3D cp;
  CUDA_MEMSET_NODE_PARAMS ms;
  const bool copy = node.kind == NodeKind::Copy || node.kind == NodeKind::CopyRect;
  bool isKernel = false;
  if (copy && slotOwned(node.copy.srcSlot) && slotOwned(node.copy.dstSlot) &&
      cudaMemcpyFor(node, slotBase(node.copy.srcSlot), slotBase(node.copy.dstSlot), cp)) {
    call = "cuGraphAddMemcpyNode";
    rc = api_->cuGraphAddMemcpyNode(&gn, g, deps.data(), deps.size(), &cp, ctx);
  } else if (node.kind == NodeKind::Fill && slotOwned(node.fill.slot) &&
             cudaMemsetFor(node.fill, slotBase(node.fill.slot), ms)) {
    call = "cuGraphAddMemsetNode";
    rc = api_->cuGraphAddMemsetNode(&gn, g, deps.data(), deps.size(), &ms, ctx);
  } else if (plan.kind == NodePlan::Kernel) {
    CUDA_KERNEL_NODE_PARAMS kp = kernelParams(plan.launch);
    call = "cuGraphAddKernelNode";
    rc = api_->cuGraphAddKernelNode(&gn, g, deps.data(), deps.size(), &kp);
    isKernel = true;
  } else {
    call = "cuGraphAddEmptyNode";
    rc = api_->cuGraphAddEmptyNode(&gn, g, deps.data(), deps.size());
  }
  if (rc != CUDA_SUCCESS) return cuError(*api_, call, rc).withContext(nodeLabel(p));
  if (part != kNone) {
    if (isKernel) parts_[part].kernelNodes.push_back({p, gn});
    graphNodes_[p] = GraphNodeRef{part, gn, isKernel, call != std::string("cuGraphAddEmptyNode")};
  }
  return gn;
}

Error CudaExecutable::buildGraphs() {
  graphNodes_.assign(graph_.nodes.size(), GraphNodeRef{});
  return gpu::buildPartitionGraphs<CUgraphNode>(
      graph_.nodes.size(), preds_, parts_,
      [&](PartGraph &pg) -> Error {
        CGRAPH_CU_CHECK(*api_, "cuGraphCreate", api_->cuGraphCreate(&pg.graph, 0));
        return Error::success();
      },
      [&](CUgraph g, uint32_t n, const std::vector<CUgraphNode> &deps, uint32_t pi) {
        return addGraphNode(g, n, deps, pi);
      },
      [&](PartGraph &pg) -> Error {
        CGRAPH_CU_CHECK(*api_, "cuGraphInstantiate", api_->cuGraphInstantiate(&pg.exec, pg.graph, 0));
        CGRAPH_CU_CHECK(*api_, "cuGraphUpload", api_->cuGraphUpload(pg.exec, dev_->stream()));
        ++dev_->counters().graphsInstantiated;
        return Error::success();
      });
}

// ---- conditional nodes ---------------------------------------------------------------

namespace {

// Why the conditionals of `g` (a flattened graph or body) cannot be CUDA conditional
// nodes; success where they can.
Error bodiesNative(const Graph &g, int depth) {
  if (depth > 16) return makeError("conditional nodes nested deeper than 16 levels");
  for (uint32_t n = 0; n < g.nodes.size(); ++n) {
    const Node &node = g.nodes[n];
    if (node.kind != NodeKind::Conditional) continue;
    const std::string what = node.name.empty() ? "node #" + std::to_string(n) : "node '" + node.name + "'";
    if (node.subgraph >= g.subgraphs.size()) return makeError(what + ": no body");
    auto body = flattenSubgraphs(g.subgraphs[node.subgraph]);
    if (!body) return body.error().withContext(what + ": body");
    if (!body->exprs.empty()) return makeError(what + ": its body has stored expressions");
    for (const Node &b : body->nodes) {
      if (b.kind == NodeKind::Host) return makeError(what + ": its body has a host task");
      if (b.kind == NodeKind::Kernel)
        for (uint32_t d = 0; d < 3; ++d)
          if (b.range.global[d].param != kNone || b.range.local[d].param != kNone ||
              b.range.offset[d].param != kNone)
            return makeError(what + ": an nd-range in its body reads a parameter");
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
  if (mode != rt::ExecMode::Replay) return makeError("eager mode runs conditionals node by node on the host");
  if (const char *e = std::getenv("CGRAPH_CUDA_CONDITIONALS"); e && std::string(e) == "staged")
    return makeError("CGRAPH_CUDA_CONDITIONALS=staged");
  auto k = device.setConditionKernel();
  if (!k) return k.error();
  return bodiesNative(flattened, 0);
}

Error CudaExecutable::liftConditional(uint32_t p, const Graph &owner, const std::vector<uint32_t> &slotMap,
                                      const std::vector<uint32_t> &paramMap) {
  const Node cn = nodeAt(p); // a copy: lifting grows lifted_
  const std::string what = nodeLabel(p);
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
  plans_[p].kind = NodePlan::Cond;
  plans_[p].cond = ci;
  const uint32_t base = uint32_t(graph_.nodes.size() + lifted_.size());
  std::vector<uint32_t> planOf(body.nodes.size());
  for (uint32_t b = 0; b < body.nodes.size(); ++b) planOf[b] = base + b;
  // Lift every node first (plan indices are stable), then plan them in order.
  for (uint32_t b = 0; b < body.nodes.size(); ++b) {
    LiftedNode ln;
    ln.node = body.nodes[b];
    Node &x = ln.node;
    ln.label = (x.name.empty() ? "node #" + std::to_string(b) : "node '" + x.name + "'") + " (body of " + what + ")";
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
    NodePlan &bp = plans_[q];
    switch (x.kind) {
    case NodeKind::Kernel: {
      const Kernel &kern = kernelAt(q);
      auto m = dev_->loadModule(body.modules[kern.module], useCache_);
      if (!m) return m.error().withContext(nodeLabel(q));
      modules_.push_back(*m);
      auto f = (*m)->function(kern.name);
      if (!f) return f.error().withContext(nodeLabel(q));
      bp.kind = NodePlan::Kernel;
      bp.launch.fn = *f;
      CGRAPH_RETURN_IF_ERROR(planKernel(q, rangeParams_, bp.launch, false));
      break;
    }
    case NodeKind::Copy:
    case NodeKind::CopyRect:
    case NodeKind::Fill:
      if (!builtins_) {
        auto bm = dev_->builtinModule();
        if (!bm) return bm.error();
        builtins_ = *bm;
      }
      CGRAPH_RETURN_IF_ERROR(planCopyOrFill(q));
      plans_[q].kind = NodePlan::Kernel;
      break;
    case NodeKind::Conditional:
      CGRAPH_RETURN_IF_ERROR(liftConditional(q, body, bodySlots, bodyParams));
      break;
    default: plans_[q].kind = NodePlan::Nop; break;
    }
  }
  return Error::success();
}

Error CudaExecutable::planSetCondition(CondPlan &c, uint32_t mode, Launch &l) {
  auto fn = dev_->setConditionKernel();
  if (!fn) return fn.error().withContext(nodeLabel(c.node));
  const uint32_t ci = uint32_t(&c - conds_.data());
  l.fn = *fn;
  // table, slot, offset, handle (set when the graph is built), state, mode, max trips
  l.vals = {static_cast<CudaBuffer *>(tableBuf_.get())->ptr(), c.op.slot, c.op.offset, 0,
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
      CUDA_KERNEL_NODE_PARAMS kp = kernelParams(plans_[kn.first].launch);
      CUresult rc = api_->cuGraphExecKernelNodeSetParams(pg.exec, kn.second, &kp);
      if (rc != CUDA_SUCCESS) return cuError(*api_, "cuGraphExecKernelNodeSetParams", rc).withContext(nodeLabel(kn.first));
      ++dev_->counters().nodeUpdates;
    }
  return Error::success();
}

Error CudaExecutable::applyUpdate(const std::vector<uint32_t> &nodes) {
  CGRAPH_RETURN_IF_ERROR(dev_->makeCurrent());
  for (uint32_t n : nodes) {
    const Node &node = graph_.nodes[n];
    NodePlan &p = plans_[n];
    const GraphNodeRef *ref = n < graphNodes_.size() && graphNodes_[n].node ? &graphNodes_[n] : nullptr;
    if (node.kind == NodeKind::Kernel) {
      auto f = kernelFunction(node.kernel, useCache_);
      if (!f) return f.error().withContext(nodeLabel(n));
      Launch l;
      l.fn = *f;
      p.paramRange = false;
      for (uint32_t d = 0; d < 3; ++d)
        p.paramRange |= node.range.global[d].param != kNone || node.range.local[d].param != kNone ||
                        node.range.offset[d].param != kNone;
      CGRAPH_RETURN_IF_ERROR(planKernel(n, rangeParams_, l, p.paramRange));
      p.launch = std::move(l);
      p.launch.bind();
      if (ref && ref->kernel) {
        CUDA_KERNEL_NODE_PARAMS kp = kernelParams(p.launch);
        CUresult rc = api_->cuGraphExecKernelNodeSetParams(parts_[ref->part].exec, ref->node, &kp);
        if (rc != CUDA_SUCCESS) return cuError(*api_, "cuGraphExecKernelNodeSetParams", rc).withContext(nodeLabel(n));
        ++dev_->counters().nodeUpdates;
      }
    }
    // Enable state: set on every update of the node (cheap, and idempotent). Nodes
    // that are empty graph nodes (barriers) do nothing either way.
    if (ref && ref->enableable) {
      CUresult rc = api_->cuGraphNodeSetEnabled(parts_[ref->part].exec, ref->node, nodeEnabled(n) ? 1u : 0u);
      if (rc != CUDA_SUCCESS) return cuError(*api_, "cuGraphNodeSetEnabled", rc).withContext(nodeLabel(n));
    }
  }
  return Error::success();
}

Error updateEveryKernelNode(rt::Executable &exe) {
  auto *e = dynamic_cast<CudaExecutable *>(&exe);
  if (!e) return makeError("updateEveryKernelNode: not a cuda executable");
  return e->updateEveryKernelNode();
}

Expected<std::unique_ptr<rt::Executable>> makeExecutable(CudaDevice &device, Graph flattened,
                                                         const rt::FinalizeOptions &opts) {
  auto exe = std::make_unique<CudaExecutable>(device, std::move(flattened), opts);
  CGRAPH_RETURN_IF_ERROR(exe->prepare(opts));
  return std::unique_ptr<rt::Executable>(std::move(exe));
}

} // namespace cgraph::cuda
