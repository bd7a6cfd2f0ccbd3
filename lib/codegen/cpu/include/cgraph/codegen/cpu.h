// The cpu code generator: SPIR-V kernels lowered to a relocatable object for the host
// (LLVM 14, -O3, the host CPU's features), and the ABI between the lowered kernels and
// the launcher that runs them (the cpu backend's work_group.cpp and fibers.cpp).
//
// Each kernel `k` of a module becomes `cgk.k.wg` (one work-group as work-item loops),
// `cgk.k.wi` (one work-item, for kernels with barriers run as fibers) and `cgk.k.info`
// (the facts the launcher plans with), over the argument block and context fields
// below. The OpenCL builtin library (builtins/, compiled at build time for spir64) is
// linked into each module. The lowered objects call back into the launcher through two
// C symbols the JIT resolves: cgraph_cpu_barrier and cgraph_cpu_bounds_fail.
//
// Ownership: lowerToObject returns the object's bytes; nothing is kept.
// Thread-safety: lowerToObject may run on several threads at once (each call has its
// own LLVMContext); it changes no process-global LLVM option.
// Failure modes: an Error naming the module for SPIR-V that does not translate, a kernel
// the lowering does not support, or a target LLVM cannot make; never a crash. LLVM's own
// diagnostics are returned in the Error, not printed.
#pragma once

#include "cgraph/error.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace cgraph::codegen::cpu {

// ---- The ABI between the lowered kernels and the launcher (the cpu backend's work_group.cpp)
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

// The work-item fiber switch lowered kernels call for barrier() (fibers.cpp).
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

// SPIR-V module -> relocatable object for the host (the cpu backend's kernel_compiler.cpp runs it).
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

} // namespace cgraph::codegen::cpu
