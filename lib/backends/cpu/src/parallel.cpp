// See parallel.h. The TSan variant gives every chunk its own std::thread on purpose:
// two chunks on one thread are ordered for TSan and a race between them would be missed.
#include "parallel.h"

#include <algorithm>

#ifdef CGRAPH_CPU_TSAN
#include <thread>
#include <vector>
#else
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/partitioner.h>
#include <tbb/task_arena.h>
#endif

namespace cgraph::cpu {

#ifdef CGRAPH_CPU_TSAN

namespace {
// Enough threads to interleave the tests' levels and launches, few enough that nested
// calls (a level of nodes, each launching work-groups) stay far below TSan's limits.
constexpr uint64_t kMaxThreads = 8;
thread_local uint32_t tLane = 0;
} // namespace

void parallelFor(uint64_t begin, uint64_t end, uint64_t grain, Partition partition, RangeFnRef fn) {
  if (end <= begin) return;
  grain = std::max<uint64_t>(grain, 1);
  const uint64_t n = end - begin;
  const uint64_t chunks = (n + grain - 1) / grain;
  const uint64_t workers = std::min(chunks, kMaxThreads);
  if (workers <= 1) {
    fn(begin, end);
    return;
  }
  // Worker w takes chunk indices w, w + workers, ... (Dynamic) or one contiguous run
  // (Static); either way the assignment does not depend on timing, so a race between
  // two chunks on different workers is reported on every run.
  auto work = [&](uint64_t w) {
    tLane = uint32_t(w) + 1;
    if (partition == Partition::Static) {
      const uint64_t first = chunks * w / workers, last = chunks * (w + 1) / workers;
      fn(begin + first * grain, std::min(end, begin + last * grain));
    } else {
      for (uint64_t c = w; c < chunks; c += workers)
        fn(begin + c * grain, std::min(end, begin + (c + 1) * grain));
    }
  };
  std::vector<std::thread> threads;
  threads.reserve(workers);
  for (uint64_t w = 0; w < workers; ++w) threads.emplace_back(work, w);
  for (std::thread &t : threads) t.join();
}

uint32_t parallelLane() { return tLane; }

uint32_t parallelWorkers() { return uint32_t(kMaxThreads); }

#else

void parallelFor(uint64_t begin, uint64_t end, uint64_t grain, Partition partition, RangeFnRef fn) {
  if (end <= begin) return;
  grain = std::max<uint64_t>(grain, 1);
  auto body = [&](const tbb::blocked_range<uint64_t> &r) { fn(r.begin(), r.end()); };
  if (partition == Partition::Static)
    tbb::parallel_for(tbb::blocked_range<uint64_t>(begin, end, grain), body, tbb::static_partitioner());
  else
    tbb::parallel_for(tbb::blocked_range<uint64_t>(begin, end, grain), body);
}

uint32_t parallelWorkers() {
  static const uint32_t n = uint32_t(std::max(1, tbb::this_task_arena::max_concurrency()));
  return n;
}

uint32_t parallelLane() {
  const int lane = tbb::this_task_arena::current_thread_index();
  return lane < 0 ? 0 : uint32_t(lane) + 1;
}

#endif

} // namespace cgraph::cpu
