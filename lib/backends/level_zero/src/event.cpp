// Completion of one submission: the fence of its last command list execution, or
// nothing to wait for when it ran synchronously (eager mode, a host task last).
#include "internal.h"

namespace cgraph::level_zero {

LevelZeroEvent::LevelZeroEvent(const ZeDriverTable &ze, ze_fence_handle_t fence,
                               std::vector<rt::NodeTiming> timings, Completion onComplete)
    : ze_(&ze), fence_(fence), timings_(std::move(timings)), onComplete_(std::move(onComplete)) {}

LevelZeroEvent::~LevelZeroEvent() {
  if (!fence_) {
    if (!waited_) (void)wait();
    return;
  }
  // A fence must not be destroyed while its execution is pending.
  if (!waited_) (void)wait(); // also runs onComplete (a profiled recording's event resets)
  ze_->zeFenceDestroy(fence_);
}

bool LevelZeroEvent::isComplete() const {
  if (!fence_) return true;
  ze_result_t rc = ze_->zeFenceQueryStatus(fence_);
  return rc != ZE_RESULT_NOT_READY; // a failed query means unusable; wait() reports it
}

Error LevelZeroEvent::wait() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (waited_) return result_;
  waited_ = true;
  if (fence_) {
    ze_result_t rc = ze_->zeFenceHostSynchronize(fence_, UINT64_MAX);
    if (rc != ZE_RESULT_SUCCESS)
      result_ = zeError("zeFenceHostSynchronize", rc)
                    .withContext("level_zero: the submission failed on the device");
  }
  if (onComplete_ && !result_) {
    Expected<std::vector<rt::NodeTiming>> t = onComplete_();
    if (t) timings_ = std::move(*t);
    else result_ = t.error();
  }
  onComplete_ = nullptr;
  return result_;
}

} // namespace cgraph::level_zero
