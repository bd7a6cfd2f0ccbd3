// Submission paths: eager (one clEnqueue* per node on the in-order queue, arguments set
// per node), and replay: command buffers recorded once per binding set, or the
// pre-resolved node list (one per binding set) enqueued in one tight loop.
#include "exec.h"

#include <algorithm>
#include <cstring>
#include <unordered_map>

namespace cgraph::opencl {

namespace {

// Longest command buffer recorded (see findOrRecord).
constexpr size_t kCommandsPerBuffer = 256;


// Releases a cl_event unless ownership was taken.
struct EventGuard {
  const ClApi *api;
  cl_event ev = nullptr;
  ~EventGuard() {
    if (ev) api->clReleaseEvent(ev);
  }
  cl_event take() {
    cl_event e = ev;
    ev = nullptr;
    return e;
  }
};

} // namespace

ResolvedOp OpenCLExecutable::resolveOp(uint32_t n, cl_kernel k,
                                       const std::vector<uint64_t> &params) const {
  const Node &node = graph_.nodes[n];
  ResolvedOp op;
  op.node = n;
  // A disabled node does nothing; as a marker it still orders its neighbours.
  switch (nodeEnabled(n) ? node.kind : NodeKind::Barrier) {
  case NodeKind::Kernel:
    op.kind = ResolvedOp::Kernel;
    op.kernel = k;
    op.launch = launchDims(n, params);
    break;
  case NodeKind::Copy: {
    const SlotMem &sm = mems_[node.copy.srcSlot], &dm = mems_[node.copy.dstSlot];
    const Transfer t = transfer(n, params); // fields may be expressions
    if (t.bytes == 0) { // OpenCL refuses a 0-byte copy; it orders like a barrier
      op.kind = ResolvedOp::Marker;
      break;
    }
    op.kind = ResolvedOp::Copy;
    op.src = memOf(sm);
    op.dst = memOf(dm);
    op.srcOffset = size_t(sm.offset + t.srcOffset);
    op.dstOffset = size_t(dm.offset + t.dstOffset);
    op.bytes = size_t(t.bytes);
    break;
  }
  case NodeKind::CopyRect: {
    const CopyOp &c = node.copy;
    const SlotMem &sm = mems_[c.srcSlot], &dm = mems_[c.dstSlot];
    op.kind = ResolvedOp::CopyRect;
    op.src = memOf(sm);
    op.dst = memOf(dm);
    op.so[0] = size_t(sm.offset + c.srcOffset);
    op.dO[0] = size_t(dm.offset + c.dstOffset);
    for (int d = 0; d < 3; ++d)
      op.region[d] = size_t(c.region[d]);
    op.srcRowPitch = size_t(c.srcRowPitch);
    op.srcSlicePitch = size_t(c.srcSlicePitch);
    op.dstRowPitch = size_t(c.dstRowPitch);
    op.dstSlicePitch = size_t(c.dstSlicePitch);
    break;
  }
  case NodeKind::Fill: {
    const FillOp &f = node.fill;
    const SlotMem &m = mems_[f.slot];
    const Transfer t = transfer(n, params);
    if (t.bytes == 0) {
      op.kind = ResolvedOp::Marker;
      break;
    }
    op.kind = ResolvedOp::Fill;
    op.dst = memOf(m);
    op.dstOffset = size_t(m.offset + t.dstOffset);
    op.bytes = size_t(t.bytes);
    op.pattern = f.pattern.data();
    op.patternSize = f.pattern.size();
    break;
  }
  case NodeKind::Host:
    op.kind = ResolvedOp::Host;
    break;
  default:
    op.kind = ResolvedOp::Marker;
    break;
  }
  return op;
}

cl_int OpenCLExecutable::enqueueOp(const ResolvedOp &op, cl_uint nWait, const cl_event *wait,
                                   cl_event *ev, const char *&call) const {
  cl_command_queue q = dev_->queue();
  switch (op.kind) {
  case ResolvedOp::Kernel: {
    const Launch &l = op.launch;
    call = "clEnqueueNDRangeKernel";
    return api_->clEnqueueNDRangeKernel(q, op.kernel, l.dims, l.hasOffset ? l.offset : nullptr,
                                        l.global, l.hasLocal ? l.local : nullptr, nWait, wait, ev);
  }
  case ResolvedOp::Copy:
    call = "clEnqueueCopyBuffer";
    return api_->clEnqueueCopyBuffer(q, op.src, op.dst, op.srcOffset, op.dstOffset, op.bytes, nWait,
                                     wait, ev);
  case ResolvedOp::CopyRect:
    call = "clEnqueueCopyBufferRect";
    return api_->clEnqueueCopyBufferRect(q, op.src, op.dst, op.so, op.dO, op.region, op.srcRowPitch,
                                         op.srcSlicePitch, op.dstRowPitch, op.dstSlicePitch, nWait,
                                         wait, ev);
  case ResolvedOp::Fill:
    call = "clEnqueueFillBuffer";
    return api_->clEnqueueFillBuffer(q, op.dst, op.pattern, op.patternSize, op.dstOffset, op.bytes,
                                     nWait, wait, ev);
  case ResolvedOp::Host:
  case ResolvedOp::Marker:
    break;
  }
  call = "clEnqueueMarkerWithWaitList"; // a barrier: nothing to do on an in-order queue
  return api_->clEnqueueMarkerWithWaitList(q, nWait, wait, ev);
}

Error OpenCLExecutable::enqueueNode(uint32_t n, const std::vector<uint64_t> &params,
                                    SubBuffers &subs, cl_uint nWait, const cl_event *wait,
                                    cl_event *ev) {
  const Node &node = graph_.nodes[n];
  cl_kernel k = node.kind == NodeKind::Kernel && nodeEnabled(n) ? kernels_[node.kernel] : nullptr;
  if (k) CGRAPH_RETURN_IF_ERROR(setArgs(k, n, params, subs));
  const char *call = "";
  cl_int rc = enqueueOp(resolveOp(n, k, params), nWait, wait, ev, call);
  if (rc != CL_SUCCESS) return clError(call, rc).withContext(nodeLabel(graph_, n));
  return Error::success();
}

Error OpenCLExecutable::recordNode(cl_command_buffer_khr cb, uint32_t n,
                                   const std::vector<uint64_t> &params, SubBuffers &subs,
                                   cl_kernel k, std::vector<std::vector<cl_sync_point_khr>> &done) {
  const ClCommandBufferApi &c = dev_->commandBufferApi();
  const Node &node = graph_.nodes[n];
  // The command waits for what its predecessors in this partition signalled: real
  // sync points from the graph's edges, so independent commands may overlap.
  std::vector<cl_sync_point_khr> deps;
  for (uint32_t p : partPreds_[n])
    deps.insert(deps.end(), done[p].begin(), done[p].end());
  if (deps.size() > 1) {
    std::sort(deps.begin(), deps.end());
    deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
  }
  if (node.kind == NodeKind::Barrier || !nodeEnabled(n)) {
    done[n] = std::move(deps); // nothing to record: successors wait for what it waited for
    return Error::success();
  }
  cl_sync_point_khr sp = 0;
  const cl_uint nWait = cl_uint(deps.size());
  const cl_sync_point_khr *wait = deps.empty() ? nullptr : deps.data();
  if (node.kind == NodeKind::Kernel) CGRAPH_RETURN_IF_ERROR(setArgs(k, n, params, subs));
  const ResolvedOp op = resolveOp(n, k, params);
  cl_int rc = CL_SUCCESS;
  const char *call = "";
  switch (op.kind) {
  case ResolvedOp::Kernel: {
    const Launch &l = op.launch;
    call = "clCommandNDRangeKernelKHR";
    rc = c.ndrange(cb, nullptr, nullptr, k, l.dims, l.hasOffset ? l.offset : nullptr, l.global,
                   l.hasLocal ? l.local : nullptr, nWait, wait, &sp, nullptr);
    break;
  }
  case ResolvedOp::Copy:
    call = "clCommandCopyBufferKHR";
    rc = c.copy(cb, nullptr, op.src, op.dst, op.srcOffset, op.dstOffset, op.bytes, nWait, wait, &sp,
                nullptr);
    break;
  case ResolvedOp::CopyRect:
    call = "clCommandCopyBufferRectKHR";
    rc = c.copyRect(cb, nullptr, op.src, op.dst, op.so, op.dO, op.region, op.srcRowPitch,
                    op.srcSlicePitch, op.dstRowPitch, op.dstSlicePitch, nWait, wait, &sp, nullptr);
    break;
  case ResolvedOp::Fill:
    call = "clCommandFillBufferKHR";
    rc = c.fill(cb, nullptr, op.dst, op.pattern, op.patternSize, op.dstOffset, op.bytes, nWait,
                wait, &sp, nullptr);
    break;
  case ResolvedOp::Marker: // a 0-byte copy or fill: successors wait for what it waited for
    done[n].assign(deps.begin(), deps.end());
    return Error::success();
  default:
    return Error::success();
  }
  if (rc != CL_SUCCESS) return clError(call, rc).withContext(nodeLabel(graph_, n));
  done[n].assign(1, sp);
  return Error::success();
}

Expected<cl_kernel>
OpenCLExecutable::recordingKernel(Recording &rec, uint32_t n, const std::vector<uint64_t> &params,
                                  std::unordered_map<std::string, cl_kernel> &shared,
                                  bool setArgsNow) {
  // A kernel object per distinct argument list: PoCL 3.1 reads a kernel's arguments
  // when a command buffer runs, not when the command was recorded, so a cl_kernel
  // shared between recordings (or with the eager path), or between commands with
  // different arguments, would replay the last arguments set on it; the pre-resolved
  // list never sets arguments at submission, so it needs the same. Nodes with the same
  // kernel and the same arguments (a chain's) share one: 20000 kernel objects cost
  // PoCL ~5 us more per command buffer command than one.
  const Node &node = graph_.nodes[n];
  std::string argKey;
  rt::appendKeyBits(argKey, node.kernel);
  for (const Arg &a : node.args) {
    rt::appendKeyBits(argKey, uint64_t(a.kind) << 32 | uint64_t(a.type));
    rt::appendKeyBits(argKey, a.index);
    rt::appendKeyBits(argKey, a.kind == ArgKind::Param ? params[a.index] : a.value);
  }
  auto found = shared.find(argKey);
  if (found != shared.end()) return found->second;
  const Kernel &kern = graph_.kernels[node.kernel];
  cl_int krc = CL_SUCCESS;
  cl_kernel k = api_->clCreateKernel(kernelProgram_[node.kernel], kern.name.c_str(), &krc);
  if (krc != CL_SUCCESS) return clError("clCreateKernel", krc).withContext(nodeLabel(graph_, n));
  rec.kernels.push_back(k);
  if (setArgsNow) CGRAPH_RETURN_IF_ERROR(setArgs(k, n, params, rec.subs));
  shared.emplace(std::move(argKey), k);
  return k;
}

Error OpenCLExecutable::recordCommandBuffers(Recording &rec, const std::vector<uint64_t> &params) {
  const ClCommandBufferApi &c = dev_->commandBufferApi();
  cl_command_queue q = dev_->queue();
  std::vector<std::vector<cl_sync_point_khr>> done(graph_.nodes.size());
  std::unordered_map<std::string, cl_kernel> sharedKernels; // argument list -> kernel
  for (const PartPlan &plan : parts_) {
    Recording::Part part;
    if (plan.host) {
      part.hostNode = plan.nodes[0];
      rec.parts.push_back(part);
      continue;
    }
    cl_command_buffer_properties_khr props[] = {
        CL_COMMAND_BUFFER_FLAGS_KHR,
        cl_command_buffer_properties_khr(
            dev_->props().simultaneousUse ? CL_COMMAND_BUFFER_SIMULTANEOUS_USE_KHR : 0),
        0};
    // A partition is recorded as command buffers of at most kCommandsPerBuffer nodes,
    // enqueued one after the other on the in-order queue. PoCL 3.1 runs a command
    // buffer as one event per command plus a completion event that waits for all of
    // them, and its per-dependency bookkeeping makes that quadratic in the buffer's
    // length (a 20000-node chain: ~35 us per node instead of ~3). A node's sync points
    // from an earlier buffer are dropped: the queue's order already covers them.
    std::vector<uint32_t> inBuffer;
    for (size_t i = 0; i < plan.nodes.size(); ++i) {
      const uint32_t n = plan.nodes[i];
      if (i % kCommandsPerBuffer == 0) {
        if (i) CGRAPH_CL_CHECK("clFinalizeCommandBufferKHR", c.finalize(rec.parts.back().cb));
        for (uint32_t r : inBuffer)
          done[r].clear();
        inBuffer.clear();
        cl_int rc = CL_SUCCESS;
        part.cb = c.create(1, &q, props, &rc);
        if (rc != CL_SUCCESS) return clError("clCreateCommandBufferKHR", rc);
        rec.parts.push_back(part);
      }
      inBuffer.push_back(n);
      cl_kernel k = nullptr;
      if (graph_.nodes[n].kind == NodeKind::Kernel) {
        Expected<cl_kernel> kOr = recordingKernel(rec, n, params, sharedKernels, false);
        if (!kOr) return kOr.error();
        k = *kOr;
      }
      CGRAPH_RETURN_IF_ERROR(recordNode(rec.parts.back().cb, n, params, rec.subs, k, done));
    }
    if (!plan.nodes.empty())
      CGRAPH_CL_CHECK("clFinalizeCommandBufferKHR", c.finalize(rec.parts.back().cb));
  }
  return Error::success();
}

Error OpenCLExecutable::resolveOps(Recording &rec, const std::vector<uint64_t> &params) {
  // Everything a node's clEnqueue* call takes, resolved once per binding set, so that a
  // submission does no argument setting, no lookups and no allocation per node.
  std::unordered_map<std::string, cl_kernel> sharedKernels;
  rec.ops.reserve(graph_.nodes.size());
  for (const PartPlan &plan : parts_) {
    if (plan.host) {
      ResolvedOp op;
      op.kind = ResolvedOp::Host;
      op.node = plan.nodes[0];
      rec.ops.push_back(op);
      continue;
    }
    for (uint32_t n : plan.nodes) {
      cl_kernel k = nullptr;
      if (graph_.nodes[n].kind == NodeKind::Kernel) {
        Expected<cl_kernel> kOr = recordingKernel(rec, n, params, sharedKernels, true);
        if (!kOr) return kOr.error();
        k = *kOr;
      }
      ResolvedOp op = resolveOp(n, k, params);
      // Barriers: the in-order queue already orders their neighbours.
      if (op.kind == ResolvedOp::Marker || op.kind == ResolvedOp::Host) continue;
      rec.ops.push_back(op);
    }
  }
  return Error::success();
}

Expected<std::unique_ptr<Recording>>
OpenCLExecutable::makeRecording(const std::vector<uint64_t> &params, bool) {
  // Eviction needs no wait: the driver keeps a pending command buffer alive, and a
  // kernel object or buffer released while an enqueued command uses it stays alive
  // until that command ends.
  auto rec =
      std::make_unique<Recording>(*api_, dev_->commandBufferApi(), dev_->props().baseAddrAlign);
  for (const SlotMem &m : mems_)
    if (m.buffer && api_->clRetainMemObject(memOf(m)) == CL_SUCCESS)
      rec->retained.push_back(memOf(m));
  if (dev_->useCommandBuffers()) {
    CGRAPH_RETURN_IF_ERROR(recordCommandBuffers(*rec, params));
  } else {
    CGRAPH_RETURN_IF_ERROR(resolveOps(*rec, params));
  }
  return rec;
}

Error OpenCLExecutable::waitOutside() {
  if (wait_.empty()) return Error::success();
  CGRAPH_CL_CHECK("clWaitForEvents", api_->clWaitForEvents(cl_uint(wait_.size()), wait_.data()));
  wait_.clear(); // complete: later commands need not wait for them
  return Error::success();
}

Error OpenCLExecutable::runHost(uint32_t n, const std::vector<uint64_t> &params) {
  // Host tasks see host memory: map the node's slots, run, unmap. The queue is drained
  // first so that the task reads what the earlier partitions wrote.
  if (!nodeEnabled(n)) return Error::success(); // disabled
  cl_command_queue q = dev_->queue();
  CGRAPH_CL_CHECK("clFinish", api_->clFinish(q));
  const Node &node = graph_.nodes[n];
  std::vector<rt::HostSpan> spans(graph_.slots.size());
  std::vector<std::pair<cl_mem, void *>> mapped;
  Error err;
  for (const Arg &a : node.args) {
    if (a.kind != ArgKind::Slot || spans[a.index].data) continue;
    const SlotMem &m = mems_[a.index];
    cl_int rc = CL_SUCCESS;
    void *p = api_->clEnqueueMapBuffer(q, memOf(m), CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, m.offset,
                                       m.length, 0, nullptr, nullptr, &rc);
    if (rc != CL_SUCCESS) {
      err = clError("clEnqueueMapBuffer", rc).withContext(nodeLabel(graph_, n));
      break;
    }
    mapped.push_back({memOf(m), p});
    spans[a.index] = {p, m.length};
  }
  if (!err) err = hostTasks_->run(n, spans, params);
  for (auto &mp : mapped)
    api_->clEnqueueUnmapMemObject(q, mp.first, mp.second, 0, nullptr, nullptr);
  return err;
}

Expected<rt::EventPtr> OpenCLExecutable::submitEager(const std::vector<uint64_t> &params,
                                                     const rt::SubmitOptions &opts) {
  const bool profile = opts.profile;
  const std::function<Error(uint32_t)> &afterNode = opts.afterNode;
  SubBuffers subs(*api_, dev_->props().baseAddrAlign);
  std::vector<std::pair<uint32_t, cl_event>> profiled;
  auto releaseProfiled = [&] {
    for (auto &p : profiled)
      api_->clReleaseEvent(p.second);
  };
  EventGuard last{api_};
  for (size_t pi = 0; pi < parts_.size(); ++pi) {
    const PartPlan &plan = parts_[pi];
    if (plan.host) {
      // Events of other queues (waitFor) first: runHost drains only this queue.
      Error e = waitOutside();
      if (!e) e = runHost(plan.nodes[0], params);
      if (!e && afterNode) e = afterNode(plan.nodes[0]);
      if (e) {
        releaseProfiled();
        return e;
      }
      continue;
    }
    for (size_t i = 0; i < plan.nodes.size(); ++i) {
      const uint32_t n = plan.nodes[i];
      const bool lastNode = pi + 1 == parts_.size() && i + 1 == plan.nodes.size();
      cl_event ev = nullptr;
      Error e = enqueueNode(n, params, subs, waitCount(), waitEvents(),
                            (profile || lastNode) ? &ev : nullptr);
      wait_.clear(); // later nodes follow on the in-order queue
      if (e) {
        releaseProfiled();
        return e;
      }
      if (profile) {
        profiled.push_back({n, ev});
        if (lastNode) api_->clRetainEvent(ev);
      }
      if (lastNode) last.ev = ev;
      if (afterNode) {
        // The hook reads this node's results: finish the queue first.
        cl_int rc = api_->clFinish(dev_->queue());
        Error h = rc != CL_SUCCESS ? clError("clFinish", rc) : afterNode(n);
        if (h) {
          releaseProfiled();
          return h;
        }
      }
    }
  }
  if (!last.ev) { // empty graph, or a host task last
    cl_int rc =
        api_->clEnqueueMarkerWithWaitList(dev_->queue(), waitCount(), waitEvents(), &last.ev);
    if (rc != CL_SUCCESS) {
      releaseProfiled();
      return clError("clEnqueueMarkerWithWaitList", rc);
    }
  }
  api_->clFlush(dev_->queue());
  return rt::EventPtr(std::make_shared<OpenCLEvent>(*api_, last.take(), std::move(profiled)));
}

Expected<rt::EventPtr> OpenCLExecutable::submitReplay(Recording &rec,
                                                      const std::vector<uint64_t> &params,
                                                      const rt::SubmitOptions &opts) {
  if (!dev_->useCommandBuffers()) return submitPreResolved(rec, params, opts.profile);
  const ClCommandBufferApi &c = dev_->commandBufferApi();
  if (rec.lastUse && !dev_->props().simultaneousUse) {
    // A command buffer without simultaneous use must not be pending when re-enqueued.
    CGRAPH_CL_CHECK("clWaitForEvents", api_->clWaitForEvents(1, &rec.lastUse));
  }
  EventGuard last{api_};
  for (size_t pi = 0; pi < rec.parts.size(); ++pi) {
    const Recording::Part &part = rec.parts[pi];
    if (part.hostNode != kNone) {
      CGRAPH_RETURN_IF_ERROR(waitOutside()); // runHost drains only this queue
      CGRAPH_RETURN_IF_ERROR(runHost(part.hostNode, params));
      continue;
    }
    if (last.ev) api_->clReleaseEvent(last.take());
    cl_int rc = c.enqueue(0, nullptr, part.cb, waitCount(), waitEvents(), &last.ev);
    wait_.clear();
    if (rc != CL_SUCCESS) return clError("clEnqueueCommandBufferKHR", rc);
  }
  if (!last.ev || rec.parts.back().hostNode != kNone) {
    if (last.ev) api_->clReleaseEvent(last.take());
    CGRAPH_CL_CHECK(
        "clEnqueueMarkerWithWaitList",
        api_->clEnqueueMarkerWithWaitList(dev_->queue(), waitCount(), waitEvents(), &last.ev));
  }
  api_->clFlush(dev_->queue());
  if (rec.lastUse) api_->clReleaseEvent(rec.lastUse);
  api_->clRetainEvent(last.ev);
  rec.lastUse = last.ev;
  return rt::EventPtr(std::make_shared<OpenCLEvent>(*api_, last.take(),
                                                    std::vector<std::pair<uint32_t, cl_event>>{}));
}

Expected<rt::EventPtr> OpenCLExecutable::submitPreResolved(Recording &rec,
                                                           const std::vector<uint64_t> &params,
                                                           bool profile) {
  // One loop of clEnqueue* calls on the in-order queue: no argument setting, no events
  // between nodes (the stored order is topological and partitions run in index order),
  // an event only for the last command, or per node when profiling.
  cl_command_queue q = dev_->queue();
  std::vector<std::pair<uint32_t, cl_event>> profiled;
  if (profile) profiled.reserve(rec.ops.size());
  auto fail = [&](Error e) -> Expected<rt::EventPtr> {
    for (auto &p : profiled)
      api_->clReleaseEvent(p.second);
    return e;
  };
  EventGuard last{api_};
  const size_t nOps = rec.ops.size();
  for (size_t i = 0; i < nOps; ++i) {
    const ResolvedOp &op = rec.ops[i];
    const cl_uint nWait = waitCount();
    const cl_event *w = waitEvents();
    if (op.kind == ResolvedOp::Host) {
      // The task reads what earlier commands and prior submissions wrote: runHost
      // drains the queue; events of other queues are waited for here.
      if (Error e = waitOutside()) return fail(std::move(e));
      if (Error e = runHost(op.node, params)) return fail(std::move(e));
      continue;
    }
    const bool lastOp = i + 1 == nOps;
    cl_event ev = nullptr;
    cl_event *evp = (profile || lastOp) ? &ev : nullptr;
    const char *call = "";
    const cl_int rc = enqueueOp(op, nWait, w, evp, call);
    if (nWait) wait_.clear(); // later commands follow on the in-order queue
    if (rc != CL_SUCCESS) return fail(clError(call, rc).withContext(nodeLabel(graph_, op.node)));
    if (profile) {
      profiled.push_back({op.node, ev});
      if (lastOp) api_->clRetainEvent(ev);
    }
    if (lastOp) last.ev = ev;
  }
  if (!last.ev) { // nothing enqueued, or a host task last
    cl_int rc = api_->clEnqueueMarkerWithWaitList(q, waitCount(), waitEvents(), &last.ev);
    if (rc != CL_SUCCESS) return fail(clError("clEnqueueMarkerWithWaitList", rc));
  }
  api_->clFlush(q);
  return rt::EventPtr(std::make_shared<OpenCLEvent>(*api_, last.take(), std::move(profiled)));
}

Error OpenCLExecutable::waitForPrior(const std::vector<rt::EventPtr> &waitFor) {
  wait_.clear();
  for (const rt::EventPtr &e : waitFor) {
    if (!e) continue;
    if (auto *ce = dynamic_cast<OpenCLEvent *>(e.get())) {
      wait_.push_back(ce->handle());
    } else {
      CGRAPH_RETURN_IF_ERROR(waitOnHost(*e));
    }
  }
  return Error::success();
}

Error OpenCLExecutable::checkReplay(const rt::SubmitOptions &opts) {
  // Per-node timestamps need one event per node, which only the node-by-node path has:
  // a replay that asks for them is refused rather than quietly run another way.
  if (opts.profile && dev_->useCommandBuffers())
    return makeError("opencl: per-node profiling is not available when replaying command buffers "
                     "(cl_khr_command_buffer gives no per-command events); profile in eager mode");
  return Error::success();
}

Expected<std::unique_ptr<rt::Executable>> makeExecutable(OpenCLDevice &device, Graph flattened,
                                                         const rt::FinalizeOptions &opts) {
  auto exe = std::make_unique<OpenCLExecutable>(device, std::move(flattened), opts.mode);
  CGRAPH_RETURN_IF_ERROR(exe->prepare(opts));
  return std::unique_ptr<rt::Executable>(std::move(exe));
}

uint64_t recordingsMade(const rt::Executable &exe) {
  auto *e = dynamic_cast<const OpenCLExecutable *>(&exe);
  return e ? e->recordingsMade() : 0;
}

} // namespace cgraph::opencl
