// Work-item guards: see guards.h.
#include "guards.h"

#include <llvm/ADT/SmallPtrSet.h>
#include <llvm/Analysis/ValueTracking.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/Module.h>
#include <llvm/Transforms/Utils/Cloning.h>
#include <llvm/Transforms/Utils/Local.h>
#include <llvm/Transforms/Utils/ValueMapper.h>

#include <functional>
#include <map>

namespace cgraph::cpu {

using namespace llvm;

namespace {

// Work the searches below may do before giving up (blocks, expression depth).
constexpr unsigned kMaxBlocks = 64;
constexpr int kMaxDepth = 12;

// The same for every work-item of the x loop: constants, parameters other than the x id
// (numParams), and pure, speculatable arithmetic on them (no memory, calls or phis), so
// the wrapper can recompute it.
bool invariant(Value *v, unsigned xArg, int depth = 0) {
  if (isa<Constant>(v)) return !isa<ConstantExpr>(v);
  if (auto *a = dyn_cast<Argument>(v)) return a->getArgNo() != xArg;
  auto *i = dyn_cast<Instruction>(v);
  if (!i || depth > kMaxDepth || isa<PHINode>(i) || isa<CallBase>(i) || i->mayReadOrWriteMemory() ||
      !isSafeToSpeculativelyExecute(i))
    return false;
  for (Value *op : i->operands())
    if (!invariant(op, xArg, depth + 1)) return false;
  return true;
}

// x plus invariants: `x`, `t + inv`, `inv + t` (i64).
bool xChain(Value *v, unsigned xArg, int depth = 0) {
  if (auto *a = dyn_cast<Argument>(v)) return a->getArgNo() == xArg;
  auto *bo = dyn_cast<BinaryOperator>(v);
  if (!bo || bo->getOpcode() != Instruction::Add || depth > kMaxDepth) return false;
  Value *l = bo->getOperand(0), *r = bo->getOperand(1);
  return (xChain(l, xArg, depth + 1) && invariant(r, xArg)) ||
         (xChain(r, xArg, depth + 1) && invariant(l, xArg));
}

// V(x) = [ext] [trunc] chain, the extension matching the compare's signedness.
bool parseV(Value *v, unsigned xArg, bool isSigned, WorkItemGuard &g) {
  g.extended = false;
  if (isSigned ? isa<SExtInst>(v) : isa<ZExtInst>(v)) {
    v = cast<CastInst>(v)->getOperand(0);
    g.extended = true;
  }
  if (!v->getType()->isIntegerTy()) return false;
  g.width = v->getType()->getIntegerBitWidth();
  if (auto *t = dyn_cast<TruncInst>(v)) v = t->getOperand(0);
  if (!v->getType()->isIntegerTy(64) || g.width > 64 || g.width < 2 || !xChain(v, xArg)) return false;
  g.offsetExpr = v;
  return true;
}

// Every block reachable from `start` is free of side effects, except plain stores to the
// carried-value parameters (firstOut on), which every work-item makes alike.
bool idleFrom(BasicBlock *start, unsigned firstOut) {
  SmallPtrSet<BasicBlock *, 16> seen;
  std::vector<BasicBlock *> work{start};
  while (!work.empty()) {
    BasicBlock *bb = work.back();
    work.pop_back();
    if (!seen.insert(bb).second) continue;
    if (seen.size() > kMaxBlocks) return false;
    for (Instruction &i : *bb) {
      if (!i.mayHaveSideEffects()) continue;
      if (auto *st = dyn_cast<StoreInst>(&i))
        if (auto *a = dyn_cast<Argument>(st->getPointerOperand()))
          if (st->isSimple() && a->getArgNo() >= firstOut) continue;
      return false;
    }
    for (BasicBlock *s : successors(bb))
      work.push_back(s);
  }
  return true;
}

struct Search {
  unsigned xArg, firstOut;
  SmallPtrSet<BasicBlock *, 16> visited;
  WorkItemGuard g;
  BranchInst *br = nullptr;
  unsigned lowSucc = 0;

