// What a CUDA submission adds to the shared one (gpu_common's GraphExecutable::submit):
// per-node timestamps in eager mode, the trip-limit flags of native while loops, and
// completion events from the device's pool.
#include "exec.h"

#include <cstring>
#include <functional>

namespace cgraph::cuda {

void CudaExecutable::dropSubmissionEvents() {
  for (CUevent e : events_) api_->cuEventDestroy(e);
  events_.clear();
  timed_.clear();
  start_ = nodeStart_ = nullptr;
}

Error CudaExecutable::checkSubmit(const rt::SubmitOptions &opts) {
  dropSubmissionEvents(); // what an earlier submission that failed left
  if (mode_ == rt::ExecMode::Replay && opts.profile)
    return makeError("cuda: per-node timestamps need ExecMode::Eager (a replay runs whole CUDA graphs)");
  return Error::success();
}

namespace {
Expected<CUevent> timingEvent(const CuApi &api, std::vector<CUevent> &events) {
  CUevent e = nullptr;
  CGRAPH_CU_CHECK(api, "cuEventCreate", api.cuEventCreate(&e, CU_EVENT_DEFAULT));
  events.push_back(e);
  return e;
}
} // namespace

Error CudaExecutable::submissionStarted(const rt::SubmitOptions &opts) {
  if (!opts.profile) return Error::success();
  auto e = timingEvent(*api_, events_);
  if (!e) return e.error();
  start_ = *e;
  CGRAPH_CU_CHECK(*api_, "cuEventRecord", api_->cuEventRecord(start_, dev_->stream()));
  return Error::success();
}

Error CudaExecutable::eagerNodeStarting(uint32_t, const rt::SubmitOptions &opts) {
  if (!opts.profile) return Error::success();
  auto e = timingEvent(*api_, events_);
  if (!e) return e.error();
  nodeStart_ = *e;
  CGRAPH_CU_CHECK(*api_, "cuEventRecord", api_->cuEventRecord(nodeStart_, dev_->stream()));
  return Error::success();
}

Error CudaExecutable::eagerNodeDone(uint32_t n, const rt::SubmitOptions &opts) {
  if (!opts.profile) return Error::success();
  auto e = timingEvent(*api_, events_);
  if (!e) return e.error();
  CGRAPH_CU_CHECK(*api_, "cuEventRecord", api_->cuEventRecord(*e, dev_->stream()));
  timed_.push_back({n, {nodeStart_, *e}});
  return Error::success();
}

Expected<rt::EventPtr> CudaExecutable::finishSubmission(const rt::SubmitOptions &opts) {
  CUstream s = dev_->stream();
  // Native while loops: the trip-limit flags come back with the submission, then reset.
  std::function<Error()> check;
  if (!conds_.empty() && mode_ == rt::ExecMode::Replay) {
    auto block = sharedPinned(8 * conds_.size());
    if (!block) return block.error();
    const CUdeviceptr state = static_cast<CudaBuffer *>(condState_.get())->ptr();
    CGRAPH_CU_CHECK(*api_, "cuMemcpyDtoHAsync", api_->cuMemcpyDtoHAsync(block->get(), state, 8 * conds_.size(), s));
    CGRAPH_CU_CHECK(*api_, "cuMemsetD32Async", api_->cuMemsetD32Async(state, 0, 2 * conds_.size(), s));
    std::vector<std::string> limits(conds_.size());
    for (size_t i = 0; i < conds_.size(); ++i)
      if (conds_[i].op.kind == CondKind::While)
        limits[i] = "while " + planLabel(conds_[i].node) + ": the condition is still nonzero after " +
                    std::to_string(conds_[i].op.maxTrips) + " trips (its maximum)";
    check = [blk = std::move(*block), limits = std::move(limits)]() -> Error {
      const auto *st = static_cast<const uint32_t *>(blk.get());
      for (size_t i = 0; i < limits.size(); ++i)
        if (st[2 * i + 1] != 0) return makeError(limits[i]);
      return Error::success();
    };
  }
  // A replay ending with the done marker: the word it writes is the completion.
  if (!opts.profile && !check && doneCovers()) {
    ++dev_->counters().wordCompletions;
    return watched(std::make_shared<WordEvent>(*dev_, doneWord(), doneTarget()));
  }
  // The completion event: from the device's pool unless it times the submission.
  Expected<CUevent> done = opts.profile ? timingEvent(*api_, events_) : dev_->takeEvent();
  if (!done) return done.error();
  if (CUresult rc = api_->cuEventRecord(*done, s); rc != CUDA_SUCCESS) {
    if (!opts.profile) dev_->returnEvent(*done);
    return cuError(*api_, "cuEventRecord", rc);
  }
  events_.clear(); // owned by the CudaEvent from here on
  auto timed = std::move(timed_);
  CUevent start = start_;
  dropSubmissionEvents();
  return watched(
      std::make_shared<CudaEvent>(*dev_, *done, start, std::move(timed), std::move(check), !opts.profile));
}

} // namespace cgraph::cuda
