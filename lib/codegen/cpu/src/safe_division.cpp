// Integer division and remainder trap on x86 (SIGFPE, the whole process) for a zero
// divisor and for the signed minimum divided by -1; OpenCL leaves the result undefined,
// not the program. Each sdiv/udiv/srem/urem whose divisor may be zero, or, signed, may
// be -1 with a dividend that may be the minimum, divides by 1 in those cases instead: a
// compare and a select per division (per lane on vectors, which vectorize), nothing
// where the divisor is a known nonzero constant. Runs before the division-run search
// (guards.h XDivision): a guarded divisor is still group-uniform.
#include "lowering_internal.h"

#include <llvm/ADT/APInt.h>
#include <llvm/Analysis/ValueTracking.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/Instructions.h>
#include <llvm/Support/KnownBits.h>

#include <vector>

namespace cgraph::codegen::cpu {

using namespace llvm;

void guardDivisions(Function &body) {
  const DataLayout &dl = body.getParent()->getDataLayout();
  std::vector<BinaryOperator *> divs;
  for (BasicBlock &bb : body)
    for (Instruction &i : bb)
      if (auto *bo = dyn_cast<BinaryOperator>(&i))
        switch (bo->getOpcode()) {
        case Instruction::UDiv:
        case Instruction::SDiv:
        case Instruction::URem:
        case Instruction::SRem:
          divs.push_back(bo);
          break;
        default:
          break;
        }
  for (BinaryOperator *bo : divs) {
    Value *x = bo->getOperand(0), *d = bo->getOperand(1);
    Type *t = d->getType();
    const unsigned bits = t->getScalarSizeInBits();
    const bool isSigned = bo->getOpcode() == Instruction::SDiv || bo->getOpcode() == Instruction::SRem;
    IRBuilder<> b(bo);
    Value *bad = nullptr;
    if (!isKnownNonZero(d, dl)) bad = b.CreateICmpEQ(d, Constant::getNullValue(t));
    if (isSigned) {
      // -1 has every bit set; the minimum has only the sign bit.
      KnownBits kd = computeKnownBits(d, dl), kx = computeKnownBits(x, dl);
      const APInt min = APInt::getSignedMinValue(bits);
      const bool dMinusOne = kd.Zero.isZero();
      const bool xMin = !kx.Zero[bits - 1] && (kx.One & ~min).isZero();
      if (dMinusOne && xMin) {
        Value *o = b.CreateAnd(b.CreateICmpEQ(d, Constant::getAllOnesValue(t)),
                               b.CreateICmpEQ(x, ConstantInt::get(t, min)));
        bad = bad ? b.CreateOr(bad, o) : o;
      }
    }
    if (!bad) continue;
    if (auto *c = dyn_cast<Constant>(bad); c && c->isNullValue()) continue;
    bo->setOperand(1, b.CreateSelect(bad, ConstantInt::get(t, 1), d, "div.safe"));
  }
}

} // namespace cgraph::codegen::cpu
