// Completion of one submission: the fence of its last command list execution, or
// nothing to wait for when it ran synchronously (eager mode, a host task last).
#include "internal.h"

namespace cgraph::level_zero {

LevelZeroEvent::LevelZeroEvent(const ZeDriverTable &ze, ze_fence_handle_t fence,
                               std::vector<rt::NodeTiming> timings)
    : ze_(&ze), fence_(fence), timings_(std::move(timings)) {}

LevelZeroEvent::~LevelZeroEvent() {
  if (!fence_) return;
  // A fence must not be destroyed while its execution is pending.
  if (!waited_) ze_->zeFenceHostSynchronize(fence_, UINT64_MAX);
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
  return result_;
}

} // namespace cgraph::level_zero
