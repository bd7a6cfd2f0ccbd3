// Running an nd-range: work-groups in parallel on the TBB pool (small launches inline on
// the calling thread), each group either one call of the loop wrapper (barrier-free
// kernels, and kernels with barriers cut into regions) or one Boost.Context fiber per
// work-item (kernels with barriers the region cut declined, fibers.cpp).
#include "internal.h"
#include "parallel.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <cstdlib>
#include <memory>
#include <string>

namespace cgraph::cpu {

namespace {

// Below this many work-items a launch runs on the calling thread: handing work to
// the pool costs microseconds, a 4096-element axpy costs about one.
constexpr uint64_t kInlineItems = 1 << 15;
// Work-items (of cost 1) per TBB task where the launch is large: keeps scheduling
// overhead under ~1%.
constexpr uint64_t kItemsPerTask = 1 << 16;
// ... unless the launch has fewer per worker: then down to this many (a few us of work).
constexpr uint64_t kMinTaskItems = 1 << 14;

struct AlignedFree {
  void operator()(char *p) const { std::free(p); }
};

// Per-thread scratch: the group's local block.
struct ThreadScratch {
  std::unique_ptr<char, AlignedFree> local;
  uint64_t localSize = 0;

  char *localBlock(uint64_t bytes) {
    if (bytes > localSize) {
      uint64_t n = std::max<uint64_t>((bytes + 127) / 128 * 128, 4096);
      local.reset(static_cast<char *>(std::aligned_alloc(128, n)));
      localSize = local ? n : 0;
    }
    return local.get();
  }
};

thread_local ThreadScratch tScratch;

// A bounds-checked launch stops handing out groups once an access failed.
bool boundsFailed(const JitKernel &k, const uint64_t *args) {
  if (!k.checked) return false;
  const auto *table = reinterpret_cast<const uint64_t *>(uintptr_t(args[k.numParams]));
  return __atomic_load_n(&table[kBoundsFailed], __ATOMIC_RELAXED) != 0;
}
} // namespace

// The first failed access claims the table (kBoundsFailed 0 -> 2), writes its fields,
// then marks them complete (1). The launch's caller reads them after the launch joined.
extern "C" void cgraph_cpu_bounds_fail(uint64_t table, uint64_t arg, uint64_t offset, uint64_t bytes,
                                       uint64_t write, uint64_t object) {
  auto *t = reinterpret_cast<uint64_t *>(uintptr_t(table));
  uint64_t expected = 0;
  if (!__atomic_compare_exchange_n(&t[kBoundsFailed], &expected, 2, false, __ATOMIC_ACQ_REL,
                                   __ATOMIC_RELAXED))
    return;
  t[kBoundsArg] = arg;
  t[kBoundsOffset] = offset;
  t[kBoundsBytes] = bytes;
  t[kBoundsWrite] = write;
  t[kBoundsObject] = object;
  __atomic_store_n(&t[kBoundsFailed], 1, __ATOMIC_RELEASE);
}

namespace {
// Work-items per group when the backend chooses the groups: one call of the loop
// wrapper covers this many (the x loop is the vectorized one).
constexpr uint64_t kGroupItems = 16384;

// Groups per worker thread for kernels whose work-items have loops (heavy): enough
// groups that uneven work-items (gramschmidt's update: the first k + 1 return at once)
// still spread over the threads.
constexpr uint64_t kHeavyGroupsPerWorker = 4;
// ... but no group smaller than this (a multiple of the vector width: the x loop is
// the vectorized one).
constexpr uint64_t kHeavyMinGroup = 16;
// Loop-free work-items this costly (itemCost) are split over the threads like heavy ones.
constexpr uint64_t kCostlyItem = 8;
// Launches of contended kernels (JitKernel::contended: every work-item's atomics hit the
// same few words) of up to kInlineItems / itemCost work-items run on the calling thread
// whatever their loops or barriers. Not in ThreadSanitizer builds: there the tests'
// atomic kernels run on several threads so that TSan sees any access that is not atomic.
#ifdef CGRAPH_CPU_TSAN
constexpr bool kContendedInline = false;
#else
constexpr bool kContendedInline = true;
#endif

// Barrier-free groups: as long as possible in x, then y, then z, up to `budget`.
void chooseFreeGroups(Launch &l, uint64_t budget = kGroupItems) {
  for (uint32_t d = 0; d < 3; ++d) {
    // (Divisions only where needed: a small launch pays for each one.)
    l.local[d] = std::max<uint64_t>(1, std::min(l.global[d], budget));
    budget = l.local[d] == budget ? 1
             : l.local[d] == 1    ? budget
                                  : std::max<uint64_t>(1, budget / l.local[d]);
  }
}
} // namespace

void planLaunch(const JitKernel &k, uint64_t localBytes, const Launch &launch, LaunchPlan &p) {
  // A kernel that cannot observe its groups runs with the backend's: a launch with
  // small groups (chain1000's 64) would otherwise pay one wrapper call per group.
  p.l = launch;
  // Work-items that contend for a few atomic words: a core that has the words' cache
  // lines does them all faster than two that pass the lines to and fro (atomics64.cl:
  // 512 work-items of 14 atomics, a compare-and-swap loop among them, took 1.1-1.5x
  // PoCL's time on 2 cores while split as heavy).
  const uint64_t items = launch.global[0] * launch.global[1] * launch.global[2];
  const bool contendedInline = kContendedInline && k.contended && items * k.itemCost <= kInlineItems;
  const bool costly = !contendedInline && (k.heavy || k.itemCost >= kCostlyItem);
  if (!k.barrier && !k.groupShape && localBytes == 0) {
    // A group is about kGroupItems work-items of cost 1: fewer of costlier ones, so that
    // a launch of costly items (add_bias's `i % cols`: 5) is not one group on one thread.
    uint64_t budget = std::max<uint64_t>(kHeavyMinGroup, kGroupItems / k.itemCost / kHeavyMinGroup * kHeavyMinGroup);
    if (costly) {
      // Work-items with loops: one group per few work-items would leave threads idle
      // (gramschmidt's update: 256 work-items of 2 x 256 iterations were one group).
      // Loop-free work-items (costly by length or slow operations) cost alike and run
      // statically partitioned: one group per worker (each group of a long body also
      // pays a latency-bound tail of left-over vectors, ilp.h).
      const uint64_t parts =
          uint64_t(parallelWorkers()) * (k.heavy ? kHeavyGroupsPerWorker : 1);
      const uint64_t each = (items + parts - 1) / parts;
      budget = std::min(kGroupItems,
                        (std::max(each, kHeavyMinGroup) + kHeavyMinGroup - 1) / kHeavyMinGroup *
                            kHeavyMinGroup);
    }
    chooseFreeGroups(p.l, budget);
  }
  const Launch &l = p.l;
  for (int d = 0; d < 3; ++d)
    p.groups[d] = l.global[d] <= l.local[d] ? uint64_t(l.global[d] != 0)
                                            : (l.global[d] + l.local[d] - 1) / l.local[d];
  p.total = p.groups[0] * p.groups[1] * p.groups[2];
  p.perGroup = l.local[0] * l.local[1] * l.local[2];
  p.localBytes = localBytes;
  // The per-thread block: __local memory, then the region kernels' context arrays.
  p.privateOffset = (localBytes + 63) / 64 * 64;
  p.scratchBytes = k.privateBytes ? p.privateOffset + p.perGroup * k.privateBytes : localBytes;
  // Work-items as the measure of cost holds for straight-line work-items (axpy: a few
  // ns each). A work-item with loops or barriers (a row of layernorm, a tile of matmul)
  // can cost microseconds: every group may go to another thread.
  p.inlineRun = p.total <= 1 || contendedInline ||
                (!k.heavy && p.total * p.perGroup * k.itemCost <= kInlineItems);
  // Tasks weigh work-items by their cost, as the inline limit above does: an equal share
  // of the launch per worker, at least kMinTaskItems and at most kItemsPerTask work-items
  // of cost 1 (a launch of 16384 add_bias items, cost 5, was one task on 16 cores).
  const uint64_t itemsPerGroup = std::max<uint64_t>(p.perGroup, 1);
  const uint64_t share = p.total * itemsPerGroup * k.itemCost / parallelWorkers();
  const uint64_t taskItems = std::min(kItemsPerTask, std::max(kMinTaskItems, share));
  p.grain = costly ? 1 : std::max<uint64_t>(1, taskItems / (itemsPerGroup * k.itemCost));
  for (int d = 0; d < 3; ++d) {
    p.ctx[kCtxGroupId + d] = 0;
    p.ctx[kCtxLocalSize + d] = std::min(l.local[d], l.global[d]);
    p.ctx[kCtxEnqLocal + d] = l.local[d];
    p.ctx[kCtxNumGroups + d] = p.groups[d];
    p.ctx[kCtxGlobalSize + d] = l.global[d];
    p.ctx[kCtxGlobalOffset + d] = l.offset[d];
  }
  p.ctx[kCtxWorkDim] = l.dims;
  p.ctx[kCtxPrivate] = p.privateOffset;
  p.tune = LaunchPlan::Tune::Pool;
  p.tuneRuns = 0;
  p.poolBestNs = p.inlineBestNs = ~uint64_t(0);
}

namespace {
// LaunchPlan::tune: runs of each way timed before choosing, and the pool time (the
// fastest of its runs) up to which running inline is tried. A run tried inline costs at
// most the pool's time on every worker (2 cores: 2 x 20 us), once per plan.
constexpr uint8_t kTuneRuns = 2;
constexpr uint64_t kTuneMaxPoolNs = 20000;
// ThreadSanitizer builds keep every such launch on the pool: the tests' racy-kernel
// checks need its work-groups on several threads.
#ifdef CGRAPH_CPU_TSAN
constexpr bool kTuneLaunches = false;
#else
constexpr bool kTuneLaunches = true;
#endif

uint64_t nowNs() {
  return uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(
                      std::chrono::steady_clock::now().time_since_epoch())
                      .count());
}
} // namespace

