// The base of every backend's rt::Event: wait() runs the backend's wait (waitOnce)
// once and remembers its result; later and concurrent waits return that result, as
// rt::Event promises. A subclass implements only waitOnce() (block until the
// submission's work is done, fill timings_ when it was profiled, return its failure)
// and isComplete() (a query that never blocks).
//
// Thread-safety: wait() may be called from several threads; the first runs waitOnce()
// under a mutex, the others block on it, and every call after it finished reads the
// remembered result without the lock. The subclass writes timings_ before waitOnce()
// returns (in it, or on a thread waitOnce() waits for); nodeTimings() reads it after
// wait().
// Lifetime: a subclass destructor may call wait() (the object is still whole there).
#pragma once

#include "cgraph/runtime/runtime.h"

#include <atomic>
#include <mutex>
#include <vector>

namespace cgraph::rt {

class WaitOnceEvent : public Event {
public:
  Error wait() final;
  const std::vector<NodeTiming> &nodeTimings() const final { return timings_; }

protected:
  // Called once, from the first wait(), under the event's mutex.
  virtual Error waitOnce() = 0;
  // Whether a wait() has finished (its result is remembered).
  bool waited() const { return done_.load(std::memory_order_acquire); }

  std::vector<NodeTiming> timings_;

private:
  std::mutex mutex_;
  std::atomic<bool> done_{false};
  Error result_;
};

} // namespace cgraph::rt
