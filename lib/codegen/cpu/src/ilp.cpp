// Interleaving of marked vector loops sized to the register file (ilp.h says why).
#include "ilp.h"

#include <llvm/Analysis/LoopInfo.h>
#include <llvm/Analysis/TargetTransformInfo.h>
#include <llvm/IR/Dominators.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/Transforms/Utils/ValueMapper.h>

#include <algorithm>
#include <map>
#include <vector>

namespace cgraph::codegen::cpu {

namespace {

using namespace llvm;

bool hasMarker(const Loop &l) {
  MDNode *id = l.getLoopID();
  if (!id) return false;
  for (unsigned i = 1; i < id->getNumOperands(); ++i)
    if (auto *n = dyn_cast<MDNode>(id->getOperand(i)))
      if (n->getNumOperands() >= 1)
        if (auto *s = dyn_cast<MDString>(n->getOperand(0)))
          if (s->getString() == kIlpLoopMarker) return true;
  return false;
}

// Instructions that are not copied: markers without effect on the generated code.
bool skipped(const Instruction &i) {
  if (isa<DbgInfoIntrinsic>(i)) return true;
  if (auto *ii = dyn_cast<IntrinsicInst>(&i))
    return ii->getIntrinsicID() == Intrinsic::experimental_noalias_scope_decl;
  return false;
}

// Whether a copy of `i` may run before or after another work-item's instructions: plain
// memory accesses and arithmetic, no atomics, fences, volatile accesses or calls that
// touch memory other than through masked loads and stores.
bool reorderable(const Instruction &i) {
  if (i.isAtomic() || isa<FenceInst>(i)) return false;
  if (auto *ld = dyn_cast<LoadInst>(&i)) return ld->isSimple();
  if (auto *st = dyn_cast<StoreInst>(&i)) return st->isSimple();
  if (auto *c = dyn_cast<CallInst>(&i)) {
    if (c->isInlineAsm()) return false;
    if (auto *ii = dyn_cast<IntrinsicInst>(c)) {
      switch (ii->getIntrinsicID()) {
      case Intrinsic::masked_load:
      case Intrinsic::masked_store:
      case Intrinsic::masked_gather:
      case Intrinsic::masked_scatter:
        return true;
      default:
        break;
      }
    }
    return c->doesNotAccessMemory() && !c->mayHaveSideEffects();
  }
  return !i.mayHaveSideEffects();
}

// The canonical shape the loop vectorizer leaves: one block, `iv = phi [start, pre],
// [iv + step, body]`, exit when `iv + step == end`.
struct Shape {
  BasicBlock *body = nullptr, *pre = nullptr, *exit = nullptr;
  PHINode *iv = nullptr;
  Instruction *ivNext = nullptr, *cond = nullptr;
  Value *start = nullptr, *end = nullptr;
  ConstantInt *step = nullptr;
};

bool matchShape(Loop &l, Shape &s) {
  if (l.getNumBlocks() != 1) return false;
  s.body = l.getHeader();
  // The block entering the loop (the vectorizer's runtime checks may also branch around
  // it, so not necessarily a dedicated preheader); only its edge to the loop is moved.
  s.pre = l.getLoopPredecessor();
  s.exit = l.getExitBlock();
  if (!s.pre || !s.exit || l.getLoopLatch() != s.body) return false;
  if (!s.exit->phis().empty()) return false;
  auto *br = dyn_cast<BranchInst>(s.body->getTerminator());
  if (!br || !br->isConditional()) return false;
  auto *cmp = dyn_cast<ICmpInst>(br->getCondition());
  if (!cmp || !cmp->isEquality() || !cmp->hasOneUse()) return false;
  // eq: the exit is the true successor; ne: the false one.
  BasicBlock *exitSucc = br->getSuccessor(cmp->getPredicate() == CmpInst::ICMP_EQ ? 0 : 1);
  if (exitSucc != s.exit) return false;
  for (PHINode &p : s.body->phis()) {
    if (s.iv) return false; // one phi only: no reductions or other recurrences
    s.iv = &p;
  }
  if (!s.iv || s.iv->getNumIncomingValues() != 2 || !s.iv->getType()->isIntegerTy()) return false;
  s.start = s.iv->getIncomingValueForBlock(s.pre);
  auto *next = dyn_cast<BinaryOperator>(s.iv->getIncomingValueForBlock(s.body));
  if (!next || next->getOpcode() != Instruction::Add || next->getParent() != s.body) return false;
  Value *other = next->getOperand(0) == s.iv ? next->getOperand(1)
                 : next->getOperand(1) == s.iv ? next->getOperand(0)
                                               : nullptr;
  s.step = dyn_cast_or_null<ConstantInt>(other);
  if (!s.step || s.step->isZero() || s.step->isNegative()) return false;
  s.ivNext = next;
  Value *a = cmp->getOperand(0), *b = cmp->getOperand(1);
  if (a == next)
    s.end = b;
  else if (b == next)
    s.end = a;
  else
    return false;
  if (!l.isLoopInvariant(s.end) || !l.isLoopInvariant(s.start)) return false;
  s.cond = cmp;
  // iv + step feeds only the phi and the exit test.
  for (User *u : next->users())
    if (u != s.iv && u != cmp) return false;
  bool work = false;
  for (Instruction &i : *s.body) {
    if (&i == s.iv || &i == br || &i == next || &i == cmp || skipped(i)) continue;
    if (!reorderable(i)) return false;
    work = true;
    for (User *u : i.users())
      if (cast<Instruction>(u)->getParent() != s.body) return false; // live out
  }
  return work; // (a version of the loop whose work-items all returned early: nothing to gain)
}

// Vector registers a value of type `t` takes (0: a general-purpose register's value).
unsigned regsFor(Type *t, const DataLayout &dl, unsigned regBits) {
  if (!t->isVectorTy() && !t->isFloatingPointTy()) return 0;
  uint64_t bits = dl.getTypeSizeInBits(t).getKnownMinSize();
  return unsigned(std::max<uint64_t>(1, (bits + regBits - 1) / regBits));
}

// General-purpose registers an integer value of type `t` takes. Addresses are left
// out: the code generator folds them into the accesses' addressing or recomputes them.
unsigned gprsFor(Type *t, const DataLayout &dl) {
  if (!t->isIntegerTy()) return 0;
  return unsigned(std::max<uint64_t>(1, (dl.getTypeSizeInBits(t).getFixedSize() + 63) / 64));
}

// The most copies of the body whose values fit a register file together with the
// loop-invariant values they use (copies run in lockstep, so their live sets peak
// together), where `size` gives the registers of that file a value takes and `spare` is
// how many of them the code generator keeps for itself: 0 or 1 when interleaving does
// not fit. Invariants used fewer than `minUses` times per copy are left out (a bound
// or a base read once per work-item is as cheap to reload as to keep).
template <typename Size>
unsigned copiesThatFitFile(const Shape &s, unsigned regs, unsigned spare, unsigned minUses,
                           unsigned maxCopies, Size size) {
  std::vector<Instruction *> order;
  std::map<Instruction *, size_t> index;
  for (Instruction &i : *s.body) {
    index[&i] = order.size();
    order.push_back(&i);
  }
  // Last use of each value defined in the body, and the invariant operands' uses.
  std::map<Instruction *, size_t> lastUse;
  std::map<Value *, unsigned> invariantUses;
  for (Instruction *i : order) {
    if (isa<PHINode>(i)) continue;
    for (Value *op : i->operands()) {
      if (auto *d = dyn_cast<Instruction>(op); d && d->getParent() == s.body) {
        size_t &lu = lastUse[d];
        lu = std::max(lu, index[i]);
      } else if ((isa<Instruction>(op) || isa<Argument>(op) ||
                  (isa<Constant>(op) && op->getType()->isVectorTy() &&
                   !cast<Constant>(op)->isNullValue())) &&
                 size(op->getType())) {
        ++invariantUses[op];
      }
    }
  }
  unsigned invariantRegs = 0;
  for (auto &[v, uses] : invariantUses)
    if (uses >= minUses) invariantRegs += size(v->getType());
  std::vector<std::vector<Instruction *>> dying(order.size());
  for (auto &[d, at] : lastUse)
    dying[at].push_back(d);
  unsigned live = 0, peak = 0;
  for (size_t k = 0; k < order.size(); ++k) {
    for (Instruction *d : dying[k])
      live -= size(d->getType());
    if (lastUse.count(order[k])) live += size(order[k]->getType());
    peak = std::max(peak, live);
  }
  if (regs < invariantRegs + spare + 1) return 0;
  const unsigned room = regs - invariantRegs - spare;
  return peak == 0 ? maxCopies : std::min(maxCopies, room / peak);
}

// Copies of a body without vector values (the scalar loop of a group's last work-items,
// fewer than a vector): at most 2, and then no tail groups, so the loop is 3 copies of
// the body. Each copy of a long body is compile time: long_chain's 5-work-item
// remainder at 13 items took 1.9 us with 3 copies and 2.2 with 2 (PoCL 3.4, one at a
// time 6.1), and the 3 copies and their tail added 0.9 s to basic.cl's cold compile,
// the 2 copies 0.35 s.
constexpr unsigned kScalarCopies = 2;

// The most copies that fit the vector registers (one kept for the code generator's
// temporaries) and, for a body without vector values, also the general-purpose ones
// (three kept: stack pointer, loop counter, one spare), at most kScalarCopies.
unsigned copiesThatFit(const Shape &s, const TargetTransformInfo &tti, const DataLayout &dl,
                       unsigned maxCopies) {
  const unsigned regs = tti.getNumberOfRegisters(tti.getRegisterClassForType(true));
  const unsigned regBits =
      unsigned(tti.getRegisterBitWidth(TargetTransformInfo::RGK_FixedWidthVector).getFixedSize());
  if (regs == 0 || regBits == 0) return 0;
  unsigned k = copiesThatFitFile(s, regs, 1, 1, maxCopies,
                                 [&](Type *t) { return regsFor(t, dl, regBits); });
  bool vector = false;
  for (Instruction &i : *s.body)
    vector = vector || i.getType()->isVectorTy();
  if (!vector) {
    const unsigned gprs = tti.getNumberOfRegisters(tti.getRegisterClassForType(false));
    k = std::min({k, kScalarCopies,
                  copiesThatFitFile(s, gprs, 3, 3, maxCopies, [&](Type *t) { return gprsFor(t, dl); })});
  }
  return k;
}

// Emits `copies` copies of the body at iv = pos, pos + step, ... interleaved instruction
// by instruction, at the builder's insertion point.
void emitCopies(IRBuilder<> &b, const Shape &s, Value *pos, unsigned copies) {
  std::vector<ValueToValueMapTy> maps(copies);
  for (unsigned j = 0; j < copies; ++j) {
    Value *iv = j == 0 ? pos
                       : b.CreateAdd(pos, ConstantInt::get(pos->getType(), s.step->getZExtValue() * j),
                                     "ilp.iv");
    maps[j][s.iv] = iv;
  }
  for (Instruction &i : *s.body) {
    if (&i == s.iv || &i == s.body->getTerminator() || &i == s.ivNext || &i == s.cond ||
        skipped(i))
      continue;
    for (unsigned j = 0; j < copies; ++j) {
      Instruction *c = i.clone();
      if (i.hasName()) c->setName(i.getName() + ".ilp" + Twine(j));
      RemapInstruction(c, maps[j], RF_NoModuleLevelChanges | RF_IgnoreMissingLocals);
      b.Insert(c);
      maps[j][&i] = c;
    }
  }
}

// pre -> [K-way loop] -> [4-way, 2-way blocks as they apply] -> body (last iteration) or exit.
void rewrite(const Shape &s, unsigned k) {
  Function *f = s.body->getParent();
  LLVMContext &ctx = f->getContext();
  Type *t = s.iv->getType();
  auto block = [&](const char *name) { return BasicBlock::Create(ctx, name, f, s.body); };
  BasicBlock *entry = block("ilp.entry");
  BasicBlock *loop = block("ilp.loop");
  BasicBlock *after = block("ilp.after");
  s.pre->getTerminator()->replaceSuccessorWith(s.body, entry);

  IRBuilder<> b(entry);
  Value *iters = b.CreateUDiv(b.CreateSub(s.end, s.start), s.step, "ilp.iters");
  Value *trips = b.CreateUDiv(iters, ConstantInt::get(t, k), "ilp.trips");
  b.CreateCondBr(b.CreateICmpEQ(trips, ConstantInt::get(t, 0)), after, loop);

  b.SetInsertPoint(loop);
  PHINode *trip = b.CreatePHI(t, 2, "ilp.trip");
  trip->addIncoming(ConstantInt::get(t, 0), entry);
  Value *base = b.CreateAdd(
      s.start, b.CreateMul(trip, ConstantInt::get(t, s.step->getZExtValue() * k)), "ilp.base");
  emitCopies(b, s, base, k);
  Value *nextTrip = b.CreateAdd(trip, ConstantInt::get(t, 1), "ilp.trip.next", true, true);
  trip->addIncoming(nextTrip, loop);
  b.CreateCondBr(b.CreateICmpEQ(nextTrip, trips), after, loop);

  b.SetInsertPoint(after);
  Value *done = b.CreateMul(trips, ConstantInt::get(t, k));
  Value *pos = b.CreateAdd(s.start, b.CreateMul(done, s.step), "ilp.pos");
  Value *rem = b.CreateSub(iters, done, "ilp.rem");
  for (unsigned p = 4; p >= 2; p /= 2) {
    if (p >= k) continue;
    BasicBlock *run = block("ilp.tail");
    BasicBlock *join = block("ilp.join");
    BasicBlock *from = b.GetInsertBlock();
    b.CreateCondBr(b.CreateICmpUGE(rem, ConstantInt::get(t, p)), run, join);
    b.SetInsertPoint(run);
    emitCopies(b, s, pos, p);
    Value *pos2 = b.CreateAdd(pos, ConstantInt::get(t, s.step->getZExtValue() * p));
    Value *rem2 = b.CreateSub(rem, ConstantInt::get(t, p));
    b.CreateBr(join);
    b.SetInsertPoint(join);
    PHINode *pp = b.CreatePHI(t, 2, "ilp.pos");
    pp->addIncoming(pos, from);
    pp->addIncoming(pos2, run);
    PHINode *rp = b.CreatePHI(t, 2, "ilp.rem");
    rp->addIncoming(rem, from);
    rp->addIncoming(rem2, run);
    pos = pp;
    rem = rp;
  }
  // At most one iteration is left: the original loop runs it.
  BasicBlock *last = b.GetInsertBlock();
  b.CreateCondBr(b.CreateICmpEQ(rem, ConstantInt::get(t, 0)), s.exit, s.body);
  s.iv->setIncomingBlock(s.iv->getBasicBlockIndex(s.pre), last);
  s.iv->setIncomingValue(s.iv->getBasicBlockIndex(last), pos);
}

} // namespace

unsigned interleaveMarkedLoops(Module &m, TargetMachine &tm, unsigned maxCopies) {
  if (maxCopies < 2) return 0;
  unsigned rewritten = 0;
  for (Function &f : m) {
    if (f.isDeclaration()) continue;
    std::vector<Shape> shapes;
    {
      DominatorTree dt(f);
      LoopInfo li(dt);
      for (Loop *l : li.getLoopsInPreorder()) {
        Shape s;
        if (hasMarker(*l) && matchShape(*l, s)) shapes.push_back(s);
      }
    }
    if (shapes.empty()) continue;
    TargetTransformInfo tti = tm.getTargetTransformInfo(f);
    for (const Shape &s : shapes) {
      unsigned k = copiesThatFit(s, tti, m.getDataLayout(), maxCopies);
      if (k < 2) continue;
      rewrite(s, k);
      ++rewritten;
    }
  }
  return rewritten;
}

} // namespace cgraph::codegen::cpu
