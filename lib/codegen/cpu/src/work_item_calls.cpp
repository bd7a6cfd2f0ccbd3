// Work-item builtins and barriers of a kernel body: each get_global_id(), get_local_size(),
// ... call becomes the value it has for the work-item whose ids and launch geometry the
// body takes as extra arguments (BodyArgs), so after inlining into the wrapper's loops
// the x id is the innermost loop variable (vectorizable); barrier() becomes a call of
// the runtime's barrier, which the barrier cut (barrier_regions.h) or the fibers handle.
#include "lowering_internal.h"

#include <llvm/IR/Instructions.h>

#include <array>
#include <vector>

namespace cgraph::codegen::cpu {

using namespace llvm;

namespace {

// d -> v[d] for d in 0..2, `dflt` otherwise; folds when d is a constant.
Value *perDim(IRBuilder<> &b, Value *d, Value *const v[3], uint64_t dflt) {
  Type *i64 = b.getInt64Ty();
  if (auto *c = dyn_cast<ConstantInt>(d)) {
    uint64_t k = c->getZExtValue();
    return k < 3 ? v[k] : ConstantInt::get(i64, dflt);
  }
  Value *r = ConstantInt::get(i64, dflt);
  for (int k = 2; k >= 0; --k)
    r = b.CreateSelect(b.CreateICmpEQ(d, ConstantInt::get(d->getType(), k)), v[k], r);
  return r;
}

Value *field(const BodyArgs &a, uint32_t base, uint32_t d) {
  return a.ctx[base + d];
}

} // namespace

bool replaceWorkItemCalls(Function &f, const BodyArgs &a, FunctionCallee barrierFn,
                          bool &groupShape) {
  std::vector<CallInst *> calls;
  for (BasicBlock &bb : f)
    for (Instruction &i : bb)
      if (auto *c = dyn_cast<CallInst>(&i))
        if (Function *callee = c->getCalledFunction())
          if (classify(callee->getName()) != WiFunc::None) calls.push_back(c);
  bool barrier = false;
  for (CallInst *c : calls) {
    IRBuilder<> b(c);
    WiFunc kind = classify(c->getCalledFunction()->getName());
    if (kernel::observesGroupShape(kind)) groupShape = true;
    Value *d = c->arg_size() ? c->getArgOperand(0) : nullptr;
    auto dims = [&](uint32_t base) {
      return std::array<Value *, 3>{field(a, base, 0), field(a, base, 1), field(a, base, 2)};
    };
    Value *r = nullptr;
    switch (kind) {
    case WiFunc::GlobalId: {
      Value *g[3];
      for (int k = 0; k < 3; ++k)
        g[k] = b.CreateAdd(
            b.CreateAdd(b.CreateMul(field(a, kCtxGroupId, k), field(a, kCtxEnqLocal, k)),
                        field(a, kCtxGlobalOffset, k)),
            a.l[k]);
      r = perDim(b, d, g, 0);
      break;
    }
    case WiFunc::LocalId:
      r = perDim(b, d, a.l, 0);
      break;
    case WiFunc::LocalSize:
      r = perDim(b, d, dims(kCtxLocalSize).data(), 1);
      break;
    case WiFunc::EnqueuedLocalSize:
      r = perDim(b, d, dims(kCtxEnqLocal).data(), 1);
      break;
    case WiFunc::GroupId:
      r = perDim(b, d, dims(kCtxGroupId).data(), 0);
      break;
    case WiFunc::NumGroups:
      r = perDim(b, d, dims(kCtxNumGroups).data(), 1);
      break;
    case WiFunc::GlobalSize:
      r = perDim(b, d, dims(kCtxGlobalSize).data(), 1);
      break;
    case WiFunc::GlobalOffset:
      r = perDim(b, d, dims(kCtxGlobalOffset).data(), 0);
      break;
    case WiFunc::WorkDim:
      r = b.CreateTrunc(a.ctx[kCtxWorkDim], c->getType());
      break;
    case WiFunc::LocalLinearId:
      r = b.CreateAdd(
          b.CreateMul(b.CreateAdd(b.CreateMul(a.l[2], field(a, kCtxLocalSize, 1)), a.l[1]),
                      field(a, kCtxLocalSize, 0)),
          a.l[0]);
      break;
    case WiFunc::GlobalLinearId: {
      Value *g[3];
      for (int k = 0; k < 3; ++k)
        g[k] =
            b.CreateAdd(b.CreateMul(field(a, kCtxGroupId, k), field(a, kCtxEnqLocal, k)), a.l[k]);
      r = b.CreateAdd(b.CreateMul(b.CreateAdd(b.CreateMul(g[2], field(a, kCtxGlobalSize, 1)), g[1]),
                                  field(a, kCtxGlobalSize, 0)),
                      g[0]);
      break;
    }
    case WiFunc::Barrier:
      b.CreateCall(barrierFn);
      barrier = true;
      break;
    case WiFunc::None:
      break;
    }
    if (r) {
      if (r->getType() != c->getType()) r = b.CreateZExtOrTrunc(r, c->getType());
      c->replaceAllUsesWith(r);
    }
    c->eraseFromParent();
  }
  return barrier;
}

} // namespace cgraph::codegen::cpu
