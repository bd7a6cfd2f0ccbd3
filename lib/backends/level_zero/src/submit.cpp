// Submission paths: eager (node by node on the synchronous immediate list, arguments
// set per node) and replay (the recorded command lists for the binding set, executed on
// the compute queue with a fence; host tasks between them, runtime-driven).
#include "exec.h"

#include <algorithm>

namespace cgraph::level_zero {

Error LevelZeroExecutable::runHost(uint32_t n, const std::vector<uint64_t> &params) {
  if (!nodeEnabled(n)) return Error::success();
  // Device memory is not host accessible: the task's slots are staged through host
  // memory (rt::runStagedHostTask). The immediate list's copies are synchronous.
  std::lock_guard<std::mutex> lock(dev_->immediateMutex());
  const std::string what = nodeLabel(graph_, n);
  return rt::runStagedHostTask(
      graph_, n, uint32_t(graph_.slots.size()), *hostTasks_, params, hostStaging_,
      [&](uint32_t slot) { return mems_[slot].length; }, [] { return Error::success(); },
      [&](void *dst, uint32_t slot, size_t bytes) {
        return dev_->copyLocked(dst, ptrOf(mems_[slot]), bytes, what.c_str());
      },
      [&](uint32_t slot, const void *src, size_t bytes) {
        return dev_->copyLocked(ptrOf(mems_[slot]), src, bytes, what.c_str());
      });
}

Expected<rt::EventPtr> LevelZeroExecutable::submitEager(const std::vector<uint64_t> &params,
                                                        const rt::SubmitOptions &opts) {
  const bool profile = opts.profile;
  const std::function<Error(uint32_t)> &afterNode = opts.afterNode;
  // Per-node kernel timestamps: a host-visible timestamp pool, one event per kernel node.
  ze_event_pool_handle_t pool = nullptr;
  std::vector<std::pair<uint32_t, ze_event_handle_t>> profiled;
  auto release = [&] {
    for (auto &p : profiled)
      ze_->zeEventDestroy(p.second);
    if (pool) ze_->zeEventPoolDestroy(pool);
  };
  if (profile) {
    uint32_t nKernels = 0;
    for (uint32_t n = 0; n < graph_.nodes.size(); ++n)
      if (graph_.nodes[n].kind == NodeKind::Kernel && nodeEnabled(n)) ++nKernels;
    if (nKernels) {
      ze_event_pool_desc_t pd{};
      pd.stype = ZE_STRUCTURE_TYPE_EVENT_POOL_DESC;
      pd.flags = ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP | ZE_EVENT_POOL_FLAG_HOST_VISIBLE;
      pd.count = nKernels;
      ze_device_handle_t dev = dev_->props().device;
      CGRAPH_ZE_CHECK("zeEventPoolCreate",
                      ze_->zeEventPoolCreate(dev_->context(), &pd, 1, &dev, &pool));
    }
  }
  auto fail = [&](Error e) -> Expected<rt::EventPtr> {
    release();
    return e;
  };
  for (const PartPlan &plan : parts_) {
    for (uint32_t n : plan.nodes) {
      const Node &node = graph_.nodes[n];
      if (plan.host) {
        if (Error e = runHost(n, params)) return fail(std::move(e));
      } else if (node.kind != NodeKind::Barrier && nodeEnabled(n)) {
        ze_event_handle_t ev = nullptr;
        if (pool && node.kind == NodeKind::Kernel) {
          ze_event_desc_t ed{};
          ed.stype = ZE_STRUCTURE_TYPE_EVENT_DESC;
          ed.index = uint32_t(profiled.size());
          ed.signal = ZE_EVENT_SCOPE_FLAG_HOST;
          ed.wait = ZE_EVENT_SCOPE_FLAG_HOST;
          ze_result_t rc = ze_->zeEventCreate(pool, &ed, &ev);
          if (rc != ZE_RESULT_SUCCESS)
            return fail(zeError("zeEventCreate", rc).withContext(nodeLabel(graph_, n)));
          profiled.push_back({n, ev});
        }
        // The immediate list is synchronous: the append returns when the node is done.
        std::lock_guard<std::mutex> lock(dev_->immediateMutex());
        if (Error e = appendNode(dev_->immediate(), n, params, ev, {})) return fail(std::move(e));
      }
      if (afterNode)
        if (Error e = afterNode(n)) return fail(std::move(e));
    }
  }
  Expected<std::vector<rt::NodeTiming>> timings = readTimestamps(profiled);
  if (!timings) return fail(timings.error());
  release();
  // Everything ran synchronously: the event is already complete.
  return rt::EventPtr(std::make_shared<LevelZeroEvent>(*ze_, nullptr, std::move(*timings)));
}

Expected<std::vector<rt::NodeTiming>> LevelZeroExecutable::readTimestamps(
    const std::vector<std::pair<uint32_t, ze_event_handle_t>> &timed) const {
  // Device ticks of the kernels' start and end (global timestamps), relative to the
  // first kernel's start; the counter wraps at kernelTimestampValidBits.
  std::vector<rt::NodeTiming> timings;
  if (timed.empty()) return timings;
  const DeviceProps &props = dev_->props();
  const uint64_t mask = props.kernelTimestampValidBits >= 64
                            ? ~uint64_t(0)
                            : (uint64_t(1) << props.kernelTimestampValidBits) - 1;
  std::vector<ze_kernel_timestamp_result_t> raw(timed.size());
  uint64_t base = ~uint64_t(0);
  for (size_t i = 0; i < timed.size(); ++i) {
    ze_result_t rc = ze_->zeEventQueryKernelTimestamp(timed[i].second, &raw[i]);
    if (rc != ZE_RESULT_SUCCESS)
      return zeError("zeEventQueryKernelTimestamp", rc).withContext(nodeLabel(graph_, timed[i].first));
    base = std::min(base, raw[i].global.kernelStart & mask);
  }
  for (size_t i = 0; i < timed.size(); ++i) {
    const uint64_t start = raw[i].global.kernelStart & mask, end = raw[i].global.kernelEnd & mask;
    const uint64_t duration = (end - start) & mask;
    rt::NodeTiming t;
    t.node = timed[i].first;
    t.startNs = ((start - base) & mask) * props.timerResolutionNs;
    t.endNs = t.startNs + duration * props.timerResolutionNs;
    timings.push_back(t);
  }
  return timings;
}

Expected<rt::EventPtr> LevelZeroExecutable::submitReplay(Recording &rec,
                                                         const std::vector<uint64_t> &params,
                                                         const rt::SubmitOptions &) {
  // Profiled: once everything ran, the kernels' timestamps are read, then every event
  // is reset on the host for the recording's next execution. The next submission (and
  // the executable's destruction) waits for this one first, so the recording is alive.
  LevelZeroEvent::Completion complete;
  if (rec.profiled)
    complete = [this, &rec]() -> Expected<std::vector<rt::NodeTiming>> {
      Expected<std::vector<rt::NodeTiming>> t = readTimestamps(rec.timed);
      for (ze_event_handle_t e : rec.events) {
        ze_result_t rc = ze_->zeEventHostReset(e);
        if (rc != ZE_RESULT_SUCCESS && t) t = zeError("zeEventHostReset", rc);
      }
      return t;
    };
  ze_command_queue_handle_t q = dev_->queue();
  const size_t nSeg = rec.segments.size();
  // A failure after a list was executed drains the queue first: no later submission
  // (or dropped recording) may touch a list that is still running.
  bool executed = false;
  auto fail = [&](Error e) -> Expected<rt::EventPtr> {
    if (executed) (void)ze_->zeCommandQueueSynchronize(q, UINT64_MAX);
    if (rec.profiled) // nothing resets them inside the lists
      for (ze_event_handle_t ev : rec.events) (void)ze_->zeEventHostReset(ev);
    return e;
  };
  for (size_t i = 0; i < nSeg; ++i) {
    const Recording::Segment &s = rec.segments[i];
    if (!s.list) {
      // The task reads what the lists before it wrote: drain the queue first.
      ze_result_t rc = ze_->zeCommandQueueSynchronize(q, UINT64_MAX);
      if (rc != ZE_RESULT_SUCCESS) return fail(zeError("zeCommandQueueSynchronize", rc));
      if (Error e = runHost(s.hostNode, params)) return fail(std::move(e));
      continue;
    }
    ze_command_list_handle_t list = s.list;
    if (i + 1 < nSeg) {
      ze_result_t rc = ze_->zeCommandQueueExecuteCommandLists(q, 1, &list, nullptr);
      if (rc != ZE_RESULT_SUCCESS) return fail(zeError("zeCommandQueueExecuteCommandLists", rc));
      executed = true;
      continue;
    }
    // The last list: its fence is the submission's completion.
    ze_fence_desc_t fd{};
    fd.stype = ZE_STRUCTURE_TYPE_FENCE_DESC;
    ze_fence_handle_t fence = nullptr;
    ze_result_t rc = ze_->zeFenceCreate(q, &fd, &fence);
    if (rc != ZE_RESULT_SUCCESS) return fail(zeError("zeFenceCreate", rc));
    rc = ze_->zeCommandQueueExecuteCommandLists(q, 1, &list, fence);
    if (rc != ZE_RESULT_SUCCESS) {
      ze_->zeFenceDestroy(fence);
      return fail(zeError("zeCommandQueueExecuteCommandLists", rc));
    }
    return rt::EventPtr(std::make_shared<LevelZeroEvent>(*ze_, fence, std::vector<rt::NodeTiming>{},
                                                         std::move(complete)));
  }
  // Empty, or a host task last: everything is done (the queue was drained before it).
  return rt::EventPtr(std::make_shared<LevelZeroEvent>(*ze_, nullptr, std::vector<rt::NodeTiming>{},
                                                       std::move(complete)));
}

Error LevelZeroExecutable::waitForPrior(const std::vector<rt::EventPtr> &waitFor) {
  CGRAPH_RETURN_IF_ERROR(RecordedExecutable::waitForPrior(waitFor));
  if (previous_) {
    Error e = previous_->wait();
    (void)e; // reported through its own event
    previous_.reset();
  }
  return Error::success();
}

Expected<std::unique_ptr<rt::Executable>> makeExecutable(LevelZeroDevice &device, Graph flattened,
                                                         const rt::FinalizeOptions &opts) {
  auto exe = std::make_unique<LevelZeroExecutable>(device, std::move(flattened), opts.mode);
  CGRAPH_RETURN_IF_ERROR(exe->prepare(opts));
  return std::unique_ptr<rt::Executable>(std::move(exe));
}

uint64_t recordingsMade(const rt::Executable &exe) {
  auto *e = dynamic_cast<const LevelZeroExecutable *>(&exe);
  return e ? e->recordingsMade() : 0;
}

} // namespace cgraph::level_zero
