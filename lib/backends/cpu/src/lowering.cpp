// Host lowering of a SPIR-V module (spir64 IR from the translator):
//   1. link the builtin library (only what is used) and inline every non-kernel function;
//   2. turn each kernel into an internal "body" that takes the work-item ids and the
//      launch geometry as extra arguments, so work-item builtins become plain values
//      (the x id is the innermost loop variable after inlining: vectorizable);
//   3. __local variables become offsets into a per-group local block (an argument);
//   4. wrap: barrier-free kernels get `cgk.<k>.wg` looping z/y/x over the group;
//      kernels with barriers are cut into regions (barrier_regions.h) and get a
//      `cgk.<k>.wg` that runs one z/y/x loop per region, or, where the cut declines,
//      `cgk.<k>.wi` (one work-item, run as a fiber);
//   5. retarget to the host, O3, emit an object file.
// Address spaces 1-4 are left in place: the x86-64 backend treats every address space
// below 256 as the flat one (isNoopAddrSpaceCast), so no rewrite of pointer types is
// needed for correct code, and the optimizer does not assume they are disjoint.
#include "barrier_regions.h"
#include "guards.h"
#include "ilp.h"
#include "internal.h"

#include "cgraph/kernel/spirv_to_llvm.h"
#include "cgraph/kernel/work_item.h"

#include <llvm/ADT/SmallPtrSet.h>
#include <llvm/Analysis/CFG.h>
#include <llvm/Analysis/InstructionSimplify.h>
#include <llvm/Analysis/LoopInfo.h>
#include <llvm/Analysis/TargetLibraryInfo.h>
#include <llvm/Analysis/ValueTracking.h>
#include <llvm/Bitcode/BitcodeReader.h>
#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/IR/DiagnosticInfo.h>
#include <llvm/IR/DiagnosticPrinter.h>
#include <llvm/IR/Dominators.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/MDBuilder.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Linker/Linker.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Passes/PassBuilder.h>
#ifdef CGRAPH_CPU_TSAN
#include <llvm/Transforms/Instrumentation/ThreadSanitizer.h>
#endif
#include <llvm/Support/CommandLine.h>
#include <llvm/Support/Host.h>
#include <llvm/Support/KnownBits.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/Transforms/IPO/AlwaysInliner.h>
#include <llvm/Transforms/InstCombine/InstCombine.h>
#include <llvm/Transforms/Scalar/LICM.h>
#include <llvm/Transforms/Scalar/LoopUnrollAndJamPass.h>
#include <llvm/Transforms/Scalar/SimplifyCFG.h>
#include <llvm/Transforms/Vectorize/SLPVectorizer.h>
#include <llvm/Transforms/Utils/BasicBlockUtils.h>
#include <llvm/Transforms/Utils/Cloning.h>
#include <llvm/Transforms/Utils/Local.h>
#include <llvm/Transforms/Utils/PromoteMemToReg.h>
#include <llvm/Transforms/Vectorize/VectorCombine.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string_view>

