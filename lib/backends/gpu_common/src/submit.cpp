// The GPU executable's submissions (graph_executable.h): the table from the resolved
// slots and parameters, the nd-ranges and transfer cells that read them set on the
// instantiated graphs, then the partitions launched (replay) or run node by node.
#include "cgraph/backends/gpu_common/graph_executable.h"

#include "cgraph/backends/gpu_common/replay_steps.h"

namespace cgraph::gpu {

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

void GraphExecutable::setTable(const std::vector<ResolvedSlot> &slots, const std::vector<uint64_t> &params) {
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
}

Expected<rt::EventPtr> GraphExecutable::submit(const std::vector<ResolvedSlot> &slots,
                                               const std::vector<uint64_t> &params,
                                               const rt::SubmitOptions &opts) {
  if (opts.stream) {
    auto capturing = driver_->streamCapturing(opts.stream);
    if (!capturing) return capturing.error();
    if (*capturing) return captureInto(slots, params, opts);
  }
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
    setTable(slots, params);
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

Error GraphExecutable::launchPartition(uint32_t pi) {
  CGRAPH_RETURN_IF_ERROR(driver_->graphLaunch(parts_[pi].exec));
  partitionLaunched(pi);
  return Error::success();
}

Error GraphExecutable::launchReplayGraphsOnly() {
  if (mode_ != rt::ExecMode::Replay) return makeError("launching the replay graphs of an eager executable");
  uploading_ = nullptr;
  CGRAPH_RETURN_IF_ERROR(uploadTable());
  Error e;
  for (uint32_t pi = 0; pi < parts_.size() && !e; ++pi)
    if (parts_[pi].exec) e = launchPartition(pi);
  // A staging buffer is reused after a stream synchronize (a backend's ring entries
  // ignore the flag: the loader's count says when they are free).
  if (uploading_) uploading_->unsynced = true;
  uploading_ = nullptr;
  return e;
}

} // namespace cgraph::gpu
