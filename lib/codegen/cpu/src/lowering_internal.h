// What the files of the cpu code generator (lowerToObject, cgraph/codegen/cpu.h) share;
// LLVM types inside the code generator only. The steps, in the order lowering.cpp runs them:
//   builtin_library.cpp    link the OpenCL builtin library, lower its atomic peeks
//   work_item_calls.cpp    work-item builtins and barriers -> a body's values and calls
//   local_variables.cpp    __local variables -> offsets into the per-group local block
//   promote_allocas.cpp    -O0 allocas -> SSA values (before the barrier and x-loop cuts)
//   bounds_checks.cpp      bounds-checked kernels' access checks
//   safe_division.cpp      integer divisions that cannot trap
//   kernel_analysis.cpp    a work-item's cost and contended atomics (the launcher's plan)
//   wrappers.cpp           the work-group wrappers and their work-item loops
//   parallel_accesses.cpp  the x loops' parallel memory accesses
//   pipeline.cpp           the O3 pipeline with this backend's passes
//   idempotent_rmws.cpp    x86: idempotent atomic read-modify-writes without MFENCE
//   host_target.cpp        the host target machine and the cache key's options
// guards.h, barrier_regions.h and ilp.h hold the larger rewrites these call.
//
// Thread-safety: every function works on one llvm::Module or llvm::Function, whose
// context the caller owns; initTargets() may be called from any thread.
#pragma once

#include "barrier_regions.h"

#include "cgraph/codegen/cpu.h"

#include "cgraph/kernel/work_item.h"

#include <llvm/ADT/SmallPtrSet.h>
#include <llvm/ADT/StringRef.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/GlobalVariable.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/PassManager.h>
#include <llvm/Support/Error.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>

#include <cstdint>
#include <memory>
#include <string>

namespace cgraph::codegen::cpu {

// The OpenCL builtin library as spir64 bitcode (builtins/, compiled at build time).
extern const uint8_t *const kBuiltinsBitcode;
extern const size_t kBuiltinsBitcodeSize;

// The text of an LLVM error (consumes it).
inline std::string toText(llvm::Error e) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << e;
  return os.str();
}

// ---- Host target (host_target.cpp)

// Initializes LLVM's native target and its asm printer, once per process.
void initTargets();
// The host's target machine at -O3 (CodeGenOpt::Aggressive).
Expected<std::unique_ptr<llvm::TargetMachine>> hostMachine();

// ---- Kernel bodies

// The work-item functions and barriers (one table: cgraph/kernel/work_item.h).
using WiFunc = kernel::WorkItemFn;
inline WiFunc classify(llvm::StringRef n) { return kernel::workItemFn(n); }

// Values a body sees: work-item ids and the ctx fields (see internal.h).
struct BodyArgs {
  llvm::Value *l[3];
  llvm::Value *local;
  llvm::Value *ctx[kCtxFields];
};

// A body's parameters after the kernel's: x/y/z local ids, the local block, the ctx fields.
constexpr unsigned kExtraArgs = 3 + 1 + kCtxFields;

// Work-items jammed together when the x loop of a barrier-free kernel encloses a loop
// of the kernel (matmul's k): unroll-and-jam by this count gives that inner loop this
// many independent work-items per iteration, whose loads of consecutive work-items are
// consecutive, and the late SLP pass (runO3) packs them into vectors of this width
// (where the kernel's `restrict` parameters left scope declarations in the x loop,
// WorkItemScopesPass removes them first, or unroll-and-jam declines the loop).
constexpr unsigned kJamCount = 8;

// Work-items interleaved by the x loop of a long straight-line work-item (a fused
// chain: hundreds of dependent operations, more than the core's reorder window sees):
// the vectorizer's own choice for a large loop body is one vector at a time, which
// leaves the chain latency-bound. The x loop of such a kernel is vectorized kIlpWidth
// wide, one vector per iteration, and after O3 ilp.h's interleaveMarkedLoops() runs as
// many vectors in lockstep as fit the vector registers, at most this many (LLVM's own
// interleave count, a power of two, either left the pipes idle or overflowed the
// registers: ilp.h); the scalar loop the vectorizer leaves for the last work-items
// (fewer than a vector) is interleaved two at a time, so a group of 13 long work-items
// is one vector and 5 work-items in three steps, not 13 chains one after another.
constexpr unsigned kIlpCount = 8;
constexpr unsigned kIlpWidth = 8;
// A loop-free work-item of at least this many instructions is "long" (above).
constexpr size_t kLongBody = 256;

// One kernel on its way through the lowering: its body (the kernel's code taking the
// BodyArgs after its parameters) and what the wrapper and the launcher need to know.
struct KernelPlan {
  std::string name;
  llvm::Function *body = nullptr;
  bool barrier = false;
  bool groupShape = false; // observes its work-group shape or uses __local memory
  uint64_t staticLocal = 0;
  uint32_t numParams = 0;
  BarrierRegions regions; // barrier kernels cut into regions (empty: fibers)
  bool loops = false;     // the work-item has loops: its cost is not a few instructions
  bool longBody = false;  // loop-free but long: interleave work-items (kIlpCount)
  bool straight = false;  // ... and without conditional branches (ilp.h rewrites its loop)
  uint64_t itemCost = 1;  // relative cost of a loop-free work-item (itemCost())
  bool contended = false; // its atomics all hit the same few words (contendedAtomics())
  uint64_t fixedLocal[3] = {0, 0, 0}; // LocalSpecialization's shape (0: not specialized)
  bool checkBounds = false; // accesses checked (instrumentBounds); args has one more word
};