namespace cgraph::cpu {

namespace {

using namespace llvm;

std::string toText(llvm::Error e) {
  std::string s;
  raw_string_ostream os(s);
  os << e;
  return os.str();
}

void initTargets() {
  static std::once_flag once;
  std::call_once(once, [] {
    InitializeNativeTarget();
    InitializeNativeTargetAsmPrinter();
  });
}

Expected<std::unique_ptr<TargetMachine>> hostMachine() {
  initTargets();
  auto jtmb = orc::JITTargetMachineBuilder::detectHost();
  if (!jtmb) return makeError("cannot describe the host target: " + toText(jtmb.takeError()));
  jtmb->setCodeGenOptLevel(CodeGenOpt::Aggressive);
  auto tm = jtmb->createTargetMachine();
  if (!tm) return makeError("cannot create the host target machine: " + toText(tm.takeError()));
  return std::move(*tm);
}

// The work-item functions and barriers (one table: cgraph/kernel/work_item.h).
using WiFunc = kernel::WorkItemFn;
WiFunc classify(StringRef n) { return kernel::workItemFn(n); }

// Values a body sees: work-item ids and the ctx fields (see internal.h).
struct BodyArgs {
  Value *l[3];
  Value *local;
  Value *ctx[kCtxFields];
};

constexpr unsigned kExtraArgs = 3 + 1 + kCtxFields;

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

// Replaces work-item builtins and barriers in `f`. Returns whether it has a barrier;
// `groupShape` is set when the kernel observes its work-group shape (local ids and
// sizes, group ids, group counts).
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
    switch (kind) {
    case WiFunc::LocalId:
    case WiFunc::LocalSize:
    case WiFunc::EnqueuedLocalSize:
    case WiFunc::GroupId:
    case WiFunc::NumGroups:
    case WiFunc::LocalLinearId:
      groupShape = true;
      break;
    default:
      break;
    }
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

// Work-items jammed together when the x loop of a barrier-free kernel encloses a loop
// of the kernel (matmul's k): unroll-and-jam by this count gives that inner loop this
// many independent work-items per iteration, whose loads of consecutive work-items are
// consecutive, and the late SLP pass (runO3) packs them into vectors of this width
// (where the kernel's `restrict` parameters left scope declarations in the x loop,
// WorkItemScopesPass removes them first, or unroll-and-jam declines the loop).
constexpr unsigned kJamCount = 8;

// Work-items interleaved by the x loop of a long straight-line work-item (a fused
// chain: hundreds of dependent operations, more than the core's reorder window sees):
// the vectorizer's own choice for a large loop body is one vector at a time, which
// leaves the chain latency-bound. The x loop of such a kernel is vectorized kIlpWidth
// wide, one vector per iteration, and after O3 ilp.h's interleaveMarkedLoops() runs as
// many vectors in lockstep as fit the vector registers, at most this many (LLVM's own
// interleave count, a power of two, either left the pipes idle or overflowed the
// registers: ilp.h); the scalar loop the vectorizer leaves for the last work-items
// (fewer than a vector) is interleaved two at a time, so a group of 13 long work-items
// is one vector and 5 work-items in three steps, not 13 chains one after another.
constexpr unsigned kIlpCount = 8;
constexpr unsigned kIlpWidth = 8;
// A loop-free work-item of at least this many instructions is "long" (above).
constexpr size_t kLongBody = 256;

// What the x loop asks of LLVM's loop passes through its metadata (0: no hint).
struct LoopHints {
  unsigned jam = 0;        // llvm.loop.unroll_and_jam.count
  unsigned width = 0;      // llvm.loop.vectorize.width
  unsigned interleave = 0; // llvm.loop.interleave.count
  MDNode *parallel = nullptr; // llvm.loop.parallel_accesses (tagParallelAccesses)
  bool ilp = false;        // one vector per iteration, marked for interleaveMarkedLoops()
};

// Loop `for (iv = start; iv < bound; ++iv)` (start < bound; start null: 0), body emitted
// by `emit`.
template <typename F>
void emitLoop(IRBuilder<> &b, Value *bound, const char *name, F emit, LoopHints hints = {},
              Value *start = nullptr) {
  Function *f = b.GetInsertBlock()->getParent();
  LLVMContext &ctx = f->getContext();
  BasicBlock *pre = b.GetInsertBlock();
  BasicBlock *head = BasicBlock::Create(ctx, std::string(name) + ".loop", f);
  BasicBlock *exit = BasicBlock::Create(ctx, std::string(name) + ".exit", f);
  b.CreateBr(head);
  b.SetInsertPoint(head);
  PHINode *iv = b.CreatePHI(b.getInt64Ty(), 2, name);
  iv->addIncoming(start ? start : b.getInt64(0), pre);
  emit(iv);
  Value *next = b.CreateAdd(iv, b.getInt64(1), std::string(name) + ".next", true, true);
  iv->addIncoming(next, b.GetInsertBlock());
  BranchInst *br = b.CreateCondBr(b.CreateICmpULT(next, bound), head, exit);
  SmallVector<Metadata *, 4> md{nullptr};
  auto hint = [&](const char *key, unsigned v) {
    if (v > 1)
      md.push_back(MDNode::get(ctx, {MDString::get(ctx, key), ConstantAsMetadata::get(b.getInt32(v))}));
  };
  hint("llvm.loop.unroll_and_jam.count", hints.jam);
  hint("llvm.loop.vectorize.width", hints.width);
  hint("llvm.loop.interleave.count", hints.interleave);
  if (hints.parallel)
    md.push_back(MDNode::get(ctx, {MDString::get(ctx, "llvm.loop.parallel_accesses"), hints.parallel}));
  if (hints.ilp) {
    // The vectorized loop keeps only these attributes (the marker, and no second
    // vectorization or unrolling of a loop interleaveMarkedLoops() will rewrite).
    auto node = [&](std::initializer_list<Metadata *> ops) { return MDNode::get(ctx, ops); };
    md.push_back(node({MDString::get(ctx, "llvm.loop.interleave.count"),
                       ConstantAsMetadata::get(b.getInt32(1))}));
    md.push_back(node({MDString::get(ctx, "llvm.loop.vectorize.followup_vectorized"),
                       node({MDString::get(ctx, kIlpLoopMarker)}),
                       node({MDString::get(ctx, "llvm.loop.isvectorized"),
                             ConstantAsMetadata::get(b.getInt32(1))}),
                       node({MDString::get(ctx, "llvm.loop.unroll.disable")})}));
    // ... and so is the scalar loop the vectorizer leaves for the last work-items (fewer
    // than a vector): run one after another, 5 long work-items cost 5 chains' latency.
    md.push_back(node({MDString::get(ctx, "llvm.loop.vectorize.followup_epilogue"),
                         node({MDString::get(ctx, kIlpLoopMarker)}),
                         node({MDString::get(ctx, "llvm.loop.isvectorized"),
                               ConstantAsMetadata::get(b.getInt32(1))}),
                         node({MDString::get(ctx, "llvm.loop.unroll.disable")})}));
  }
  if (md.size() > 1) {
    MDNode *loopId = MDNode::getDistinct(ctx, md);
    loopId->replaceOperandWith(0, loopId);
    br->setMetadata(LLVMContext::MD_loop, loopId);
  }
  b.SetInsertPoint(exit);
}

struct KernelPlan {
  std::string name;
  Function *body = nullptr;
  bool barrier = false;
  bool groupShape = false; // observes its work-group shape or uses __local memory
  uint64_t staticLocal = 0;
  uint32_t numParams = 0;
  BarrierRegions regions; // barrier kernels cut into regions (empty: fibers)
  bool loops = false;     // the work-item has loops: its cost is not a few instructions
  bool longBody = false;  // loop-free but long: interleave work-items (kIlpCount)
  bool straight = false;  // ... and without conditional branches (ilp.h rewrites its loop)
  uint64_t itemCost = 1;  // relative cost of a loop-free work-item (itemCost())
  bool contended = false; // its atomics all hit the same few words (contendedAtomics())
  uint64_t fixedLocal[3] = {0, 0, 0}; // LocalSpecialization's shape (0: not specialized)
  bool checkBounds = false; // accesses checked (instrumentBounds); args has one more word
};

// A loop-free work-item's cost relative to a few vector-friendly instructions (axpy: 1):
// 1 plus kSlowOpCost per operation the x loop cannot vectorize and that costs tens of
// cycles (integer division or remainder by a variable: `i % cols`; a call left to libm).
// The launcher runs a launch inline on the calling thread up to a number of work-items
// divided by this (add_bias: 16384 work-items of one `div` each are worth two threads).
// A long body counts too, 1 per kInstructionsPerCost instructions (chain1000 fused by
// cgfuse: 1000 `mad`s per work-item, 4096 work-items are worth every thread).
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

// Integer division and remainder trap on x86 (SIGFPE, the whole process) for a zero
// divisor and for the signed minimum divided by -1; OpenCL leaves the result undefined,
// not the program. Each sdiv/udiv/srem/urem whose divisor may be zero, or, signed, may
// be -1 with a dividend that may be the minimum, divides by 1 in those cases instead: a
// compare and a select per division (per lane on vectors, which vectorize), nothing
// where the divisor is a known nonzero constant. Runs before the division-run search
// (guards.h XDivision): a guarded divisor is still group-uniform.
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

// Bounds-checked kernels (internal.h BoundsTable). Every load, store, atomic and
// memcpy/memmove/memset of the body is checked against the byte ranges of the objects
// its address may be derived from (getUnderlyingObjects): a buffer or __local parameter
// (its binding or __local size, from the table), the local block (static __local
// variables: the launch's local bytes), a private or program-scope variable (its own
// size). Where an address's origin is not found (loaded from memory, made from an
// integer), it must lie in some buffer parameter's range or the local block. A failed
// check calls cgraph_cpu_bounds_fail and skips the access: a load gives 0, a
// compare-and-swap reports success (a retry loop ends).
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

// Work-items that all update the same few words of global memory with atomics (shared
// counters, a compare-and-swap loop on one word: atomics64.cl) run slower on several
// threads than on one: every atomic moves the word's cache line from core to core
// (atomics64, 512 work-items of 14 atomics on 12 words, took 1.1-1.5x PoCL's time on 2
// cores while its groups were split over both). True when the work-item does at least
// one atomic read-modify-write outside __local memory, every atomic access outside
// __local memory has a launch-uniform address (LaunchUniform: no local or group id in
// it), and every loop of the work-item contains a compare-and-swap (a retry loop, also
// on __local memory, not work of unknown length). __local atomics stay in the group's own
// block (one thread's) and do not count. planLaunch runs small launches of such kernels
// on the calling thread; the atomics stay atomic (other nodes may run meanwhile).
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

// The body comes from -O0 IR: every local variable is an alloca. Before the barrier
// split, promote the promotable ones to SSA values: otherwise a value such as
// `lid = get_local_id(0)`, stored in region 0 and read after a barrier, is live across
// it in memory and becomes a context array, so `scratch[lid]` in a later region is an
// indirect access (a gather the vectorizers leave alone) instead of the local id
// itself, which the split recomputes in every region.
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

// Loads kernel arguments and ctx values at the wrapper's entry, then calls the body.
// `fixedLocal` (null: none): the work-group shape the kernel is specialized for
// (LocalSpecialization), whose sizes replace the ctx fields of local sizes. `checked`:
// the bounds table's address follows the parameters (internal.h kCtxBounds).
std::vector<Value *> loadArgs(IRBuilder<> &b, Function *body, unsigned nParams, Value *args,
                              Value *ctx, Value *local, BodyArgs &ba,
                              const uint64_t *fixedLocal, bool checked) {
  std::vector<Value *> out;
  Type *i8p = b.getInt8PtrTy();
  for (unsigned p = 0; p < nParams; ++p) {
    Type *t = body->getArg(p)->getType();
    Value *slot = b.CreateConstInBoundsGEP1_64(b.getInt64Ty(), args, p);
    Value *v;
    if (auto *pt = dyn_cast<PointerType>(t)) {
      Value *raw = b.CreateLoad(b.getInt64Ty(), slot);
      if (pt->getAddressSpace() == 3) {
        Value *addr = b.CreateInBoundsGEP(b.getInt8Ty(), local, raw);
        v = b.CreatePointerBitCastOrAddrSpaceCast(addr, t);
      } else {
        v = b.CreateIntToPtr(raw, t);
      }
    } else {
      v = b.CreateLoad(t, b.CreateBitCast(slot, PointerType::get(t, 0)));
    }
    out.push_back(v);
  }
  (void)i8p;
  for (uint32_t k = 0; k < kCtxFields; ++k)
    ba.ctx[k] = k == kCtxBounds ? static_cast<Value *>(b.getInt64(0))
                                : b.CreateLoad(b.getInt64Ty(), b.CreateConstInBoundsGEP1_64(b.getInt64Ty(), ctx, k));
  if (checked)
    ba.ctx[kCtxBounds] = b.CreateLoad(b.getInt64Ty(), b.CreateConstInBoundsGEP1_64(b.getInt64Ty(), args, nParams));
  if (fixedLocal)
    for (uint32_t d = 0; d < 3; ++d)
      ba.ctx[kCtxLocalSize + d] = ba.ctx[kCtxEnqLocal + d] = b.getInt64(fixedLocal[d]);
  ba.local = local;
  return out;
}

std::vector<Value *> bodyOperands(std::vector<Value *> args, const BodyArgs &ba,
                                  const std::vector<Value *> &extra = {}) {
  for (int k = 0; k < 3; ++k)
    args.push_back(ba.l[k]);
  args.push_back(ba.local);
  for (uint32_t k = 0; k < kCtxFields; ++k)
    args.push_back(ba.ctx[k]);
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

Value *callBody(IRBuilder<> &b, Function *body, std::vector<Value *> args, const BodyArgs &ba,
                 const std::vector<Value *> &extra = {}) {
  return b.CreateCall(body, bodyOperands(std::move(args), ba, extra));
}

// Work-items [from, to) of the x loop running `callee` (`emit(f)` calls `f` for
// work-item ba.l[0]), skipped when the range is empty.
template <typename F>
void emitXRange(IRBuilder<> &b, BodyArgs &ba, Value *from, Value *to, const char *name, Function *callee, F emit,
                LoopHints hints) {
  Function *f = b.GetInsertBlock()->getParent();
  LLVMContext &ctx = f->getContext();
  BasicBlock *run = BasicBlock::Create(ctx, std::string(name) + ".run", f);
  BasicBlock *skip = BasicBlock::Create(ctx, std::string(name) + ".skip", f);
  b.CreateCondBr(b.CreateICmpULT(from, to), run, skip);
  b.SetInsertPoint(run);
  emitLoop(
      b, to, name,
      [&](Value *x) {
        ba.l[0] = x;
        emit(callee);
      },
      hints, from);
  b.CreateBr(skip);
  b.SetInsertPoint(skip);
}

// The x loop over [begin, end) of `outer` cut by clamped x indices (guards.h XClamps):
// the work-items on which every clamp is the identity run `c.inner` (consecutive
// indices, no gathers), those before and after them `outer`. Legal because `c.inner`
// and `outer` compute the same values wherever the clamps are the identity, which
// emitClampRange() checks at run time for every work-item of the middle range.
template <typename F, typename O>
void emitClampedX(IRBuilder<> &b, BodyArgs &ba, unsigned numParams, const XClamps &c,
                  Value *begin, Value *end, Function *outer, F emit, O ops, LoopHints hints) {
  Value *lo, *hi;
  emitClampRange(b, c, ops(), numParams, begin, end, lo, hi);
  auto range = [&](Value *from, Value *to, const char *name, Function *callee) {
    emitXRange(b, ba, from, to, name, callee, emit, hints);
  };
  range(begin, lo, "x.edge", outer);
  range(lo, hi, "x.inner", c.inner);
  range(hi, end, "x.edge", outer);
}

// The x loop narrowed by a work-item guard (guards.h): the leading work-items that pass
// it run `g.low`, the rest `orig` (all of them where the count is not usable; else none,
// or with `tail` the last one: a barrier region's next region and carried values).
// `emit(f)` calls `f` for work-item ba.l[0]; `ops()` gives the call's operands.
template <typename F, typename O>
void emitGuardedX(IRBuilder<> &b, BodyArgs &ba, unsigned numParams, const WorkItemGuard &g,
                  Function *orig, bool tail, F emit, O ops, LoopHints hints,
                  const XDivision *div = nullptr, std::vector<Value *> *divExtra = nullptr,
                  const XClamps *clamps = nullptr) {
  Value *lx = ba.ctx[kCtxLocalSize + 0];
  ba.l[0] = b.getInt64(0);
  Value *count, *usable;
  emitGuardCount(b, g, ops(), numParams, lx, count, usable);
  Value *n1 = b.CreateSelect(usable, count, b.getInt64(0));
  Function *f = b.GetInsertBlock()->getParent();
  LLVMContext &ctx = f->getContext();
  auto range = [&](Value *begin, const char *name, Function *callee) {
    emitXRange(b, ba, begin, lx, name, callee, emit, hints);
  };
  // [0, n1): the clone whose guard always passes (a loop bounded by n1, not lx).
  {
    BasicBlock *run = BasicBlock::Create(ctx, "x.low.run", f);
    BasicBlock *skip = BasicBlock::Create(ctx, "x.low.skip", f);
    b.CreateCondBr(b.CreateICmpNE(n1, b.getInt64(0)), run, skip);
    b.SetInsertPoint(run);
    if (div && div->seg && divExtra) {
      // Runs of work-items with one quotient (XDivision): the clone gets the quotient and
      // the run's first remainder plus the distance.
      std::vector<Value *> qr;
      auto loop = [&](Value *begin, Value *end, const char *name, Function *callee) {
        const std::vector<Value *> base = qr;
        emitLoop(
            b, end, name,
            [&](Value *x) {
              ba.l[0] = x;
              if (callee == div->seg)
                *divExtra = {base[0], b.CreateAdd(base[1], b.CreateTrunc(b.CreateSub(x, begin),
                                                                         base[1]->getType()))};
              emit(callee);
              divExtra->clear();
            },
            hints, begin);
      };
      emitDivisionRuns(b, *div, ops(), numParams, n1, g.low, qr, {}, loop);
    } else if (clamps && clamps->inner) {
      emitClampedX(b, ba, numParams, *clamps, b.getInt64(0), n1, g.low, emit, ops, hints);
    } else {
      emitLoop(
          b, n1, "x.low",
          [&](Value *x) {
            ba.l[0] = x;
            emit(g.low);
          },
          hints);
    }
    b.CreateBr(skip);
    b.SetInsertPoint(skip);
  }
  Value *rest = tail ? b.CreateSelect(b.CreateICmpULT(n1, lx), b.CreateSub(lx, b.getInt64(1)), lx) : lx;
  range(b.CreateSelect(usable, rest, b.getInt64(0)), "x.rest", orig);
}

// A work-item guard of the function an x loop calls: emitGroupLoop narrows the loop.
struct XGuard {
  const WorkItemGuard *guard = nullptr;
  Function *orig = nullptr;
  bool tail = false;
  unsigned numParams = 0;
  const XDivision *div = nullptr;            // runs of one quotient (barrier-free only)
  std::vector<Value *> *divExtra = nullptr;  // the extra call operands emit() must pass
  const XClamps *clamps = nullptr;           // clamped x indices of the function the x loop calls
};

// The z/y/x loop over the group's work-items; `emit` is the work-item. `ilp`: the x
// loop is versioned: with `straight` (a work-item without conditional branches, whose
// vector loop is one block), groups of at least 2 work-items take a loop of one vector
// per iteration that interleaveMarkedLoops() interleaves up to kIlpCount (and its
// scalar remainder loop too);
// otherwise groups of at least kIlpWidth * kIlpCount work-items take a loop the
// vectorizer interleaves kIlpCount times (it predicates the branches; ilp.h's rewrite
// takes one block only).
// With a guard (XGuard), the x loop is narrowed (emitGuardedX).
template <typename F, typename O = std::nullptr_t>
void emitGroupLoop(IRBuilder<> &b, BodyArgs &ba, F emit, bool ilp = false, bool straight = false,
                   MDNode *parallel = nullptr, const XGuard &xg = {}, O ops = nullptr) {
  emitLoop(b, ba.ctx[kCtxLocalSize + 2], "z", [&](Value *z) {
    ba.l[2] = z;
    emitLoop(b, ba.ctx[kCtxLocalSize + 1], "y", [&](Value *y) {
      ba.l[1] = y;
      auto item = [&](Value *x) {
        ba.l[0] = x;
        emit(nullptr);
      };
      Value *lx = ba.ctx[kCtxLocalSize + 0];
      if constexpr (!std::is_same_v<O, std::nullptr_t>) {
        if (xg.guard && xg.guard->low) {
          emitGuardedX(b, ba, xg.numParams, *xg.guard, xg.orig, xg.tail, emit, ops,
                       {kJamCount, 0, 0, parallel}, xg.div, xg.divExtra, xg.clamps);
          return;
        }
        if (xg.clamps && xg.clamps->inner) {
          ba.l[0] = b.getInt64(0);
          emitClampedX(b, ba, xg.numParams, *xg.clamps, b.getInt64(0), lx, xg.orig, emit, ops,
                       {kJamCount, 0, 0, parallel});
          return;
        }
      }
      if (!ilp || kIlpCount < 2) {
        emitLoop(b, lx, "x", item, {kJamCount, 0, 0, parallel});
        return;
      }
      Function *f = b.GetInsertBlock()->getParent();
      LLVMContext &ctx = f->getContext();
      BasicBlock *wide = BasicBlock::Create(ctx, "x.wide", f);
      BasicBlock *narrow = BasicBlock::Create(ctx, "x.narrow", f);
      BasicBlock *join = BasicBlock::Create(ctx, "x.join", f);
      const uint64_t wideFrom = straight ? 2 : uint64_t(kIlpWidth) * kIlpCount;
      b.CreateCondBr(b.CreateICmpUGE(lx, b.getInt64(wideFrom)), wide, narrow);
      b.SetInsertPoint(wide);
      if (straight)
        emitLoop(b, lx, "x", item, {0, kIlpWidth, 0, parallel, true});
      else
        emitLoop(b, lx, "x", item, {0, kIlpWidth, kIlpCount, parallel});
      b.CreateBr(join);
      b.SetInsertPoint(narrow);
      emitLoop(b, lx, "x", item, {kJamCount, 0, 0, parallel});
      b.CreateBr(join);
      b.SetInsertPoint(join);
    });
  });
}

// OpenCL orders the work-items of a group only at barriers: between two, one work-item's
// plain access to memory another work-item writes is a data race, so the x loop over a
// group's work-items (a barrier-free body, or one barrier region) carries no dependence
// through memory the kernel shares: global, constant and __local memory, and the
// per-work-item context arrays. Those loads and stores join one access group that the
// x loops name in llvm.loop.parallel_accesses, so the vectorizers need no run-time
// alias checks for them (they cannot form checks for `scratch[lid]` against
// `scratch[lid + s]` with `s` unknown: "cannot check memory dependencies at run time").
// Left out, so that LLVM analyses the loop as before: atomic and volatile accesses,
// calls, and anything that may reach private memory (an alloca is one object for every
// work-item once the body is inlined into the loop; a pointer loaded or selected from
// several objects may be one). `firstOut`..: region parameters that point at the
// wrapper's carried uniform values, which every work-item stores alike. Returns the
// group, or null when no access was tagged.


bool sharedMemory(const Value *ptr, unsigned numParams, unsigned firstOut) {
  SmallVector<const Value *, 4> objs;
  getUnderlyingObjects(ptr, objs, nullptr, 8);
  if (objs.empty()) return false;
  for (const Value *o : objs) {
    if (isa<GlobalVariable>(o)) continue;
    auto *a = dyn_cast<Argument>(o);
    // Kernel parameters, the local block (numParams + 3; context arrays live in it),
    // carried uniform values' out pointers.
    if (a && (a->getArgNo() < numParams || a->getArgNo() == numParams + 3 || a->getArgNo() >= firstOut))
      continue;
    return false;
  }
  return true;
}

void tagParallelAccesses(Function &f, unsigned numParams, unsigned firstOut, MDNode *&group) {
  for (BasicBlock &bb : f)
    for (Instruction &i : bb) {
      const Value *ptr = nullptr;
      if (auto *l = dyn_cast<LoadInst>(&i))
        ptr = l->isSimple() ? l->getPointerOperand() : nullptr;
      else if (auto *st = dyn_cast<StoreInst>(&i))
        ptr = st->isSimple() ? st->getPointerOperand() : nullptr;
      if (!ptr || !sharedMemory(ptr, numParams, firstOut)) continue;
      if (!group) group = MDNode::getDistinct(f.getContext(), {});
      i.setMetadata(LLVMContext::MD_access_group, group);
    }
}

void setNoAlias(Function *f, unsigned n) {
  for (unsigned i = 0; i < n; ++i)
    f->addParamAttr(i, Attribute::NoAlias);
}

void emitWrappers(Module &m, const KernelPlan &k) {
  LLVMContext &ctx = m.getContext();
  Type *i64 = Type::getInt64Ty(ctx);
  Type *i64p = PointerType::get(i64, 0);
  Type *i8p = Type::getInt8PtrTy(ctx);
  Type *voidT = Type::getVoidTy(ctx);
  uint64_t cost = k.itemCost; // the launcher's measure of a work-item (.info)
  if (!k.barrier) {
    auto *ft = FunctionType::get(voidT, {i64p, i64p, i8p}, false);
    Function *w =
        Function::Create(ft, GlobalValue::ExternalLinkage, kWrapperPrefix + k.name + ".wg", m);
    setNoAlias(w, 3);
    w->addFnAttr(Attribute::NoUnwind);
    IRBuilder<> b(BasicBlock::Create(ctx, "entry", w));
    BodyArgs ba;
    std::vector<Value *> args =
        loadArgs(b, k.body, k.numParams, w->getArg(0), w->getArg(1), w->getArg(2), ba,
                 k.fixedLocal[0] ? k.fixedLocal : nullptr, k.checkBounds);
    MDNode *group = nullptr;
    WorkItemGuard guard;
    XDivision div;
    std::vector<Value *> divExtra;
    XClamps clamps;
    if (!k.longBody) {
      promoteAllocas(*k.body);
      findWorkItemGuard(*k.body, k.numParams, k.body->arg_size(), guard);
      if (findXDivision(guard.low ? *guard.low : *k.body, k.numParams, div) &&
          !guard.low)
        guard.low = k.body; // no guard: every work-item "passes" (bound null)
    }
    if (!div.seg) {
      // Long bodies take the interleaved x loop (emitGroupLoop) unless they clamp x
      // indices: then the guard as well, so the clamp-free clone runs unmasked.
      const bool longGuard = k.longBody;
      auto search = [&](Function &body, WorkItemGuard &g, XClamps &c) {
        if (longGuard) {
          promoteAllocas(body);
          findWorkItemGuard(body, k.numParams, body.arg_size(), g);
        }
        return findXClamps(g.low ? *g.low : body, k.numParams, c);
      };
      bool found = true;
      if (longGuard) {
        // A long body without clamps keeps the code it had (not even its allocas
        // promoted): a copy of it is searched first.
        ValueToValueMapTy vmap;
        Function *probe = CloneFunction(k.body, vmap);
        WorkItemGuard pg;
        XClamps pc;
        found = search(*probe, pg, pc);
        if (pc.inner) pc.inner->eraseFromParent();
        if (pg.low) pg.low->eraseFromParent();
        probe->eraseFromParent();
      }
      if (found && !search(*k.body, guard, clamps) && longGuard && guard.low) {
        guard.low->eraseFromParent();
        guard = WorkItemGuard{};
      }
    }
    tagParallelAccesses(*k.body, k.numParams, k.body->arg_size(), group);
    if (guard.low && guard.low != k.body)
      tagParallelAccesses(*guard.low, k.numParams, k.body->arg_size(), group);
    if (clamps.inner) tagParallelAccesses(*clamps.inner, k.numParams, k.body->arg_size(), group);
    if (div.seg) {
      tagParallelAccesses(*div.seg, k.numParams, k.body->arg_size(), group);
      // Its divisions are now one per run: the work-item costs what the clone costs.
      cost = std::min(cost, itemCost(*div.seg));
    }
    emitGroupLoop(
        b, ba, [&](Function *f) { callBody(b, f ? f : k.body, args, ba, divExtra); }, k.longBody,
        k.straight, group, XGuard{&guard, k.body, false, k.numParams, &div, &divExtra, &clamps},
        [&] { return bodyOperands(args, ba); });
    b.CreateRetVoid();
  } else if (!k.regions.regions.empty()) {
    // Region dispatch: run region `cur` for every work-item, then the region they reached.
    auto *ft = FunctionType::get(voidT, {i64p, i64p, i8p}, false);
    Function *w =
        Function::Create(ft, GlobalValue::ExternalLinkage, kWrapperPrefix + k.name + ".wg", m);
    setNoAlias(w, 3);
    w->addFnAttr(Attribute::NoUnwind);
    BasicBlock *entry = BasicBlock::Create(ctx, "entry", w);
    IRBuilder<> b(entry);
    BodyArgs ba;
    std::vector<Value *> args = loadArgs(b, k.regions.regions[0], k.numParams, w->getArg(0),
                                         w->getArg(1), w->getArg(2), ba,
                                         k.fixedLocal[0] ? k.fixedLocal : nullptr, k.checkBounds);
    Type *i32 = b.getInt32Ty();
    AllocaInst *next = b.CreateAlloca(i32, nullptr, "next.region");
    // Uniform values carried between regions: `ins` going in, `outs` coming back.
    const std::vector<Type *> &carried = k.regions.uniformTypes;
    std::vector<AllocaInst *> ins, outs;
    for (Type *t : carried) {
      ins.push_back(b.CreateAlloca(t, nullptr, "carried"));
      outs.push_back(b.CreateAlloca(t, nullptr, "carried.out"));
      b.CreateStore(Constant::getNullValue(t), ins.back());
    }
    BasicBlock *dispatch = BasicBlock::Create(ctx, "dispatch", w);
    BasicBlock *done = BasicBlock::Create(ctx, "done", w);
    b.CreateBr(dispatch);
    b.SetInsertPoint(dispatch);
    PHINode *cur = b.CreatePHI(i32, unsigned(k.regions.regions.size()) + 1, "region");
    cur->addIncoming(b.getInt32(0), entry);
    SwitchInst *sw = b.CreateSwitch(cur, done, unsigned(k.regions.regions.size()));
    MDNode *group = nullptr;
    const unsigned firstOut = k.numParams + kExtraArgs + unsigned(carried.size());
    std::vector<WorkItemGuard> guards(k.regions.regions.size());
    for (size_t r = 0; r < k.regions.regions.size(); ++r) {
      Function *rf = k.regions.regions[r];
      promoteAllocas(*rf);
      findWorkItemGuard(*rf, k.numParams, firstOut, guards[r]);
      tagParallelAccesses(*rf, k.numParams, firstOut, group);
      if (guards[r].low) tagParallelAccesses(*guards[r].low, k.numParams, firstOut, group);
    }
    for (size_t r = 0; r < k.regions.regions.size(); ++r) {
      BasicBlock *rb = BasicBlock::Create(ctx, "region." + std::to_string(r), w);
      sw->addCase(b.getInt32(uint32_t(r)), rb);
      b.SetInsertPoint(rb);
      b.CreateStore(b.getInt32(kRegionExit), next);
      std::vector<Value *> extra;
      for (size_t u = 0; u < carried.size(); ++u)
        extra.push_back(b.CreateLoad(carried[u], ins[u]));
      extra.insert(extra.end(), outs.begin(), outs.end());
      // Every work-item reaches the same barrier: the store of its number is one of
      // the loop's parallel accesses too.
      emitGroupLoop(
          b, ba,
          [&](Function *f) {
            StoreInst *st =
                b.CreateStore(callBody(b, f ? f : k.regions.regions[r], args, ba, extra), next);
            if (group) st->setMetadata(LLVMContext::MD_access_group, group);
          },
          false, false, group, XGuard{&guards[r], k.regions.regions[r], true, k.numParams},
          [&] { return bodyOperands(args, ba, extra); });
      for (size_t u = 0; u < carried.size(); ++u)
        b.CreateStore(b.CreateLoad(carried[u], outs[u]), ins[u]);
      cur->addIncoming(b.CreateLoad(i32, next), b.GetInsertBlock());
      b.CreateBr(dispatch);
    }
    b.SetInsertPoint(done);
    b.CreateRetVoid();
  } else {
    auto *ft = FunctionType::get(voidT, {i64p, i64p, i8p, i64, i64, i64}, false);
    Function *w =
        Function::Create(ft, GlobalValue::ExternalLinkage, kWrapperPrefix + k.name + ".wi", m);
    w->addFnAttr(Attribute::NoUnwind);
    IRBuilder<> b(BasicBlock::Create(ctx, "entry", w));
    BodyArgs ba;
    std::vector<Value *> args =
        loadArgs(b, k.body, k.numParams, w->getArg(0), w->getArg(1), w->getArg(2), ba,
                 k.fixedLocal[0] ? k.fixedLocal : nullptr, k.checkBounds);
    for (int d = 0; d < 3; ++d)
      ba.l[d] = w->getArg(3 + d);
    callBody(b, k.body, args, ba);
    b.CreateRetVoid();
  }
  const uint64_t mode = !k.barrier                  ? kNoBarrier
                        : k.regions.regions.empty() ? kBarrierFibers
                                                    : kBarrierRegions;
  Constant *info = ConstantArray::get(
      ArrayType::get(i64, 9),
      {ConstantInt::get(i64, mode), ConstantInt::get(i64, k.staticLocal),
       ConstantInt::get(i64, k.numParams), ConstantInt::get(i64, k.groupShape ? 1 : 0),
       ConstantInt::get(i64, k.regions.privateBytes), ConstantInt::get(i64, k.loops ? 1 : 0),
       ConstantInt::get(i64, cost), ConstantInt::get(i64, k.contended ? 1 : 0),
       ConstantInt::get(i64, k.checkBounds ? 1 : 0)});
  new GlobalVariable(m, info->getType(), true, GlobalValue::ExternalLinkage, info,
                     kWrapperPrefix + k.name + ".info");
}

Error linkBuiltins(Module &m) {
  auto buf = MemoryBuffer::getMemBuffer(
      StringRef(reinterpret_cast<const char *>(kBuiltinsBitcode), kBuiltinsBitcodeSize),
      "cgraph-cpu-builtins", false);
  auto lib = getOwningLazyBitcodeModule(std::move(buf), m.getContext());
  if (!lib) return makeError("cannot read the builtin library: " + toText(lib.takeError()));
  (*lib)->setDataLayout(m.getDataLayout());
  (*lib)->setTargetTriple(m.getTargetTriple());
  if (Linker::linkModules(m, std::move(*lib), Linker::LinkOnlyNeeded))
    return makeError("cannot link the builtin library");
  return Error::success();
}

// The builtin library's relaxed atomic loads (builtins_atomic.h: the first read of a
// 64-bit min/max loop, which OpenCL C cannot write for spir64): each call of the two
// undefined functions becomes `load atomic monotonic` of the 8-byte word.
void lowerAtomicPeeks(Module &m) {
  for (const char *name : {"cgraph_cpu_atomic_peek_global", "cgraph_cpu_atomic_peek_local"}) {
    Function *f = m.getFunction(name);
    if (!f) continue;
    for (User *u : make_early_inc_range(f->users())) {
      auto *c = dyn_cast<CallInst>(u);
      if (!c || c->getCalledFunction() != f) continue;
      IRBuilder<> b(c);
      LoadInst *l = b.CreateAlignedLoad(c->getType(), c->getArgOperand(0), Align(8));
      l->setAtomic(AtomicOrdering::Monotonic);
      c->replaceAllUsesWith(l);
      c->eraseFromParent();
    }
    if (f->use_empty()) f->eraseFromParent();
  }
}

// The kernel body is inlined into the x loop once per work-item, and with it the
// `llvm.experimental.noalias.scope.decl` of its `restrict` parameters: a call that
// may touch memory, in the x loop's own blocks, so unroll-and-jam declines the loop
// (matmul: a scalar k loop per work-item, not 8 work-items jammed and vectorized). A
// declaration there limits the scopes to one work-item; OpenCL's `restrict` holds for
// the whole launch, and accesses of different work-items may be reordered anyway (two
// that conflict are a data race without a barrier, which is why the x loop's accesses
// are parallel), so dropping those declarations claims nothing new. Only declarations
// directly in a loop that asks for unroll-and-jam (emitLoop's x loop) are dropped; those
// in the kernel's own loops stay.
struct WorkItemScopesPass : PassInfoMixin<WorkItemScopesPass> {
  PreservedAnalyses run(Function &f, FunctionAnalysisManager &fam) {
    if (!f.getName().startswith(kWrapperPrefix)) return PreservedAnalyses::all();
    LoopInfo &li = fam.getResult<LoopAnalysis>(f);
    std::vector<Instruction *> dead;
    for (Loop *l : li.getLoopsInPreorder()) {
      if (!findOptionMDForLoop(l, "llvm.loop.unroll_and_jam.count")) continue;
      for (BasicBlock *bb : l->blocks()) {
        if (li.getLoopFor(bb) != l) continue; // inside one of the kernel's loops
        for (Instruction &i : *bb)
          if (auto *ii = dyn_cast<IntrinsicInst>(&i))
            if (ii->getIntrinsicID() == Intrinsic::experimental_noalias_scope_decl) dead.push_back(ii);
      }
    }
    for (Instruction *i : dead)
      i->eraseFromParent();
    if (dead.empty()) return PreservedAnalyses::all();
    PreservedAnalyses pa;
    pa.preserveSet<CFGAnalyses>();
    return pa;
  }
};

#ifdef CGRAPH_CPU_TSAN
// ThreadSanitizer leaves accesses outside address space 0 alone. On the host every
// OpenCL address space is ordinary memory, so TSan builds move each load, store and
// atomic to address space 0 (the same address on x86) before TSan instruments them.
struct FlatAccessesPass : PassInfoMixin<FlatAccessesPass> {
  PreservedAnalyses run(Function &f, FunctionAnalysisManager &) {
    bool changed = false;
    for (BasicBlock &bb : f)
      for (Instruction &i : bb) {
        unsigned op;
        if (isa<LoadInst>(i) || isa<AtomicRMWInst>(i) || isa<AtomicCmpXchgInst>(i))
          op = 0;
        else if (isa<StoreInst>(i))
          op = 1;
        else
          continue;
        auto *pt = dyn_cast<PointerType>(i.getOperand(op)->getType());
        if (!pt || pt->getAddressSpace() == 0) continue;
        // Through an integer: TSan looks through an addrspacecast to the original space.
        IRBuilder<> b(&i);
        Value *bits = b.CreatePtrToInt(i.getOperand(op), b.getInt64Ty());
        i.setOperand(op, b.CreateIntToPtr(bits, PointerType::getWithSamePointeeType(pt, 0)));
        changed = true;
      }
    return changed ? PreservedAnalyses::none() : PreservedAnalyses::all();
  }
};
#endif

// x86: a sequentially consistent read-modify-write that leaves the word as it is and
// whose old value is used (`atom_or(p, 0)`: atomics64.cl reads its shared counters so)
// becomes MFENCE and a load in LLVM 14's code generator
// (X86TargetLowering::lowerIdempotentRMWIntoFencedLoad), and MFENCE costs about two
// locked instructions on the EPYC (atomics64: 2 of them per work-item were ~12% of its
// time). Each becomes the loop LLVM gives an `or` of any other value: a relaxed load,
// then `lock cmpxchg` of that value with itself, again while another work-item wrote
// in between. The successful swap reads the word's latest value and writes it back:
// the same seq_cst read-modify-write, one locked instruction. Runs after O3, which
// would fold the swap back. TSan builds have no atomicrmw left by then (calls).
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

Error runO3(Module &m, TargetMachine &tm) {
  LoopAnalysisManager lam;
  FunctionAnalysisManager fam;
  CGSCCAnalysisManager cgam;
  ModuleAnalysisManager mam;
  PipelineTuningOptions pto;
  pto.LoopVectorization = true;
  pto.SLPVectorization = true;
  PassBuilder pb(&tm, pto);
#ifdef CGRAPH_CPU_TSAN
  // ThreadSanitizer builds check the kernels' own loads and stores (two nodes of one
  // level writing one buffer is a race TSan must see). Instrumented first, on scalar
  // code: TSan skips accesses wider than 16 bytes, and its calls keep the vectorizers
  // from widening the accesses it checks.
  for (Function &f : m)
    if (!f.isDeclaration()) f.addFnAttr(Attribute::SanitizeThread);
  pb.registerPipelineStartEPCallback([](ModulePassManager &mpm, OptimizationLevel) {
    FunctionPassManager fpm;
    fpm.addPass(FlatAccessesPass());
    fpm.addPass(ThreadSanitizerPass());
    mpm.addPass(createModuleToFunctionPassAdaptor(std::move(fpm)));
  });
#endif
  pb.registerVectorizerStartEPCallback([](FunctionPassManager &fpm, OptimizationLevel) {
    fpm.addPass(WorkItemScopesPass());
  });
  fam.registerPass([&] { return tm.getTargetIRAnalysis(); });
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  ModulePassManager mpm = pb.buildPerModuleDefaultPipeline(OptimizationLevel::O3);
  // Unroll-and-jam of the work-item x loops that ask for it (emitLoop's
  // llvm.loop.unroll_and_jam.count: the x loop around a kernel loop, matmul's k) turns
  // per-item scalar code into contiguous loads the SLP vectorizer packs. LLVM 14's O3
  // adds the pass only under its process-wide `enable-unroll-and-jam` option, which
  // would change every other pipeline of the process (the cuda and hip lowerings')
  // behind their cache keys, so this pipeline adds it itself, after O3, with the
  // clean-up O3 runs after it (instruction combining, hoisting of what the jammed
  // work-items share).
  {
    FunctionPassManager jam;
    jam.addPass(createFunctionToLoopPassAdaptor(LoopUnrollAndJamPass(OptimizationLevel::O3.getSpeedupLevel())));
    jam.addPass(InstCombinePass());
    jam.addPass(createFunctionToLoopPassAdaptor(LICMPass(), /*UseMemorySSA=*/true, /*UseBlockFrequencyInfo=*/true));
    mpm.addPass(createModuleToFunctionPassAdaptor(std::move(jam)));
  }
  // LLVM 14's O3 runs the SLP vectorizer before unroll-and-jam: once more after it, so
  // the jammed work-items (emitLoop) become vectors.
  {
    FunctionPassManager late;
    late.addPass(SLPVectorizerPass());
    late.addPass(VectorCombinePass());
    late.addPass(InstCombinePass());
    late.addPass(SimplifyCFGPass());
    mpm.addPass(createModuleToFunctionPassAdaptor(std::move(late)));
  }
  mpm.run(m, mam);
  interleaveMarkedLoops(m, tm, kIlpCount);
  return Error::success();
}

} // namespace

std::string hostCompileOptions() {
  initTargets();
  // The builtin library is linked into every object: a changed library must miss.
  static const size_t builtinsHash = std::hash<std::string_view>{}(
      std::string_view(reinterpret_cast<const char *>(kBuiltinsBitcode), kBuiltinsBitcodeSize));
  // cgraph-cpu-7: `.info` has nine fields (cgraph-cpu-6 objects had eight).
  std::string s = "cgraph-cpu-7 llvm-14 builtins=" + std::to_string(builtinsHash) +
                  " cpu=" + sys::getHostCPUName().str();
  s += " jam=" + std::to_string(unsigned(kJamCount)) + " ilp=" + std::to_string(unsigned(kIlpCount));
  StringMap<bool> features;
  if (sys::getHostCPUFeatures(features)) {
    std::vector<std::string> on;
    for (auto &f : features)
      if (f.second) on.push_back(f.first().str());
    std::sort(on.begin(), on.end());
    s += " +";
    for (auto &f : on)
      s += f + ",";
  }
  return s;
}

Expected<std::vector<uint8_t>> lowerToObject(const uint8_t *spirv, size_t size,
                                             const std::string &moduleName,
                                             const LocalSpecialization *spec, bool checkBounds,
                                             const std::string *dumpDir, bool fibers) {
  initTargets();
  LLVMContext ctx;
  // LLVM's diagnostics never reach stderr (lib/ never prints): errors are kept and fail
  // the lowering below; warnings, remarks and optimization failures (the x loop asks for
  // unroll-and-jam whether or not it can apply) are dropped.
  std::string diagnosed;
  ctx.setDiagnosticHandlerCallBack(
      [](const DiagnosticInfo &d, void *out) {
        if (d.getSeverity() != DS_Error) return;
        std::string &text = *static_cast<std::string *>(out);
        raw_string_ostream os(text);
        DiagnosticPrinterRawOStream dp(os);
        if (!text.empty()) os << "; ";
        d.print(dp);
      },
      &diagnosed);
  auto mod = spirvToLLVM(ctx, spirv, size);
  if (!mod) return mod.error().withContext("module '" + moduleName + "'");
  Module &m = **mod;
  CGRAPH_RETURN_IF_ERROR(linkBuiltins(m).withContext("module '" + moduleName + "'"));
  lowerAtomicPeeks(m);

  std::vector<Function *> kernels;
  for (Function &f : m) {
    if (f.getCallingConv() == CallingConv::SPIR_KERNEL && !f.isDeclaration()) {
      kernels.push_back(&f);
      continue;
    }
    if (f.isDeclaration()) continue;
    f.removeFnAttr(Attribute::NoInline);
    f.removeFnAttr(Attribute::OptimizeNone);
    f.addFnAttr(Attribute::AlwaysInline);
    f.setLinkage(GlobalValue::InternalLinkage);
  }
  // Calls keep their own calling convention: make everything C for the host.
  for (Function &f : m) {
    if (f.getCallingConv() == CallingConv::SPIR_FUNC) f.setCallingConv(CallingConv::C);
    for (BasicBlock &bb : f)
      for (Instruction &i : bb)
        if (auto *c = dyn_cast<CallBase>(&i))
          if (c->getCallingConv() == CallingConv::SPIR_FUNC) c->setCallingConv(CallingConv::C);
  }

  LLVMContext &lc = m.getContext();
  Type *i64 = Type::getInt64Ty(lc);
  Type *i8p = Type::getInt8PtrTy(lc);
  FunctionCallee barrierFn = m.getOrInsertFunction("cgraph_cpu_barrier", Type::getVoidTy(lc));
  FunctionCallee boundsFailFn;
  if (checkBounds) {
    boundsFailFn =
        m.getOrInsertFunction("cgraph_cpu_bounds_fail", Type::getVoidTy(lc), i64, i64, i64, i64, i64, i64);
    auto *f = cast<Function>(boundsFailFn.getCallee());
    f->addFnAttr(Attribute::Cold);
    f->addFnAttr(Attribute::NoUnwind);
  }

  if (spec) {
    // One kernel, specialized: the others are not lowered.
    auto it = std::find_if(kernels.begin(), kernels.end(),
                           [&](Function *k) { return k->getName() == spec->kernel; });
    if (it == kernels.end())
      return makeError("module '" + moduleName + "' has no kernel '" + spec->kernel + "'");
    for (Function *k : kernels)
      if (k != *it && k->use_empty()) k->eraseFromParent();
    kernels = {*it};
  }
  std::vector<KernelPlan> plans;
  for (Function *k : kernels) {
    if (!k->use_empty())
      return makeError("module '" + moduleName + "': kernel '" + k->getName().str() +
                       "' is called from another function (not supported by the cpu backend)");
    KernelPlan plan;
    plan.name = k->getName().str();
    if (spec)
      for (int d = 0; d < 3; ++d)
        plan.fixedLocal[d] = std::max<uint64_t>(spec->local[d], 1);
    plan.numParams = uint32_t(k->arg_size());
    std::vector<Type *> params;
    for (Argument &a : k->args()) {
      if (a.hasByValAttr() ||
          (!a.getType()->isPointerTy() && m.getDataLayout().getTypeAllocSize(a.getType()) > 8))
        return makeError("module '" + moduleName + "': kernel '" + plan.name + "': parameter " +
                         std::to_string(a.getArgNo()) +
                         " is passed by value and larger than 8 bytes (not supported)");
      params.push_back(a.getType());
    }
    for (int d = 0; d < 3; ++d)
      params.push_back(i64);
    params.push_back(i8p);
    for (uint32_t d = 0; d < kCtxFields; ++d)
      params.push_back(i64);
    Function *body = Function::Create(FunctionType::get(Type::getVoidTy(lc), params, false),
                                      GlobalValue::InternalLinkage, plan.name + ".body", m);
    body->getBasicBlockList().splice(body->end(), k->getBasicBlockList());
    for (unsigned i = 0; i < k->arg_size(); ++i) {
      k->getArg(i)->replaceAllUsesWith(body->getArg(i));
      body->getArg(i)->takeName(k->getArg(i));
      // `restrict` (noalias) and the like: once the body is inlined into the wrapper,
      // the inliner turns noalias parameters into scoped alias metadata, which is what
      // lets the vectorizers and unroll-and-jam reorder a kernel's loads and stores.
      AttributeSet pa = k->getAttributes().getParamAttrs(i);
      if (pa.hasAttributes()) body->addParamAttrs(i, AttrBuilder(lc, pa));
    }
    // AlwaysInline only once the wrapper calls it: the always-inliner erases dead ones.
    body->addFnAttr(Attribute::NoUnwind);
    plan.body = body;
    plans.push_back(plan);
  }
  for (Function *k : kernels)
    k->eraseFromParent();

  // Inline helpers and builtins into the bodies (OpenCL C has no recursion).
  {
    ModulePassManager mpm;
    mpm.addPass(AlwaysInlinerPass(false));
    ModuleAnalysisManager mam;
    PassBuilder pb;
    LoopAnalysisManager lam;
    FunctionAnalysisManager fam;
    CGSCCAnalysisManager cgam;
    pb.registerModuleAnalyses(mam);
    pb.registerCGSCCAnalyses(cgam);
    pb.registerFunctionAnalyses(fam);
    pb.registerLoopAnalyses(lam);
    pb.crossRegisterProxies(lam, fam, cgam, mam);
    mpm.run(m, mam);
  }

  SmallPtrSet<GlobalVariable *, 8> locals;
  for (GlobalVariable &g : m.globals())
    if (g.getAddressSpace() == 3) locals.insert(&g);

  for (KernelPlan &plan : plans) {
    Function *body = plan.body;
    unsigned base = plan.numParams;
    BodyArgs ba;
    for (int d = 0; d < 3; ++d)
      ba.l[d] = body->getArg(base + d);
    ba.local = body->getArg(base + 3);
    for (uint32_t d = 0; d < kCtxFields; ++d)
      ba.ctx[d] = body->getArg(base + 4 + d);
    plan.barrier = replaceWorkItemCalls(*body, ba, barrierFn, plan.groupShape);
    for (unsigned i = 0; i < plan.numParams; ++i)
      if (auto *pt = dyn_cast<PointerType>(body->getArg(i)->getType()))
        if (pt->getAddressSpace() == 3) plan.groupShape = true;

    if (!locals.empty()) {
      expandConstantExprs(*body, locals);
      std::map<GlobalVariable *, Value *> ptrs;
      IRBuilder<> b(&*body->getEntryBlock().getFirstInsertionPt());
      for (BasicBlock &bb : *body)
        for (Instruction &i : bb)
          for (unsigned k = 0; k < i.getNumOperands(); ++k) {
            auto *g = dyn_cast<GlobalVariable>(i.getOperand(k));
            if (!g || !locals.count(g)) continue;
            auto it = ptrs.find(g);
            if (it == ptrs.end()) {
              uint64_t align = std::max<uint64_t>(g->getAlign() ? g->getAlign()->value() : 16, 16);
              uint64_t off = alignTo(plan.staticLocal, align);
              plan.staticLocal = off + m.getDataLayout().getTypeAllocSize(g->getValueType());
              Value *p = b.CreateConstInBoundsGEP1_64(b.getInt8Ty(), ba.local, off);
              p = b.CreatePointerBitCastOrAddrSpaceCast(p, g->getType());
              it = ptrs.emplace(g, p).first;
            }
            i.setOperand(k, it->second);
          }
    }
    if (plan.staticLocal) plan.groupShape = true;
    if (checkBounds) {
      plan.checkBounds = true;
      promoteAllocas(*body); // parameters' pointers followed through SSA values, not allocas
      BoundsInstrumenter(*body, plan.numParams, ba.ctx[kCtxBounds], boundsFailFn).run();
    }
    {
      SmallVector<std::pair<const BasicBlock *, const BasicBlock *>, 4> backEdges;
      FindFunctionBackedges(*body, backEdges);
      plan.loops = !backEdges.empty();
      plan.longBody = !plan.loops && body->getInstructionCount() >= kLongBody;
      plan.straight = plan.longBody && std::all_of(body->begin(), body->end(), [](BasicBlock &bb) {
                        auto *br = dyn_cast<BranchInst>(bb.getTerminator());
                        return isa<ReturnInst>(bb.getTerminator()) || (br && br->isUnconditional());
                      });
      guardDivisions(*body);
      plan.itemCost = itemCost(*body);
      plan.contended = contendedAtomics(*body, plan.numParams);
    }
    std::string whyNot;
    if (plan.barrier && !fibers) promoteAllocas(*body);
    if (plan.barrier && !fibers &&
        splitAtBarriers(*body, *cast<Function>(barrierFn.getCallee()), plan.numParams, plan.regions,
                        whyNot)) {
      emitWrappers(m, plan);
      for (Function *r : plan.regions.regions)
        r->addFnAttr(Attribute::AlwaysInline);
      body->eraseFromParent();
      plan.body = nullptr;
      continue;
    }
    emitWrappers(m, plan);
    body->addFnAttr(Attribute::AlwaysInline);
  }
  for (GlobalVariable *g : locals)
    if (g->use_empty()) g->eraseFromParent();

  // Anything still calling a work-item builtin did not come through a kernel body.
  for (Function &f : m)
    if (f.isDeclaration() && classify(f.getName()) != WiFunc::None && !f.use_empty())
      return makeError("module '" + moduleName + "': '" + f.getName().str() +
                       "' is called outside a kernel (not supported by the cpu backend)");

  for (Function &f : m)
    if (!f.isDeclaration() && !f.getName().startswith(kWrapperPrefix))
      f.setLinkage(GlobalValue::InternalLinkage);

  auto tm = hostMachine();
  if (!tm) return tm.error();
  m.setTargetTriple((*tm)->getTargetTriple().str());
  m.setDataLayout((*tm)->createDataLayout());
  {
    std::string msg;
    raw_string_ostream os(msg);
    if (verifyModule(m, &os))
      return makeError("module '" + moduleName + "': lowered IR is invalid: " + os.str());
  }
  CGRAPH_RETURN_IF_ERROR(runO3(m, **tm));
  expandIdempotentRmws(m, **tm);
  for (Function &f : m)
    if (f.isDeclaration() && !f.isIntrinsic() && !f.use_empty() && f.getName().startswith("_Z"))
      return makeError("module '" + moduleName + "': builtin '" + f.getName().str() +
                       "' is not provided by the cpu backend");

  // Debugging aid (CpuOptions::dumpDir): the optimized IR of every module compiled (not
  // cached) as <dir>/<module>.ll (llc-14 -mcpu=native turns it into asm).
  if (dumpDir) {
    const std::string &dir = *dumpDir;
    std::error_code ec;
    std::string file = moduleName;
    for (char &c : file)
      if (c == '/' || c == '\\') c = '_';
    raw_fd_ostream ll(dir + "/" + file + ".ll", ec);
    if (!ec) m.print(ll, nullptr);
  }
  SmallVector<char, 0> obj;
  raw_svector_ostream os(obj);
  legacy::PassManager pm;
  if ((*tm)->addPassesToEmitFile(pm, os, nullptr, CGFT_ObjectFile))
    return makeError("module '" + moduleName + "': the host target cannot emit object files");
  pm.run(m);
  if (!diagnosed.empty()) return makeError("module '" + moduleName + "': code generation failed: " + diagnosed);
  return std::vector<uint8_t>(obj.begin(), obj.end());
}

} // namespace cgraph::cpu
