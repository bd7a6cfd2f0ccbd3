// The body comes from -O0 IR: every local variable is an alloca. Before the barrier
// split, promote the promotable ones to SSA values: otherwise a value such as
// `lid = get_local_id(0)`, stored in region 0 and read after a barrier, is live across
// it in memory and becomes a context array, so `scratch[lid]` in a later region is an
// indirect access (a gather the vectorizers leave alone) instead of the local id
// itself, which the split recomputes in every region. The x-loop searches (guards.h)
// and the bounds checks follow values through SSA too.
#include "lowering_internal.h"

#include <llvm/Analysis/InstructionSimplify.h>
#include <llvm/IR/Dominators.h>
#include <llvm/IR/Instructions.h>
#include <llvm/Transforms/Utils/Local.h>
#include <llvm/Transforms/Utils/PromoteMemToReg.h>

#include <vector>

namespace cgraph::codegen::cpu {

using namespace llvm;

void promoteAllocas(Function &body) {
  DominatorTree dt(body);
  std::vector<AllocaInst *> promotable;
  for (Instruction &i : body.getEntryBlock())
    if (auto *a = dyn_cast<AllocaInst>(&i))
      if (isAllocaPromotable(a)) promotable.push_back(a);
  if (!promotable.empty()) PromoteMemToReg(promotable, dt);
  // ... and fold what that exposes (the translator's builtin-variable vectors: a global
  // id is an extractelement of an insertelement chain), so guards.h's search sees the
  // plain arithmetic on the ids.
  const DataLayout &dl = body.getParent()->getDataLayout();
  for (BasicBlock &bb : body)
    for (Instruction &i : make_early_inc_range(bb))
      if (Value *v = SimplifyInstruction(&i, SimplifyQuery(dl, &i))) {
        i.replaceAllUsesWith(v);
        if (isInstructionTriviallyDead(&i)) i.eraseFromParent();
      }
}

} // namespace cgraph::codegen::cpu