// ---- Builtin library (builtin_library.cpp)

// Links what `m` uses of the builtin library (kBuiltinsBitcode) into `m`.
Error linkBuiltins(llvm::Module &m);
// The builtin library's relaxed atomic loads (builtins_atomic.h: the first read of a
// 64-bit min/max loop, which OpenCL C cannot write for spir64): each call of the two
// undefined functions becomes `load atomic monotonic` of the 8-byte word.
void lowerAtomicPeeks(llvm::Module &m);

// ---- Body rewrites, in the order the driver runs them

// Replaces work-item builtins and barriers in `f` (work_item_calls.cpp): the builtins
// by values computed from `a`, barriers by calls of `barrierFn`. Returns whether it has a
// barrier; `groupShape` is set when the kernel observes its work-group shape (local ids
// and sizes, group ids, group counts).
bool replaceWorkItemCalls(llvm::Function &f, const BodyArgs &a, llvm::FunctionCallee barrierFn,
                          bool &groupShape);

// Replaces each use in `body` of a __local global of `locals` by a pointer into the local
// block `localBlock` (local_variables.cpp), placing the variables from `staticLocal` on
// (at least 16-byte aligned); `staticLocal` becomes the end of the last one placed.
void placeLocalVariables(llvm::Function &body, llvm::Value *localBlock,
                         const llvm::SmallPtrSetImpl<llvm::GlobalVariable *> &locals,
                         uint64_t &staticLocal);

// Promotes `body`'s promotable allocas to SSA values and folds what that exposes
// (promote_allocas.cpp).
void promoteAllocas(llvm::Function &body);
// rotate_loops.cpp: `f`'s loops rotated (a loop's first test becomes a branch before it).
void rotateLoops(llvm::Function &f);

// Runs `fpm` over `f` (`mpm` over `m`) with fresh analysis managers (run_passes.cpp).
void runPasses(llvm::Function &f, llvm::FunctionPassManager &fpm);
void runPasses(llvm::Module &m, llvm::ModulePassManager &mpm);

// Checks every memory access of `body` against the objects it may reach
// (bounds_checks.cpp; internal.h BoundsTable): a failed check calls `fail` with the
// table word `table` and skips the access. `numParams`: the kernel's parameters.
void instrumentBounds(llvm::Function &body, unsigned numParams, llvm::Value *table,
                      llvm::FunctionCallee fail);

// Makes every integer division of `body` that may trap divide by 1 in those cases
// instead (safe_division.cpp).
void guardDivisions(llvm::Function &body);

// ---- Analyses for the launcher (kernel_analysis.cpp)

// A loop-free work-item's cost relative to a few vector-friendly instructions (axpy: 1):
// the `.info` cost the launcher weighs launches with (internal.h JitKernel::itemCost).
uint64_t itemCost(llvm::Function &body);
// True when every atomic access of the work-item outside __local memory has a launch-
// uniform address, at least one is a read-modify-write, and its only loops are compare-
// and-swap retries (internal.h JitKernel::contended).
bool contendedAtomics(llvm::Function &body, unsigned numParams);

// ---- Wrappers (wrappers.cpp, parallel_accesses.cpp)

// Emits the kernel's entry points into `m` (internal.h's ABI): `cgk.<k>.wg` looping z/y/x
// over a group (one loop per barrier region for kernels cut at their barriers), or
// `cgk.<k>.wi` running one work-item (fibers), and `cgk.<k>.info`. Rewrites the body (or
// the regions) as the x loop needs: promoted allocas, guard, division and clamp clones,
// parallel-access metadata.
void emitWrappers(llvm::Module &m, const KernelPlan &k);

// Tags the simple loads and stores of `f` that reach only memory the work-items share
// (kernel parameters, the local block, globals, the carried-value pointers from
// parameter `firstOut` on) with the access group `group`, created on the first one (left
// null where none is tagged). See parallel_accesses.cpp.
void tagParallelAccesses(llvm::Function &f, unsigned numParams, unsigned firstOut,
                         llvm::MDNode *&group);

// ---- Optimization (pipeline.cpp, idempotent_rmws.cpp)

// LLVM's O3 for `tm` plus this backend's passes: work-item scope declarations dropped
// before the vectorizers, unroll-and-jam of the x loops and a late SLP pass after O3,
// then interleaveMarkedLoops() (ilp.h). TSan builds instrument the kernels first.
Error runO3(llvm::Module &m, llvm::TargetMachine &tm);
// x86: rewrites the sequentially consistent read-modify-writes that leave their word as
// it is, and whose old value is used, as a compare-and-swap loop. Runs after runO3.
void expandIdempotentRmws(llvm::Module &m, const llvm::TargetMachine &tm);

} // namespace cgraph::codegen::cpu
