// __local variables (program-scope globals in address space 3) of a kernel body become
// offsets into the per-group local block the launcher passes (BodyArgs::local), after
// the __local pointer parameters' bytes: the kernel's static local bytes (`.info`[1]).
// Each variable is placed once per kernel; a constant expression that mentions one is
// expanded into instructions first, so that its use can be replaced per function.
#include "lowering_internal.h"

#include <llvm/IR/Constants.h>
#include <llvm/IR/Instructions.h>

#include <algorithm>
#include <map>
#include <vector>

namespace cgraph::codegen::cpu {

using namespace llvm;

namespace {

bool refersTo(Constant *c, const SmallPtrSetImpl<GlobalVariable *> &gs) {
  if (auto *g = dyn_cast<GlobalVariable>(c)) return gs.count(g) != 0;
  for (Use &op : c->operands())
    if (auto *oc = dyn_cast<Constant>(op.get()))
      if (refersTo(oc, gs)) return true;
  return false;
}

// Rewrites constant expressions that mention a __local global into instructions so
// that the global can be replaced per function by a pointer into the local block.
void expandConstantExprs(Function &f, const SmallPtrSetImpl<GlobalVariable *> &gs) {
  std::vector<Instruction *> work;
  for (BasicBlock &bb : f)
    for (Instruction &i : bb)
      work.push_back(&i);
  while (!work.empty()) {
    Instruction *i = work.back();
    work.pop_back();
    for (unsigned k = 0; k < i->getNumOperands(); ++k) {
      auto *ce = dyn_cast<ConstantExpr>(i->getOperand(k));
      if (!ce || !refersTo(ce, gs)) continue;
      Instruction *ni = ce->getAsInstruction();
      if (auto *phi = dyn_cast<PHINode>(i))
        ni->insertBefore(phi->getIncomingBlock(k)->getTerminator());
      else
        ni->insertBefore(i);
      i->setOperand(k, ni);
      work.push_back(ni);
    }
  }
}

uint64_t alignTo(uint64_t v, uint64_t a) {
  return (v + a - 1) / a * a;
}

} // namespace

void placeLocalVariables(Function &body, Value *localBlock,
                         const SmallPtrSetImpl<GlobalVariable *> &locals, uint64_t &staticLocal) {
  const DataLayout &dl = body.getParent()->getDataLayout();
  expandConstantExprs(body, locals);
  std::map<GlobalVariable *, Value *> ptrs;
  IRBuilder<> b(&*body.getEntryBlock().getFirstInsertionPt());
  for (BasicBlock &bb : body)
    for (Instruction &i : bb)
      for (unsigned k = 0; k < i.getNumOperands(); ++k) {
        auto *g = dyn_cast<GlobalVariable>(i.getOperand(k));
        if (!g || !locals.count(g)) continue;
        auto it = ptrs.find(g);
        if (it == ptrs.end()) {
          uint64_t align = std::max<uint64_t>(g->getAlign() ? g->getAlign()->value() : 16, 16);
          uint64_t off = alignTo(staticLocal, align);
          staticLocal = off + dl.getTypeAllocSize(g->getValueType());
          Value *p = b.CreateConstInBoundsGEP1_64(b.getInt8Ty(), localBlock, off);
          p = b.CreatePointerBitCastOrAddrSpaceCast(p, g->getType());
          it = ptrs.emplace(g, p).first;
        }
        i.setOperand(k, it->second);
      }
}

} // namespace cgraph::codegen::cpu
