#include "device.h"

namespace cgraph::cpu {

Error CpuEvent::wait() {
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
  }
  cv_.notify_all();
}

} // namespace cgraph::cpu
