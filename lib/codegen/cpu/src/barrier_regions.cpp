// Barrier regions: see barrier_regions.h. Steps, on the inlined kernel body:
//   1. cut each barrier call into a block of its own ([barrier; br next]);
//   2. a new entry block "setup" holds every alloca and every instruction that depends
//      only on the body's parameters and can be executed anywhere (ids, sizes, __local
//      addresses): each region recomputes them;
//   3. phis and values used outside their block become allocas (reg2mem), so no SSA
//      value crosses a block boundary outside setup;
//   4. an alloca whose value can be read after a barrier before it is written (backward
//      liveness over loads and stores at the barrier blocks), or that is used through
//      anything but whole loads and stores, becomes a context array; the rest stay
//      allocas (per region, promoted back to registers by the O3 pipeline);
//   5. one clone of the body per region: setup branches to the region's start, barrier
//      blocks return their region number, returns return kRegionExit.
#include "barrier_regions.h"

#include "cgraph/codegen/cpu.h"

#include <llvm/ADT/BitVector.h>
#include <llvm/ADT/DepthFirstIterator.h>
#include <llvm/ADT/PostOrderIterator.h>
#include <llvm/Analysis/PostDominators.h>
#include <llvm/Analysis/ValueTracking.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/MDBuilder.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/CommandLine.h>
#include <llvm/Transforms/Utils/BasicBlockUtils.h>
#include <llvm/Transforms/Utils/Cloning.h>
#include <llvm/Transforms/Utils/Local.h>
#include <llvm/Transforms/Utils/ValueMapper.h>

#include <algorithm>
#include <functional>
#include <map>
#include <set>

