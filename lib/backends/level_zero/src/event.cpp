// Completion of one submission: the fence of its last command list execution, or
// nothing to wait for when it ran synchronously (eager mode, a host task last).
#include "internal.h"

namespace cgraph::level_zero {

LevelZeroEvent::LevelZeroEvent(const ZeDriverTable &ze, ze_fence_handle_t fence,
                               std::vector<rt::NodeTiming> timings, Completion onComplete)
    : ze_(&ze), fence_(fence), onComplete_(std::move(onComplete)) {
  timings_ = std::move(timings);
}

LevelZeroEvent::~LevelZeroEvent() {
  if (!fence_) {
    if (!waited()) (void)wait();
    return;
  }
  // A fence must not be destroyed while its execution is pending.
  if (!waited()) (void)wait(); // also runs onComplete (a profiled recording's event resets)
  ze_->zeFenceDestroy(fence_);
}

bool LevelZeroEvent::isComplete() const {
  if (!fence_) return true;
  ze_result_t rc = ze_->zeFenceQueryStatus(fence_);
  return rc != ZE_RESULT_NOT_READY; // a failed query means unusable; wait() reports it
}

Error LevelZeroEvent::waitOnce() {
  Error result;
  if (fence_) {
    ze_result_t rc = ze_->zeFenceHostSynchronize(fence_, UINT64_MAX);
    if (rc != ZE_RESULT_SUCCESS)
      result = zeError("zeFenceHostSynchronize", rc).withContext("level_zero: the submission failed on the device");
  }
  if (onComplete_ && !result) {
    Expected<std::vector<rt::NodeTiming>> t = onComplete_();
    if (t) timings_ = std::move(*t);
    else result = t.error();
  }
  onComplete_ = nullptr;
  return result;
}

} // namespace cgraph::level_zero