  // Depth-first from `bb` through side-effect-free blocks and uniform branches.
  bool from(BasicBlock *bb) {
    if (!visited.insert(bb).second || visited.size() > kMaxBlocks) return false;
    for (Instruction &i : *bb)
      if (i.mayHaveSideEffects()) return false;
    auto *t = dyn_cast<BranchInst>(bb->getTerminator());
    if (!t) return false;
    if (t->isUnconditional()) return from(t->getSuccessor(0));
    Value *cond = t->getCondition();
    if (invariant(cond, xArg)) {
      for (unsigned s = 0; s < 2; ++s) {
        g.path.push_back({cond, s == 0});
        if (from(t->getSuccessor(s))) return true;
        g.path.pop_back();
      }
      return false;
    }
    auto *cmp = dyn_cast<ICmpInst>(cond);
    if (!cmp || !cmp->getOperand(0)->getType()->isIntegerTy()) return false;
    ICmpInst::Predicate p = cmp->getPredicate();
    Value *v = cmp->getOperand(0), *bound = cmp->getOperand(1);
    if (!invariant(bound, xArg)) {
      std::swap(v, bound);
      p = ICmpInst::getSwappedPredicate(p);
      if (!invariant(bound, xArg)) return false;
    }
    // Normalized to "V < B" / "V <= B" holding on the low side.
    bool lowIsTrue = true;
    switch (p) {
    case ICmpInst::ICMP_ULT: case ICmpInst::ICMP_ULE: case ICmpInst::ICMP_SLT: case ICmpInst::ICMP_SLE:
      break;
    case ICmpInst::ICMP_UGT: case ICmpInst::ICMP_UGE: case ICmpInst::ICMP_SGT: case ICmpInst::ICMP_SGE:
      p = ICmpInst::getInversePredicate(p); // !(V > B) is V <= B; !(V >= B) is V < B
      lowIsTrue = false;
      break;
    default:
      return false;
    }
    g.isSigned = ICmpInst::isSigned(p);
    g.orEqual = p == ICmpInst::ICMP_ULE || p == ICmpInst::ICMP_SLE;
    if (!parseV(v, xArg, g.isSigned, g)) return false;
    g.bound = bound;
    lowSucc = lowIsTrue ? 0 : 1;
    if (!idleFrom(t->getSuccessor(1 - lowSucc), firstOut)) return false;
    br = t;
    return true;
  }
};

} // namespace

bool findWorkItemGuard(Function &f, unsigned numParams, unsigned firstOut, WorkItemGuard &g) {
  g = WorkItemGuard{};
  Search s{numParams, firstOut, {}, {}, nullptr, 0};
  if (!s.from(&f.getEntryBlock())) return false;
  // The low clone: the guard's branch always goes to the low side.
  ValueToValueMapTy vmap;
  Function *low = CloneFunction(&f, vmap);
  low->setName(f.getName() + ".low");
  low->addFnAttr(Attribute::AlwaysInline);
  auto *nbr = cast<BranchInst>(vmap[s.br]);
  BasicBlock *keep = nbr->getSuccessor(s.lowSucc), *drop = nbr->getSuccessor(1 - s.lowSucc);
  if (keep != drop) drop->removePredecessor(nbr->getParent());
  BranchInst::Create(keep, nbr);
  nbr->eraseFromParent();
  removeUnreachableBlocks(*low);
  g = std::move(s.g);
  g.low = low;
  return true;
}

bool findXDivision(Function &f, unsigned numParams, XDivision &d) {
  d = XDivision{};
  std::vector<BinaryOperator *> divs;
  Value *dividend = nullptr;
  for (BasicBlock &bb : f)
    for (Instruction &i : bb) {
      auto *bo = dyn_cast<BinaryOperator>(&i);
      if (!bo || (bo->getOpcode() != Instruction::URem && bo->getOpcode() != Instruction::UDiv)) continue;
      if (!dividend) {
        WorkItemGuard v;
        if (!invariant(bo->getOperand(1), numParams) || isa<Constant>(bo->getOperand(1)) ||
            !parseV(bo->getOperand(0), numParams, false, v) || v.extended)
          continue;
        dividend = bo->getOperand(0);
        d.divisor = bo->getOperand(1);
        d.offsetExpr = v.offsetExpr;
        d.width = v.width;
      }
      if (bo->getOperand(0) == dividend && bo->getOperand(1) == d.divisor) divs.push_back(bo);
    }
  if (divs.empty()) return false;
  // The clone: f's parameters, then quotient and remainder.
  Type *t = dividend->getType();
  std::vector<Type *> params(f.getFunctionType()->param_begin(), f.getFunctionType()->param_end());
  params.push_back(t);
  params.push_back(t);
  Function *seg = Function::Create(FunctionType::get(f.getReturnType(), params, false),
                                   GlobalValue::InternalLinkage, f.getName() + ".seg", f.getParent());
  ValueToValueMapTy vmap;
  for (unsigned i = 0; i < f.arg_size(); ++i) {
    vmap[f.getArg(i)] = seg->getArg(i);
    seg->getArg(i)->setName(f.getArg(i)->getName());
  }
  SmallVector<ReturnInst *, 4> rets;
  CloneFunctionInto(seg, &f, vmap, CloneFunctionChangeType::LocalChangesOnly, rets);
  seg->addFnAttr(Attribute::AlwaysInline);
  Argument *q = seg->getArg(unsigned(f.arg_size())), *r = seg->getArg(unsigned(f.arg_size()) + 1);
  for (BinaryOperator *bo : divs) {
    auto *c = cast<Instruction>(vmap[bo]);
    c->replaceAllUsesWith(bo->getOpcode() == Instruction::URem ? r : q);
    c->eraseFromParent();
  }
  d.seg = seg;
  return true;
}

namespace {
// Recomputes a value of the work-item function in the wrapper at `b`: its arguments are
// the call's operands, the x id argument (number numParams) is `x` as set when called.
struct WrapperCloner {
  IRBuilder<> &b;
  const std::vector<Value *> &callArgs;
  unsigned numParams;
  Value *&x;
  std::map<Value *, Value *> memo;
  Value *operator()(Value *v) {
    if (auto *a = dyn_cast<Argument>(v)) return a->getArgNo() == numParams ? x : callArgs[a->getArgNo()];
    auto *i = dyn_cast<Instruction>(v);
    if (!i) return v;
    auto it = memo.find(v);
    if (it != memo.end()) return it->second;
    Instruction *c = i->clone();
    for (unsigned k = 0; k < c->getNumOperands(); ++k)
      c->setOperand(k, (*this)(i->getOperand(k)));
    b.Insert(c);
    memo[v] = c;
    return c;
  }
};
} // namespace

void emitDivisionRuns(IRBuilder<> &b, const XDivision &d, const std::vector<Value *> &callArgs,
                      unsigned numParams, Value *end, Function *plain, std::vector<Value *> &extra,
                      const std::function<void(Function *, Value *)> &item,
                      const std::function<void(Value *, Value *, const char *, Function *)> &loop) {
  (void)item;
  Value *xValue = nullptr;
  WrapperCloner clone{b, callArgs, numParams, xValue, {}};
  Function *f = b.GetInsertBlock()->getParent();
  LLVMContext &ctx = f->getContext();
  Type *t = d.divisor->getType();
  Value *divisor = clone(d.divisor);
  xValue = b.getInt64(0);
  Value *start = clone(d.offsetExpr);
  // Usable: divisor != 0, and the dividend (start + x, width bits) does not wrap.
  Value *usable = b.CreateICmpNE(divisor, ConstantInt::get(t, 0));
  if (d.width < 64) {
    Type *i128 = b.getIntNTy(128);
    Value *s0 = b.CreateZExt(b.CreateTrunc(start, t), i128);
    usable = b.CreateAnd(usable, b.CreateICmpULE(b.CreateAdd(s0, b.CreateZExt(end, i128)),
                                                 ConstantInt::get(i128, APInt::getOneBitSet(128, d.width))));
  }
  BasicBlock *pre = b.GetInsertBlock();
  BasicBlock *head = BasicBlock::Create(ctx, "x.run", f);
  BasicBlock *plainBB = BasicBlock::Create(ctx, "x.plain", f);
  BasicBlock *exit = BasicBlock::Create(ctx, "x.runs.exit", f);
  b.CreateCondBr(usable, head, plainBB);
  b.SetInsertPoint(plainBB);
  loop(b.getInt64(0), end, "x.plain", plain);
  b.CreateBr(exit);
  // One run: quotient and remainder of its first work-item, then up to the next multiple.
  b.SetInsertPoint(head);
  PHINode *x0 = b.CreatePHI(b.getInt64Ty(), 2, "run.start");
  x0->addIncoming(b.getInt64(0), pre);
  Value *i0 = b.CreateAdd(start, x0);
  if (d.width < 64) i0 = b.CreateTrunc(i0, t);
  Value *q = b.CreateUDiv(i0, divisor);
  Value *r = b.CreateSub(i0, b.CreateMul(q, divisor));
  Value *left = b.CreateZExt(b.CreateSub(divisor, r), b.getInt64Ty());
  Value *runEnd = b.CreateAdd(x0, left);
  runEnd = b.CreateSelect(b.CreateICmpULT(runEnd, end), runEnd, end);
  extra = {q, r};
  // The remainder of work-item x is r + (x - x0): emitted per call by the caller's
  // item through `extra` (the loop callback maps it).
  loop(x0, runEnd, "x.seg", d.seg);
  extra.clear();
  x0->addIncoming(runEnd, b.GetInsertBlock());
  b.CreateCondBr(b.CreateICmpULT(runEnd, end), head, exit);
  b.SetInsertPoint(exit);
}

void emitGuardCount(IRBuilder<> &b, const WorkItemGuard &g, const std::vector<Value *> &callArgs,
                    unsigned numParams, Value *lx, Value *&count, Value *&usable) {
  // Recomputes an invariant value of the function in the wrapper (x := xValue).
  Value *xValue = nullptr;
  WrapperCloner clone{b, callArgs, numParams, xValue, {}};
  usable = b.getTrue();
  if (!g.bound) { // every work-item passes
    count = lx;
    return;
  }
  for (const auto &pc : g.path) {
    Value *c = clone(pc.first);
    usable = b.CreateAnd(usable, pc.second ? c : b.CreateNot(c));
  }
  // V(0) and B in 128 bits: no overflow in the arithmetic below.
  clone.memo.clear();
  xValue = b.getInt64(0);
  Value *v0 = clone(g.offsetExpr);
  Type *i128 = b.getIntNTy(128);
  if (g.width < 64) v0 = b.CreateTrunc(v0, b.getIntNTy(g.width));
  v0 = g.isSigned ? b.CreateSExt(v0, i128) : b.CreateZExt(v0, i128);
  Value *bound = clone(g.bound);
  bound = g.isSigned ? b.CreateSExt(bound, i128) : b.CreateZExt(bound, i128);
  Value *n = b.CreateZExt(lx, i128);
  // No wrap of V over the group: V(0) + lx <= 2^w (unsigned) or 2^(w-1) (signed).
  Value *limit = ConstantInt::get(i128, APInt::getOneBitSet(128, g.isSigned ? g.width - 1 : g.width));
  usable = b.CreateAnd(usable, b.CreateICmpSLE(b.CreateAdd(v0, n), limit));
  Value *pass = b.CreateSub(bound, v0);
  if (g.orEqual) pass = b.CreateAdd(pass, ConstantInt::get(i128, 1));
  pass = b.CreateSelect(b.CreateICmpSLT(pass, ConstantInt::get(i128, 0)), ConstantInt::get(i128, 0), pass);
  pass = b.CreateSelect(b.CreateICmpSGT(pass, n), n, pass);
  count = b.CreateTrunc(pass, b.getInt64Ty());
}

} // namespace cgraph::cpu
