// OpenCL orders the work-items of a group only at barriers: between two, one work-item's
// plain access to memory another work-item writes is a data race, so the x loop over a
// group's work-items (a barrier-free body, or one barrier region) carries no dependence
// through memory the kernel shares: global, constant and __local memory, and the
// per-work-item context arrays. Those loads and stores join one access group that the
// x loops name in llvm.loop.parallel_accesses, so the vectorizers need no run-time
// alias checks for them (they cannot form checks for `scratch[lid]` against
// `scratch[lid + s]` with `s` unknown: "cannot check memory dependencies at run time").
// Left out, so that LLVM analyses them itself: atomic and volatile accesses,
// calls, and anything that may reach private memory (an alloca is one object for every
// work-item once the body is inlined into the loop; a pointer loaded or selected from
// several objects may be one). `firstOut`..: region parameters that point at the
// wrapper's carried uniform values, which every work-item stores alike.
#include "lowering_internal.h"

#include <llvm/Analysis/ValueTracking.h>
#include <llvm/IR/Instructions.h>

namespace cgraph::codegen::cpu {

using namespace llvm;

namespace {

bool sharedMemory(const Value *ptr, unsigned numParams, unsigned firstOut) {
  SmallVector<const Value *, 4> objs;
  getUnderlyingObjects(ptr, objs, nullptr, 8);
  if (objs.empty()) return false;
  for (const Value *o : objs) {
    if (isa<GlobalVariable>(o)) continue;
    auto *a = dyn_cast<Argument>(o);
    // Kernel parameters, the local block (numParams + 3; context arrays live in it),
    // carried uniform values' out pointers.
    if (a && (a->getArgNo() < numParams || a->getArgNo() == numParams + 3 || a->getArgNo() >= firstOut))
      continue;
    return false;
  }
  return true;
}

} // namespace

void tagParallelAccesses(Function &f, unsigned numParams, unsigned firstOut, MDNode *&group) {
  for (BasicBlock &bb : f)
    for (Instruction &i : bb) {
      const Value *ptr = nullptr;
      if (auto *l = dyn_cast<LoadInst>(&i))
        ptr = l->isSimple() ? l->getPointerOperand() : nullptr;
      else if (auto *st = dyn_cast<StoreInst>(&i))
        ptr = st->isSimple() ? st->getPointerOperand() : nullptr;
      if (!ptr || !sharedMemory(ptr, numParams, firstOut)) continue;
      if (!group) group = MDNode::getDistinct(f.getContext(), {});
      i.setMetadata(LLVMContext::MD_access_group, group);
    }
}

} // namespace cgraph::codegen::cpu
