// Step 6 of building a fused kernel: internalization. A scratch slot the group alone
// uses leaves the graph: private memory (one variable per work-item) where every access
// is at the work-item's own index, else local memory (one tile per work-group) where
// every access stays in the work-group's tile. Accesses to a local tile are rewritten
// to the element's place in the tile against a placeholder argument that becomes the
// fused kernel's new __local parameter in step 7.
#include "ir_internal.h"

#include <llvm/IR/DataLayout.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/Module.h>
#include <llvm/Transforms/Utils/Local.h>

namespace cgraph {
namespace fusion {
namespace detail {
namespace {

// Replaces every access through `oldPtr` (an own-index address or a cast of it) with
// the same access through `newPtr` (the work-item's private variable).
void rewriteToPrivate(llvm::Value *oldPtr, llvm::Value *newPtr) {
  const unsigned as = newPtr->getType()->getPointerAddressSpace();
  for (llvm::User *u : llvm::make_early_inc_range(oldPtr->users())) {
    auto *inst = llvm::cast<llvm::Instruction>(u);
    llvm::IRBuilder<> b(inst);
    if (auto *ld = llvm::dyn_cast<llvm::LoadInst>(inst)) {
      llvm::Value *p = b.CreatePointerCast(newPtr, ld->getType()->getPointerTo(as));
      llvm::LoadInst *nl = b.CreateAlignedLoad(ld->getType(), p, ld->getAlign());
      nl->takeName(ld);
      ld->replaceAllUsesWith(nl);
      ld->eraseFromParent();
    } else if (auto *st = llvm::dyn_cast<llvm::StoreInst>(inst)) {
      llvm::Value *v = st->getValueOperand();
      llvm::Value *p = b.CreatePointerCast(newPtr, v->getType()->getPointerTo(as));
      b.CreateAlignedStore(v, p, st->getAlign());
      st->eraseFromParent();
    } else {
      // bitcast, addrspacecast or all-zero GEP of the address: the pointee changes,
      // the address stays the variable's
      auto *pt = llvm::cast<llvm::PointerType>(inst->getType());
      llvm::Type *elem = pt->isOpaque() ? b.getInt8Ty() : pt->getNonOpaquePointerElementType();
      if (auto *gep = llvm::dyn_cast<llvm::GetElementPtrInst>(inst))
        elem = gep->getResultElementType();
      llvm::Value *np = b.CreatePointerCast(newPtr, elem->getPointerTo(as));
      rewriteToPrivate(inst, np);
      inst->eraseFromParent();
    }
  }
}

// Local memory every OpenCL device has (CL_DEVICE_LOCAL_MEM_SIZE >= 32 KiB): a tile
// larger than this is not internalized.
constexpr uint64_t kLocalLimit = 32768;

bool sameGlobal(const Range &a, const Range &b) {
  if (a.dims != b.dims) return false;
  for (uint32_t d = 0; d < a.dims; ++d)
    if (a.global[d] != b.global[d]) return false;
  return true;
}

// Kernels of different sizes (guarded or linearly remapped) use the slot of fused
// parameter p: why private memory cannot hold it; empty when it can.
// Kernels of different sizes (guarded or linearly remapped): by the seed's rule 8
// a work-item has the same global linear id in every kernel of the fused range,
// and own-index accesses are at that id, so one private variable per work-item
// still holds its element from kernel to kernel. What a private variable cannot
// hold is an element no kernel of the group wrote: every kernel reading the slot
// must run on no more work-items than a kernel before it that writes it (else
// it reads elements written outside the group, zeros in the unfused graph).
// Local memory needs every kernel on the whole fused range (refused below).
std::string differentSizesWhy(const IrRequest &req, size_t p, const SlotUse &su,
                              const std::string &sname,
                              const std::vector<const std::vector<Access> *> &accessOf) {
  const FusedParam &fp = req.params[p];
  std::string why;
  if (fp.memory == Memory::Local)
    why = "the kernels using " + sname +
          " run on part of the fused range: cannot internalize to local memory";
  else if (!su.own)
    why = "the kernels using " + sname + " have different global sizes: cannot internalize";
  for (size_t k = 0; k < su.insts.size() && why.empty(); ++k) {
    uint32_t j = su.insts[k];
    bool reads = false;
    for (size_t q = 0; q < req.insts[j].bind.size(); ++q)
      reads = reads || (req.insts[j].bind[q] == p && (*accessOf[j])[q].read);
    if (!reads) continue;
    uint64_t covered = 0;
    std::string by;
    for (size_t k2 = 0; k2 < k; ++k2) {
      uint32_t i = su.insts[k2];
      bool writes = false;
      for (size_t q = 0; q < req.insts[i].bind.size(); ++q)
        writes = writes || (req.insts[i].bind[q] == p && (*accessOf[i])[q].write);
      if (writes && req.insts[i].range.total() > covered) {
        covered = req.insts[i].range.total();
        by = req.insts[i].node;
      }
    }
    uint64_t need = req.insts[j].range.total();
    if (covered < need)
      why =
          req.insts[j].node + " reads " + sname + " on " + std::to_string(need) + " work-items, " +
          (by.empty()
               ? std::string("no kernel before it writes it")
               : "the kernels before it write it on " + std::to_string(covered) + " (" + by + ")") +
          ": the other elements are not in any work-item's private memory (kernels of "
          "different global sizes share a private variable only at the same global "
          "linear id, seed rule 8): cannot internalize to private memory";
  }
  return why;
}

// What is left of the parameter after its accesses were rewritten (casts of the base)
// is dead; a use that remains is an internal error.
Error dropParam(llvm::Argument *arg, const std::string &sname) {
  for (llvm::User *u : llvm::make_early_inc_range(arg->users()))
    if (auto *inst = llvm::dyn_cast<llvm::Instruction>(u))
      llvm::RecursivelyDeleteTriviallyDeadInstructions(inst);
  if (!arg->use_empty())
    return makeError("internal error: slot '" + sname + "' still used after internalization");
  return Error();
}

// Fused parameter p's slot (own-index in every kernel) as a private variable, where
// the fused body agrees with the kernels' analysis.
Error toPrivate(const IrRequest &req, llvm::Function &fused, size_t p, const std::string &sname,
                IrResult &res) {
  const llvm::DataLayout &dl = fused.getParent()->getDataLayout();
  Access acc;
  std::vector<llvm::GetElementPtrInst *> roots;
  OwnShape fusedShape;
  fusedShape.dims = req.literal || req.fused.dims == 1 ? req.fused.dims : 0;
  for (uint32_t d = 0; d < 3; ++d)
    fusedShape.global[d] = req.fused.global[d];
  for (uint32_t d = 0; d < 3; ++d)
    if (req.fused.offset[d] && req.fused.dims > 1) fusedShape.dims = 0;
  walkPointer(fused.getArg(p), 0, 0, dl, fusedShape, TileShape(), acc, &roots);
  if (!acc.own) { // the fused body should agree with the kernels' analysis
    res.remarks.push_back(sname + " is accessed at another work-item's index in the "
                                  "fused kernel: cannot internalize");
    return Error();
  }
  res.kept[p] = false;
  res.internalized.push_back(uint32_t(p));
  if (roots.empty()) return Error(); // never accessed: the argument simply goes
  llvm::Type *elem = roots.front()->getSourceElementType();
  llvm::IRBuilder<> eb(&*fused.getEntryBlock().getFirstInsertionPt());
  llvm::AllocaInst *var = eb.CreateAlloca(elem, nullptr, sname + ".private");
  for (llvm::GetElementPtrInst *g : roots) {
    llvm::IRBuilder<> gb(g);
    llvm::Value *np = gb.CreatePointerCast(var, g->getResultElementType()->getPointerTo(0));
    rewriteToPrivate(g, np);
    g->eraseFromParent();
  }
  CGRAPH_RETURN_IF_ERROR(dropParam(fused.getArg(p), sname));
  res.remarks.push_back("internalized " + sname + " as a private " +
                        std::to_string(dl.getTypeAllocSize(elem)) + "-byte variable");
  return Error();
}

// Fused parameter p's slot as a local tile, where every access stays inside the
// work-group's tile, in the fused body too, and the tiles fit in kLocalLimit.
// `privateWhy`: why private memory did not take it (said with a refusal).
Error toLocal(const IrRequest &req, llvm::Function &fused, size_t p, const SlotUse &su,
              bool fusedSize, const std::string &privateWhy, uint64_t &localUsed, LocalTiles &tiles,
              IrResult &res) {
  const FusedParam &fp = req.params[p];
  const std::string &sname = (*req.slots)[fp.slotKey].name;
  const llvm::DataLayout &dl = fused.getParent()->getDataLayout();
  auto refuseLocal = [&](const std::string &why) {
    if (!privateWhy.empty() && fp.memory == Memory::Any) res.remarks.push_back(privateWhy);
    res.remarks.push_back(why);
  };
  if (!su.group) {
    refuseLocal(su.outside);
    return Error();
  }
  if (!fusedSize) {
    refuseLocal("the kernels using " + sname +
                " run on part of the fused range: cannot internalize to local memory");
    return Error();
  }
  const TileShape &tile = su.tile;
  uint64_t bytes = tile.items() * su.tileElem;
  if (!bytes) {
    refuseLocal(sname + ": no access to tile: cannot internalize to local memory");
    return Error();
  }
  if (localUsed + bytes > kLocalLimit) {
    refuseLocal(sname + " needs " + std::to_string(bytes) +
                " bytes of local memory per work-group, " + std::to_string(localUsed + bytes) +
                " in all, more than the " + std::to_string(kLocalLimit) +
                " every OpenCL device has: cannot internalize to local memory");
    return Error();
  }
  Access acc;
  std::vector<llvm::GetElementPtrInst *> roots;
  walkPointer(fused.getArg(p), 0, 0, dl, OwnShape(), tile, acc, &roots);
  bool sameElem = true;
  for (llvm::GetElementPtrInst *g : roots) {
    TileStrides st;
    sameElem = sameElem && dl.getTypeAllocSize(g->getSourceElementType()) == su.tileElem &&
               inTile(g->getOperand(1), tile, &st) && st == su.tileStrides;
  }
  if (!acc.group || roots.empty() || !sameElem) {
    refuseLocal(sname + " is accessed outside the work-group's tile in the fused "
                        "kernel: cannot internalize to local memory");
    return Error();
  }
  llvm::Type *elem = roots.front()->getSourceElementType();
  auto ph = std::make_unique<llvm::Argument>(elem->getPointerTo(3), sname + ".local");
  for (llvm::GetElementPtrInst *g : roots) {
    llvm::IRBuilder<> gb(g);
    llvm::Value *idx = g->getOperand(1);
    llvm::Value *inTileIdx = tileIndex(gb, idx, tile, su.tileStrides);
    llvm::Value *base = gb.CreatePointerCast(ph.get(), g->getSourceElementType()->getPointerTo(3));
    llvm::Value *np = gb.CreateGEP(g->getSourceElementType(), base, inTileIdx);
    rewriteToPrivate(g, np);
    g->eraseFromParent();
  }
  CGRAPH_RETURN_IF_ERROR(dropParam(fused.getArg(p), sname));
  localUsed += bytes;
  tiles.arg[p] = ph.get();
  tiles.placeholders.push_back(std::move(ph));
  res.localized.push_back({uint32_t(p), bytes});
  res.remarks.push_back("internalized " + sname + " as a " + std::to_string(bytes) +
                        "-byte local tile per work-group (" + tileText(tile) + " elements of " +
                        std::to_string(su.tileElem) + " bytes" +
                        (tile.dims > 1 ? ", rows of " + std::to_string(su.tileStrides.s[1]) +
                                             " elements in global memory"
                                       : std::string()) +
                        ")");
  return Error();
}

// One candidate: fused parameter p, bound to a scratch slot the group alone uses.
Error internalizeOne(const IrRequest &req, llvm::Function &fused, size_t p, const SlotUse &su,
                     const std::vector<const std::vector<Access> *> &accessOf, uint64_t &localUsed,
                     LocalTiles &tiles, IrResult &res) {
  const FusedParam &fp = req.params[p];
  const std::string &sname = (*req.slots)[fp.slotKey].name;
  bool sameSize = true, fusedSize = true;
  for (uint32_t i : su.insts) {
    // the same work-items (a linearly remapped kernel of as many work-items counts:
    // own-index accesses are at the same global linear id)
    sameSize =
        sameSize &&
        (sameGlobal(req.insts[i].range, req.insts[su.insts[0]].range) ||
         (req.literal && req.insts[i].range.total() == req.insts[su.insts[0]].range.total()));
    fusedSize = fusedSize && req.insts[i].remap == Remap::Same;
  }
  if (!sameSize) {
    std::string why = differentSizesWhy(req, p, su, sname, accessOf);
    if (!why.empty()) {
      res.remarks.push_back(why);
      return Error();
    }
    res.remarks.push_back("the kernels using " + sname +
                          " have different global sizes; each work-item keeps its global "
                          "linear id (seed rule 8): private memory holds its element");
  }
  std::string privateWhy; // said only when local memory does not take the slot either
  if (fp.memory != Memory::Local) {
    if (!su.own) {
      privateWhy = su.other + ": cannot internalize to private memory";
      if (fp.memory == Memory::Private) res.remarks.push_back(privateWhy);
    } else {
      return toPrivate(req, fused, p, sname, res);
    }
    if (fp.memory == Memory::Private) return Error();
  }
  return toLocal(req, fused, p, su, fusedSize, privateWhy, localUsed, tiles, res);
}

} // namespace

Error internalizeSlots(const IrRequest &req, llvm::Function &fused, SlotUses &slots,
                       const std::vector<const std::vector<Access> *> &accessOf, LocalTiles &tiles,
                       IrResult &res) {
  if (!req.internalize) return Error();
  uint64_t localUsed = 0; // bytes of the tiles so far
  for (size_t p = 0; p < req.params.size(); ++p) {
    const FusedParam &fp = req.params[p];
    if (!fp.internalCandidate || fp.slotKey < 0) continue;
    CGRAPH_RETURN_IF_ERROR(
        internalizeOne(req, fused, p, slots[fp.slotKey], accessOf, localUsed, tiles, res));
  }
  runCleanup(fused);
  return Error();
}

} // namespace detail
} // namespace fusion
} // namespace cgraph
