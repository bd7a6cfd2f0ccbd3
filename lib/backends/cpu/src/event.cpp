#include "device.h"

namespace cgraph::cpu {

// No polling: a submission that found its queue idle ran on the caller's thread and is
// complete before wait() is called (the fast path below); anything else blocks on the
// condition variable, so an idle waiter costs no CPU.
Error CpuEvent::waitOnce() {
  if (!ready_.load(std::memory_order_acquire)) {
    std::unique_lock<std::mutex> lock(mutex_);
    cv_.wait(lock, [&] { return done_; });
  }
  return error_;
}

bool CpuEvent::isComplete() const { return ready_.load(std::memory_order_acquire); }

void CpuEvent::complete(Error error, std::vector<rt::NodeTiming> timings) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    error_ = std::move(error);
    timings_ = std::move(timings);
    done_ = true;
    ready_.store(true, std::memory_order_release);
  }
  cv_.notify_all();
}

} // namespace cgraph::cpu