namespace cgraph::codegen::cpu {

using namespace llvm;

namespace {
// Walks the addresses derived from `roots` through GEPs, bitcasts and address-space
// casts, calling `use(user, address, more)` for every other use of one; `use` may add
// addresses to `more` and returns false to stop the walk, which then returns false.
bool walkAddressUses(std::vector<Value *> work,
                     const std::function<bool(Instruction *, Value *, std::vector<Value *> &)> &use) {
  SmallPtrSet<Value *, 32> seen;
  while (!work.empty()) {
    Value *v = work.back();
    work.pop_back();
    if (!seen.insert(v).second) continue;
    for (User *u : v->users()) {
      auto *i = dyn_cast<Instruction>(u);
      if (!i) return false;
      if (isa<GetElementPtrInst>(i) || isa<BitCastInst>(i) || isa<AddrSpaceCastInst>(i))
        work.push_back(i);
      else if (!use(i, v, work))
        return false;
    }
  }
  return true;
}

// The work-items' context arrays (step 4) are the backend's own: no access of the
// kernel reaches them (they lie past its __local variables in the group's block, and
// an access out of a __local array's bounds is undefined). Said to LLVM as one alias
// scope: accesses through `ctxPtrs` are in it, every other load, store, atomic and
// memory intrinsic of `body` is noalias with it. Without it a value live across a
// barrier, kept in its context slot, is stored to memory on every trip of a loop that
// reads __local memory (the same block): loop_result's sum stayed a store per
// iteration and its loop was never vectorized. Where a context pointer escapes (a
// use other than a load, a store to it, or an address computation), nothing is marked.
void markContextScope(Function &body, const std::vector<Value *> &ctxPtrs) {
  SmallPtrSet<Instruction *, 32> inScope;
  const bool whole = walkAddressUses(ctxPtrs, [&](Instruction *i, Value *v, std::vector<Value *> &) {
    auto *st = dyn_cast<StoreInst>(i);
    if (!isa<LoadInst>(i) && (!st || st->getValueOperand() == v)) return false; // escapes
    inScope.insert(i);
    return true;
  });
  if (!whole) return;
  LLVMContext &c = body.getContext();
  MDBuilder mdb(c);
  MDNode *domain = mdb.createAnonymousAliasScopeDomain("cgraph.cpu.context");
  MDNode *scopes = MDNode::get(c, {mdb.createAnonymousAliasScope(domain, "cgraph.cpu.context.slots")});
  for (BasicBlock &bb : body)
    for (Instruction &i : bb) {
      if (inScope.count(&i)) {
        i.setMetadata(LLVMContext::MD_alias_scope,
                      MDNode::concatenate(i.getMetadata(LLVMContext::MD_alias_scope), scopes));
      } else if (isa<LoadInst>(i) || isa<StoreInst>(i) || isa<AtomicRMWInst>(i) || isa<AtomicCmpXchgInst>(i) ||
                 isa<MemIntrinsic>(i)) {
        i.setMetadata(LLVMContext::MD_noalias, MDNode::concatenate(i.getMetadata(LLVMContext::MD_noalias), scopes));
      }
    }
}

// Whole-value loads and stores only (the liveness below treats a store as a full kill).
bool onlyWholeAccesses(AllocaInst *a) {
  for (User *u : a->users()) {
    if (auto *l = dyn_cast<LoadInst>(u)) {
      if (l->getType() != a->getAllocatedType() || l->isVolatile()) return false;
    } else if (auto *s = dyn_cast<StoreInst>(u)) {
      if (s->getPointerOperand() != a || s->getValueOperand()->getType() != a->getAllocatedType() ||
          s->isVolatile())
        return false;
    } else {
      return false;
    }
  }
  return true;
}

// Could `i` be recomputed at the top of the body? Pure, speculatable, and every operand a
// constant, a parameter or an instruction already moved there.
bool hoistable(Instruction &i, BasicBlock *setup) {
  if (isa<PHINode>(i) || isa<AllocaInst>(i) || i.isTerminator() || i.mayReadOrWriteMemory() ||
      !isSafeToSpeculativelyExecute(&i))
    return false;
  for (Value *op : i.operands()) {
    if (isa<Constant>(op) || isa<Argument>(op)) continue;
    auto *oi = dyn_cast<Instruction>(op);
    if (!oi || oi->getParent() != setup) return false;
  }
  return true;
}

// Which of the `candidates` (whole-access allocas live across a barrier) hold the same
// value in every work-item of a group at every barrier: a fixed point that starts from
// "all of them" and removes an alloca when one of its stores writes a varying value or
// runs under varying control. Varying: the local ids (arguments `firstId`..+2), every
// load except from a uniform alloca, calls other than memory-free intrinsics, and
// anything computed from a varying value. Varying control: the blocks a branch on a
// varying condition reaches before its immediate post-dominator. OpenCL makes barriers
// uniform, so a uniform value stored before a barrier is the same for all items after it.
std::set<AllocaInst *> uniformAllocas(Function &body, unsigned firstId,
                                      const std::vector<AllocaInst *> &candidates) {
  std::set<AllocaInst *> uniform(candidates.begin(), candidates.end());
  PostDominatorTree pdt(body);
  for (bool changed = true; changed;) {
    changed = false;
    std::set<const Value *> varying;
    for (unsigned d = 0; d < 3; ++d)
      varying.insert(body.getArg(firstId + d));
    auto isVarying = [&](Instruction &i) {
      if (auto *l = dyn_cast<LoadInst>(&i))
        return !uniform.count(dyn_cast<AllocaInst>(l->getPointerOperand()));
      if (auto *call = dyn_cast<CallBase>(&i)) {
        auto *ii = dyn_cast<IntrinsicInst>(call);
        if (!ii || call->mayReadOrWriteMemory()) return true;
      } else if (i.mayReadOrWriteMemory() || isa<AllocaInst>(i) || isa<PHINode>(i)) {
        return true; // an alloca's address is the work-item's own; no phis outside setup
      }
      for (const Value *op : i.operands())
        if (varying.count(op)) return true;
      return false;
    };
    // Values: iterate to a fixed point (operands can come from later blocks via allocas
    // only, so two passes in reverse post-order settle it; loop until stable anyway).
    ReversePostOrderTraversal<Function *> rpo(&body);
    for (bool grew = true; grew;) {
      grew = false;
      for (BasicBlock *bb : rpo)
        for (Instruction &i : *bb)
          if (!varying.count(&i) && !i.getType()->isVoidTy() && isVarying(i)) {
            varying.insert(&i);
            grew = true;
          }
    }
    std::set<const BasicBlock *> divergent;
    for (BasicBlock &bb : body) {
      Instruction *t = bb.getTerminator();
      Value *cond = nullptr;
      if (auto *br = dyn_cast<BranchInst>(t)) {
        if (br->isConditional()) cond = br->getCondition();
      } else if (auto *sw = dyn_cast<SwitchInst>(t)) {
        cond = sw->getCondition();
      }
      if (!cond || !varying.count(cond)) continue;
      DomTreeNode *node = pdt.getNode(&bb);
      const BasicBlock *stop =
          node && node->getIDom() ? node->getIDom()->getBlock() : nullptr;
      std::vector<const BasicBlock *> work(succ_begin(&bb), succ_end(&bb));
      while (!work.empty()) {
        const BasicBlock *w = work.back();
        work.pop_back();
        if (w == stop || !divergent.insert(w).second) continue;
        work.insert(work.end(), succ_begin(w), succ_end(w));
      }
    }
    for (AllocaInst *a : candidates) {
      if (!uniform.count(a)) continue;
      for (User *u : a->users())
        if (auto *st = dyn_cast<StoreInst>(u))
          if (varying.count(st->getValueOperand()) || divergent.count(st->getParent())) {
            uniform.erase(a);
            changed = true;
            break;
          }
    }
  }
  return uniform;
}

// The barrier calls of `body` in `barriers`, or false with `whyNot` for a body the
// regions cannot take: an alloca outside the entry block or of dynamic size, a barrier
// reached through invoke, indirect branches, or no barrier at all.
bool findBarriers(Function &body, Function &barrier, std::vector<CallInst *> &barriers,
                  std::string &whyNot) {
  for (BasicBlock &bb : body)
    for (Instruction &i : bb) {
      if (auto *a = dyn_cast<AllocaInst>(&i)) {
        if (&bb != &body.getEntryBlock() || !a->isStaticAlloca()) {
          whyNot = "an alloca outside the entry block or of dynamic size";
          return false;
        }
      } else if (auto *call = dyn_cast<CallBase>(&i)) {
        if (call->getCalledFunction() == &barrier) {
          if (!isa<CallInst>(call)) {
            whyNot = "a barrier reached through invoke";
            return false;
          }
          barriers.push_back(cast<CallInst>(call));
        }
      } else if (isa<IndirectBrInst>(i) || isa<CallBrInst>(i)) {
        whyNot = "indirect branches";
        return false;
      }
    }
  if (barriers.empty()) {
    whyNot = "no barrier";
    return false;
  }
  return true;
}

// Lifetime markers would be meaningless on context arrays; regions do not need them.
void eraseLifetimeMarkers(Function &body) {
  std::vector<Instruction *> dead;
  for (BasicBlock &bb : body)
    for (Instruction &i : bb)
      if (auto *ii = dyn_cast<IntrinsicInst>(&i))
        if (ii->isLifetimeStartOrEnd()) dead.push_back(ii);
  for (Instruction *i : dead)
    i->eraseFromParent();
}

// Step 1: each barrier call cut into a block of its own (`barrierBlocks`); the block
// after each (`starts`) is where a region starts.
void cutBarrierBlocks(const std::vector<CallInst *> &barriers, std::vector<BasicBlock *> &barrierBlocks,
                      std::vector<BasicBlock *> &starts) {
  for (CallInst *call : barriers) {
    BasicBlock *bb = call->getParent()->splitBasicBlock(call, "barrier");
    BasicBlock *next = bb->splitBasicBlock(call->getNextNode(), "after.barrier");
    barrierBlocks.push_back(bb);
    starts.push_back(next);
  }
}

// Step 2: the allocas of `oldEntry`, then the parameter-only computations in reverse
// post-order, moved into `setup` (before its branch `setupBr` to `oldEntry`).
void fillSetup(Function &body, BasicBlock *setup, BasicBlock *oldEntry, BranchInst *setupBr) {
  std::vector<AllocaInst *> allocas;
  for (Instruction &i : *oldEntry)
    if (auto *a = dyn_cast<AllocaInst>(&i)) allocas.push_back(a);
  for (AllocaInst *a : allocas)
    a->moveBefore(setupBr);
  ReversePostOrderTraversal<Function *> rpo(&body);
  for (BasicBlock *bb : rpo) {
    if (bb == setup) continue;
    for (Instruction &i : make_early_inc_range(*bb))
      if (hoistable(i, setup)) i.moveBefore(setupBr);
  }
}

// Step 3: reg2mem outside setup. Phis first: each becomes a load at the top of its block,
// which is then an ordinary value and, like any other, demoted below when it is used
// in another block. (A phi's own uses must not be left out: the region functions get
// new entry points, so a block that dominated a use in the body need not dominate it,
// or even be reachable, in a region that starts between them, e.g. a loop result
// used after a barrier that follows the loop.)
void demoteOutsideSetup(Function &body, BasicBlock *setup, BranchInst *setupBr) {
  std::vector<PHINode *> phis;
  for (BasicBlock &bb : body)
    if (&bb != setup)
      for (PHINode &p : bb.phis())
        phis.push_back(&p);
  for (PHINode *p : phis)
    DemotePHIToStack(p, setupBr);
  std::vector<Instruction *> crossing;
  for (BasicBlock &bb : body) {
    if (&bb == setup) continue;
    for (Instruction &i : bb)
      for (User *u : i.users())
        if (cast<Instruction>(u)->getParent() != &bb) {
          crossing.push_back(&i);
          break;
        }
  }
  for (Instruction *i : crossing)
    DemoteRegToStack(*i, false, setupBr);
}

// Step 4's liveness: the whole-access allocas (`index`: alloca -> bit) that may be read
// after a barrier before they are written, from backward liveness over their loads and
// stores, live in at the `barrierBlocks`.
BitVector liveAtBarriers(Function &body, const std::map<AllocaInst *, unsigned> &index,
                         const std::vector<BasicBlock *> &barrierBlocks) {
  std::vector<BasicBlock *> blocks;
  std::map<BasicBlock *, unsigned> blockIndex;
  for (BasicBlock &bb : body) {
    blockIndex[&bb] = unsigned(blocks.size());
    blocks.push_back(&bb);
  }
  const unsigned nv = unsigned(index.size()), nb = unsigned(blocks.size());
  std::vector<BitVector> gen(nb, BitVector(nv)), kill(nb, BitVector(nv)), liveIn(nb, BitVector(nv));
  for (unsigned b = 0; b < nb; ++b)
    for (Instruction &i : *blocks[b]) {
      if (auto *l = dyn_cast<LoadInst>(&i)) {
        auto it = index.find(dyn_cast<AllocaInst>(l->getPointerOperand()));
        if (it != index.end() && !kill[b].test(it->second)) gen[b].set(it->second);
      } else if (auto *s = dyn_cast<StoreInst>(&i)) {
        auto it = index.find(dyn_cast<AllocaInst>(s->getPointerOperand()));
        if (it != index.end()) kill[b].set(it->second);
      }
    }
  for (bool changed = true; changed;) {
    changed = false;
    for (unsigned b = nb; b-- > 0;) {
      BitVector liveOut(nv);
      for (BasicBlock *s : successors(blocks[b]))
        liveOut |= liveIn[blockIndex[s]];
      BitVector in = kill[b];
      in.flip();
      in &= liveOut;
      in |= gen[b];
      if (in != liveIn[b]) {
        liveIn[b] = std::move(in);
        changed = true;
      }
    }
  }
  BitVector liveAtBarrier(nv);
  for (BasicBlock *bb : barrierBlocks)
    liveAtBarrier |= liveIn[blockIndex[bb]];
  return liveAtBarrier;
}

// The blocks where alloca `a` is accessed through its address: loads and stores through
// it or an address computed from it, memory intrinsics on it, and the loads and stores
// of the whole-access allocas (`index`) that step 3 demoted such an address into. False
// when the address is used any other way (stored elsewhere, passed, selected, compared).
bool accessBlocks(AllocaInst *a, const std::map<AllocaInst *, unsigned> &index,
                  SmallPtrSetImpl<BasicBlock *> &blocks) {
  return walkAddressUses({a}, [&](Instruction *i, Value *v, std::vector<Value *> &more) {
    blocks.insert(i->getParent());
    if (auto *st = dyn_cast<StoreInst>(i)) {
      if (st->getValueOperand() != v) return true;
      auto *slot = dyn_cast<AllocaInst>(st->getPointerOperand());
      if (!slot || !index.count(slot)) return false;
      for (User *su : slot->users()) { // the demoted address: its loads are addresses too
        blocks.insert(cast<Instruction>(su)->getParent());
        if (isa<LoadInst>(su)) more.push_back(su);
      }
      return true;
    }
    if (auto *mi = dyn_cast<MemIntrinsic>(i)) return !mi->isVolatile();
    return isa<LoadInst>(i);
  });
}

// Whether alloca `a`, accessed other than by whole loads and stores, can stay an alloca
// of each region: no barrier lies on a path from one of its accesses to another, so
// none of its contents is read in a region other than the one that wrote it (a
// work-item's private array filled and summed between two barriers). `reach[b]`: the
// blocks reachable from barrier block b, `reaches[b]` those that reach it.
bool regionLocal(AllocaInst *a, const std::map<AllocaInst *, unsigned> &index,
                 const std::vector<SmallPtrSet<BasicBlock *, 16>> &reach,
                 const std::vector<SmallPtrSet<BasicBlock *, 16>> &reaches) {
  SmallPtrSet<BasicBlock *, 16> blocks;
  if (!accessBlocks(a, index, blocks)) return false;
  auto meets = [&](const SmallPtrSet<BasicBlock *, 16> &set) {
    return std::any_of(blocks.begin(), blocks.end(), [&](BasicBlock *bb) { return set.count(bb) > 0; });
  };
  for (size_t b = 0; b < reach.size(); ++b)
    if (meets(reaches[b]) && meets(reach[b])) return false;
  return true;
}

// For each barrier block: the blocks reachable from it (`reach`) and those from which
// it is reachable (`reaches`), through any path, other barriers included (each set also
// holds the barrier block itself, which accesses nothing).
void barrierReach(const std::vector<BasicBlock *> &barrierBlocks,
                  std::vector<SmallPtrSet<BasicBlock *, 16>> &reach,
                  std::vector<SmallPtrSet<BasicBlock *, 16>> &reaches) {
  reach.resize(barrierBlocks.size());
  reaches.resize(barrierBlocks.size());
  for (size_t b = 0; b < barrierBlocks.size(); ++b) {
    for (BasicBlock *bb : depth_first(barrierBlocks[b]))
      reach[b].insert(bb);
    for (BasicBlock *bb : inverse_depth_first(barrierBlocks[b]))
      reaches[b].insert(bb);
  }
}

// Step 4's choice for the setup's `allocas`: an alloca live across a barrier and
// varying, or used other than by whole loads and stores where a barrier lies between
// its accesses (regionLocal), becomes a context array (`context`, largest alignment
// first); one live across a barrier and uniform is `carried` from region to region (its
// type in out.uniformTypes); the rest stay allocas.
void classifyAllocas(Function &body, unsigned numParams, const std::vector<AllocaInst *> &allocas,
                     const std::map<AllocaInst *, unsigned> &index, const BitVector &liveAtBarrier,
                     const std::vector<BasicBlock *> &barrierBlocks, std::vector<AllocaInst *> &context,
                     std::vector<AllocaInst *> &carried, BarrierRegions &out) {
  std::vector<SmallPtrSet<BasicBlock *, 16>> reach, reaches;
  barrierReach(barrierBlocks, reach, reaches);
  // Context arrays, largest alignment first so every array's offset (n * prefix) stays
  // aligned for any group size n.
  std::vector<AllocaInst *> crossing;
  for (AllocaInst *a : allocas) {
    auto it = index.find(a);
    if (it == index.end()) {
      if (!regionLocal(a, index, reach, reaches)) context.push_back(a);
    } else if (liveAtBarrier.test(it->second)) {
      crossing.push_back(a);
    }
  }
  // Uniform ones stay allocas in every region; the wrapper carries their value from
  // region to region (BarrierRegions::uniformTypes).
  // The analysis runs over every whole-access alloca, not only the crossing ones: a
  // crossing value is often copied from one that is not (a loop counter's phi, demoted
  // above, reloaded and demoted again where it is used in another block), and a load
  // from an alloca outside the candidates would count as varying.
  std::vector<AllocaInst *> whole;
  for (AllocaInst *a : allocas)
    if (index.count(a)) whole.push_back(a);
  const std::set<AllocaInst *> uniform = uniformAllocas(body, numParams, whole);
  for (AllocaInst *a : crossing)
    (uniform.count(a) ? carried : context).push_back(a);
  for (AllocaInst *a : carried)
    out.uniformTypes.push_back(a->getAllocatedType());
  std::stable_sort(context.begin(), context.end(), [](AllocaInst *x, AllocaInst *y) {
    return x->getAlign().value() > y->getAlign().value();
  });
}

// Step 4's context arrays: the `context` allocas replaced by each work-item's element of
// an array in the group's block (argument kCtxPrivate on), computed at the top of
// `setup`; the bytes per work-item in out.privateBytes.
void placeContextArrays(Function &body, unsigned numParams, BasicBlock *setup,
                        const std::vector<AllocaInst *> &context, BarrierRegions &out) {
  const DataLayout &dl = body.getParent()->getDataLayout();
  // At the top of setup: instructions hoisted there may use the allocas replaced here
  // (`&priv[lid % 4]`); the context pointers depend on parameters only.
  IRBuilder<> b(&*setup->getFirstInsertionPt());
  Argument *x = body.getArg(numParams), *y = body.getArg(numParams + 1),
           *z = body.getArg(numParams + 2);
  Argument *local = body.getArg(numParams + 3);
  auto ctxArg = [&](unsigned f) { return body.getArg(numParams + 4 + f); };
  Value *lx = ctxArg(kCtxLocalSize), *ly = ctxArg(kCtxLocalSize + 1),
        *lz = ctxArg(kCtxLocalSize + 2);
  Value *n = b.CreateMul(b.CreateMul(lx, ly), lz, "wi.count");
  Value *wi = b.CreateAdd(x, b.CreateMul(lx, b.CreateAdd(y, b.CreateMul(ly, z))), "wi.linear");
  Value *base = b.CreateInBoundsGEP(b.getInt8Ty(), local, ctxArg(kCtxPrivate), "wi.context");
  uint64_t prefix = 0;
  std::vector<Value *> ctxPtrs;
  for (AllocaInst *a : context) {
    const uint64_t align = a->getAlign().value();
    const uint64_t size =
        (a->getAllocationSizeInBits(dl)->getFixedSize() / 8 + align - 1) / align * align;
    Value *off =
        b.CreateAdd(b.CreateMul(n, b.getInt64(prefix)), b.CreateMul(wi, b.getInt64(size)));
    Value *p = b.CreateInBoundsGEP(b.getInt8Ty(), base, off);
    p = b.CreatePointerBitCastOrAddrSpaceCast(p, a->getType(), a->getName() + ".ctx");
    a->replaceAllUsesWith(p);
    ctxPtrs.push_back(p);
    prefix += size;
  }
  for (AllocaInst *a : context) // (after the loop: `b` inserts before the first one)
    a->eraseFromParent();
  out.privateBytes = prefix;
  markContextScope(body, ctxPtrs);
}

// Step 5: one function per region, cloned from the body: setup branches to the
// region's start, barrier blocks return their region number, returns return
// kRegionExit; `carried` values come in as arguments and go out through pointers.
void buildRegions(Function &body, BasicBlock *setup, BasicBlock *oldEntry,
                  const std::vector<BasicBlock *> &starts, const std::vector<BasicBlock *> &barrierBlocks,
                  const std::vector<AllocaInst *> &carried, BarrierRegions &out) {
  LLVMContext &c = body.getContext();
  Type *i32 = Type::getInt32Ty(c);
  std::vector<Type *> params(body.getFunctionType()->params().begin(),
                             body.getFunctionType()->params().end());
  for (AllocaInst *a : carried)
    params.push_back(a->getAllocatedType());
  for (AllocaInst *a : carried)
    params.push_back(PointerType::get(a->getAllocatedType(), 0));
  auto *ft = FunctionType::get(i32, params, false);
  const unsigned nb0 = body.arg_size(), nc = unsigned(carried.size());
  std::vector<BasicBlock *> regionStart{oldEntry};
  regionStart.insert(regionStart.end(), starts.begin(), starts.end());
  for (size_t r = 0; r < regionStart.size(); ++r) {
    Function *rf = Function::Create(ft, GlobalValue::InternalLinkage,
                                    body.getName() + ".r" + std::to_string(r), body.getParent());
    ValueToValueMapTy vmap;
    for (unsigned i = 0; i < body.arg_size(); ++i) {
      vmap[body.getArg(i)] = rf->getArg(i);
      rf->getArg(i)->setName(body.getArg(i)->getName());
    }
    SmallVector<ReturnInst *, 4> rets;
    CloneFunctionInto(rf, &body, vmap, CloneFunctionChangeType::LocalChangesOnly, rets);
    auto *s = cast<BasicBlock>(vmap[setup]);
    s->getTerminator()->eraseFromParent();
    BranchInst::Create(cast<BasicBlock>(vmap[regionStart[r]]), s);
    for (size_t j = 0; j < barrierBlocks.size(); ++j) {
      auto *bb = cast<BasicBlock>(vmap[barrierBlocks[j]]);
      while (!bb->empty())
        bb->back().eraseFromParent();
      ReturnInst::Create(c, ConstantInt::get(i32, j + 1), bb);
    }
    for (ReturnInst *ret : rets) {
      ReturnInst::Create(c, ConstantInt::get(i32, kRegionExit), ret);
      ret->eraseFromParent();
    }
    // Carried uniform values: in at the region's start, out at every return.
    for (unsigned u = 0; u < nc; ++u) {
      auto *a = cast<AllocaInst>(vmap[carried[u]]);
      new StoreInst(rf->getArg(nb0 + u), a, s->getTerminator());
      for (BasicBlock &bb : *rf)
        if (auto *ret = dyn_cast<ReturnInst>(bb.getTerminator()))
          new StoreInst(new LoadInst(a->getAllocatedType(), a, "", ret), rf->getArg(nb0 + nc + u),
                        ret);
    }
    removeUnreachableBlocks(*rf);
    out.regions.push_back(rf);
  }
}

} // namespace

bool splitAtBarriers(Function &body, Function &barrier, unsigned numParams, BarrierRegions &out,
                     std::string &whyNot) {
  LLVMContext &c = body.getContext();

  // Refusals first, while the body is untouched.
  std::vector<CallInst *> barriers;
  if (!findBarriers(body, barrier, barriers, whyNot)) return false;
  eraseLifetimeMarkers(body);

  // 1. barrier blocks
  std::vector<BasicBlock *> barrierBlocks, starts;
  cutBarrierBlocks(barriers, barrierBlocks, starts);

  // 2. setup block: allocas, then parameter-only computations in reverse post-order
  BasicBlock *oldEntry = &body.getEntryBlock();
  BasicBlock *setup = BasicBlock::Create(c, "setup", &body, oldEntry);
  BranchInst *setupBr = BranchInst::Create(oldEntry, setup);
  fillSetup(body, setup, oldEntry, setupBr);

  // 3. reg2mem outside setup
  demoteOutsideSetup(body, setup, setupBr);

  // 4. liveness of the simple allocas at the barrier blocks, then context arrays
  std::vector<AllocaInst *> allocas;
  for (Instruction &i : *setup)
    if (auto *a = dyn_cast<AllocaInst>(&i)) allocas.push_back(a);
  std::map<AllocaInst *, unsigned> index;
  for (AllocaInst *a : allocas)
    if (onlyWholeAccesses(a)) index.emplace(a, unsigned(index.size()));
  const BitVector liveAtBarrier = liveAtBarriers(body, index, barrierBlocks);
  std::vector<AllocaInst *> context, carried;
  classifyAllocas(body, numParams, allocas, index, liveAtBarrier, barrierBlocks, context, carried, out);
  placeContextArrays(body, numParams, setup, context, out);

  // 5. one function per region
  buildRegions(body, setup, oldEntry, starts, barrierBlocks, carried, out);
  return true;
}

} // namespace cgraph::codegen::cpu
