// Kernels with barriers as work-item loops (the lowering uses it; LLVM types inside the
// CPU backend only).
//
// A kernel body with barrier calls is cut at its barriers into regions: region 0 starts
// at the body's entry, region j+1 right after barrier j. Each region becomes a function
// with the body's parameters that runs one work-item from its start until it reaches a
// barrier (returns that barrier's index + 1, the next region) or the end of the kernel
// (returns kRegionExit). The work-group wrapper then runs, for the current region, every
// work-item in a loop (the loop the vectorizers see) and moves on to the region the
// work-items returned: every item reaches a barrier before any passes it, as OpenCL
// requires, with no stack switch. OpenCL makes barriers work-group uniform, so all items
// of a group return the same next region.
//
// Values live across a barrier are kept per work-item in "context arrays" (one array per
// value, indexed by the local linear id, so consecutive work-items touch consecutive
// addresses) in a per-group private block the launcher supplies after the __local block
// (ctx field kCtxPrivate holds its byte offset from the local pointer). Values that
// depend only on the body's parameters are recomputed in each region instead. Values a
// uniformity analysis proves the same in every work-item of the group (a loop counter
// or reduction stride, stored from uniform values under uniform control) are carried
// as one value per group: the wrapper passes each region the value in and takes it back
// out, so `tile[lid + s]` stays a contiguous access the vectorizers can use, not a
// gather.
//
// Thread-safety: operates on one llvm::Function, whose context the caller owns.
#pragma once

#include <llvm/IR/Function.h>

#include <cstdint>
#include <string>
#include <vector>

namespace cgraph::codegen::cpu {

constexpr uint32_t kRegionExit = 0xffffffffu;

struct BarrierRegions {
  std::vector<llvm::Function *> regions; // region r: i32 (body's params, carried values); internal
  uint64_t privateBytes = 0;             // context-array bytes per work-item
  // Values live across a barrier that are the same in every work-item of a group (a
  // reduction's stride): not context arrays but one value per group. Each region takes,
  // after the body's params, one argument per type here (the value at the region's
  // start) and then one pointer per type (where it stores the value at its end; every
  // work-item stores the same value).
  std::vector<llvm::Type *> uniformTypes;
};

// Splits `body` (params: kernel params, then x/y/z local ids, the local block, then the
// kCtxFields ctx values; `numParams` kernel params) at its calls to `barrier`. On success
// `body` is left unused (the caller erases it). Returns false with `whyNot` set, leaving
// `body` valid, when the body has a shape the split does not handle (the caller then runs
// the kernel as work-item fibers).
bool splitAtBarriers(llvm::Function &body, llvm::Function &barrier, unsigned numParams,
                     BarrierRegions &out, std::string &whyNot);

} // namespace cgraph::codegen::cpu
