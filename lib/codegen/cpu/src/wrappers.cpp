// The work-group wrappers of a lowered kernel (internal.h's ABI): the functions the
// launcher calls, which load the kernel's arguments and the launch geometry and run the
// body (inlined later by O3) for every work-item of one group.
//   - barrier-free kernels: `cgk.<k>.wg`, one z/y/x loop over the group; its x loop is
//     the one the vectorizers see, and it is cut where the body allows (guards.h: the
//     work-items a guard lets through, runs of one quotient, the range where no clamp
//     fires), interleaved for long work-items (ilp.h) and jammed around kernel loops;
//   - kernels cut at their barriers (barrier_regions.h): `cgk.<k>.wg` runs one such loop
//     per region, dispatching on the region the work-items reached;
//   - kernels run as fibers: `cgk.<k>.wi`, one work-item;
// and `cgk.<k>.info`, what the launcher needs to know of the kernel.
#include "guards.h"
#include "ilp.h"
#include "lowering_internal.h"

#include <llvm/IR/Constants.h>
#include <llvm/IR/Instructions.h>
#include <llvm/Transforms/Utils/Cloning.h>

#include <algorithm>
#include <cstddef>
#include <string>
#include <type_traits>
#include <vector>

namespace cgraph::codegen::cpu {

using namespace llvm;

namespace {

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
// it run `g.low`, the rest `orig` (all of them where the count is not usable; else those
// that fail it where they do more than return (WorkItemGuard::idleRest), else none, or
// with `tail` the last one: a barrier region's next region and carried values).
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
  Value *rest = !g.idleRest ? n1
               : tail      ? b.CreateSelect(b.CreateICmpULT(n1, lx), b.CreateSub(lx, b.getInt64(1)), lx)
                           : lx;
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

void setNoAlias(Function *f, unsigned n) {
  for (unsigned i = 0; i < n; ++i)
    f->addParamAttr(i, Attribute::NoAlias);
}

// `cgk.<k>.wg(args, ctx, local)`: the entry point of one work-group (internal.h WgLoopFn).
Function *declareGroupWrapper(Module &m, const KernelPlan &k) {
  LLVMContext &ctx = m.getContext();
  Type *i64p = PointerType::get(Type::getInt64Ty(ctx), 0);
  Type *i8p = Type::getInt8PtrTy(ctx);
  auto *ft = FunctionType::get(Type::getVoidTy(ctx), {i64p, i64p, i8p}, false);
  Function *w =
      Function::Create(ft, GlobalValue::ExternalLinkage, kWrapperPrefix + k.name + ".wg", m);
  setNoAlias(w, 3);
  w->addFnAttr(Attribute::NoUnwind);
  return w;
}

// The searches that cut a barrier-free kernel's x loop (guards.h), each giving a clone of
// the body: a work-item guard (`guard.low`), runs of one quotient (`div.seg`, searched in
// the guard's clone; `guard.low` is the body itself where there is no guard), clamped x
// indices (`clamps.inner`, where there are no division runs). A long body (interleaved
// x loop) is searched for clamps only, and keeps its guard only with them.
void findXLoopCuts(const KernelPlan &k, WorkItemGuard &guard, XDivision &div, XClamps &clamps) {
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
}

// Barrier-free kernels: `cgk.<k>.wg` runs the body for every work-item of the group in
// one z/y/x loop whose x loop findXLoopCuts() may cut. Returns a work-item's cost for
// `.info`: the division-run clone's where it runs (one division per run).
uint64_t emitLoopWrapper(Module &m, const KernelPlan &k) {
  uint64_t cost = k.itemCost;
  Function *w = declareGroupWrapper(m, k);
  IRBuilder<> b(BasicBlock::Create(m.getContext(), "entry", w));
  BodyArgs ba;
  std::vector<Value *> args =
      loadArgs(b, k.body, k.numParams, w->getArg(0), w->getArg(1), w->getArg(2), ba,
               k.fixedLocal[0] ? k.fixedLocal : nullptr, k.checkBounds);
  MDNode *group = nullptr;
  WorkItemGuard guard;
  XDivision div;
  std::vector<Value *> divExtra;
  XClamps clamps;
  findXLoopCuts(k, guard, div, clamps);
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
  return cost;
}

// Before a region wrapper is emitted: each region's allocas promoted and loops rotated
// (rotate_loops.cpp), its work-item guard searched (carried-value pointers from
// `firstOut` on), and its shared accesses and those of its guard's clone tagged
// parallel in `group`. Returns the guards.
std::vector<WorkItemGuard> prepareRegions(const KernelPlan &k, unsigned firstOut, MDNode *&group) {
  std::vector<WorkItemGuard> guards(k.regions.regions.size());
  for (size_t r = 0; r < k.regions.regions.size(); ++r) {
    Function *rf = k.regions.regions[r];
    promoteAllocas(*rf);
    rotateLoops(*rf);
    findWorkItemGuard(*rf, k.numParams, firstOut, guards[r]);
    tagParallelAccesses(*rf, k.numParams, firstOut, group);
    if (guards[r].low) tagParallelAccesses(*guards[r].low, k.numParams, firstOut, group);
  }
  return guards;
}

// Kernels cut at their barriers: region dispatch. `cgk.<k>.wg` runs region `cur` for
// every work-item, then the region they reached, until they leave the kernel.
void emitRegionWrapper(Module &m, const KernelPlan &k) {
  LLVMContext &ctx = m.getContext();
  Function *w = declareGroupWrapper(m, k);
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
  std::vector<WorkItemGuard> guards = prepareRegions(k, firstOut, group);
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
}

// Kernels with barriers run as fibers: `cgk.<k>.wi(args, ctx, local, lx, ly, lz)` runs
// one work-item (internal.h WiFn).
void emitFiberWrapper(Module &m, const KernelPlan &k) {
  LLVMContext &ctx = m.getContext();
  Type *i64 = Type::getInt64Ty(ctx);
  Type *i64p = PointerType::get(i64, 0);
  Type *i8p = Type::getInt8PtrTy(ctx);
  auto *ft = FunctionType::get(Type::getVoidTy(ctx), {i64p, i64p, i8p, i64, i64, i64}, false);
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

// `cgk.<k>.info` (internal.h): the kernel's barrier mode and what the launcher plans
// with; `cost`: a work-item's relative cost.
void emitInfo(Module &m, const KernelPlan &k, uint64_t cost) {
  Type *i64 = Type::getInt64Ty(m.getContext());
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

} // namespace

void emitWrappers(Module &m, const KernelPlan &k) {
  uint64_t cost = k.itemCost; // the launcher's measure of a work-item (.info)
  if (!k.barrier)
    cost = emitLoopWrapper(m, k);
  else if (!k.regions.regions.empty())
    emitRegionWrapper(m, k);
  else
    emitFiberWrapper(m, k);
  emitInfo(m, k, cost);
}

} // namespace cgraph::codegen::cpu
