// What the launcher needs to know of a kernel's work-item to plan its launches (the
// `.info` fields; the cpu backend's JitKernel): how much one costs (itemCost) and whether its
// atomics all contend for a few words (contendedAtomics, with the launch-uniformity
// analysis it rests on).
#include "lowering_internal.h"

#include <llvm/Analysis/LoopInfo.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/Dominators.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/IntrinsicInst.h>

#include <map>

namespace cgraph::codegen::cpu {

using namespace llvm;

namespace {

// Whether a value of the work-item body is the same in every work-item of the launch:
// computed from constants, the kernel's arguments (not a __local pointer) and the
// launch-wide ctx fields only. Varying: the local ids, the group ids and the actual
// group size (ctx), the local block, every load except from a private variable (an
// -O0 alloca) whose every store writes one and the same launch-uniform value, calls,
// anything else that touches memory, phis that join different values, and anything
// computed from a varying value. Conservative: a value it cannot follow is varying.
class LaunchUniform {
public:
  LaunchUniform(unsigned numParams) : numParams_(numParams) {}

  bool operator()(Value *v, unsigned depth = 0) {
    if (isa<Constant>(v)) return true;
    auto it = memo_.find(v);
    if (it != memo_.end()) return it->second;
    if (depth > kMaxDepth) return false;
    memo_[v] = false; // while in progress (a cycle through phis or allocas): varying
    const bool u = compute(v, depth + 1);
    memo_[v] = u;
    return u;
  }

private:
  static constexpr unsigned kMaxDepth = 64;

  bool compute(Value *v, unsigned depth) {
    if (auto *a = dyn_cast<Argument>(v)) {
      const unsigned n = a->getArgNo();
      if (n < numParams_) {
        auto *pt = dyn_cast<PointerType>(a->getType());
        return !pt || pt->getAddressSpace() != 3;
      }
      if (n < numParams_ + 4) return false; // local ids, the local block
      const unsigned f = n - numParams_ - 4;
      return !(f >= kCtxGroupId && f < kCtxGroupId + 3) &&
             !(f >= kCtxLocalSize && f < kCtxLocalSize + 3);
    }
    auto *i = dyn_cast<Instruction>(v);
    if (!i) return false;
    if (auto *l = dyn_cast<LoadInst>(i)) {
      auto *a = dyn_cast<AllocaInst>(l->getPointerOperand());
      if (!a || !l->isSimple()) return false;
      Value *stored = nullptr;
      for (User *u : a->users()) {
        if (auto *ul = dyn_cast<LoadInst>(u)) {
          if (ul->getPointerOperand() != a || !ul->isSimple()) return false;
        } else if (auto *st = dyn_cast<StoreInst>(u)) {
          if (st->getPointerOperand() != a || !st->isSimple()) return false;
          if (stored && stored != st->getValueOperand()) return false;
          stored = st->getValueOperand();
        } else if (!onlyLifetimeUses(u)) {
          return false; // its address escapes: stores through it are not seen here
        }
      }
      return stored && (*this)(stored, depth);
    }
    if (auto *phi = dyn_cast<PHINode>(i)) {
      // A join of different values may pick one by a varying branch: only one value.
      Value *only = nullptr;
      for (Value *in : phi->incoming_values()) {
        if (in == phi) continue;
        if (only && only != in) return false;
        only = in;
      }
      return only && (*this)(only, depth);
    }
    if (isa<CallBase>(i) || isa<AllocaInst>(i) || i->mayReadOrWriteMemory()) return false;
    for (Value *op : i->operands())
      if (!(*this)(op, depth)) return false;
    return true;
  }

  // A bitcast of an alloca used only by llvm.lifetime.* markers, or such a marker.
  static bool onlyLifetimeUses(User *u) {
    if (auto *ii = dyn_cast<IntrinsicInst>(u))
      return ii->isLifetimeStartOrEnd();
    if (!isa<BitCastInst>(u)) return false;
    for (User *uu : u->users()) {
      auto *ii = dyn_cast<IntrinsicInst>(uu);
      if (!ii || !ii->isLifetimeStartOrEnd()) return false;
    }
    return true;
  }

