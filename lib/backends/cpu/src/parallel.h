// parallelFor: the CPU backend's one way to run work on several threads (independent
// nodes of a replay level, work-groups of a launch).
//
// Normal builds run on the oneTBB pool. ThreadSanitizer builds (CGRAPH_CPU_TSAN, set by
// CMakeLists.txt when CGRAPH_SANITIZE contains "thread") run on std::threads instead:
// Debian's libtbb is not instrumented, so TSan sees neither its hand-offs nor its joins
// and would either report false races or, suppressed, see nothing at all. With threads
// it sees the real happens-before edges (thread start, join) and nothing else, so two
// chunks that touch the same memory without synchronization are reported.
//
// Contract: fn(begin, end) is called for disjoint sub-ranges that together cover
// [begin, end), each at least `grain` long except the last; calls may run concurrently
// and on the calling thread. parallelFor returns after every call has returned. fn must
// not throw. Thread-safety: reentrant (nested calls are allowed). Failure modes: none
// reported; a std::thread that cannot be started (TSan builds only) aborts the process
// like any uncaught std::system_error.
#pragma once

#include <cstdint>
#include <type_traits>
#include <utility>

namespace cgraph::cpu {

enum class Partition {
  Static,  // equal contiguous chunks, one per worker (work-groups: equal cost)
  Dynamic, // chunks of `grain` handed out as workers free up (nodes: unequal cost)
};

// A non-owning reference to a callable void(uint64_t, uint64_t); valid while the callable
// lives (parallelFor's duration).
class RangeFnRef {
public:
  template <typename F, typename = std::enable_if_t<!std::is_same_v<std::decay_t<F>, RangeFnRef>>>
  RangeFnRef(F &&f) // NOLINT(google-explicit-constructor): lambdas convert implicitly
      : obj_(const_cast<void *>(static_cast<const void *>(&f))),
        call_([](void *o, uint64_t b, uint64_t e) { (*static_cast<std::remove_reference_t<F> *>(o))(b, e); }) {}
  void operator()(uint64_t b, uint64_t e) const { call_(obj_, b, e); }

private:
  void *obj_;
  void (*call_)(void *, uint64_t, uint64_t);
};

void parallelFor(uint64_t begin, uint64_t end, uint64_t grain, Partition partition, RangeFnRef fn);

// How many threads parallelFor can run at once (the pool's concurrency, >= 1).
uint32_t parallelWorkers();

// 0 on a thread that is not one of parallelFor's workers, else 1 + the worker's index
// (the lane of a node in profiling timings).
uint32_t parallelLane();

} // namespace cgraph::cpu
