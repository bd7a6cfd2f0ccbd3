// The executable: node plans (table-ABI launches planned by gpu_common's launch_plan.h,
// the code the cuda backend runs too), the slot/param table, one hipGraph per device
// partition, and submission (table upload when it changed, parameter-range node
// updates, graph launches; eager: launches one by one).
//
// The table (device memory, u64 entries), as the cuda backend's:
//   [0, slots)                 base address of each slot for this submission
//   [slots, slots + params)    parameter bits, then one int64 per stored expression
//   [slots + params, ...)      executable-owned fill patterns
#include "internal.h"

#include "cgraph/backends/gpu_common/launch_plan.h"
#include "cgraph/backends/gpu_common/replay_steps.h"
#include "cgraph/graph/order.h"
#include "cgraph/runtime/host_tasks.h"

#include <cstring>
#include <functional>

namespace cgraph::hip {

namespace {

struct Launch {
  hipFunction_t fn = nullptr;
  std::vector<uint64_t> vals; // one 8-byte cell per wrapper argument
  std::vector<void *> ptrs;   // kernelParams: pointers into vals
  unsigned grid[3] = {1, 1, 1}, block[3] = {1, 1, 1};
  unsigned smem = 0;
  void bind() {
    ptrs.resize(vals.size());
    for (size_t i = 0; i < vals.size(); ++i)
      ptrs[i] = &vals[i];
  }
};

hipKernelNodeParams kernelParams(Launch &l) {
  hipKernelNodeParams kp{};
  kp.func = reinterpret_cast<void *>(l.fn);
  kp.gridDim = dim3(l.grid[0], l.grid[1], l.grid[2]);
  kp.blockDim = dim3(l.block[0], l.block[1], l.block[2]);
  kp.sharedMemBytes = l.smem;
  kp.kernelParams = l.ptrs.data();
  kp.extra = nullptr;
  return kp;
}

hipMemcpy3DParms memcpyParams(const gpu::Copy3D &c) {
  hipMemcpy3DParms m;
  std::memset(&m, 0, sizeof(m));
  m.srcPtr = make_hipPitchedPtr(reinterpret_cast<void *>(uintptr_t(c.src)), c.srcPitch, c.width,
                                c.srcHeight);
  m.dstPtr = make_hipPitchedPtr(reinterpret_cast<void *>(uintptr_t(c.dst)), c.dstPitch, c.width,
                                c.dstHeight);
  m.extent = make_hipExtent(c.width, c.height, c.depth);
  m.kind = hipMemcpyDeviceToDevice;
  return m;
}

hipMemsetParams memsetParams(const gpu::Memset &g, uint64_t bytes) {
  hipMemsetParams m;
  std::memset(&m, 0, sizeof(m));
  m.dst = reinterpret_cast<void *>(uintptr_t(g.dst));
  m.elementSize = g.elementSize;
  m.width = g.width;
  m.height = 1;
  m.pitch = bytes;
  m.value = g.value;
  return m;
}

struct NodePlan {
  enum Kind { Kernel, Nop, Host } kind = Nop;
  Launch launch;           // kernels, and copies/fills as the builtin kernels
  bool paramRange = false; // the nd-range reads a parameter
};

struct PartGraph {
  std::vector<uint32_t> nodes;
  bool host = false;
  hipGraph_t graph = nullptr;
  hipGraphExec_t exec = nullptr;
  std::vector<std::pair<uint32_t, hipGraphNode_t>> kernelNodes; // node -> graph node
};

class HipExecutable final : public rt::Executable {
public:
  HipExecutable(HipDevice &device, Graph flattened, const rt::FinalizeOptions &opts)
      : rt::Executable(device, std::move(flattened), opts.mode), dev_(&device),
        api_(&device.api()) {}
  ~HipExecutable() override;
  Error prepare(const rt::FinalizeOptions &opts);

protected:
  Expected<rt::EventPtr> submit(const std::vector<ResolvedSlot> &slots,
                                const std::vector<uint64_t> &params,
                                const rt::SubmitOptions &opts) override;

private:
  std::string nodeLabel(uint32_t n) const {
    const Node &node = graph_.nodes[n];
    return node.name.empty() ? "node #" + std::to_string(n) : "node '" + node.name + "'";
  }
  uint64_t tableAddress() const { return static_cast<HipBuffer *>(tableBuf_.get())->address(); }
  bool slotOwned(uint32_t s) const { return s < owned_.size() && owned_[s] != nullptr; }
  uint64_t slotBase(uint32_t s) const { return s < table_.size() ? table_[s] : 0; }
  Expected<hipFunction_t> kernelFunction(uint32_t k, bool useCache);
  Error planCopyOrFill(uint32_t n);
  Expected<hipGraphNode_t> addGraphNode(hipGraph_t g, uint32_t n,
                                        const std::vector<hipGraphNode_t> &deps, uint32_t part);
  Error buildGraphs();
  Error uploadTable();
  Error updateParamRanges(const std::vector<uint64_t> &params);
  Error runHost(uint32_t n, const std::vector<uint64_t> &params);
  Error runNodeEager(uint32_t n, const std::vector<uint64_t> &params);