  unsigned numParams_;
  std::map<const Value *, bool> memo_;
};

} // namespace

// A loop-free work-item's cost relative to a few vector-friendly instructions (axpy: 1):
// 1 plus kSlowOpCost per operation the x loop cannot vectorize and that costs tens of
// cycles (integer division or remainder by a variable: `i % cols`; a call left to libm).
// The launcher runs a launch inline on the calling thread up to a number of work-items
// divided by this (add_bias: one `div` per work-item). A long body counts too, 1 per
// kInstructionsPerCost instructions (a chain of kernels fused by cgfuse, 1000 `mad`s per
// work-item), so that costly launches of it are split over the threads like loops.
constexpr uint64_t kSlowOpCost = 4;
constexpr uint64_t kInstructionsPerCost = 64;

uint64_t itemCost(Function &body) {
  uint64_t slow = 0;
  for (BasicBlock &bb : body)
    for (Instruction &i : bb) {
      if (auto *bo = dyn_cast<BinaryOperator>(&i)) {
        switch (bo->getOpcode()) {
        case Instruction::UDiv:
        case Instruction::SDiv:
        case Instruction::URem:
        case Instruction::SRem:
          if (!isa<Constant>(bo->getOperand(1))) ++slow;
          break;
        default:
          break;
        }
      } else if (auto *c = dyn_cast<CallInst>(&i)) {
        Function *callee = c->getCalledFunction();
        if (!callee) {
          ++slow;
          continue;
        }
        switch (callee->getIntrinsicID()) {
        case Intrinsic::not_intrinsic:
          if (callee->isDeclaration() && callee->getName() != "cgraph_cpu_barrier" &&
              callee->getName() != "cgraph_cpu_bounds_fail")
            ++slow;
          break;
        // Intrinsics the x86 code generator turns into libm calls.
        case Intrinsic::exp:
        case Intrinsic::exp2:
        case Intrinsic::log:
        case Intrinsic::log2:
        case Intrinsic::log10:
        case Intrinsic::sin:
        case Intrinsic::cos:
        case Intrinsic::pow:
          ++slow;
          break;
        default:
          break;
        }
      }
    }
  return 1 + kSlowOpCost * slow + body.getInstructionCount() / kInstructionsPerCost;
}

// Work-items that all update the same few words of global memory with atomics (shared
// counters, a compare-and-swap loop on one word: atomics64.cl) run slower on several
// threads than on one: every atomic moves the word's cache line from core to core.
// True when the work-item does at least one atomic read-modify-write outside __local
// memory, every atomic access outside __local memory has a launch-uniform address
// (LaunchUniform: no local or group id in it), and every loop of the work-item contains
// a compare-and-swap (a retry loop, also on __local memory, not work of unknown
// length). __local atomics stay in the group's own block (one thread's) and do not
// count. planLaunch runs small launches of such kernels on the calling thread; the
// atomics stay atomic (other nodes may run meanwhile).
bool contendedAtomics(Function &body, unsigned numParams) {
  LaunchUniform uniform(numParams);
  bool rmw = false;
  for (BasicBlock &bb : body)
    for (Instruction &i : bb) {
      Value *ptr = nullptr;
      bool isRmw = false;
      if (auto *a = dyn_cast<AtomicRMWInst>(&i)) {
        ptr = a->getPointerOperand();
        isRmw = true;
      } else if (auto *c = dyn_cast<AtomicCmpXchgInst>(&i)) {
        ptr = c->getPointerOperand();
        isRmw = true;
      } else if (auto *l = dyn_cast<LoadInst>(&i)) {
        if (l->isAtomic()) ptr = l->getPointerOperand();
      } else if (auto *s = dyn_cast<StoreInst>(&i)) {
        if (s->isAtomic()) ptr = s->getPointerOperand();
      }
      if (!ptr || ptr->getType()->getPointerAddressSpace() == 3) continue;
      if (!uniform(ptr)) return false;
      rmw = rmw || isRmw;
    }
  if (!rmw) return false;
  DominatorTree dt(body);
  LoopInfo li(dt);
  for (Loop *l : li.getLoopsInPreorder()) {
    bool cas = false;
    for (BasicBlock *bb : l->blocks())
      for (Instruction &i : *bb)
        cas = cas || isa<AtomicCmpXchgInst>(i);
    if (!cas) return false;
  }
  return true;
}

} // namespace cgraph::codegen::cpu
