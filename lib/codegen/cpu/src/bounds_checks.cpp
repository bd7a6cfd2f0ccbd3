// Bounds-checked kernels (cgraph/codegen/cpu.h BoundsTable). Every load, store, atomic and
// memcpy/memmove/memset of the body is checked against the byte ranges of the objects
// its address may be derived from (getUnderlyingObjects): a buffer or __local parameter
// (its binding or __local size, from the table), the local block (static __local
// variables: the launch's local bytes), a private or program-scope variable (its own
// size). Where an address's origin is not found (loaded from memory, made from an
// integer), it must lie in some buffer parameter's range or the local block. A failed
// check calls cgraph_cpu_bounds_fail and skips the access: a load gives 0, a
// compare-and-swap reports success (a retry loop ends).
#include "lowering_internal.h"

#include <llvm/Analysis/ValueTracking.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/IR/MDBuilder.h>
#include <llvm/Transforms/Utils/BasicBlockUtils.h>

#include <map>
#include <vector>

namespace cgraph::codegen::cpu {

using namespace llvm;

namespace {

class BoundsInstrumenter {
public:
  BoundsInstrumenter(Function &body, unsigned numParams, Value *table, FunctionCallee fail)
      : body_(body), numParams_(numParams), table_(table), fail_(fail),
        dl_(body.getParent()->getDataLayout()), entry_(&*body.getEntryBlock().getFirstInsertionPt()) {}

  void run() {
    std::vector<Instruction *> work;
    for (BasicBlock &bb : body_)
      for (Instruction &i : bb)
        if (isa<LoadInst>(i) || isa<StoreInst>(i) || isa<AtomicRMWInst>(i) || isa<AtomicCmpXchgInst>(i) ||
            isa<MemIntrinsic>(i))
          work.push_back(&i);
    // The parameters' and the local block's ranges at the entry, before any block is
    // split (those not used are deleted by O3); the table's loads are not checked.
    for (unsigned i = 0; i < numParams_; ++i)
      if (body_.getArg(i)->getType()->isPointerTy())
        params_[i] = makeRange(body_.getArg(i), tableWord(kBoundsSizes + i), i);
    local_ = makeRange(body_.getArg(numParams_ + 3), tableWord(kBoundsLocalBytes), kBoundsLocalBlock);
    for (Instruction *i : work)
      instrument(i);
  }

private:
  struct Range {
    Value *base, *size; // i64
    uint64_t arg;       // parameter number, kBoundsVariable or kBoundsLocalBlock
  };
  struct Check {
    Value *ok = nullptr, *arg = nullptr, *offset = nullptr, *object = nullptr;
  };

  Type *i64() { return Type::getInt64Ty(body_.getContext()); }

  // A word of the table, loaded at the body's entry (the launch's constants).
  Value *tableWord(uint32_t index) {
    IRBuilder<> b(entry_);
    Value *p = b.CreateIntToPtr(table_, PointerType::get(i64(), 0));
    LoadInst *l = b.CreateLoad(i64(), b.CreateConstInBoundsGEP1_64(i64(), p, index));
    l->setMetadata(LLVMContext::MD_invariant_load, MDNode::get(body_.getContext(), {}));
    return l;
  }
  Range makeRange(Value *base, Value *size, uint64_t arg) {
    IRBuilder<> b(entry_);
    return {b.CreatePtrToInt(base, i64()), size, arg};
  }
  bool isBufferParam(const Argument *a) const {
    auto *pt = dyn_cast<PointerType>(a->getType());
    return a->getArgNo() < numParams_ && pt && pt->getAddressSpace() != 3;
  }
  // The ranges an access through `ptr` may use; false when it cannot be bounded (a
  // private variable of dynamic size, which OpenCL C does not have).
  bool ranges(Value *ptr, Instruction *at, std::vector<Range> &out) {
    SmallVector<const Value *, 4> objs;
    getUnderlyingObjects(ptr, objs, nullptr, 0);
    bool unknown = objs.empty();
    for (const Value *o : objs) {
      if (auto *a = dyn_cast<Argument>(o)) {
        if (a->getArgNo() == numParams_ + 3) {
          out.push_back(local_);
          continue;
        }
        auto it = params_.find(a->getArgNo());
        if (a->getArgNo() < numParams_ && it != params_.end()) {
          out.push_back(it->second);
          continue;
        }
      } else if (auto *al = dyn_cast<AllocaInst>(o)) {
        auto *n = dyn_cast<ConstantInt>(al->getArraySize());
        if (!n || al->getParent() != &body_.getEntryBlock()) return false;
        IRBuilder<> b(at);
        out.push_back({b.CreatePtrToInt(const_cast<AllocaInst *>(al), i64()),
                       ConstantInt::get(i64(), dl_.getTypeAllocSize(al->getAllocatedType()) * n->getZExtValue()),
                       kBoundsVariable});
        continue;
      } else if (auto *g = dyn_cast<GlobalVariable>(o)) {
        out.push_back({ConstantExpr::getPtrToInt(const_cast<GlobalVariable *>(g), i64()),
                       ConstantInt::get(i64(), dl_.getTypeAllocSize(g->getValueType())), kBoundsVariable});
        continue;
      }
      unknown = true;
    }
    if (unknown) {
      out.clear();
      for (const auto &p : params_)
        if (isBufferParam(body_.getArg(p.first))) out.push_back(p.second);
      out.push_back(local_);
    }
    return true;
  }

