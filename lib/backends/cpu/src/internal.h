// Internals of the CPU backend (the JIT, the launcher, the executable) shared by its
// .cpp files; the code generator they run is lib/codegen/cpu (cgraph/codegen/cpu.h).
#pragma once

#include "cgraph/codegen/cpu.h"
#include "cgraph/error.h"
#include "cgraph/model.h"
#include "cgraph/runtime/env_options.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace cgraph::cpu {

// The code generator's ABI (kCtx*, BoundsTable, WgLoopFn, ...) and lowerToObject, by
// their short names.
using namespace cgraph::codegen::cpu;

struct JitKernel {
  std::string name;
  WgLoopFn loop = nullptr;
  WiFn workItem = nullptr;
  bool barrier = false; // has barriers: run by `loop` (regions) or `workItem` (fibers)
  bool fibers = false;
  uint64_t privateBytes = 0; // context arrays per work-item (regions)
  // The work-item has loops or barriers: its cost is unknown, so runKernel spreads the
  // groups over the threads however few work-items they have.
  bool heavy = false;
  // False when the kernel cannot tell one work-group shape from another (it reads only
  // global ids, sizes and offsets and has no barrier or __local memory): runKernel then
  // picks the groups by work size, whatever local size the launch names.
  bool groupShape = true;
  // Relative cost of one work-item (kernel_analysis.cpp's itemCost): launches of up to
  // kInlineItems / itemCost work-items run on the calling thread.
  uint64_t itemCost = 1;
  // Every atomic outside __local memory has an address that no work-item id enters, at
  // least one of them writes, and the work-item's only loops are compare-and-swap
  // retries (kernel_analysis.cpp's contendedAtomics): all work-items contend for the same few
  // words, so a launch of up to kInlineItems / itemCost work-items runs on the calling
  // thread (split over threads, each atomic would move a cache line between cores).
  bool contended = false;
  uint64_t staticLocalBytes = 0;
  uint32_t numParams = 0;
  // Compiled with bounds checks: the argument block has numParams + 1 words, the last
  // the address of a BoundsTable; groups after a failed access do not run.
  bool checked = false;
};

struct CompiledModule {
  std::vector<JitKernel> kernels; // by kernel name lookup
  const JitKernel *find(const std::string &name) const {
    for (const JitKernel &k : kernels)
      if (k.name == name) return &k;
    return nullptr;
  }
};

// Per-device JIT; modules go through lib/cache's KernelCache (memory + disk).
class KernelCompiler {
public:
  // `dumpDir`: CpuOptions::dumpDir (lowerToObject); `cache`: the kernel cache's
  // directory and disk tier (CpuOptions::cache); `fibers`: CpuOptions::barrierFibers
  // (part of the cache key).
  KernelCompiler(std::optional<std::string> dumpDir = std::nullopt, rt::KernelCacheOptions cache = {},
                 bool fibers = false);
  ~KernelCompiler();
  // Compiles (or finds) `module` and resolves the kernels named in `kernelNames`.
  // `checkBounds`: compiled with bounds checks (JitKernel::checked); part of the key.
  Expected<std::shared_ptr<const CompiledModule>>
  get(const KernelModule &module, const std::vector<std::string> &kernelNames, bool useCache,
      bool checkBounds = false);
  // Compiles (or finds) `spec.kernel` of `module` specialized for `spec.local`
  // (LocalSpecialization); the result holds that one kernel. Cached as get() is, the
  // shape in the key.
  Expected<std::shared_ptr<const CompiledModule>>
  getSpecialized(const KernelModule &module, const LocalSpecialization &spec, bool useCache,
                 bool checkBounds = false);
  // Counters for tests and benchmarks.
  uint64_t compiles() const;
  uint64_t memoryHits() const;

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Executes one nd-range launch of `k`. `args` is the packed argument block; `localBytes`
// is the whole per-group local block (static + dynamic). Runs work-groups in parallel on
// the TBB pool unless the launch is small (then inline on the calling thread).
struct Launch {
  uint32_t dims = 1;
  uint64_t global[3] = {1, 1, 1};
  uint64_t local[3] = {1, 1, 1};
  uint64_t offset[3] = {0, 0, 0};
};
// Fails (never crashes) when per-thread scratch (local block, fiber stacks) cannot be
// allocated; groups already run stay run.
Error runKernel(const JitKernel &k, const uint64_t *args, uint64_t localBytes, const Launch &l);
// runKernel in two steps: what depends only on the kernel, the launch geometry and the
// local bytes is planned once (a replay node with a fixed range plans at finalize), the
// run takes the plan and the argument block. A plan stays valid while `k` lives.
struct LaunchPlan {
  Launch l;               // the launch as run (backend-chosen groups where allowed)
  uint64_t groups[3] = {1, 1, 1};
  uint64_t total = 0;     // groups
  uint64_t perGroup = 0;  // work-items per full group
  uint64_t localBytes = 0;
  uint64_t privateOffset = 0;
  uint64_t scratchBytes = 0;
  bool inlineRun = true;  // on the calling thread
  uint64_t grain = 1;
  uint64_t ctx[kCtxFields] = {}; // launch-wide ctx fields; group id and size of group 0
  // A launch planned for the pool (inlineRun false) whose work the plan cannot weigh
  // (work-items with loops or barriers) may still be a few microseconds, less than
  // handing it to other threads costs. runPlanned times its first runs on the pool and,
  // where they were short, as many on the calling thread, and keeps the faster way
  // (decided). planLaunch starts this over. Not thread-safe: one run of a plan at a time
  // (a replay runs a node's plan from one thread at a time: its submissions run one
  // after another, loop bodies trip after trip).
  enum class Tune : uint8_t { Pool, Inline, Decided } tune = Tune::Pool;
  uint8_t tuneRuns = 0;
  uint64_t poolBestNs = ~uint64_t(0), inlineBestNs = ~uint64_t(0);
};
void planLaunch(const JitKernel &k, uint64_t localBytes, const Launch &launch, LaunchPlan &plan);
// Runs a planned launch. The plan is updated (LaunchPlan::tune): a plan kept and run
// again (replay) adapts its pool-or-inline choice. Errors: scratch or fiber stacks
// that cannot be allocated.
Error runPlanned(const JitKernel &k, const uint64_t *args, LaunchPlan &plan);
// One work-group of a kernel with barriers, as work-item fibers (fibers.cpp).
// Returns false, running nothing, when the fiber stacks cannot be allocated.
constexpr uint64_t kFiberStackBytes = 64 * 1024;
bool runGroupFibers(const JitKernel &k, const uint64_t *args, const uint64_t *ctx, char *local);
// Chooses a local size when the node gives none (respects reqd_work_group_size).
void chooseLocalSize(const JitKernel &k, const Kernel &meta, Launch &l);

} // namespace cgraph::cpu
