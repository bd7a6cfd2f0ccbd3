// Internals of the CPU backend shared by its .cpp files.
#pragma once

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

extern const uint8_t *const kBuiltinsBitcode;
extern const size_t kBuiltinsBitcodeSize;

// ---- ABI between the lowered kernels (the lowering, lowering_internal.h) and the launcher (work_group.cpp)
// ctx: one u64 per field, index base + dimension.
enum WgCtx : uint32_t {
  kCtxGroupId = 0,
  kCtxLocalSize = 3, // actual size of this group (smaller for a trailing partial group)
  kCtxEnqLocal = 6,  // enqueued (nominal) local size
  kCtxNumGroups = 9,
  kCtxGlobalSize = 12,
  kCtxGlobalOffset = 15,
  kCtxWorkDim = 18,
  kCtxPrivate = 19, // byte offset of the per-group context arrays from the local pointer
  // Bounds-checked kernels: the address of the launch's bounds table (below). Not read
  // from ctx: the wrapper loads it from the argument block (args[numParams]); 0 in
  // kernels compiled without checks.
  kCtxBounds = 20,
  kCtxFields = 21,
};
// Bounds-checked kernels (lowerToObject's checkBounds): every access to memory is
// checked against the byte ranges of the objects it may reach (buffer and __local
// parameters, the local block, private and program-scope variables); one that falls
// outside is not made (a load gives 0) and is recorded here. The argument block has one
// more u64 after the parameters: the address of this table of u64 words, one per
// launch, which the launcher fills.
enum BoundsTable : uint32_t {
  kBoundsFailed = 0,     // nonzero once an access failed (the next fields say which)
  kBoundsArg = 1,        // what the first failed access reached: a parameter, or below
  kBoundsOffset = 2,     // its byte offset from that object's address (else its address)
  kBoundsBytes = 3,      // its size in bytes
  kBoundsWrite = 4,      // 1: a write (store, atomic, memcpy/memset destination)
  kBoundsObject = 5,     // the object's size in bytes
  kBoundsLocalBytes = 6, // bytes of the launch's local block (static + dynamic)
  kBoundsSizes = 7,      // + i: bytes of parameter i's binding or __local size (0: none)
};
// kBoundsArg values besides parameter numbers: the address's origin is not known (it
// lies outside every buffer parameter and the local block), or a private or program-
// scope variable, or the work-group's local block (static __local variables).
constexpr uint64_t kBoundsNoArg = ~uint64_t(0);
constexpr uint64_t kBoundsVariable = ~uint64_t(1);
constexpr uint64_t kBoundsLocalBlock = ~uint64_t(2);
// Records a failed access in `table` (the first one wins; thread-safe). Called by
// bounds-checked kernels (work_group.cpp).
extern "C" void cgraph_cpu_bounds_fail(uint64_t table, uint64_t arg, uint64_t offset, uint64_t bytes,
                                       uint64_t write, uint64_t object);
// args: one u64 per kernel parameter: a buffer's address, a scalar's bits (low bytes),
// or for a __local pointer parameter the byte offset into the group's local block.
// `cgk.<name>.wg` runs every work-item of one group: barrier-free kernels in one z/y/x
// loop, kernels with barriers as one such loop per barrier region (barrier_regions.h),
// whose values live across barriers take `.info`[4] bytes per work-item after the local
// block (ctx[kCtxPrivate]).
using WgLoopFn = void (*)(const uint64_t *args, const uint64_t *ctx, char *local);
// Kernels with barriers the region split declines (or all of them with
// CpuOptions::barrierFibers): `cgk.<name>.wi` runs one work-item as a
// fiber; barrier() switches fibers.
using WiFn = void (*)(const uint64_t *args, const uint64_t *ctx, char *local, uint64_t lx,
                      uint64_t ly, uint64_t lz);
// `cgk.<name>.info`: u64[9] = {barriers (kNoBarrier, kBarrierRegions, kBarrierFibers),
// static __local bytes, parameter count, observes its work-group shape (local ids or
// sizes, group ids or counts, __local memory), context-array bytes per work-item,
// the work-item has loops, relative cost of a work-item (1: a few vector instructions;
// more with unvectorizable slow operations such as a division by a variable), its
// atomics all hit work-item-independent addresses (JitKernel::contended), its accesses
// are bounds-checked (BoundsTable)}.
enum BarrierMode : uint64_t { kNoBarrier = 0, kBarrierRegions = 1, kBarrierFibers = 2 };
constexpr const char *kWrapperPrefix = "cgk.";

// The work-item fiber switch lowered kernels call for barrier() (work_group.cpp).
extern "C" void cgraph_cpu_barrier();

// One kernel compiled for one work-group shape, as PoCL compiles its work-group
// functions: get_local_size() and get_enqueued_local_size() are these constants and the
// work-item loops have constant trip counts, so `% get_local_size(0)` is a mask and a
// loop to it unrolls or vectorizes for its trip count. Valid only for launches whose
// every group is full (global size a multiple of `local` in every dimension): a
// trailing partial group's get_local_size() differs. Used for replay nodes with a fixed
// range (command_buffer.cpp); eager runs take the general kernel.
struct LocalSpecialization {
  std::string kernel;
  uint64_t local[3] = {1, 1, 1};
};

// SPIR-V module -> relocatable object for the host (kernel_compiler.cpp runs it).
// `moduleName` names the module in errors. With `spec`, only that kernel is lowered,
// specialized for its work-group shape. With `checkBounds`, every kernel's buffer
// accesses are checked (BoundsTable). With `dumpDir`, the optimized IR is written there
// as `<moduleName>.ll` (debugging; a file that cannot be written is skipped). With
// `fibers`, kernels with barriers run as work-item fibers even where the barrier cut
// would apply (CpuOptions::barrierFibers).
Expected<std::vector<uint8_t>> lowerToObject(const uint8_t *spirv, size_t size,
                                             const std::string &moduleName,
                                             const LocalSpecialization *spec = nullptr,
                                             bool checkBounds = false,
                                             const std::string *dumpDir = nullptr, bool fibers = false);
// The options string that enters the cache key (host CPU, features, compiler version).
std::string hostCompileOptions();

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
