// Work-item guards: see guards.h.
#include "guards.h"

#include "lowering_internal.h"

#include <llvm/ADT/PostOrderIterator.h>
#include <llvm/ADT/SmallPtrSet.h>
#include <llvm/Analysis/ValueTracking.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/PatternMatch.h>
#include <llvm/Transforms/Scalar/EarlyCSE.h>
#include <llvm/Transforms/Scalar/SimplifyCFG.h>
#include <llvm/Transforms/Utils/Cloning.h>
#include <llvm/Transforms/Utils/Local.h>
#include <llvm/Transforms/Utils/ValueMapper.h>

#include <functional>
#include <map>

namespace cgraph::codegen::cpu {

using namespace llvm;
using namespace llvm::PatternMatch;

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
    const size_t mark = g.path.size();
    if (branch(t)) return true;
    g.path.resize(mark);
    return false;
  }

  // The conditional branch `t`: a uniform one (both ways searched) or the guard.
  bool branch(BranchInst *t) {
    Value *cond = t->getCondition();
    // `A || U` and `A && U` with U invariant: U on the path (false for ||, true for &&),
    // A the condition; the branch then goes where A sends it.
    for (;;) {
      Value *a = nullptr, *u = nullptr;
      bool isOr = false;
      if (match(cond, m_LogicalOr(m_Value(a), m_Value(u))))
        isOr = true;
      else if (!match(cond, m_LogicalAnd(m_Value(a), m_Value(u))))
        break;
      if (invariant(a, xArg)) std::swap(a, u);
      if (!invariant(u, xArg) || invariant(a, xArg)) break;
      g.path.push_back({u, !isOr});
      cond = a;
    }
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
    g.idleRest = idleFrom(t->getSuccessor(1 - lowSucc), firstOut);
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
  // Drop nsw/nuw/exact on the copies: the wrapper evaluates them at x values the
  // function may never see (x = 0 for V(0)), where a wrap must be the plain modular
  // result, not poison.
  bool dropFlags = false;
  Value *operator()(Value *v) {
    if (auto *a = dyn_cast<Argument>(v)) return a->getArgNo() == numParams ? x : callArgs[a->getArgNo()];
    auto *i = dyn_cast<Instruction>(v);
    if (!i) return v;
    auto it = memo.find(v);
    if (it != memo.end()) return it->second;
    Instruction *c = i->clone();
    if (dropFlags) c->dropPoisonGeneratingFlags();
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
  // Usable: runs of at least kMinRun work-items (a divisor below it: the plain loop,
  // which also covers 0), and the dividend (start + x, width bits) does not wrap. Runs
  // shorter than that cost more than a division per work-item: 512 work-items of
  // div_rows took 2.1 us as runs of 1 (PoCL 2.0), 1.1 as runs of 2, 0.6 of 4 and 0.9
  // as the plain loop.
  constexpr uint64_t kMinRun = 4;
  Value *usable = b.CreateICmpUGE(divisor, ConstantInt::get(t, kMinRun));
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

namespace {

// V(x) modulo 2^width: the x id plus invariants through add, sub (of an invariant) and
// trunc, so V(x) == V(0) + x modulo 2^width for every x.
bool affineX(Value *v, unsigned xArg, int depth = 0) {
  if (auto *a = dyn_cast<Argument>(v)) return a->getArgNo() == xArg;
  if (depth > kMaxDepth) return false;
  if (auto *t = dyn_cast<TruncInst>(v)) return affineX(t->getOperand(0), xArg, depth + 1);
  auto *bo = dyn_cast<BinaryOperator>(v);
  if (!bo) return false;
  Value *l = bo->getOperand(0), *r = bo->getOperand(1);
  if (bo->getOpcode() == Instruction::Add)
    return (affineX(l, xArg, depth + 1) && invariant(r, xArg)) ||
           (affineX(r, xArg, depth + 1) && invariant(l, xArg));
  if (bo->getOpcode() == Instruction::Sub) return affineX(l, xArg, depth + 1) && invariant(r, xArg);
  return false;
}

// An integer min/max of `i`: its operands, signedness and direction.
bool minMax(Instruction &i, Value *&a, Value *&b, bool &isSigned, bool &isMax) {
  if (auto *ii = dyn_cast<IntrinsicInst>(&i)) {
    switch (ii->getIntrinsicID()) {
    case Intrinsic::smax: isSigned = true; isMax = true; break;
    case Intrinsic::smin: isSigned = true; isMax = false; break;
    case Intrinsic::umax: isSigned = false; isMax = true; break;
    case Intrinsic::umin: isSigned = false; isMax = false; break;
    default: return false;
    }
    a = ii->getArgOperand(0);
    b = ii->getArgOperand(1);
    return true;
  }
  if (!isa<SelectInst>(i) || !i.getType()->isIntegerTy()) return false;
  // The select is exactly min/max(a, b) (no casts looked through: CastOp is null).
  switch (matchSelectPattern(&i, a, b).Flavor) {
  case SPF_SMAX: isSigned = true; isMax = true; return true;
  case SPF_SMIN: isSigned = true; isMax = false; return true;
  case SPF_UMAX: isSigned = false; isMax = true; return true;
  case SPF_UMIN: isSigned = false; isMax = false; return true;
  default: return false;
  }
}

// `select (V pred B), B, R` or `select (V pred B), R, B` (either operand order of the
// compare; V x-affine, B invariant, pred relational): a clamp whose clamped arm is the
// bound itself (OpenCL C's `v < lo ? lo : ...` after canonicalization, where the other
// arm is a nested clamp and so not a min/max pattern). Where it does not fire the select
// is R: `keep`, with `k` the condition on V under which the compare picks R.
template <typename S>
bool clampSelect(Instruction &i, unsigned xArg, S strip, XClamps::Clamp &k, Value *&keep) {
  auto *sel = dyn_cast<SelectInst>(&i);
  if (!sel || !sel->getType()->isIntegerTy()) return false;
  auto *cmp = dyn_cast<ICmpInst>(sel->getCondition());
  if (!cmp || cmp->isEquality()) return false;
  ICmpInst::Predicate p = cmp->getPredicate();
  Value *v = cmp->getOperand(0), *bound = cmp->getOperand(1);
  if (!invariant(bound, xArg)) {
    std::swap(v, bound);
    p = ICmpInst::getSwappedPredicate(p);
  }
  v = strip(v);
  if (!invariant(bound, xArg) || !affineX(v, xArg)) return false;
  bool want; // the compare's value where R is picked
  if (sel->getTrueValue() == bound) {
    keep = sel->getFalseValue();
    want = false;
  } else if (sel->getFalseValue() == bound) {
    keep = sel->getTrueValue();
    want = true;
  } else {
    return false;
  }
  if (!want) p = ICmpInst::getInversePredicate(p);
  // V p B for every x, as V >= B + adjust or V <= B + adjust.
  k.v = v;
  k.bound = bound;
  k.isSigned = ICmpInst::isSigned(p);
  switch (p) {
  case ICmpInst::ICMP_SLT: case ICmpInst::ICMP_ULT: k.isLower = false; k.adjust = -1; break;
  case ICmpInst::ICMP_SLE: case ICmpInst::ICMP_ULE: k.isLower = false; k.adjust = 0; break;
  case ICmpInst::ICMP_SGT: case ICmpInst::ICMP_UGT: k.isLower = true; k.adjust = 1; break;
  case ICmpInst::ICMP_SGE: case ICmpInst::ICMP_UGE: k.isLower = true; k.adjust = 0; break;
  default: return false;
  }
  return true;
}

// Whether `f` compares an x-affine value with an invariant one (a clamp's test, at -O0
// a branch), or has a min/max intrinsic: worth canonicalizing a clone to look closer.
bool mayClamp(Function &f, unsigned xArg) {
  for (BasicBlock &bb : f)
    for (Instruction &i : bb) {
      Value *a, *b;
      if (auto *c = dyn_cast<ICmpInst>(&i)) {
        a = c->getOperand(0);
        b = c->getOperand(1);
      } else if (auto *ii = dyn_cast<IntrinsicInst>(&i)) {
        Intrinsic::ID id = ii->getIntrinsicID();
        if (id != Intrinsic::smax && id != Intrinsic::smin && id != Intrinsic::umax && id != Intrinsic::umin)
          continue;
        a = ii->getArgOperand(0);
        b = ii->getArgOperand(1);
      } else {
        continue;
      }
      if ((affineX(a, xArg) && invariant(b, xArg)) || (affineX(b, xArg) && invariant(a, xArg)))
        return true;
    }
  return false;
}

// -O0 clamps are branch diamonds joined by phis: SimplifyCFG makes them selects, and
// EarlyCSE makes one value of each bound computed twice (`v > n - 1 ? n - 1 : v`). No
// InstCombine: it rewrites the index arithmetic around the clamps (sext of a trunc as
// shl + ashr) into forms the vectorizer no longer sees as consecutive.
void canonicalize(Function &f) {
  FunctionPassManager fpm;
  fpm.addPass(SimplifyCFGPass());
  fpm.addPass(EarlyCSEPass());
  runPasses(f, fpm);
}

// Where the clone runs, each clamped V does not wrap (emitClampRange), so there
// sext(V) (V with a signed clamp) is sext(V(0)) + x and zext(V) (with an unsigned
// clamp) zext(V(0)) + x, exactly, as 64-bit values. Written so, `in[clamp(i + d, lo,
// hi)]` indexes x plus an invariant, a consecutive load; sext(trunc(x + K) + d) is not
// one without the vectorizer's run-time checks (which it does not always add).
void extendAffine(Function &g, unsigned xArg, const XClamps &c) {
  std::map<Value *, std::pair<bool, bool>> kinds; // V -> (a signed clamp, an unsigned one)
  for (const XClamps::Clamp &k : c.clamps)
    (k.isSigned ? kinds[k.v].first : kinds[k.v].second) = true;
  Argument *x = g.getArg(xArg);
  for (auto &[v, kind] : kinds) {
    if (v->getType()->getIntegerBitWidth() >= 64) continue;
    for (User *u : make_early_inc_range(v->users())) {
      auto *ext = dyn_cast<CastInst>(u);
      if (!ext || !ext->getType()->isIntegerTy(64) ||
          !((isa<SExtInst>(ext) && kind.first) || (isa<ZExtInst>(ext) && kind.second)))
        continue;
      IRBuilder<> b(ext);
      // V(0): V's x-dependent chain again with x = 0, modular (no wrap flags).
      std::function<Value *(Value *)> at0 = [&](Value *w) -> Value * {
        if (w == x) return ConstantInt::get(x->getType(), 0);
        auto *i = dyn_cast<Instruction>(w);
        if (!i || !affineX(w, xArg)) return w;
        Instruction *n = i->clone();
        n->dropPoisonGeneratingFlags();
        for (unsigned k = 0; k < n->getNumOperands(); ++k)
          n->setOperand(k, at0(i->getOperand(k)));
        return b.Insert(n);
      };
      Value *v0 = isa<SExtInst>(ext) ? b.CreateSExt(at0(v), b.getInt64Ty()) : b.CreateZExt(at0(v), b.getInt64Ty());
      // No signed wrap: the sum is ext(V(x)) itself.
      ext->replaceAllUsesWith(b.CreateAdd(v0, x, "", false, true));
      ext->eraseFromParent();
    }
  }
}

} // namespace

bool findXClamps(Function &f, unsigned numParams, XClamps &c) {
  c = XClamps{};
  if (!mayClamp(f, numParams)) return false;
  ValueToValueMapTy vmap;
  Function *g = CloneFunction(&f, vmap);
  g->setName(f.getName() + ".inner");
  g->addFnAttr(Attribute::AlwaysInline);
  canonicalize(*g);
  // Definitions before uses (blocks in reverse post-order), so an inner min/max of a
  // nested clamp is seen before the outer one, whose x operand it is.
  std::map<Instruction *, Value *> removed; // min/max -> its x operand
  std::vector<Instruction *> order;
  auto strip = [&](Value *v) {
    for (auto it = removed.find(dyn_cast<Instruction>(v)); it != removed.end();
         it = removed.find(dyn_cast<Instruction>(v)))
      v = it->second;
    return v;
  };
  ReversePostOrderTraversal<Function *> rpot(g);
  for (BasicBlock *bb : rpot)
    for (Instruction &i : *bb) {
      Value *a, *b, *keep;
      XClamps::Clamp k;
      if (minMax(i, a, b, k.isSigned, k.isLower)) {
        // max(V, B) is V where V >= B; min(V, B) where V <= B.
        if (invariant(b, numParams) && affineX(strip(a), numParams)) {
          keep = a;
          k.bound = b;
        } else if (invariant(a, numParams) && affineX(strip(b), numParams)) {
          keep = b;
          k.bound = a;
        } else {
          continue;
        }
        k.v = strip(keep);
      } else if (!clampSelect(i, numParams, strip, k, keep)) {
        continue;
      }
      removed[&i] = keep;
      order.push_back(&i);
      c.clamps.push_back(k);
    }
  if (c.clamps.empty()) {
    g->eraseFromParent();
    return false;
  }
  // Outer ones first: each is replaced by its x operand while that is still in place.
  for (auto it = order.rbegin(); it != order.rend(); ++it)
    (*it)->replaceAllUsesWith(removed[*it]);
  for (auto it = order.rbegin(); it != order.rend(); ++it)
    (*it)->eraseFromParent();
  extendAffine(*g, numParams, c);
  c.inner = g;
  return true;
}

void emitClampRange(IRBuilder<> &b, const XClamps &c, const std::vector<Value *> &callArgs,
                    unsigned numParams, Value *begin, Value *end, Value *&lo, Value *&hi) {
  Value *xValue = b.getInt64(0);
  WrapperCloner clone{b, callArgs, numParams, xValue, {}, true};
  // In 128 bits, where none of this wraps. With v0 = V(0) as a w-bit number (signed or
  // not, as the min/max compares), u(x) = v0 + x; over x in [lo, hi) u stays within
  // the w-bit range (the constraints below), so V(x) == u(x) there: V does not wrap,
  // is increasing, and a max (min) is the identity on the whole range when it is at lo
  // (hi - 1).
  Type *i128 = b.getIntNTy(128);
  auto smax = [&](Value *x, Value *y) { return b.CreateSelect(b.CreateICmpSGT(x, y), x, y); };
  auto smin = [&](Value *x, Value *y) { return b.CreateSelect(b.CreateICmpSLT(x, y), x, y); };
  Value *e = b.CreateZExt(end, i128);
  Value *l = b.CreateZExt(begin, i128), *h = e;
  for (const XClamps::Clamp &k : c.clamps) {
    const unsigned w = k.v->getType()->getIntegerBitWidth();
    auto ext = [&](Value *v) { return k.isSigned ? b.CreateSExt(v, i128) : b.CreateZExt(v, i128); };
    Value *v0 = ext(clone(k.v));
    Value *bound = b.CreateAdd(ext(clone(k.bound)), ConstantInt::get(i128, uint64_t(int64_t(k.adjust)), true));
    const APInt minW = k.isSigned ? APInt::getSignedMinValue(w).sext(128) : APInt(128, 0);
    const APInt maxW = k.isSigned ? APInt::getSignedMaxValue(w).sext(128) : APInt::getMaxValue(w).zext(128);
    l = smax(l, b.CreateSub(ConstantInt::get(i128, minW), v0));
    h = smin(h, b.CreateSub(ConstantInt::get(i128, maxW + 1), v0));
    if (k.isLower)
      l = smax(l, b.CreateSub(bound, v0)); // v0 + x >= bound
    else
      h = smin(h, b.CreateAdd(b.CreateSub(bound, v0), ConstantInt::get(i128, 1))); // v0 + x <= bound
  }
  l = smin(l, e);
  h = smax(h, l);
  lo = b.CreateTrunc(l, b.getInt64Ty(), "clamp.lo");
  hi = b.CreateTrunc(h, b.getInt64Ty(), "clamp.hi");
}

} // namespace cgraph::codegen::cpu
