#include "cgraph/runtime/wait_once_event.h"

namespace cgraph::rt {

Error WaitOnceEvent::wait() {
  // result_ is written once, before done_ is released; a reader that acquires done_
  // sees it complete and never writes it.
  if (done_.load(std::memory_order_acquire)) return result_;
  std::lock_guard<std::mutex> lock(mutex_);
  if (!done_.load(std::memory_order_relaxed)) {
    result_ = waitOnce();
    done_.store(true, std::memory_order_release);
  }
  return result_;
}

} // namespace cgraph::rt
