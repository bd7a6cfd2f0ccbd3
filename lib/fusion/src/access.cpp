// Pointer access analysis: how a kernel uses each pointer parameter (reads, writes,
// at the work-item's own index, inside its work-group's tile), and the shapes those
// indices are proven against for one instance of the kernel in the fused range.
#include "ir_internal.h"

#include <llvm/IR/DataLayout.h>
#include <llvm/IR/Instructions.h>

namespace cgraph {
namespace fusion {
namespace detail {

// See ir_internal.h.
void walkPointer(llvm::Value *ptr, int state, uint64_t elemSize, const llvm::DataLayout &dl,
                 const OwnShape &ownShape, const TileShape &tile, Access &acc,
                 std::vector<llvm::GetElementPtrInst *> *roots) {
  enum { Base = 0, Own = 1, Tile = 2, Other = 3 };
  auto notOwn = [&](const char *what) {
    if (acc.own && acc.firstOther.empty()) acc.firstOther = what;
    acc.own = false;
  };
  auto outside = [&](const char *what) {
    notOwn(what);
    if (acc.group && acc.firstOutside.empty()) acc.firstOutside = what;
    acc.group = false;
  };
  auto sized = [&](llvm::Type *t, const char *what) {
    bool fits = dl.getTypeStoreSize(t) == elemSize;
    if (state == Own && fits) return;
    if (state == Tile && fits) {
      notOwn(what);
      return;
    }
    if (state == Own || state == Tile) {
      // a wider or narrower access at an own/tile address
      outside(what);
      return;
    }
    outside(what);
  };
  for (llvm::User *u : ptr->users()) {
    if (auto *ld = llvm::dyn_cast<llvm::LoadInst>(u)) {
      acc.read = true;
      if (ld->isVolatile())
        outside("reads");
      else
        sized(ld->getType(), "reads");
    } else if (auto *st = llvm::dyn_cast<llvm::StoreInst>(u)) {
      if (st->getValueOperand() == ptr) { // the pointer itself escapes
        acc.read = acc.write = true;
        outside("passes");
        continue;
      }
      acc.write = true;
      if (st->isVolatile())
        outside("writes");
      else
        sized(st->getValueOperand()->getType(), "writes");
    } else if (llvm::isa<llvm::BitCastInst>(u) || llvm::isa<llvm::AddrSpaceCastInst>(u)) {
      walkPointer(u, state, elemSize, dl, ownShape, tile, acc, roots);
    } else if (auto *gep = llvm::dyn_cast<llvm::GetElementPtrInst>(u)) {
      if (gep->getPointerOperand() != ptr) {
        acc.read = acc.write = true;
        outside("passes");
        continue;
      }
      if (gep->hasAllZeroIndices()) {
        walkPointer(u, state, elemSize, dl, ownShape, tile, acc, roots);
      } else if (state == Base && gep->getNumIndices() == 1 &&
                 (isOwnIndex(gep->getOperand(1), ownShape) || inTile(gep->getOperand(1), tile))) {
        uint64_t size = dl.getTypeAllocSize(gep->getSourceElementType());
        if (roots) roots->push_back(gep);
        bool own = isOwnIndex(gep->getOperand(1), ownShape);
        if (own) {
          if (acc.ownElem && acc.ownElem != size) outside("reads");
          acc.ownElem = size;
        }
        TileStrides strides;
        if (inTile(gep->getOperand(1), tile, &strides)) {
          if ((acc.tileElem && acc.tileElem != size) ||
              (acc.tileStrides.dims && !(acc.tileStrides == strides)))
            outside("reads");
          acc.tileElem = size;
          acc.tileStrides = strides;
        } else if (!own) {
          outside("reads");
        } else if (acc.group) {
          // own-index but not provably inside the tile (a multi-dimensional index
          // in another layout): not a tile access
          if (acc.firstOutside.empty()) acc.firstOutside = "reads";
          acc.group = false;
        }
        walkPointer(u, own ? Own : Tile, size, dl, ownShape, tile, acc, roots);
      } else {
        walkPointer(u, Other, 0, dl, ownShape, tile, acc, roots);
      }
    } else if (llvm::isa<llvm::ICmpInst>(u)) {
      // comparing addresses reads no memory (but an own-index address compared
      // would not survive promotion to a private variable)
      if (state == Own || state == Tile) outside("compares");
    } else {
      // calls, atomics, phis, selects, ptrtoint: anything may happen
      acc.read = acc.write = true;
      outside(llvm::isa<llvm::CallBase>(u) ? "passes" : "reads");
    }
  }
}

// The shape own-index accesses of an instance are proven against: its own range, where
// its global linear id is the fused range's (Same, Linear, or Guard differing only in
// the last dimension), offsets 0 beyond one dimension. Sizes from graph parameters: one
// dimension only.
OwnShape ownOf(const IrRequest &req, const Instance &in) {
  OwnShape s;
  const Range &r = in.range;
  if (r.dims == 1) {
    s.dims = 1;
    return s;
  }
  if (!req.literal) return s;
  for (uint32_t d = 0; d < r.dims; ++d)
    if (r.offset[d]) return s;
  if (in.remap == Remap::Guard)
    for (uint32_t d = 0; d + 1 < r.dims; ++d)
      if (r.global[d] != req.fused.global[d]) return s;
  s.dims = r.dims;
  for (uint32_t d = 0; d < r.dims; ++d)
    s.global[d] = r.global[d];
  return s;
}

// The tile shape an instance's accesses are analysed against: the fused range's local
// size when the instance keeps its work-groups (not Linear) in as many dimensions as
// the fused range (1, 2 or 3), offsets 0, whole work-groups (each global size a
// multiple of the local size).
TileShape tileOf(const IrRequest &req, const Instance &in) {
  TileShape t;
  if (!req.literal || in.remap == Remap::Linear || !req.fused.hasLocal() ||
      in.range.dims != req.fused.dims || req.fused.dims < 1 || req.fused.dims > 3)
    return t;
  for (uint32_t d = 0; d < req.fused.dims; ++d)
    if (req.fused.offset[d] || !req.fused.local[d] || in.range.global[d] % req.fused.local[d])
      return t;
  t.dims = req.fused.dims;
  for (uint32_t d = 0; d < t.dims; ++d) {
    t.local[d] = req.fused.local[d];
    t.groups[d] = in.range.global[d] / t.local[d];
  }
  return t;
}

} // namespace detail
} // namespace fusion
} // namespace cgraph