Error runPlanned(const JitKernel &k, const uint64_t *args, LaunchPlan &p) {
  if (p.total == 0) return Error::success();
  // Scratch (local blocks, fiber stacks) is allocated per thread on first use; a failed
  // allocation stops that thread's groups and fails the launch instead of crashing.
  std::atomic<bool> outOfMemory{false};
  auto run = [&](uint64_t begin, uint64_t end) {
    char *local = tScratch.localBlock(p.scratchBytes);
    if (!local && p.scratchBytes) {
      outOfMemory.store(true, std::memory_order_relaxed);
      return;
    }
    uint64_t ctx[kCtxFields];
    std::memcpy(ctx, p.ctx, sizeof ctx);
    const Launch &l = p.l;
    for (uint64_t g = begin; g < end; ++g) {
      if (boundsFailed(k, args)) return;
      if (p.total > 1) {
        const uint64_t gid[3] = {p.groups[0] == 1 ? 0 : g % p.groups[0],
                                 p.groups[1] == 1 ? 0 : (g / p.groups[0]) % p.groups[1],
                                 p.groups[2] == 1 ? 0 : g / (p.groups[0] * p.groups[1])};
        for (int d = 0; d < 3; ++d) {
          ctx[kCtxGroupId + d] = gid[d];
          ctx[kCtxLocalSize + d] = std::min(l.local[d], l.global[d] - gid[d] * l.local[d]);
        }
      }
      if (!k.fibers) {
        k.loop(args, ctx, local);
      } else if (!runGroupFibers(k, args, ctx, local)) {
        outOfMemory.store(true, std::memory_order_relaxed);
        return;
      }
    }
  };
  using Tune = LaunchPlan::Tune;
  const bool tune = !p.inlineRun && kTuneLaunches;
  const bool timed = tune && p.tune != Tune::Decided;
  const bool inlineNow = p.inlineRun || (tune && p.tune == Tune::Inline) ||
                         (tune && p.tune == Tune::Decided && p.inlineBestNs < p.poolBestNs);
  const uint64_t t0 = timed ? nowNs() : 0;
  if (inlineNow) {
    run(0, p.total);
  } else {
    // Heavy work-items may cost unequal amounts (early returns, data-dependent loops):
    // their groups are handed out as threads free up.
    parallelFor(0, p.total, p.grain, k.heavy ? Partition::Dynamic : Partition::Static, run);
  }
  if (timed) {
    const uint64_t ns = nowNs() - t0;
    uint64_t &best = p.tune == Tune::Pool ? p.poolBestNs : p.inlineBestNs;
    best = std::min(best, ns);
    if (++p.tuneRuns == kTuneRuns) {
      p.tuneRuns = 0;
      // Decided: with the pool when its runs were long (inlineBestNs stays above), else
      // the faster of the two.
      p.tune = p.tune == Tune::Pool && p.poolBestNs <= kTuneMaxPoolNs ? Tune::Inline : Tune::Decided;
    }
  }
  if (outOfMemory.load(std::memory_order_relaxed))
    return makeError(
        "cpu: out of memory for work-group scratch (" + std::to_string(p.perGroup) +
        " work-items per group need " +
        std::to_string((k.fibers ? p.perGroup * kFiberStackBytes : p.perGroup * k.privateBytes) >> 10) +
        (k.fibers ? " KiB of fiber stacks" : " KiB of values live across barriers") + " and " +
        std::to_string(p.localBytes) + " bytes of local memory per thread)");
  return Error::success();
}

Error runKernel(const JitKernel &k, const uint64_t *args, uint64_t localBytes,
                const Launch &launch) {
  LaunchPlan plan;
  planLaunch(k, localBytes, launch, plan);
  return runPlanned(k, args, plan);
}

void chooseLocalSize(const JitKernel &k, const Kernel &meta, Launch &l) {
  if (meta.reqdLocal[0]) {
    for (int d = 0; d < 3; ++d)
      l.local[d] = std::max<uint32_t>(meta.reqdLocal[d], 1);
    return;
  }
  for (int d = 0; d < 3; ++d)
    l.local[d] = 1;
  if (!k.barrier) {
    // Barrier-free: big groups (the x loop is the vectorized one); trailing partial
    // groups are fine, the wrapper loops to the group's actual size.
    chooseFreeGroups(l);
    return;
  }
  // With barriers every group must be full: the largest divisor up to 256 in x.
  for (uint64_t c = std::min<uint64_t>(l.global[0], 256); c >= 1; --c)
    if (l.global[0] % c == 0) {
      l.local[0] = c;
      break;
    }
}

} // namespace cgraph::cpu
