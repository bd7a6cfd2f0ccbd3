// Submission: the table upload (the only per-binding-table cost), then either the
// partitions' CUDA graphs (replay) or the nodes one by one on the stream (eager).
#include "exec.h"

#include "cgraph/backends/gpu_common/replay_steps.h"

#include <algorithm>
#include <cstring>

namespace cgraph::cuda {

namespace {

CUDA_KERNEL_NODE_PARAMS launchParams(Launch &l) {
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

// Destroys events unless released to a CudaEvent.
struct Events {
  const CuApi *api;
  std::vector<CUevent> list;
  ~Events() {
    for (CUevent e : list) api->cuEventDestroy(e);
  }
  Expected<CUevent> make(bool timing) {
    CUevent e = nullptr;
    CGRAPH_CU_CHECK(*api, "cuEventCreate", api->cuEventCreate(&e, timing ? CU_EVENT_DEFAULT : CU_EVENT_DISABLE_TIMING));
    list.push_back(e);
    return e;
  }
};

} // namespace

Error CudaExecutable::uploadTable(const std::vector<uint64_t> &) {
  if (table_ == uploaded_) return Error::success();
  auto *tb = static_cast<CudaBuffer *>(tableBuf_.get());
  const size_t bytes = table_.size() * 8;
  if (staging_.empty()) {
    staging_.resize(4);
    for (Staging &st : staging_) {
      CGRAPH_CU_CHECK(*api_, "cuMemAllocHost", api_->cuMemAllocHost(&st.host, std::max<size_t>(8, bytes)));
      CGRAPH_CU_CHECK(*api_, "cuEventCreate", api_->cuEventCreate(&st.copied, CU_EVENT_DISABLE_TIMING));
    }
  }
  Staging &st = staging_[nextStaging_++ % staging_.size()];
  if (st.pending) CGRAPH_CU_CHECK(*api_, "cuEventSynchronize", api_->cuEventSynchronize(st.copied));
  std::memcpy(st.host, table_.data(), bytes);
  // Ordered on the stream after every earlier submission that reads the table.
  CGRAPH_CU_CHECK(*api_, "cuMemcpyHtoDAsync", api_->cuMemcpyHtoDAsync(tb->ptr(), st.host, bytes, dev_->stream()));
  CGRAPH_CU_CHECK(*api_, "cuEventRecord", api_->cuEventRecord(st.copied, dev_->stream()));
  st.pending = true;
  uploaded_ = table_;
  ++dev_->counters().tableUploads;
  return Error::success();
}

// Nd-ranges that depend on parameters: recomputed, and the graph node updated, only for
// the nodes whose launch changed.
Error CudaExecutable::updateParamRanges(const std::vector<uint64_t> &params) {
  return gpu::updateParamRanges(
      params, rangeParams_, rangesResolved_, parts_, plans_,
      [&](uint32_t n, const std::vector<uint64_t> &ps, Launch &l) { return rangeOf(n, ps, l); },
      [&](PartGraph &pg, CUgraphNode node, uint32_t n, Launch &l) -> Error {
        CUDA_KERNEL_NODE_PARAMS kp = launchParams(l);
        CUresult rc = api_->cuGraphExecKernelNodeSetParams(pg.exec, node, &kp);
        if (rc != CUDA_SUCCESS) return cuError(*api_, "cuGraphExecKernelNodeSetParams", rc).withContext(nodeLabel(n));
        ++dev_->counters().nodeUpdates;
        return Error::success();
      });
}

Error CudaExecutable::runHost(uint32_t n, const std::vector<uint64_t> &params) {
  CUstream s = dev_->stream();
  return gpu::runHostTask(
      graph_, n, nSlots_, slotLength_, *hostTasks_, params,
      [&]() -> Error {
        CGRAPH_CU_CHECK(*api_, "cuStreamSynchronize", api_->cuStreamSynchronize(s));
        return Error::success();
      },
      [&](void *dst, uint32_t slot, size_t bytes) -> Error {
        CGRAPH_CU_CHECK(*api_, "cuMemcpyDtoHAsync", api_->cuMemcpyDtoHAsync(dst, slotBase(slot), bytes, s));
        return Error::success();
      },
      [&](uint32_t slot, const void *src, size_t bytes) -> Error {
        CGRAPH_CU_CHECK(*api_, "cuMemcpyHtoDAsync", api_->cuMemcpyHtoDAsync(slotBase(slot), src, bytes, s));
        return Error::success();
      });
}

Error CudaExecutable::runNodeEager(uint32_t n, const std::vector<uint64_t> &params) {
  if (!nodeEnabled(n)) return Error::success(); // disabled: its edges still order
  const Node &node = graph_.nodes[n];
  NodePlan &p = plans_[n];
  CUstream s = dev_->stream();
  CUresult rc = CUDA_SUCCESS;
  const char *call = "";
  switch (node.kind) {
  case NodeKind::Host:
    return runHost(n, params).withContext(nodeLabel(n));
  case NodeKind::Kernel:
    if (p.paramRange) CGRAPH_RETURN_IF_ERROR(rangeOf(n, params, p.launch));
    [[fallthrough]];
  case NodeKind::Copy:
  case NodeKind::CopyRect:
  case NodeKind::Fill: {
    if (node.kind == NodeKind::Copy || node.kind == NodeKind::CopyRect) {
      CUDA_MEMCPY3D m;
      if (cudaMemcpyFor(node, slotBase(node.copy.srcSlot), slotBase(node.copy.dstSlot), m)) {
        call = "cuMemcpy3DAsync";
        rc = api_->cuMemcpy3DAsync(&m, s);
        break;
      }
    } else if (node.kind == NodeKind::Fill) {
      CUDA_MEMSET_NODE_PARAMS m;
      if (cudaMemsetFor(node.fill, slotBase(node.fill.slot), m)) {
        if (m.elementSize == 1) {
          call = "cuMemsetD8Async";
          rc = api_->cuMemsetD8Async(m.dst, uint8_t(m.value), m.width, s);
        } else if (m.elementSize == 2) {
          call = "cuMemsetD16Async";
          rc = api_->cuMemsetD16Async(m.dst, uint16_t(m.value), m.width, s);
        } else {
          call = "cuMemsetD32Async";
          rc = api_->cuMemsetD32Async(m.dst, m.value, m.width, s);
        }
        break;
      }
    }
    Launch &l = p.launch;
    call = "cuLaunchKernel";
    rc = api_->cuLaunchKernel(l.fn, l.grid[0], l.grid[1], l.grid[2], l.block[0], l.block[1], l.block[2], l.smem, s,
                              l.ptrs.data(), nullptr);
    break;
  }
  default:
    return Error::success();
  }
  if (rc != CUDA_SUCCESS) return cuError(*api_, call, rc).withContext(nodeLabel(n));
  return Error::success();
}

Expected<rt::EventPtr> CudaExecutable::submit(const std::vector<ResolvedSlot> &slots,
                                              const std::vector<uint64_t> &params,
                                              const rt::SubmitOptions &opts) {
  if (mode_ == rt::ExecMode::Replay && opts.profile)
    return makeError("cuda: per-node timestamps need ExecMode::Eager (a replay runs whole CUDA graphs)");
  for (const rt::EventPtr &e : opts.waitFor) {
    // Our own submissions are ordered on the device's one stream already.
    if (!e || dynamic_cast<CudaEvent *>(e.get())) continue;
    CGRAPH_RETURN_IF_ERROR(e->wait().withContext("waiting for a prior submission"));
  }
  CGRAPH_RETURN_IF_ERROR(dev_->makeCurrent());
  for (uint32_t s = 0; s < nSlots_ && s < slots.size(); ++s) {
    const ResolvedSlot &r = slots[s];
    if (r.buffer) {
      table_[s] = static_cast<CudaBuffer *>(r.buffer)->ptr() + r.offset; // the runtime checked the owner
      slotLength_[s] = r.length;
    }
  }
  for (uint32_t p = 0; p < nParams_ && p < params.size(); ++p) table_[nSlots_ + p] = params[p];
  CGRAPH_RETURN_IF_ERROR(uploadTable(params));
  CUstream s = dev_->stream();
  Events ev{api_, {}};
  CUevent start = nullptr;
  std::vector<std::pair<uint32_t, std::pair<CUevent, CUevent>>> timed;
  if (opts.profile) {
    auto e = ev.make(true);
    if (!e) return e.error();
    start = *e;
    CGRAPH_CU_CHECK(*api_, "cuEventRecord", api_->cuEventRecord(start, s));
  }
  if (mode_ == rt::ExecMode::Replay) {
    CGRAPH_RETURN_IF_ERROR(updateParamRanges(params));
    for (PartGraph &pg : parts_) {
      if (pg.host) {
        for (uint32_t n : pg.nodes) CGRAPH_RETURN_IF_ERROR(runNodeEager(n, params));
      } else if (pg.exec) {
        CUresult rc = api_->cuGraphLaunch(pg.exec, s);
        if (rc != CUDA_SUCCESS) return cuError(*api_, "cuGraphLaunch", rc);
      }
    }
  } else {
    for (PartGraph &pg : parts_)
      for (uint32_t n : pg.nodes) {
        CUevent a = nullptr, b = nullptr;
        if (opts.profile) {
          auto ea = ev.make(true), eb = ev.make(true);
          if (!ea) return ea.error();
          if (!eb) return eb.error();
          a = *ea;
          b = *eb;
          CGRAPH_CU_CHECK(*api_, "cuEventRecord", api_->cuEventRecord(a, s));
        }
        CGRAPH_RETURN_IF_ERROR(runNodeEager(n, params));
        if (opts.profile) {
          CGRAPH_CU_CHECK(*api_, "cuEventRecord", api_->cuEventRecord(b, s));
          timed.push_back({n, {a, b}});
        }
        if (opts.afterNode) {
          CUresult rc = api_->cuStreamSynchronize(s);
          if (rc != CUDA_SUCCESS) return cuError(*api_, "cuStreamSynchronize", rc).withContext(nodeLabel(n));
          CGRAPH_RETURN_IF_ERROR(opts.afterNode(n));
        }
      }
  }
  // Native while loops: the trip-limit flags come back with the submission, then reset.
  std::function<Error()> check;
  if (!conds_.empty() && mode_ == rt::ExecMode::Replay) {
    auto block = pinned_->take();
    if (!block) return block.error();
    const CUdeviceptr state = static_cast<CudaBuffer *>(condState_.get())->ptr();
    CGRAPH_CU_CHECK(*api_, "cuMemcpyDtoHAsync", api_->cuMemcpyDtoHAsync(block->get(), state, 8 * conds_.size(), s));
    CGRAPH_CU_CHECK(*api_, "cuMemsetD32Async", api_->cuMemsetD32Async(state, 0, 2 * conds_.size(), s));
    std::vector<std::string> limits(conds_.size());
    for (size_t i = 0; i < conds_.size(); ++i)
      if (conds_[i].op.kind == CondKind::While)
        limits[i] = "while " + nodeLabel(conds_[i].node) + ": the condition is still nonzero after " +
                    std::to_string(conds_[i].op.maxTrips) + " trips (its maximum)";
    check = [blk = std::move(*block), limits = std::move(limits)]() -> Error {
      const auto *st = static_cast<const uint32_t *>(blk.get());
      for (size_t i = 0; i < limits.size(); ++i)
        if (st[2 * i + 1] != 0) return makeError(limits[i]);
      return Error::success();
    };
  }
  // The completion event: from the device's pool unless it times the submission.
  auto done = opts.profile ? ev.make(true) : dev_->takeEvent();
  if (!done) return done.error();
  if (CUresult rc = api_->cuEventRecord(*done, s); rc != CUDA_SUCCESS) {
    if (!opts.profile) dev_->returnEvent(*done);
    return cuError(*api_, "cuEventRecord", rc);
  }
  ev.list.clear(); // owned by the CudaEvent from here on
  return rt::EventPtr(
      std::make_shared<CudaEvent>(*dev_, *done, start, std::move(timed), std::move(check), !opts.profile));
}

PinnedPool::~PinnedPool() {
  if (dev->makeCurrent()) return;
  for (void *p : free) dev->api().cuMemFreeHost(p);
}

Expected<std::shared_ptr<void>> PinnedPool::take() {
  void *p = nullptr;
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (!free.empty()) {
      p = free.back();
      free.pop_back();
    }
  }
  if (!p) CGRAPH_CU_CHECK(dev->api(), "cuMemAllocHost", dev->api().cuMemAllocHost(&p, bytes));
  return std::shared_ptr<void>(p, [pool = shared_from_this()](void *q) {
    std::lock_guard<std::mutex> lock(pool->mutex);
    pool->free.push_back(q);
  });
}

} // namespace cgraph::cuda
