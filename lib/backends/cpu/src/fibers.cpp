// Kernels with barriers: one Boost.Context fiber per work-item; barrier() switches to
// the group's scheduler, which resumes the next work-item, so all items reach the
// barrier before any passes it. A group's fibers stay on one thread, so the
// scheduler's continuation lives in a thread_local.
//
// This file is compiled without ThreadSanitizer instrumentation in sanitized builds
// (CMakeLists.txt, CGRAPH_CPU_TSAN_FIBERS): TSan cannot follow stack switches by
// itself, so each fiber gets a TSan fiber and every switch is announced right before
// the jump. Instrumented frames between the announcement and the jump would be pushed
// on one fiber's shadow stack and popped from another's (TSan then overflows its
// shadow stack); here there are none.
#include "internal.h"

#include <boost/context/fiber.hpp>

#include <cstdlib>
#include <memory>
#include <vector>

#ifdef CGRAPH_CPU_TSAN_FIBERS
extern "C" {
void *__tsan_get_current_fiber(void);
void *__tsan_create_fiber(unsigned flags);
void __tsan_destroy_fiber(void *fiber);
void __tsan_switch_to_fiber(void *fiber, unsigned flags);
}
#endif

namespace cgraph::cpu {

namespace {

constexpr size_t kFiberStack = kFiberStackBytes;
// Distance between the stacks of consecutive work-items: a stack plus 5 cache lines.
// With a stride of exactly 64 KiB every fiber's saved context (at the top of its stack)
// maps to the same L1 and L2 cache sets, and a group of 256 fibers then misses both on
// every switch (~90 ns a switch measured on mlp's layernorm); staggered, they spread
// over the sets.
constexpr size_t kStackStride = kFiberStack + 5 * 64;

struct FreeStacks {
  void operator()(char *p) const { std::free(p); }
};

struct FiberScratch {
  std::unique_ptr<char, FreeStacks> stacks;
  size_t count = 0;
  char *get(size_t n) {
    if (n > count) {
      stacks.reset(static_cast<char *>(std::aligned_alloc(4096, (n * kStackStride + 4095) / 4096 * 4096)));
      count = stacks ? n : 0;
    }
    return stacks.get();
  }
};

thread_local FiberScratch tStacks;
thread_local boost::context::fiber tScheduler;
#ifdef CGRAPH_CPU_TSAN_FIBERS
thread_local void *tTsanScheduler = nullptr;
#endif

// Boost.Context stack allocator over preallocated per-thread memory.
struct PreallocatedStack {
  char *base;
  boost::context::stack_context allocate() {
    boost::context::stack_context sc;
    sc.size = kFiberStack;
    sc.sp = base + kFiberStack;
    return sc;
  }
  void deallocate(boost::context::stack_context &) noexcept {}
};

} // namespace

bool runGroupFibers(const JitKernel &k, const uint64_t *args, const uint64_t *ctx, char *local) {
  const uint64_t lx = ctx[kCtxLocalSize], ly = ctx[kCtxLocalSize + 1], lz = ctx[kCtxLocalSize + 2];
  const size_t n = size_t(lx * ly * lz);
  char *stacks = tStacks.get(n);
  if (!stacks) return false;
  std::vector<boost::context::fiber> items;
  items.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    const uint64_t x = i % lx, y = (i / lx) % ly, z = i / (lx * ly);
    items.emplace_back(std::allocator_arg, PreallocatedStack{stacks + i * kStackStride},
                       [&k, args, ctx, local, x, y, z](boost::context::fiber &&scheduler) {
                         tScheduler = std::move(scheduler);
                         k.workItem(args, ctx, local, x, y, z);
#ifdef CGRAPH_CPU_TSAN_FIBERS
                         __tsan_switch_to_fiber(tTsanScheduler, 0);
#endif
                         return std::move(tScheduler);
                       });
  }
#ifdef CGRAPH_CPU_TSAN_FIBERS
  tTsanScheduler = __tsan_get_current_fiber();
  std::vector<void *> tsan(n);
  for (void *&t : tsan) t = __tsan_create_fiber(0);
#endif
  for (bool alive = true; alive;) {
    alive = false;
    for (size_t i = 0; i < n; ++i)
      if (items[i]) {
#ifdef CGRAPH_CPU_TSAN_FIBERS
        __tsan_switch_to_fiber(tsan[i], 0);
#endif
        items[i] = std::move(items[i]).resume();
        alive = alive || bool(items[i]);
      }
  }
#ifdef CGRAPH_CPU_TSAN_FIBERS
  for (void *t : tsan) __tsan_destroy_fiber(t);
#endif
  return true;
}

} // namespace cgraph::cpu

extern "C" void cgraph_cpu_barrier() {
#ifdef CGRAPH_CPU_TSAN_FIBERS
  __tsan_switch_to_fiber(cgraph::cpu::tTsanScheduler, 0);
#endif
  cgraph::cpu::tScheduler = std::move(cgraph::cpu::tScheduler).resume();
}
