// Thread coarsening of the table-ABI lowering (codegen/table_abi.h, `coarsen`): a
// second entry point per eligible kernel in which one GPU thread runs 4 consecutive
// work-items of dimension 0, so that their loads and stores of consecutive elements
// become one 16-byte access each (ld/st.v4: a float per thread falls short of the copy
// bandwidth that a float4 per thread reaches).
//
// Eligible: a kernel whose body, once its own callees are inlined, observes nothing of
// the launch's shape but get_global_id / get_global_offset / get_work_dim (no local or
// group ids or sizes, no barriers, fences, atomics, sub-group or work-group functions,
// no __local memory, no printf), calls no defined function and has at most
// kMaxCoarsenInstructions instructions. Such a kernel cannot tell which thread runs a
// work-item, and work-items can only share memory through races (undefined in OpenCL),
// so the accesses of the 4 work-items are marked as not aliasing one another (scoped
// noalias metadata), which lets LLVM's load/store vectorizer merge them.
//
// The coarse entry `kCoarseEntryPrefix + name` has the table ABI plus one last argument,
// the global size of dimension 0 (n): thread t runs work-items off0 + 4t .. off0 + 4t + 3
// below off0 + n. Where all 4 are in range, every buffer pointer is 16-byte aligned and
// off0 is a multiple of 4, the 4 copies run straight (with alignment assumptions);
// otherwise one at a time with a range check. The launch (launch_plan.h planCoarse) is
// 1-D with ceil(n / 4) threads.
//
// Internal to gpu_common. Thread-safety: like lowerToTableAbi (one context per call).
#pragma once

#include "cgraph/codegen/table_abi.h"

#include <string>
#include <vector>

namespace llvm {
class Function;
class Module;
} // namespace llvm

namespace cgraph::codegen {

constexpr size_t kMaxCoarsenInstructions = 1000;

// Empty when kernel body `body` (its callees already inlined) may be coarsened, else
// the first reason it may not (for the dump and the tests).
std::string coarsenBlocker(const llvm::Function &body);

// kCoarseItems clones of `body` with one more parameter, the work-item's global id
// of dimension 0 (get_global_id(0); other dimensions read 0), each clone's memory
// accesses marked with its index. Internal, always-inline functions of `m`.
std::vector<llvm::Function *> coarseBodies(llvm::Module &m, llvm::Function &body);

// After the clones are inlined into the coarse wrapper: each marked access goes into
// the alias scope of its copy, declared not to alias the other copies' (the marks go).
void scopeCoarseItems(llvm::Function &wrapper);

// After optimization and the load/store vectorizer: whether the copies' accesses were
// merged, i.e. no load or store of copies 1..3 is left on its own (strided accesses
// that would make the coarse entry slower than the plain one).
bool coarseAccessesMerged(const llvm::Function &wrapper);

} // namespace cgraph::codegen