  HipDevice *dev_;
  const HipApi *api_;
  std::vector<std::unique_ptr<rt::Buffer>> owned_;
  std::vector<std::shared_ptr<const LoadedModule>> modules_;
  std::vector<std::shared_ptr<const LoadedModule>> byModule_;
  std::shared_ptr<const LoadedModule> builtins_;
  std::vector<hipFunction_t> fns_;
  std::unique_ptr<rt::HostTasks> hostTasks_;
  std::vector<NodePlan> plans_;
  std::vector<PartGraph> parts_;
  std::vector<std::vector<uint32_t>> preds_;
  std::unique_ptr<rt::Buffer> tableBuf_;
  std::vector<std::unique_ptr<rt::Buffer>> patterns_;
  std::vector<uint64_t> table_, uploaded_, slotLength_, rangeParams_;
  void *staging_ = nullptr;          // pinned host copy of the table being uploaded
  hipEvent_t stagingDone_ = nullptr; // recorded after the upload that reads staging_
  bool stagingPending_ = false;
  bool rangesResolved_ = false;
  uint32_t nSlots_ = 0, nParams_ = 0;
};

HipExecutable::~HipExecutable() {
  if (dev_->makeCurrent()) return;
  (void)api_->hipStreamSynchronize(dev_->stream());
  for (PartGraph &p : parts_) {
    if (p.exec) (void)api_->hipGraphExecDestroy(p.exec);
    if (p.graph) (void)api_->hipGraphDestroy(p.graph);
  }
  if (stagingDone_) (void)api_->hipEventDestroy(stagingDone_);
  if (staging_) (void)api_->hipHostFree(staging_);
}

Expected<hipFunction_t> HipExecutable::kernelFunction(uint32_t k, bool useCache) {
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

Error HipExecutable::planCopyOrFill(uint32_t n) {
  const Node &node = graph_.nodes[n];
  NodePlan &p = plans_[n];
  if (node.kind == NodeKind::Fill) {
    const FillOp &f = node.fill;
    auto fn = builtins_->function("cgraph_fill");
    if (!fn) return fn.error().withContext(nodeLabel(n));
    const uint64_t patIndex = nSlots_ + nParams_ + patterns_.size();
    if (8 * (table_.size() + 1) > tableBuf_->size())
      return makeError(nodeLabel(n) +
                       ": no room for the fill pattern in the slot table (internal error)");
    auto pb = dev_->allocate(std::max<size_t>(1, f.pattern.size()), 16);
    if (!pb) return pb.error().withContext(nodeLabel(n));
    if (!f.pattern.empty())
      CGRAPH_RETURN_IF_ERROR(dev_->write(**pb, 0, f.pattern.data(), f.pattern.size()));
    table_.push_back(static_cast<HipBuffer *>(pb->get())->address());
    patterns_.push_back(std::move(*pb));
    p.launch.fn = *fn;
    gpu::planFillLaunch(f, tableAddress(), patIndex, p.launch);
  } else {
    auto fn = builtins_->function("cgraph_copy");
    if (!fn) return fn.error().withContext(nodeLabel(n));
    p.launch.fn = *fn;
    gpu::planCopyLaunch(node, tableAddress(), p.launch);
  }
  p.kind = NodePlan::Kernel;
  p.launch.bind();
  return Error::success();
}

Error HipExecutable::prepare(const rt::FinalizeOptions &opts) {
  const uint32_t nn = uint32_t(graph_.nodes.size());
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

  byModule_.assign(graph_.modules.size(), nullptr);
  fns_.assign(graph_.kernels.size(), nullptr);
  bool anyHost = false, anyCopy = false;
  for (uint32_t n = 0; n < nn; ++n) {
    const Node &node = graph_.nodes[n];
    anyHost |= node.kind == NodeKind::Host;
    anyCopy |= node.kind == NodeKind::Copy || node.kind == NodeKind::CopyRect ||
               node.kind == NodeKind::Fill;
    if (node.kind != NodeKind::Kernel) continue;
    auto f = kernelFunction(node.kernel, opts.useCache);
    if (!f) return f.error().withContext(nodeLabel(n));
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

  auto owned = allocateOwnedSlots(opts.host, 16);
  if (!owned) return owned.error();
  owned_ = std::move(*owned);
  gpu::initTable(
      graph_,
      [&](uint32_t s, uint64_t *address, uint64_t *bytes) {
        if (!slotOwned(s)) return false;
        *address = static_cast<HipBuffer *>(owned_[s].get())->address();
        *bytes = owned_[s]->size();
        return true;
      },
      table_, slotLength_, nSlots_, nParams_);
  uint64_t fills = 0;
  for (const Node &node : graph_.nodes)
    fills += node.kind == NodeKind::Fill;
  auto tb = dev_->allocate(8 * std::max<uint64_t>(1, table_.size() + fills), 16);
  if (!tb) return tb.error().withContext("slot table");
  tableBuf_ = std::move(*tb);
  rangeParams_ = std::vector<uint64_t>(table_.begin() + nSlots_, table_.end());

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
      const Kernel &kern = graph_.kernels[node.kernel];
      CGRAPH_RETURN_IF_ERROR(gpu::planKernelArgs(node, kern, tableAddress(), nSlots_, nodeLabel(n),
                                                 64 * 1024, p.launch));
      // A range from parameters is computed again before the first launch (submit).
      if (Error e = gpu::planRange(node, kern, rangeParams_, nodeLabel(n), "HIP", p.launch);
          e && !p.paramRange)
        return e;
      p.launch.bind();
      break;
    }
    case NodeKind::Copy:
    case NodeKind::CopyRect:
    case NodeKind::Fill:
      CGRAPH_RETURN_IF_ERROR(planCopyOrFill(n));
      break;
    case NodeKind::Host:
      p.kind = NodePlan::Host;
      break;
    default:
      p.kind = NodePlan::Nop;
      break;
    }
  }
  for (const Partition &part : partitions) {
    PartGraph pg;
    pg.nodes = part.nodes;
    for (uint32_t n : part.nodes)
      pg.host |= graph_.nodes[n].kind == NodeKind::Host;
    parts_.push_back(std::move(pg));
  }
  CGRAPH_RETURN_IF_ERROR(uploadTable());
  if (mode_ == rt::ExecMode::Replay) CGRAPH_RETURN_IF_ERROR(buildGraphs());
  return Error::success();
}

// Copies and fills of runtime-owned slots become memcpy/memset nodes where the runtime
// can express them; the rest are the builtin table-reading kernels.
Expected<hipGraphNode_t> HipExecutable::addGraphNode(hipGraph_t g, uint32_t n,
                                                     const std::vector<hipGraphNode_t> &deps,
                                                     uint32_t part) {
  const Node &node = graph_.nodes[n];
  NodePlan &plan = plans_[n];
  hipGraphNode_t gn = nullptr;
  hipError_t rc = hipSuccess;
  const char *call = "";
  gpu::Copy3D c3;
  gpu::Memset ms;
  const bool copy = node.kind == NodeKind::Copy || node.kind == NodeKind::CopyRect;
  if (copy && slotOwned(node.copy.srcSlot) && slotOwned(node.copy.dstSlot) &&
      gpu::copy3DFor(node, slotBase(node.copy.srcSlot), slotBase(node.copy.dstSlot), c3)) {
    hipMemcpy3DParms m = memcpyParams(c3);
    call = "hipGraphAddMemcpyNode";
    rc = api_->hipGraphAddMemcpyNode(&gn, g, deps.data(), deps.size(), &m);
  } else if (node.kind == NodeKind::Fill && slotOwned(node.fill.slot) &&
             gpu::memsetFor(node.fill, slotBase(node.fill.slot), ms)) {
    hipMemsetParams m = memsetParams(ms, node.fill.bytes);
    call = "hipGraphAddMemsetNode";
    rc = api_->hipGraphAddMemsetNode(&gn, g, deps.data(), deps.size(), &m);
  } else if (plan.kind == NodePlan::Kernel) {
    hipKernelNodeParams kp = kernelParams(plan.launch);
    call = "hipGraphAddKernelNode";
    rc = api_->hipGraphAddKernelNode(&gn, g, deps.data(), deps.size(), &kp);
    if (rc == hipSuccess && node.kind == NodeKind::Kernel)
      parts_[part].kernelNodes.push_back({n, gn});
  } else {
    call = "hipGraphAddEmptyNode";
    rc = api_->hipGraphAddEmptyNode(&gn, g, deps.data(), deps.size());
  }
  if (rc != hipSuccess) return hipError(*api_, call, rc).withContext(nodeLabel(n));
  return gn;
}

Error HipExecutable::buildGraphs() {
  return gpu::buildPartitionGraphs<hipGraphNode_t>(
      graph_.nodes.size(), preds_, parts_,
      [&](PartGraph &pg) -> Error {
        CGRAPH_HIP_CHECK(*api_, "hipGraphCreate", api_->hipGraphCreate(&pg.graph, 0));
        return Error::success();
      },
      [&](hipGraph_t g, uint32_t n, const std::vector<hipGraphNode_t> &deps, uint32_t pi) {
        return addGraphNode(g, n, deps, pi);
      },
      [&](PartGraph &pg) -> Error {
        char log[1024] = {0};
        hipError_t rc =
            api_->hipGraphInstantiate(&pg.exec, pg.graph, nullptr, log, sizeof(log) - 1);
        if (rc != hipSuccess)
          return hipError(*api_, "hipGraphInstantiate", rc).withContext(log[0] ? log : "partition");
        ++dev_->counters().graphsInstantiated;
        return Error::success();
      });
}

// One upload when the table differs from what the device holds, from pinned memory that
// is reused only after the previous upload from it completed.
Error HipExecutable::uploadTable() {
  if (table_ == uploaded_) return Error::success();
  const size_t bytes = table_.size() * 8;
  if (!staging_) {
    CGRAPH_HIP_CHECK(*api_, "hipHostMalloc",
                     api_->hipHostMalloc(&staging_, std::max<size_t>(8, bytes), 0));
    CGRAPH_HIP_CHECK(*api_, "hipEventCreateWithFlags",
                     api_->hipEventCreateWithFlags(&stagingDone_, hipEventDisableTiming));
  }
  if (stagingPending_)
    CGRAPH_HIP_CHECK(*api_, "hipEventSynchronize", api_->hipEventSynchronize(stagingDone_));
  std::memcpy(staging_, table_.data(), bytes);
  CGRAPH_HIP_CHECK(*api_, "hipMemcpyHtoDAsync",
                   api_->hipMemcpyHtoDAsync(static_cast<HipBuffer *>(tableBuf_.get())->ptr(),
                                            staging_, bytes, dev_->stream()));
  CGRAPH_HIP_CHECK(*api_, "hipEventRecord", api_->hipEventRecord(stagingDone_, dev_->stream()));
  stagingPending_ = true;
  uploaded_ = table_;
  ++dev_->counters().tableUploads;
  return Error::success();
}

// Nd-ranges that read parameters: recomputed; only the nodes whose launch changed are
// set again on the instantiated graph.
Error HipExecutable::updateParamRanges(const std::vector<uint64_t> &params) {
  return gpu::updateParamRanges(
      params, rangeParams_, rangesResolved_, parts_, plans_,
      [&](uint32_t n, const std::vector<uint64_t> &ps, Launch &l) {
        const Node &node = graph_.nodes[n];
        return gpu::planRange(node, graph_.kernels[node.kernel], ps, nodeLabel(n), "HIP", l);
      },
      [&](PartGraph &pg, hipGraphNode_t node, uint32_t n, Launch &l) -> Error {
        hipKernelNodeParams kp = kernelParams(l);
        hipError_t rc = api_->hipGraphExecKernelNodeSetParams(pg.exec, node, &kp);
        if (rc != hipSuccess)
          return hipError(*api_, "hipGraphExecKernelNodeSetParams", rc).withContext(nodeLabel(n));
        ++dev_->counters().nodeUpdates;
        return Error::success();
      });
}

Error HipExecutable::runHost(uint32_t n, const std::vector<uint64_t> &params) {
  hipStream_t s = dev_->stream();
  auto dev = [&](uint32_t slot) { return reinterpret_cast<void *>(uintptr_t(slotBase(slot))); };
  return gpu::runHostTask(
      graph_, n, nSlots_, slotLength_, *hostTasks_, params,
      [&]() -> Error {
        CGRAPH_HIP_CHECK(*api_, "hipStreamSynchronize", api_->hipStreamSynchronize(s));
        return Error::success();
      },
      [&](void *dst, uint32_t slot, size_t bytes) -> Error {
        CGRAPH_HIP_CHECK(*api_, "hipMemcpyDtoHAsync", api_->hipMemcpyDtoHAsync(dst, dev(slot), bytes, s));
        return Error::success();
      },
      [&](uint32_t slot, const void *src, size_t bytes) -> Error {
        CGRAPH_HIP_CHECK(*api_, "hipMemcpyHtoDAsync",
                         api_->hipMemcpyHtoDAsync(dev(slot), const_cast<void *>(src), bytes, s));
        return Error::success();
      });
}

Error HipExecutable::runNodeEager(uint32_t n, const std::vector<uint64_t> &params) {
  if (!nodeEnabled(n)) return Error::success();
  const Node &node = graph_.nodes[n];
  NodePlan &p = plans_[n];
  hipStream_t s = dev_->stream();
  hipError_t rc = hipSuccess;
  const char *call = "";
  if (node.kind == NodeKind::Host) return runHost(n, params).withContext(nodeLabel(n));
  if (p.kind != NodePlan::Kernel) return Error::success();
  if (node.kind == NodeKind::Kernel && p.paramRange)
    CGRAPH_RETURN_IF_ERROR(
        gpu::planRange(node, graph_.kernels[node.kernel], params, nodeLabel(n), "HIP", p.launch));
  gpu::Copy3D c3;
  gpu::Memset ms;
  if ((node.kind == NodeKind::Copy || node.kind == NodeKind::CopyRect) &&
      gpu::copy3DFor(node, slotBase(node.copy.srcSlot), slotBase(node.copy.dstSlot), c3)) {
    hipMemcpy3DParms m = memcpyParams(c3);
    call = "hipMemcpy3DAsync";
    rc = api_->hipMemcpy3DAsync(&m, s);
  } else if (node.kind == NodeKind::Fill &&
             gpu::memsetFor(node.fill, slotBase(node.fill.slot), ms)) {
    hipDeviceptr_t dst = reinterpret_cast<hipDeviceptr_t>(uintptr_t(ms.dst));
    if (ms.elementSize == 1) {
      call = "hipMemsetD8Async";
      rc = api_->hipMemsetD8Async(dst, uint8_t(ms.value), ms.width, s);
    } else if (ms.elementSize == 2) {
      call = "hipMemsetD16Async";
      rc = api_->hipMemsetD16Async(dst, uint16_t(ms.value), ms.width, s);
    } else {
      call = "hipMemsetD32Async";
      rc = api_->hipMemsetD32Async(dst, int(ms.value), ms.width, s);
    }
  } else {
    Launch &l = p.launch;
    call = "hipModuleLaunchKernel";
    rc = api_->hipModuleLaunchKernel(l.fn, l.grid[0], l.grid[1], l.grid[2], l.block[0], l.block[1],
                                     l.block[2], l.smem, s, l.ptrs.data(), nullptr);
  }
  if (rc != hipSuccess) return hipError(*api_, call, rc).withContext(nodeLabel(n));
  return Error::success();
}

Expected<rt::EventPtr> HipExecutable::submit(const std::vector<ResolvedSlot> &slots,
                                             const std::vector<uint64_t> &params,
                                             const rt::SubmitOptions &opts) {
  if (opts.profile) return makeError("hip: per-node timestamps are not supported");
  for (const rt::EventPtr &e : opts.waitFor) {
    if (!e || dynamic_cast<HipEvent *>(e.get())) continue; // ordered on the device's stream
    CGRAPH_RETURN_IF_ERROR(e->wait().withContext("waiting for a prior submission"));
  }
  CGRAPH_RETURN_IF_ERROR(dev_->makeCurrent());
  for (uint32_t s = 0; s < nSlots_ && s < slots.size(); ++s) {
    const ResolvedSlot &r = slots[s];
    if (r.buffer) {
      table_[s] =
          static_cast<HipBuffer *>(r.buffer)->address() + r.offset; // the runtime checked the owner
      slotLength_[s] = r.length;
    }
  }
  for (uint32_t p = 0; p < nParams_ && p < params.size(); ++p)
    table_[nSlots_ + p] = params[p];
  CGRAPH_RETURN_IF_ERROR(uploadTable());
  hipStream_t s = dev_->stream();
  if (mode_ == rt::ExecMode::Replay) {
    CGRAPH_RETURN_IF_ERROR(updateParamRanges(params));
    for (PartGraph &pg : parts_) {
      if (pg.host) {
        for (uint32_t n : pg.nodes)
          CGRAPH_RETURN_IF_ERROR(runNodeEager(n, params));
      } else if (pg.exec) {
        CGRAPH_HIP_CHECK(*api_, "hipGraphLaunch", api_->hipGraphLaunch(pg.exec, s));
      }
    }
  } else {
    for (PartGraph &pg : parts_)
      for (uint32_t n : pg.nodes) {
        CGRAPH_RETURN_IF_ERROR(runNodeEager(n, params));
        if (opts.afterNode) {
          hipError_t rc = api_->hipStreamSynchronize(s);
          if (rc != hipSuccess)
            return hipError(*api_, "hipStreamSynchronize", rc).withContext(nodeLabel(n));
          CGRAPH_RETURN_IF_ERROR(opts.afterNode(n));
        }
      }
  }
  hipEvent_t done = nullptr;
  CGRAPH_HIP_CHECK(*api_, "hipEventCreateWithFlags",
                   api_->hipEventCreateWithFlags(&done, hipEventDisableTiming));
  if (hipError_t rc = api_->hipEventRecord(done, s); rc != hipSuccess) {
    (void)api_->hipEventDestroy(done);
    return hipError(*api_, "hipEventRecord", rc);
  }
  return rt::EventPtr(std::make_shared<HipEvent>(*dev_, done));
}

} // namespace

Expected<std::unique_ptr<rt::Executable>> makeExecutable(HipDevice &device, Graph flattened,
                                                         const rt::FinalizeOptions &opts) {
  auto exe = std::make_unique<HipExecutable>(device, std::move(flattened), opts);
  CGRAPH_RETURN_IF_ERROR(exe->prepare(opts));
  return std::unique_ptr<rt::Executable>(std::move(exe));
}

} // namespace cgraph::hip
