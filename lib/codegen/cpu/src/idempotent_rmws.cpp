// x86: a sequentially consistent read-modify-write that leaves the word as it is and
// whose old value is used (`atom_or(p, 0)`: atomics64.cl reads its shared counters so)
// becomes MFENCE and a load in LLVM 14's code generator
// (X86TargetLowering::lowerIdempotentRMWIntoFencedLoad), and MFENCE costs about as much
// as two locked instructions. Each becomes the loop LLVM gives an `or` of any other
// value: a relaxed load, then `lock cmpxchg` of that value with itself, again while
// another work-item wrote in between. The successful swap reads the word's latest value
// and writes it back: the same seq_cst read-modify-write, one locked instruction. Runs
// after O3, which would fold the swap back. TSan builds have no atomicrmw left by then
// (calls).
#include "lowering_internal.h"

#include <llvm/IR/Constants.h>
#include <llvm/IR/Instructions.h>

#include <vector>

namespace cgraph::codegen::cpu {

using namespace llvm;

void expandIdempotentRmws(Module &m, const TargetMachine &tm) {
  if (!tm.getTargetTriple().isX86()) return;
  std::vector<AtomicRMWInst *> found;
  for (Function &f : m)
    for (BasicBlock &bb : f)
      for (Instruction &i : bb) {
        auto *rmw = dyn_cast<AtomicRMWInst>(&i);
        if (!rmw || rmw->use_empty() || rmw->getOrdering() != AtomicOrdering::SequentiallyConsistent ||
            !rmw->getType()->isIntegerTy() || rmw->getType()->getIntegerBitWidth() > 64)
          continue;
        auto *c = dyn_cast<ConstantInt>(rmw->getValOperand());
        if (!c) continue;
        switch (rmw->getOperation()) {
        case AtomicRMWInst::Add:
        case AtomicRMWInst::Sub:
        case AtomicRMWInst::Or:
        case AtomicRMWInst::Xor:
          if (c->isZero()) found.push_back(rmw);
          break;
        case AtomicRMWInst::And:
          if (c->isMinusOne()) found.push_back(rmw);
          break;
        default:
          break;
        }
      }
  for (AtomicRMWInst *rmw : found) {
    BasicBlock *pre = rmw->getParent();
    BasicBlock *exit = pre->splitBasicBlock(rmw, "idem.exit");
    BasicBlock *loop = BasicBlock::Create(m.getContext(), "idem.loop", pre->getParent(), exit);
    pre->getTerminator()->setSuccessor(0, loop);
    IRBuilder<> b(pre->getTerminator());
    Type *t = rmw->getType();
    LoadInst *first = b.CreateAlignedLoad(t, rmw->getPointerOperand(), rmw->getAlign(), rmw->isVolatile());
    first->setAtomic(AtomicOrdering::Monotonic, rmw->getSyncScopeID());
    b.SetInsertPoint(loop);
    PHINode *expected = b.CreatePHI(t, 2);
    expected->addIncoming(first, pre);
    AtomicCmpXchgInst *cas = b.CreateAtomicCmpXchg(
        rmw->getPointerOperand(), expected, expected, rmw->getAlign(),
        AtomicOrdering::SequentiallyConsistent, AtomicOrdering::SequentiallyConsistent,
        rmw->getSyncScopeID());
    cas->setVolatile(rmw->isVolatile());
    Value *seen = b.CreateExtractValue(cas, 0);
    expected->addIncoming(seen, loop);
    b.CreateCondBr(b.CreateExtractValue(cas, 1), exit, loop);
    rmw->replaceAllUsesWith(expected); // the swap succeeded: the word held `expected`
    rmw->eraseFromParent();
  }
}

} // namespace cgraph::codegen::cpu
