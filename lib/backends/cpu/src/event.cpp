#include "device.h"

#include <chrono>
#include <thread>

namespace cgraph::cpu {

// A short graph completes in microseconds, less than a futex wake-up costs on a VM
// (~30-60 us). Poll briefly before sleeping; bounded so idle waiters don't burn a core.
constexpr auto kSpinBeforeSleep = std::chrono::microseconds(100);

Error CpuEvent::wait() {
  const auto until = std::chrono::steady_clock::now() + kSpinBeforeSleep;
  while (!ready_.load(std::memory_order_acquire) && std::chrono::steady_clock::now() < until)
    std::this_thread::yield();
  std::unique_lock<std::mutex> lock(mutex_);
  cv_.wait(lock, [&] { return done_; });
  return error_;
}

bool CpuEvent::isComplete() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return done_;
}

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