  // `ok`: [p, p + bytes) lies in one of the ranges of `ptr`; null when not checked.
  Check check(IRBuilder<> &b, Value *ptr, Value *bytes) {
    std::vector<Range> rs;
    Check c;
    if (!ranges(ptr, &*b.GetInsertPoint(), rs)) return c;
    Value *p = b.CreatePtrToInt(ptr, i64());
    bytes = b.CreateZExtOrTrunc(bytes, i64());
    Value *firstOffset = nullptr;
    for (const Range &r : rs) {
      Value *off = b.CreateSub(p, r.base);
      if (!firstOffset) firstOffset = off;
      Value *in = b.CreateAnd(b.CreateICmpULE(off, r.size), b.CreateICmpULE(bytes, b.CreateSub(r.size, off)));
      c.ok = c.ok ? b.CreateOr(c.ok, in) : in;
    }
    // Named only where the address has one origin.
    const bool one = rs.size() == 1;
    c.arg = ConstantInt::get(i64(), one ? rs[0].arg : kBoundsNoArg);
    c.offset = one ? firstOffset : p;
    c.object = one ? rs[0].size : b.getInt64(0);
    return c;
  }

  void instrument(Instruction *i) {
    IRBuilder<> b(i);
    Check c;
    Value *bytes = nullptr;
    bool write = true;
    if (auto *l = dyn_cast<LoadInst>(i)) {
      bytes = b.getInt64(dl_.getTypeStoreSize(l->getType()));
      write = false;
      c = check(b, l->getPointerOperand(), bytes);
    } else if (auto *st = dyn_cast<StoreInst>(i)) {
      bytes = b.getInt64(dl_.getTypeStoreSize(st->getValueOperand()->getType()));
      c = check(b, st->getPointerOperand(), bytes);
    } else if (auto *rmw = dyn_cast<AtomicRMWInst>(i)) {
      bytes = b.getInt64(dl_.getTypeStoreSize(rmw->getValOperand()->getType()));
      c = check(b, rmw->getPointerOperand(), bytes);
    } else if (auto *cas = dyn_cast<AtomicCmpXchgInst>(i)) {
      bytes = b.getInt64(dl_.getTypeStoreSize(cas->getNewValOperand()->getType()));
      c = check(b, cas->getPointerOperand(), bytes);
    } else if (auto *mi = dyn_cast<MemIntrinsic>(i)) {
      bytes = b.CreateZExtOrTrunc(mi->getLength(), i64());
      c = check(b, mi->getRawDest(), bytes);
      if (auto *mt = dyn_cast<MemTransferInst>(mi)) {
        Check src = check(b, mt->getRawSource(), bytes);
        if (src.ok && c.ok) {
          // The destination's failure is reported first.
          c.arg = b.CreateSelect(c.ok, src.arg, c.arg);
          c.offset = b.CreateSelect(c.ok, src.offset, c.offset);
          c.object = b.CreateSelect(c.ok, src.object, c.object);
          Value *w = b.CreateSelect(c.ok, b.getInt64(0), b.getInt64(1));
          c.ok = b.CreateAnd(c.ok, src.ok);
          c.ok = b.CreateOr(c.ok, b.CreateICmpEQ(bytes, b.getInt64(0)));
          emitGuard(i, c, bytes, w);
          return;
        }
        if (src.ok) {
          c = src;
          write = false;
        }
      }
      if (c.ok) c.ok = b.CreateOr(c.ok, b.CreateICmpEQ(bytes, b.getInt64(0)));
    }
    if (!c.ok) return;
    emitGuard(i, c, bytes, b.getInt64(write ? 1 : 0));
  }

  // if (ok) i; else fail(...); with i's value 0 (a compare-and-swap: success) on failure.
  void emitGuard(Instruction *i, const Check &c, Value *bytes, Value *write) {
    Instruction *thenT = nullptr, *elseT = nullptr;
    SplitBlockAndInsertIfThenElse(c.ok, i, &thenT, &elseT,
                                  MDBuilder(i->getContext()).createBranchWeights(1 << 20, 1));
    BasicBlock *cont = i->getParent();
    i->moveBefore(thenT);
    IRBuilder<> fb(elseT);
    CallInst *call = fb.CreateCall(fail_, {table_, c.arg, c.offset, bytes, write, c.object});
    call->setCallingConv(CallingConv::C);
    if (i->getType()->isVoidTy()) return;
    Value *failed = Constant::getNullValue(i->getType());
    if (auto *cas = dyn_cast<AtomicCmpXchgInst>(i)) {
      failed = fb.CreateInsertValue(UndefValue::get(cas->getType()), cas->getCompareOperand(), 0);
      failed = fb.CreateInsertValue(failed, fb.getTrue(), 1);
    }
    PHINode *phi = PHINode::Create(i->getType(), 2, i->getName() + ".checked", &cont->front());
    i->replaceAllUsesWith(phi);
    phi->addIncoming(i, thenT->getParent());
    phi->addIncoming(failed, elseT->getParent());
  }

  Function &body_;
  unsigned numParams_;
  Value *table_;
  FunctionCallee fail_;
  const DataLayout &dl_;
  Instruction *entry_;
  std::map<unsigned, Range> params_; // buffer parameters' ranges
  Range local_{};
};

} // namespace

void instrumentBounds(Function &body, unsigned numParams, Value *table, FunctionCallee fail) {
  BoundsInstrumenter(body, numParams, table, fail).run();
}

} // namespace cgraph::codegen::cpu
