// The LLVM side of fusion: link the kernels' modules, clean and analyse each kernel,
// build the fused entry point, inline, bake constants, internalize, translate back to
// SPIR-V. See cgraph/fusion/fusion.h for the rules.
#include "internal.h"

#include <array>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include <LLVMSPIRVLib.h>
#include <llvm/ADT/STLExtras.h>
#include <llvm/ADT/StringSwitch.h>
#include <llvm/IR/ConstantRange.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/InstIterator.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/PassManager.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Linker/Linker.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Transforms/IPO/GlobalDCE.h>
#include <llvm/Transforms/Scalar/ADCE.h>
#include <llvm/Transforms/Scalar/DeadStoreElimination.h>
#include <llvm/Transforms/Scalar/EarlyCSE.h>
#include <llvm/Transforms/Scalar/GVN.h>
#include <llvm/Transforms/Scalar/SROA.h>
#include <llvm/Transforms/Scalar/SimplifyCFG.h>
#include <llvm/Transforms/Utils/Cloning.h>
#include <llvm/Transforms/Utils/Local.h>

#include "cgraph/kernel/spirv.h"
#include "cgraph/kernel/spirv_to_llvm.h"

namespace cgraph {
namespace fusion {
namespace detail {
namespace {

// ---- work-item builtins ---------------------------------------------------------
// The OpenCL C builtins the SPIR-V reader emits for the work-item built-in variables
// (the translator builds get_global_id's <3 x i64> from calls with constant dimensions).
enum class Wi {
  None,
  GlobalId,
  GlobalSize,
  LocalId,
  LocalSize,
  EnqueuedLocalSize,
  GroupId,
  NumGroups,
  Offset,
  WorkDim,
  GlobalLinearId,
  LocalLinearId
};

Wi builtinKind(llvm::StringRef n) {
  return llvm::StringSwitch<Wi>(n)
      .Case("_Z13get_global_idj", Wi::GlobalId)
      .Case("_Z15get_global_sizej", Wi::GlobalSize)
      .Case("_Z12get_local_idj", Wi::LocalId)
      .Case("_Z14get_local_sizej", Wi::LocalSize)
      .Case("_Z23get_enqueued_local_sizej", Wi::EnqueuedLocalSize)
      .Case("_Z12get_group_idj", Wi::GroupId)
      .Case("_Z14get_num_groupsj", Wi::NumGroups)
      .Case("_Z17get_global_offsetj", Wi::Offset)
      .Case("_Z12get_work_dimv", Wi::WorkDim)
      .Case("_Z20get_global_linear_idv", Wi::GlobalLinearId)
      .Case("_Z19get_local_linear_idv", Wi::LocalLinearId)
      .Default(Wi::None);
}

// The builtin call `v` is (through the translator's insertelement/extractelement
// vectors), with its constant dimension; Wi::None otherwise.
Wi builtinOf(llvm::Value *v, unsigned *dim) {
  for (int depth = 0; depth < 8; ++depth) {
    if (auto *ee = llvm::dyn_cast<llvm::ExtractElementInst>(v)) {
      auto *idx = llvm::dyn_cast<llvm::ConstantInt>(ee->getIndexOperand());
      if (!idx) return Wi::None;
      llvm::Value *vec = ee->getVectorOperand();
      bool found = false;
      while (auto *ie = llvm::dyn_cast<llvm::InsertElementInst>(vec)) {
        auto *i2 = llvm::dyn_cast<llvm::ConstantInt>(ie->getOperand(2));
        if (!i2) return Wi::None;
        if (i2->getZExtValue() == idx->getZExtValue()) {
          v = ie->getOperand(1);
          found = true;
          break;
        }
        vec = ie->getOperand(0);
      }
      if (!found) return Wi::None;
      continue;
    }
    auto *call = llvm::dyn_cast<llvm::CallInst>(v);
    if (!call || !call->getCalledFunction()) return Wi::None;
    Wi k = builtinKind(call->getCalledFunction()->getName());
    if (k == Wi::None) return k;
    *dim = 0;
    if (call->arg_size() == 1) {
      auto *d = llvm::dyn_cast<llvm::ConstantInt>(call->getArgOperand(0));
      if (!d) return Wi::None;
      *dim = unsigned(d->getZExtValue());
    }
    return k;
  }
  return Wi::None;
}

// ---- own-index analysis ---------------------------------------------------------
// True when `v` is get_global_id(0), possibly truncated/extended (an `int i =
// get_global_id(0)` index) or taken out of the <3 x i64> the translator builds.
bool isGlobalId0(llvm::Value *v) {
  for (int depth = 0; depth < 16; ++depth) {
    if (auto *c = llvm::dyn_cast<llvm::CastInst>(v)) {
      if (!c->getType()->isIntegerTy() || !c->getOperand(0)->getType()->isIntegerTy()) return false;
      v = c->getOperand(0);
      continue;
    }
    unsigned d = 0;
    return builtinOf(v, &d) == Wi::GlobalId && d == 0;
  }
  return false;
}

// The shape an own-index access is proven against: `index` = the work-item's global
// linear id in this range, gid(0) + G0 * gid(1) + G0 * G1 * gid(2) (offsets 0 for
// dims > 1). dims 0: nothing is own. One dimension needs no sizes (gid(0) itself).
struct OwnShape {
  uint32_t dims = 0;
  uint64_t global[3] = {1, 1, 1};
};

struct Affine {
  int64_t k[3] = {0, 0, 0};
  int64_t c = 0;
};

// `v` without integer casts (value-preserving for indices, as affine() assumes).
llvm::Value *uncast(llvm::Value *v) {
  while (auto *c = llvm::dyn_cast<llvm::CastInst>(v)) {
    if (!c->getType()->isIntegerTy() || !c->getOperand(0)->getType()->isIntegerTy()) break;
    v = c->getOperand(0);
  }
  return v;
}

// X where `v` is (X / c) * c + X % c (either order, X itself possibly in that form): the
// linearly remapped work-item ids put back together (gid(1) * G0 + gid(0) with gid(1) =
// L / G0 and gid(0) = L % G0 is L). nullptr otherwise.
llvm::Value *divModWhole(llvm::Value *v, int depth = 0) {
  v = uncast(v);
  auto *add = llvm::dyn_cast<llvm::BinaryOperator>(v);
  if (depth > 6 || !add || add->getOpcode() != llvm::Instruction::Add) return nullptr;
  for (int side = 0; side < 2; ++side) {
    auto *mul = llvm::dyn_cast<llvm::BinaryOperator>(uncast(add->getOperand(side)));
    auto *rem = llvm::dyn_cast<llvm::BinaryOperator>(uncast(add->getOperand(1 - side)));
    if (!mul || !rem || mul->getOpcode() != llvm::Instruction::Mul ||
        rem->getOpcode() != llvm::Instruction::URem)
      continue;
    auto *c = llvm::dyn_cast<llvm::ConstantInt>(rem->getOperand(1));
    if (!c) continue;
    llvm::Value *x = uncast(rem->getOperand(0));
    if (llvm::Value *w = divModWhole(x, depth + 1)) x = w;
    for (int m = 0; m < 2; ++m) {
      auto *k = llvm::dyn_cast<llvm::ConstantInt>(mul->getOperand(1 - m));
      if (!k || k->getZExtValue() != c->getZExtValue()) continue;
      llvm::Value *q = uncast(mul->getOperand(m));
      if (llvm::Value *w = divModWhole(q, depth + 1)) q = w;
      auto *div = llvm::dyn_cast<llvm::BinaryOperator>(q);
      if (!div || div->getOpcode() != llvm::Instruction::UDiv) continue;
      auto *c2 = llvm::dyn_cast<llvm::ConstantInt>(div->getOperand(1));
      if (!c2 || c2->getZExtValue() != c->getZExtValue()) continue;
      llvm::Value *y = uncast(div->getOperand(0));
      if (llvm::Value *w = divModWhole(y, depth + 1)) y = w;
      if (y == x) return x;
    }
  }
  return nullptr;
}

std::optional<Affine> affine(llvm::Value *v, const OwnShape &s, int depth = 0) {
  if (depth > 24 || !v->getType()->isIntegerTy()) return std::nullopt;
  Affine a;
  if (auto *c = llvm::dyn_cast<llvm::ConstantInt>(v)) {
    if (c->getBitWidth() > 64) return std::nullopt;
    a.c = c->getSExtValue();
    return a;
  }
  if (auto *c = llvm::dyn_cast<llvm::CastInst>(v)) {
    // value-preserving for indices (as the one-dimensional rule assumes)
    if (!c->getOperand(0)->getType()->isIntegerTy()) return std::nullopt;
    return affine(c->getOperand(0), s, depth + 1);
  }
  unsigned d = 0;
  switch (builtinOf(v, &d)) {
  case Wi::GlobalId:
    if (d < s.dims) a.k[d] = 1;
    return a;
  case Wi::GlobalSize:
    a.c = int64_t(d < s.dims ? s.global[d] : 1);
    return a;
  case Wi::None:
    break;
  default:
    return std::nullopt;
  }
  auto *bo = llvm::dyn_cast<llvm::BinaryOperator>(v);
  if (!bo) return std::nullopt;
  if (llvm::Value *w = divModWhole(bo)) return affine(w, s, depth + 1);
  std::optional<Affine> x = affine(bo->getOperand(0), s, depth + 1);
  std::optional<Affine> y = x ? affine(bo->getOperand(1), s, depth + 1) : std::nullopt;
  if (!y) return std::nullopt;
  auto constant = [](const Affine &q) { return !q.k[0] && !q.k[1] && !q.k[2]; };
  switch (bo->getOpcode()) {
  case llvm::Instruction::Add:
  case llvm::Instruction::Sub: {
    int64_t sign = bo->getOpcode() == llvm::Instruction::Add ? 1 : -1;
    for (int i = 0; i < 3; ++i)
      x->k[i] += sign * y->k[i];
    x->c += sign * y->c;
    return x;
  }
  case llvm::Instruction::Mul:
    if (!constant(*y)) std::swap(x, y);
    if (!constant(*y)) return std::nullopt;
    for (int i = 0; i < 3; ++i)
      x->k[i] *= y->c;
    x->c *= y->c;
    return x;
  case llvm::Instruction::Shl:
    if (!constant(*y) || y->c < 0 || y->c > 40) return std::nullopt;
    for (int i = 0; i < 3; ++i)
      x->k[i] <<= y->c;
    x->c <<= y->c;
    return x;
  default:
    return std::nullopt;
  }
}

// True when `idx` is the work-item's global linear id in `s`.
bool isOwnIndex(llvm::Value *idx, const OwnShape &s) {
  if (s.dims == 0) return false;
  if (s.dims == 1) return isGlobalId0(idx);
  std::optional<Affine> a = affine(idx, s);
  if (!a || a->c != 0) return false;
  int64_t stride = 1;
  for (uint32_t d = 0; d < 3; ++d) {
    if (a->k[d] != (d < s.dims ? stride : 0)) return false;
    if (d < s.dims) stride *= int64_t(s.global[d]);
  }
  return true;
}

// ---- work-group tile analysis -------------------------------------------------------
// An index as sum_d (a_d * get_group_id(d) + b_d * get_local_id(d)) + sum_k c_k * v_k + c,
// the v_k values of known ranges (a remainder, a select, ...), in a range of `dims`
// dimensions of work-groups of local[d] work-items (uniform groups, offset 0). An access
// stays inside its work-group's tile when the index is, in a mixed radix of strides
// S_0 = 1 < S_1 < S_2 (each a multiple of the one before, S_{d+1} >= S_d * global[d]),
//   index = sum_d S_d * (local[d] * group_id(d) + e_d)   with e_d in [0, local[d])
// (1-D: index = local * group_id + e, e in [0, local)). Then e_d = (index / S_d) %
// (S_{d+1} / S_d) % local[d] (the last dimension: (index / S_d) % local[d]), the element's
// place in the tile is sum_d e_d * local[0] * ... * local[d-1], and two work-groups never
// reach the same element. A linearized `index % (tile elements)`, right in 1-D, would mix
// rows of a 2-D tile: each dimension is taken apart on its own.
struct Term {
  int64_t coef = 1;
  llvm::ConstantRange r{64, true};
};

struct Lin {
  int64_t a[3] = {0, 0, 0}, b[3] = {0, 0, 0};
  std::vector<Term> terms;
  int64_t c = 0;
};

struct TileShape {
  uint32_t dims = 0; // 0: unknown, no tile analysis
  uint64_t local[3] = {1, 1, 1};
  uint64_t groups[3] = {1, 1, 1};
  uint64_t items() const { return local[0] * local[1] * local[2]; }
  bool operator==(const TileShape &o) const {
    if (dims != o.dims) return false;
    for (int d = 0; d < 3; ++d)
      if (local[d] != o.local[d] || groups[d] != o.groups[d]) return false;
    return true;
  }
};

// The strides S_d of a tile access (see above); dims 0: none.
struct TileStrides {
  uint32_t dims = 0;
  int64_t s[3] = {1, 1, 1};
  bool operator==(const TileStrides &o) const {
    return dims == o.dims && s[0] == o.s[0] && s[1] == o.s[1] && s[2] == o.s[2];
  }
};

llvm::ConstantRange point(int64_t v) {
  return llvm::ConstantRange(llvm::APInt(64, uint64_t(v), true));
}

llvm::ConstantRange span(uint64_t lo, uint64_t hiInclusive) {
  return llvm::ConstantRange(llvm::APInt(64, lo), llvm::APInt(64, hiInclusive + 1));
}

// Every value `x` can take (wrapping arithmetic gives the full set: nothing proven).
llvm::ConstantRange whole(const Lin &x, const TileShape &t) {
  llvm::ConstantRange v = point(x.c);
  for (int d = 0; d < 3; ++d) {
    if (x.a[d]) v = v.add(span(0, t.groups[d] - 1).multiply(point(x.a[d])));
    if (x.b[d]) v = v.add(span(0, t.local[d] - 1).multiply(point(x.b[d])));
  }
  for (const Term &k : x.terms)
    v = v.add(k.r.multiply(point(k.coef)));
  return v;
}

Lin pureLin(const llvm::ConstantRange &r) {
  Lin l;
  if (const llvm::APInt *one = r.getSingleElement())
    l.c = one->getSExtValue();
  else
    l.terms.push_back({1, r});
  return l;
}

std::optional<Lin> linear(llvm::Value *v, const TileShape &t, int depth = 0) {
  if (depth > 24 || !v->getType()->isIntegerTy() || v->getType()->getIntegerBitWidth() > 64)
    return std::nullopt;
  if (auto *c = llvm::dyn_cast<llvm::ConstantInt>(v)) return pureLin(point(c->getSExtValue()));
  unsigned dim = 0;
  Wi kind = builtinOf(v, &dim);
  if (kind != Wi::None) {
    if (dim > 2) return std::nullopt;
    bool in = dim < t.dims;
    Lin l;
    switch (kind) {
    case Wi::GlobalId:
      if (in) {
        l.a[dim] = int64_t(t.local[dim]);
        l.b[dim] = 1;
      }
      return l;
    case Wi::LocalId:
      if (in) l.b[dim] = 1;
      return l;
    case Wi::GroupId:
      if (in) l.a[dim] = 1;
      return l;
    case Wi::LocalSize:
    case Wi::EnqueuedLocalSize:
      return pureLin(point(in ? int64_t(t.local[dim]) : 1));
    case Wi::NumGroups:
      return pureLin(point(in ? int64_t(t.groups[dim]) : 1));
    case Wi::GlobalSize:
      return pureLin(point(in ? int64_t(t.groups[dim] * t.local[dim]) : 1));
    default:
      return std::nullopt;
    }
  }
  if (auto *c = llvm::dyn_cast<llvm::CastInst>(v)) {
    if (!c->getOperand(0)->getType()->isIntegerTy()) return std::nullopt;
    std::optional<Lin> x = linear(c->getOperand(0), t, depth + 1);
    if (!x) return std::nullopt;
    // a cast keeps the value when every value it can take fits the destination type
    // (signed) and, for zext, is not negative
    llvm::ConstantRange w = whole(*x, t);
    unsigned bits = c->getType()->getIntegerBitWidth();
    unsigned srcBits = c->getOperand(0)->getType()->getIntegerBitWidth();
    unsigned narrow = std::min(bits, srcBits);
    if (w.isFullSet() || w.isWrappedSet() || w.getSignedMin().getSExtValue() < 0 ||
        (narrow < 64 && w.getSignedMax().getSExtValue() >= (int64_t(1) << (narrow - 1))))
      return std::nullopt;
    return x;
  }
  auto sameIds = [](const Lin &x, const Lin &y) {
    for (int d = 0; d < 3; ++d)
      if (x.a[d] != y.a[d] || x.b[d] != y.b[d]) return false;
    return true;
  };
  // the part of `x` that is not a group or local id
  auto rest = [&](const Lin &x) {
    Lin r = x;
    for (int d = 0; d < 3; ++d)
      r.a[d] = r.b[d] = 0;
    return whole(r, t);
  };
  if (auto *sel = llvm::dyn_cast<llvm::SelectInst>(v)) {
    std::optional<Lin> x = linear(sel->getTrueValue(), t, depth + 1);
    std::optional<Lin> y = x ? linear(sel->getFalseValue(), t, depth + 1) : std::nullopt;
    if (!y) return std::nullopt;
    if (sameIds(*x, *y)) {
      Lin r = *x;
      r.terms.clear();
      r.c = 0;
      Lin p = pureLin(rest(*x).unionWith(rest(*y)));
      r.terms = p.terms;
      r.c = p.c;
      return r;
    }
    return pureLin(whole(*x, t).unionWith(whole(*y, t)));
  }
  auto *bo = llvm::dyn_cast<llvm::BinaryOperator>(v);
  if (!bo) return std::nullopt;
  std::optional<Lin> x = linear(bo->getOperand(0), t, depth + 1);
  std::optional<Lin> y = x ? linear(bo->getOperand(1), t, depth + 1) : std::nullopt;
  if (!y) return std::nullopt;
  auto constant = [](const Lin &l, int64_t *c) {
    for (int d = 0; d < 3; ++d)
      if (l.a[d] || l.b[d]) return false;
    if (!l.terms.empty()) return false;
    *c = l.c;
    return true;
  };
  auto scale = [](Lin &l, int64_t k) {
    for (int d = 0; d < 3; ++d) {
      l.a[d] *= k;
      l.b[d] *= k;
    }
    for (Term &term : l.terms)
      term.coef *= k;
    l.c *= k;
  };
  int64_t c = 0;
  switch (bo->getOpcode()) {
  case llvm::Instruction::Add:
  case llvm::Instruction::Sub: {
    if (bo->getOpcode() == llvm::Instruction::Sub) scale(*y, -1);
    for (int d = 0; d < 3; ++d) {
      x->a[d] += y->a[d];
      x->b[d] += y->b[d];
    }
    x->terms.insert(x->terms.end(), y->terms.begin(), y->terms.end());
    x->c += y->c;
    return x;
  }
  case llvm::Instruction::Mul:
    if (constant(*y, &c) || (constant(*x, &c) && (std::swap(x, y), true))) {
      scale(*x, c);
      return x;
    }
    return pureLin(whole(*x, t).multiply(whole(*y, t)));
  case llvm::Instruction::Shl:
    if (constant(*y, &c) && c >= 0 && c < 32) {
      scale(*x, int64_t(1) << c);
      return x;
    }
    return std::nullopt;
  default:
    return pureLin(whole(*x, t).binaryOp(bo->getOpcode(), whole(*y, t)));
  }
}

// True when `idx` (a GEP index) stays inside the work-item's work-group tile; its
// strides go to `strides`.
bool inTile(llvm::Value *idx, const TileShape &t, TileStrides *strides = nullptr) {
  if (!t.dims) return false;
  std::optional<Lin> l = linear(idx, t);
  if (!l) return false;
  TileStrides s;
  s.dims = t.dims;
  for (uint32_t d = 0; d < t.dims; ++d) {
    int64_t T = int64_t(t.local[d]);
    if (l->a[d] <= 0 || l->a[d] % T) return false;
    s.s[d] = l->a[d] / T;
    if (d == 0 && s.s[0] != 1) return false;
    if (d > 0 &&
        (s.s[d] % s.s[d - 1] || s.s[d] < s.s[d - 1] * int64_t(t.groups[d - 1] * t.local[d - 1])))
      return false;
  }
  for (uint32_t d = t.dims; d < 3; ++d)
    if (l->a[d] || l->b[d]) return false;
  // each remaining piece belongs to the highest dimension whose stride divides it
  auto dimOf = [&](int64_t coef) {
    for (int d = int(t.dims) - 1; d > 0; --d)
      if (coef % s.s[d] == 0) return d;
    return 0;
  };
  std::vector<llvm::ConstantRange> e(t.dims, point(0));
  for (uint32_t d = 0; d < t.dims; ++d)
    if (l->b[d]) {
      int k = dimOf(l->b[d]);
      e[k] = e[k].add(span(0, t.local[d] - 1).multiply(point(l->b[d] / s.s[k])));
    }
  for (const Term &term : l->terms) {
    if (!term.coef) continue;
    int k = dimOf(term.coef);
    e[k] = e[k].add(term.r.multiply(point(term.coef / s.s[k])));
  }
  int64_t c = l->c;
  for (int d = int(t.dims) - 1; d >= 0; --d) {
    int64_t q = c / s.s[d];
    c -= q * s.s[d];
    e[d] = e[d].add(point(q));
  }
  for (uint32_t d = 0; d < t.dims; ++d) {
    const llvm::ConstantRange &w = e[d];
    if (w.isFullSet() || w.isWrappedSet() || w.isEmptySet() ||
        w.getSignedMin().getSExtValue() < 0 ||
        w.getSignedMax().getSExtValue() >= int64_t(t.local[d]))
      return false;
  }
  if (strides) *strides = s;
  return true;
}

// The element's place in its work-group's tile for an index inTile proved with `s`.
llvm::Value *tileIndex(llvm::IRBuilder<> &b, llvm::Value *idx, const TileShape &t,
                       const TileStrides &s) {
  llvm::Type *ty = idx->getType();
  auto k = [&](uint64_t v) { return llvm::ConstantInt::get(ty, v); };
  llvm::Value *sum = nullptr;
  uint64_t place = 1;
  for (uint32_t d = 0; d < t.dims; ++d) {
    llvm::Value *v = idx;
    if (s.s[d] != 1) v = b.CreateUDiv(v, k(uint64_t(s.s[d])));
    if (d + 1 < t.dims) {
      uint64_t radix = uint64_t(s.s[d + 1] / s.s[d]);
      if (radix % t.local[d]) v = b.CreateURem(v, k(radix));
    }
    v = b.CreateURem(v, k(t.local[d]));
    if (place != 1) v = b.CreateMul(v, k(place), "", true, true);
    sum = sum ? b.CreateAdd(sum, v, "", true, true) : v;
    place *= t.local[d];
  }
  return sum;
}
struct Access {
  bool read = false, write = false;
  bool own = true;          // every access is at base + get_global_id(0) * elemsize
  bool group = true;        // every access stays in the work-group's tile (TileShape)
  uint64_t tileElem = 0;    // element size of the tile accesses
  TileStrides tileStrides;  // their strides (every tile access has the same)
  uint64_t ownElem = 0;     // element size of the own-index accesses
  std::string firstOther;   // "reads" / "writes" for the first access that is not own
  std::string firstOutside; // the same for the first access outside the tile
};

// Walks every use of a kernel's pointer parameter. State: the pointer is the base,
// base + gid * elemsize (Own), base + an index inside the work-group's tile (Tile),
// or something else. `roots` collects the base's indexing GEPs (Own or Tile).
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

// ---- private internalization --------------------------------------------------------
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

std::string shapeText(const Range &r, const uint64_t *v) {
  std::string s;
  for (uint32_t d = 0; d < r.dims; ++d)
    s += (d ? "x" : "") + std::to_string(v[d]);
  return s;
}

llvm::FunctionCallee builtinDecl(llvm::Module &m, const char *name, bool withDim, bool i32) {
  llvm::LLVMContext &ctx = m.getContext();
  llvm::Type *ret = i32 ? llvm::Type::getInt32Ty(ctx) : llvm::Type::getInt64Ty(ctx);
  std::vector<llvm::Type *> params;
  if (withDim) params.push_back(llvm::Type::getInt32Ty(ctx));
  llvm::FunctionCallee fc =
      m.getOrInsertFunction(name, llvm::FunctionType::get(ret, params, false));
  if (auto *f = llvm::dyn_cast<llvm::Function>(fc.getCallee())) {
    f->setCallingConv(llvm::CallingConv::SPIR_FUNC);
    f->addFnAttr(llvm::Attribute::NoUnwind);
    f->addFnAttr(llvm::Attribute::ReadNone);
  }
  return fc;
}

llvm::Value *callGlobalId(llvm::IRBuilder<> &b, llvm::Module &m, unsigned d) {
  llvm::CallInst *c =
      b.CreateCall(builtinDecl(m, "_Z13get_global_idj", true, false), {b.getInt32(d)});
  c->setCallingConv(llvm::CallingConv::SPIR_FUNC);
  return c;
}

// The fused range's global linear id (offsets are 0 wherever Linear remapping is used).
llvm::Value *linearId(llvm::IRBuilder<> &b, llvm::Module &m, const Range &fused) {
  llvm::Value *l = callGlobalId(b, m, 0);
  uint64_t stride = fused.global[0];
  for (unsigned d = 1; d < fused.dims; ++d) {
    l = b.CreateAdd(l, b.CreateMul(callGlobalId(b, m, d), b.getInt64(stride)));
    stride *= fused.global[d];
  }
  return l;
}

// The condition under which instance `in` runs in the fused range (nullptr: always).
llvm::Value *guardFor(llvm::IRBuilder<> &b, llvm::Module &m, const Instance &in,
                      const Range &fused) {
  llvm::Value *cond = nullptr;
  auto both = [&](llvm::Value *c) { cond = cond ? b.CreateAnd(cond, c) : c; };
  if (in.remap == Remap::Guard) {
    for (unsigned d = 0; d < in.range.dims; ++d)
      if (in.range.global[d] < fused.global[d])
        both(b.CreateICmpULT(callGlobalId(b, m, d),
                             b.getInt64(in.range.offset[d] + in.range.global[d])));
  } else if (in.remap == Remap::Linear && in.range.total() < fused.total()) {
    both(b.CreateICmpULT(linearId(b, m, fused), b.getInt64(in.range.total())));
  }
  return cond;
}

// Inlines every call to a defined function in `f` (a clone for one instance), so that
// helpers asking for work-item builtins are rewritten with it.
Error inlineAll(llvm::Function &f, const std::string &node) {
  for (int round = 0; round < 16; ++round) {
    std::vector<llvm::CallInst *> calls;
    for (llvm::Instruction &i : llvm::instructions(f))
      if (auto *c = llvm::dyn_cast<llvm::CallInst>(&i))
        if (c->getCalledFunction() && !c->getCalledFunction()->isDeclaration()) calls.push_back(c);
    if (calls.empty()) return Error();
    for (llvm::CallInst *c : calls) {
      llvm::InlineFunctionInfo ifi;
      if (!llvm::InlineFunction(*c, ifi).isSuccess())
        return makeError(node + " calls a function that cannot be inlined: cannot remap its "
                                "work-items");
    }
  }
  return makeError(node + " nests helper calls too deeply: cannot remap its work-items");
}

// In `f` (a clone for instance `in`), the work-item builtins answer the instance's own
// nd-range inside the fused one (see Remap). Fails, naming the reason, for what cannot
// be remapped: barriers and group functions (not every work-item of a work-group runs
// the instance), builtins asked in a computed dimension.
Error remapWorkItems(llvm::Function &f, const Instance &in, const Range &fused) {
  const std::string &node = in.node;
  CGRAPH_RETURN_IF_ERROR(inlineAll(f, node));
  std::vector<std::pair<llvm::CallInst *, Wi>> calls;
  for (llvm::Instruction &i : llvm::instructions(f)) {
    auto *call = llvm::dyn_cast<llvm::CallInst>(&i);
    if (!call) continue;
    llvm::Function *c = call->getCalledFunction();
    if (!c) return makeError(node + " makes an indirect call: cannot remap its work-items");
    llvm::StringRef name = c->getName();
    if (name.contains("barrier") || name.contains("work_group_") || name.contains("sub_group"))
      return makeError(node +
                       " has a barrier: it cannot run on fewer work-items than the fused "
                       "range (global sizes " +
                       shapeText(in.range, in.range.global) + " vs " +
                       shapeText(fused, fused.global) + ")");
    Wi k = builtinKind(name);
    if (k == Wi::None) continue;
    if (call->arg_size() == 1 && !llvm::isa<llvm::ConstantInt>(call->getArgOperand(0)))
      return makeError(node + " asks for a work-item value in a computed dimension: cannot remap "
                              "its work-items");
    calls.push_back({call, k});
  }
  llvm::Module &m = *f.getParent();
  llvm::IRBuilder<> b(&*f.getEntryBlock().getFirstInsertionPt());
  const Range &r = in.range;
  // Linear: the instance's global ids from the fused range's linear id
  llvm::Value *lin = nullptr;
  llvm::Value *ids[3] = {nullptr, nullptr, nullptr};
  if (in.remap == Remap::Linear) {
    lin = linearId(b, m, fused);
    llvm::Value *rest = lin;
    for (unsigned d = 0; d < r.dims; ++d) {
      if (d + 1 == r.dims) {
        ids[d] = rest;
      } else {
        ids[d] = b.CreateURem(rest, b.getInt64(r.global[d]));
        rest = b.CreateUDiv(rest, b.getInt64(r.global[d]));
      }
    }
  }
  for (auto &[call, k] : calls) {
    unsigned d = 0;
    if (call->arg_size() == 1)
      d = unsigned(llvm::cast<llvm::ConstantInt>(call->getArgOperand(0))->getZExtValue());
    bool inDims = d < r.dims;
    uint64_t gs = inDims ? r.global[d] : 1;
    llvm::Value *v = nullptr;
    if (in.remap == Remap::Guard) {
      // work-item and work-group ids stay; sizes answer the instance's range
      if (!inDims || r.global[d] == fused.global[d]) continue;
      if (k == Wi::GlobalSize) {
        v = b.getInt64(gs);
      } else if (k == Wi::NumGroups) {
        if (fused.hasLocal()) {
          v = b.getInt64((gs + fused.local[d] - 1) / fused.local[d]);
        } else {
          llvm::CallInst *ls =
              b.CreateCall(builtinDecl(m, "_Z14get_local_sizej", true, false), {b.getInt32(d)});
          ls->setCallingConv(llvm::CallingConv::SPIR_FUNC);
          v = b.CreateUDiv(b.CreateAdd(b.getInt64(gs - 1), ls), ls);
        }
      } else {
        continue;
      }
    } else {
      // Linear: one work-group spanning the instance's range
      switch (k) {
      case Wi::GlobalId:
      case Wi::LocalId:
        v = inDims ? ids[d] : b.getInt64(0);
        break;
      case Wi::GlobalSize:
      case Wi::LocalSize:
      case Wi::EnqueuedLocalSize:
        v = b.getInt64(gs);
        break;
      case Wi::GroupId:
      case Wi::Offset:
        v = b.getInt64(0);
        break;
      case Wi::NumGroups:
        v = b.getInt64(1);
        break;
      case Wi::WorkDim:
        v = b.getInt32(r.dims);
        break;
      case Wi::GlobalLinearId:
      case Wi::LocalLinearId:
        v = lin;
        break;
      case Wi::None:
        continue;
      }
    }
    if (v->getType() != call->getType()) v = b.CreateZExtOrTrunc(v, call->getType());
    call->replaceAllUsesWith(v);
  }
  for (auto &[call, k] : calls)
    if (call->use_empty()) call->eraseFromParent();
  return Error();
}

// `memory`: also forward loads and drop dead stores using alias analysis (the noalias
// parameters): EarlyCSE with MemorySSA, GVN, DSE. Run on the final fused kernel, where a
// slot written by one kernel and read by the next no longer goes through memory.
void runCleanup(llvm::Function &f, bool memory = false) {
  llvm::PassBuilder pb;
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cam;
  llvm::ModuleAnalysisManager mam;
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cam, mam);
  llvm::FunctionPassManager fpm;
  fpm.addPass(llvm::SROAPass());
  fpm.addPass(llvm::EarlyCSEPass(memory));
  if (memory) {
    fpm.addPass(llvm::GVNPass());
    fpm.addPass(llvm::DSEPass());
  }
  fpm.addPass(llvm::SimplifyCFGPass());
  fpm.addPass(llvm::ADCEPass());
  fpm.run(f, fam);
}

void runGlobalDCE(llvm::Module &m) {
  llvm::PassBuilder pb;
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cam;
  llvm::ModuleAnalysisManager mam;
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cam, mam);
  llvm::ModulePassManager mpm;
  mpm.addPass(llvm::GlobalDCEPass());
  mpm.run(m, mam);
}

// Named metadata that every translated module carries once (versions, memory model):
// after linking, keep each distinct operand once.
void dedupeNamedMetadata(llvm::Module &m) {
  for (llvm::NamedMDNode &nmd : m.named_metadata()) {
    std::vector<llvm::MDNode *> ops;
    std::set<llvm::MDNode *> seen;
    for (llvm::MDNode *op : nmd.operands())
      if (seen.insert(op).second) ops.push_back(op);
    if (ops.size() == nmd.getNumOperands()) continue;
    nmd.clearOperands();
    for (llvm::MDNode *op : ops)
      nmd.addOperand(op);
  }
}

llvm::Constant *literal(llvm::Type *t, uint64_t bits) {
  if (auto *it = llvm::dyn_cast<llvm::IntegerType>(t)) return llvm::ConstantInt::get(it, bits);
  if (t->isHalfTy() || t->isFloatTy() || t->isDoubleTy()) {
    unsigned w = t->getPrimitiveSizeInBits();
    llvm::APInt ai(w, w == 64 ? bits : bits & ((uint64_t(1) << w) - 1));
    return llvm::ConstantFP::get(t->getContext(), llvm::APFloat(t->getFltSemantics(), ai));
  }
  return nullptr;
}

std::string literalText(llvm::Constant *c) {
  std::string s;
  llvm::raw_string_ostream os(s);
  if (auto *ci = llvm::dyn_cast<llvm::ConstantInt>(c))
    os << ci->getValue().getSExtValue();
  else if (auto *cf = llvm::dyn_cast<llvm::ConstantFP>(c))
    os << cf->getValueAPF().convertToDouble();
  return os.str();
}

const char *kArgMDKinds[] = {"kernel_arg_addr_space", "kernel_arg_access_qual", "kernel_arg_type",
                             "kernel_arg_type_qual", "kernel_arg_base_type"};

} // namespace

namespace {

// Step 1 of the pipeline: every module the group uses read and linked into `dst`,
// kernels made internal functions, the used ones cleaned. Step 2: how each instance
// accesses each pointer parameter (per function, dimension count and tile shape).
// Key: function, instance (-1: shared by every instance with this shape), own shape
// (dims, sizes), tile shape (dims, local and group counts).
using AccessKey = std::tuple<llvm::Function *, int, uint32_t, uint64_t, uint64_t, uint64_t,
                             std::array<uint64_t, 7>>;
using AccessMap = std::map<AccessKey, std::vector<Access>>;

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

// Why an instance has no tile shape (tileOf), as a remark about `slot`.
std::string tileWhyNot(const IrRequest &req, const Instance &in, const std::string &slot) {
  const std::string tail = ": cannot internalize " + slot + " to local memory";
  if (!req.fused.hasLocal()) return "no local size" + tail;
  if (!req.literal) return "the nd-range has sizes from parameters" + tail;
  if (in.remap == Remap::Linear || in.range.dims != req.fused.dims)
    return in.node + " is remapped linearly (its work-groups change)" + tail;
  for (uint32_t d = 0; d < req.fused.dims; ++d)
    if (req.fused.offset[d]) return "the nd-range has a global offset" + tail;
  return "the global size of " + in.node + " is not a multiple of the local size" + tail;
}

std::string tileText(const TileShape &t) {
  std::string s;
  for (uint32_t d = 0; d < t.dims; ++d)
    s += (d ? "x" : "") + std::to_string(t.local[d]);
  return s;
}

// The type qualifiers of fused parameter `p` from those of every kernel parameter bound
// to it: `const` only where every one is const (a parameter one kernel may write is
// written by the fused kernel), `restrict` only where every one is, `volatile` where
// any one is. Reflection reads these back; the graph's slot usage and hazards follow.
std::string sharedTypeQual(const IrRequest &req, const std::vector<llvm::Function *> &callee,
                           uint32_t p) {
  bool isConst = true, isRestrict = true, isVolatile = false, any = false;
  for (size_t i = 0; i < req.insts.size(); ++i)
    for (size_t q = 0; q < req.insts[i].bind.size(); ++q) {
      if (req.insts[i].bind[q] != p) continue;
      any = true;
      std::string text;
      if (llvm::MDNode *n = callee[i]->getMetadata("kernel_arg_type_qual"))
        if (q < n->getNumOperands())
          if (auto *str = llvm::dyn_cast_or_null<llvm::MDString>(n->getOperand(q).get()))
            text = str->getString().str();
      std::istringstream words(text);
      bool c = false, r = false;
      for (std::string w; words >> w;) {
        c = c || w == "const";
        r = r || w == "restrict";
        isVolatile = isVolatile || w == "volatile";
      }
      isConst = isConst && c;
      isRestrict = isRestrict && r;
    }
  std::string out;
  if (any && isConst) out = "const";
  if (any && isRestrict) out += out.empty() ? "restrict" : " restrict";
  if (isVolatile) out += out.empty() ? "volatile" : " volatile";
  return out;
}

// The attributes of fused parameter `p`: its representative's, less the memory and
// aliasing promises some other kernel bound to it does not make (a parameter one kernel
// only reads and another writes is not readonly in the fused kernel). noalias is
// decided in step 7, where the parameters of one slot are known.
llvm::AttrBuilder sharedParamAttrs(const IrRequest &req,
                                   const std::vector<llvm::Function *> &callee, uint32_t p,
                                   llvm::LLVMContext &ctx) {
  const FusedParam &fp = req.params[p];
  llvm::AttrBuilder ab(ctx, callee[fp.inst]->getAttributes().getParamAttrs(fp.param));
  ab.removeAttribute(llvm::Attribute::NoAlias);
  const llvm::Attribute::AttrKind promises[] = {
      llvm::Attribute::ReadOnly, llvm::Attribute::ReadNone, llvm::Attribute::WriteOnly};
  for (size_t i = 0; i < req.insts.size(); ++i)
    for (size_t q = 0; q < req.insts[i].bind.size(); ++q) {
      if (req.insts[i].bind[q] != p) continue;
      for (llvm::Attribute::AttrKind k : promises)
        if (!callee[i]->hasParamAttribute(unsigned(q), k)) ab.removeAttribute(k);
    }
  return ab;
}

Error prepare(const IrRequest &req, llvm::LLVMContext &ctx, llvm::Module *dst,
              std::vector<llvm::Function *> &callee, AccessMap &analysis,
              std::vector<const std::vector<Access> *> &accessOf) {
  // ---- 1. read and link every module the group uses
  std::set<uint32_t> used;
  for (const Instance &in : req.insts)
    used.insert(in.module);
  bool first = true;
  for (uint32_t mi : used) {
    const KernelModule *km = &(*req.modules)[mi];
    if (km->forms.empty() || km->forms[0].kind != FormKind::SpirV)
      return makeError("module '" + km->name + "' has no SPIR-V form");
    const std::vector<uint8_t> &spv = km->forms[0].bytes;
    Expected<std::unique_ptr<llvm::Module>> m = spirvToLLVM(ctx, spv.data(), spv.size());
    if (!m) return m.error().withContext("module '" + km->name + "'");
    std::string prefix = "m" + std::to_string(mi) + ".";
    for (llvm::Function &f : **m)
      if (!f.isDeclaration()) f.setName(prefix + f.getName().str());
    for (llvm::GlobalVariable &gv : (*m)->globals())
      if (!gv.isDeclaration() && !gv.hasLocalLinkage()) gv.setName(prefix + gv.getName().str());
    if (first) {
      dst->setDataLayout((*m)->getDataLayout());
      dst->setTargetTriple((*m)->getTargetTriple());
      first = false;
    }
    if (llvm::Linker::linkModules(*dst, std::move(*m)))
      return makeError("module '" + km->name + "': linking failed");
  }
  dedupeNamedMetadata(*dst);
  const llvm::DataLayout &dl = dst->getDataLayout();

  // ---- 2. kernels become internal functions; clean and analyse the used ones
  callee.assign(req.insts.size(), nullptr);
  for (size_t i = 0; i < req.insts.size(); ++i) {
    const Instance &in = req.insts[i];
    llvm::Function *f = dst->getFunction("m" + std::to_string(in.module) + "." + in.kernel);
    if (!f || f->isDeclaration())
      return makeError("kernel '" + in.kernel + "' not found in its module");
    if (f->arg_size() != in.bind.size())
      return makeError("kernel '" + in.kernel + "' has " + std::to_string(f->arg_size()) +
                       " parameters but the graph gives " + std::to_string(in.bind.size()));
    callee[i] = f;
  }
  for (llvm::Function &f : *dst) {
    if (f.getCallingConv() != llvm::CallingConv::SPIR_KERNEL) continue;
    f.setCallingConv(llvm::CallingConv::SPIR_FUNC);
    f.setLinkage(llvm::GlobalValue::InternalLinkage);
    for (llvm::User *u : f.users())
      if (auto *cb = llvm::dyn_cast<llvm::CallBase>(u))
        cb->setCallingConv(llvm::CallingConv::SPIR_FUNC);
  }
  std::set<llvm::Function *> cleaned;
  accessOf.assign(req.insts.size(), nullptr);
  for (size_t i = 0; i < req.insts.size(); ++i) {
    llvm::Function *f = callee[i];
    if (cleaned.insert(f).second) runCleanup(*f);
    TileShape t = tileOf(req, req.insts[i]);
    OwnShape own = ownOf(req, req.insts[i]);
    // a multi-dimensional kernel's index usually involves a literal argument (a row
    // length): analysed on a copy with the literals baked in, per instance
    // (only where the fused kernel bakes them in too: a literal left as a parameter can
    // be updated after fusion)
    std::vector<std::pair<unsigned, llvm::Constant *>> literals;
    if (own.dims > 1 && req.constants)
      for (unsigned p = 0; p < f->arg_size(); ++p) {
        const FusedParam &fp = req.params[req.insts[i].bind[p]];
        if (!fp.constCandidate || f->hasParamAttribute(p, llvm::Attribute::ByVal)) continue;
        if (llvm::Constant *c = literal(f->getArg(p)->getType(), fp.bits))
          literals.push_back({p, c});
      }
    AccessKey key{
        f,
        literals.empty() ? -1 : int(i),
        own.dims,
        own.global[0],
        own.global[1],
        own.global[2],
        {t.dims, t.local[0], t.local[1], t.local[2], t.groups[0], t.groups[1], t.groups[2]}};
    auto it = analysis.find(key);
    if (it == analysis.end()) {
      llvm::Function *subject = f;
      if (!literals.empty()) {
        llvm::ValueToValueMapTy vmap;
        subject = llvm::CloneFunction(f, vmap);
        for (auto &[p, c] : literals)
          subject->getArg(p)->replaceAllUsesWith(c);
        runCleanup(*subject);
      }
      std::vector<Access> acc(f->arg_size());
      for (unsigned p = 0; p < f->arg_size(); ++p)
        if (f->getArg(p)->getType()->isPointerTy())
          walkPointer(subject->getArg(p), 0, 0, dl, own, t, acc[p], nullptr);
      if (subject != f) subject->eraseFromParent();
      it = analysis.emplace(key, std::move(acc)).first;
    }
    accessOf[i] = &it->second;
  }
  return Error();
}

// How the instances of a group (or of a part of a chain) use one slot.
struct SlotUse {
  std::vector<uint32_t> insts; // instances touching it
  bool written = false;
  bool own = true;           // every access at the work-item's own index
  bool group = true;         // every access inside the work-item's work-group tile
  uint64_t tileElem = 0;     // element size of the tile accesses
  TileShape tile;            // the tile (dims 0: some user has no tile shape)
  TileStrides tileStrides;   // the strides of its accesses (the same in every user)
  uint64_t ownElem = 0;      // element size of the own-index accesses
  std::set<uint32_t> params; // fused params bound to it (offsets)
  std::string other;         // "k2 reads tmp at another work-item's index"
  std::string outside;       // "k2 reads tmp outside its work-group"
};

std::string whyNotOwn(const IrRequest &req, uint32_t i, const Access &a, const std::string &slot) {
  return req.insts[i].node + " " + a.firstOther + " " + slot +
         (ownOf(req, req.insts[i]).dims ? " at another work-item's index"
                                        : " in a multi-dimensional nd-range with offsets, sizes "
                                          "from parameters or a remapped row length (own-index "
                                          "accesses are not proven there)");
}

// Adds instance i's accesses to `slots`.
void addUses(const IrRequest &req, uint32_t i, const std::vector<Access> &acc,
             std::map<int32_t, SlotUse> &slots) {
  TileShape t = tileOf(req, req.insts[i]);
  for (size_t p = 0; p < req.insts[i].bind.size(); ++p) {
    uint32_t fp = req.insts[i].bind[p];
    int32_t key = req.params[fp].slotKey;
    if (key < 0) continue;
    SlotUse &su = slots[key];
    su.params.insert(fp);
    if (!acc[p].read && !acc[p].write) continue;
    const std::string &slot = (*req.slots)[key].name;
    bool firstUse = su.insts.empty();
    if (su.insts.empty() || su.insts.back() != i) su.insts.push_back(i);
    su.written = su.written || acc[p].write;
    if (!acc[p].own && su.own) {
      su.own = false;
      su.other = whyNotOwn(req, i, acc[p], slot);
    }
    if (acc[p].own && su.own && acc[p].ownElem) {
      if (su.ownElem && su.ownElem != acc[p].ownElem) {
        su.own = false;
        su.other = req.insts[i].node + " accesses " + slot + " with another element size";
      }
      su.ownElem = acc[p].ownElem;
    }
    bool group = acc[p].group && t.dims;
    if (group && su.group && (firstUse || su.tile == t)) {
      su.tile = t;
      if (acc[p].tileElem) {
        if (su.tileElem && su.tileElem != acc[p].tileElem) {
          su.group = false;
          su.outside = req.insts[i].node + " accesses " + slot +
                       " with another element size: cannot internalize to local memory";
        } else if (su.tileStrides.dims && !(su.tileStrides == acc[p].tileStrides)) {
          su.group = false;
          su.outside = req.insts[i].node + " accesses " + slot +
                       " with another row length than the kernels before it: cannot "
                       "internalize to local memory";
        }
        su.tileElem = acc[p].tileElem;
        su.tileStrides = acc[p].tileStrides;
      }
    } else if (su.group) {
      su.group = false;
      su.tile = TileShape();
      if (!t.dims)
        su.outside = tileWhyNot(req, req.insts[i], slot);
      else
        su.outside = req.insts[i].node + " " +
                     (acc[p].firstOutside.empty() ? std::string("accesses") : acc[p].firstOutside) +
                     " " + slot + " outside its work-group: cannot internalize to local memory";
    }
  }
}

// A slot whose accesses a work-group barrier cannot order: written by one instance and
// accessed by another, not only at the work-items' own indices nor inside their
// work-group's tile, or at two offsets. Empty when none.
std::string hazardOf(const IrRequest &req, int32_t key, SlotUse &su) {
  if (su.params.size() > 1 && su.written && (su.own || su.group)) {
    // two offsets into one written slot: addresses may overlap (and tiles are relative
    // to each parameter's own base)
    su.own = false;
    su.group = false;
    su.other = req.insts[su.insts.front()].node + " accesses " + (*req.slots)[key].name +
               " at two offsets (the addresses may overlap)";
    su.outside = su.other + ": cannot internalize to local memory";
  }
  bool shared = su.insts.size() > 1 && su.written;
  if (shared && !su.own && !su.group) return su.other;
  return {};
}

} // namespace

namespace {

bool dependsOnGroups(llvm::Function &f, std::map<llvm::Function *, bool> &memo, int depth = 0) {
  auto it = memo.find(&f);
  if (it != memo.end()) return it->second;
  memo[&f] = true; // recursion: assume the worst
  bool uses = depth > 16;
  for (llvm::Argument &a : f.args())
    if (a.getType()->isPointerTy() && a.getType()->getPointerAddressSpace() == 3) uses = true;
  for (llvm::Instruction &i : llvm::instructions(f)) {
    if (uses) break;
    auto *cb = llvm::dyn_cast<llvm::CallBase>(&i);
    if (!cb) continue;
    llvm::Function *c = cb->getCalledFunction();
    if (!c) {
      uses = true;
      break;
    }
    llvm::StringRef n = c->getName();
    switch (builtinKind(n)) {
    case Wi::LocalId:
    case Wi::LocalSize:
    case Wi::EnqueuedLocalSize:
    case Wi::GroupId:
    case Wi::NumGroups:
    case Wi::LocalLinearId:
      uses = true;
      break;
    default:
      break;
    }
    if (n.contains("barrier") || n.contains("work_group") || n.contains("sub_group") ||
        n.contains("mem_fence"))
      uses = true;
    if (!uses && !c->isDeclaration()) uses = dependsOnGroups(*c, memo, depth + 1);
  }
  for (llvm::GlobalVariable &gv : f.getParent()->globals())
    if (gv.getAddressSpace() == 3) uses = true; // program-scope __local variables
  memo[&f] = uses;
  return uses;
}

} // namespace

Expected<std::map<std::string, bool>> workGroupUse(const KernelModule &km) {
  if (km.forms.empty() || km.forms[0].kind != FormKind::SpirV)
    return makeError("module '" + km.name + "' has no SPIR-V form");
  llvm::LLVMContext ctx;
  const std::vector<uint8_t> &spv = km.forms[0].bytes;
  Expected<std::unique_ptr<llvm::Module>> m = spirvToLLVM(ctx, spv.data(), spv.size());
  if (!m) return m.error().withContext("module '" + km.name + "'");
  std::map<std::string, bool> out;
  std::map<llvm::Function *, bool> memo;
  for (llvm::Function &f : **m)
    if (f.getCallingConv() == llvm::CallingConv::SPIR_KERNEL && !f.isDeclaration())
      out[f.getName().str()] = dependsOnGroups(f, memo);
  return out;
}

Expected<std::vector<Cut>> chainCuts(const IrRequest &req) {
  llvm::LLVMContext ctx;
  auto dst = std::make_unique<llvm::Module>(req.fusedName, ctx);
  std::vector<llvm::Function *> callee;
  AccessMap analysis;
  std::vector<const std::vector<Access> *> accessOf;
  CGRAPH_RETURN_IF_ERROR(prepare(req, ctx, dst.get(), callee, analysis, accessOf));
  std::vector<Cut> cuts;
  std::map<int32_t, SlotUse> seg;
  uint32_t segStart = 0;
  for (uint32_t i = 0; i < req.insts.size(); ++i) {
    std::map<int32_t, SlotUse> with = seg;
    addUses(req, i, *accessOf[i], with);
    std::string reason;
    for (auto &[key, su] : with) {
      reason = hazardOf(req, key, su);
      if (!reason.empty()) break;
    }
    if (!reason.empty() && i > segStart) {
      cuts.push_back({i, reason});
      seg.clear();
      segStart = i;
      addUses(req, i, *accessOf[i], seg);
      continue;
    }
    seg = std::move(with);
  }
  return cuts;
}

// Local memory every OpenCL device has (CL_DEVICE_LOCAL_MEM_SIZE >= 32 KiB): a tile
// larger than this is not internalized.
constexpr uint64_t kLocalLimit = 32768;

Expected<IrResult> buildFusedKernel(const IrRequest &req) {
  IrResult res;
  llvm::LLVMContext ctx;
  auto dst = std::make_unique<llvm::Module>(req.fusedName, ctx);
  std::vector<llvm::Function *> callee;
  AccessMap analysis;
  std::vector<const std::vector<Access> *> accessOf;
  CGRAPH_RETURN_IF_ERROR(prepare(req, ctx, dst.get(), callee, analysis, accessOf));
  const llvm::DataLayout &dl = dst->getDataLayout();

  // ---- 3. per slot: who reads and writes, own-index or inside the work-group tile
  std::map<int32_t, SlotUse> slots;
  for (uint32_t i = 0; i < req.insts.size(); ++i)
    addUses(req, i, *accessOf[i], slots);
  bool barriersNeeded = req.hasLocalMem;
  for (auto &[key, su] : slots) {
    std::string h = hazardOf(req, key, su);
    bool shared = su.insts.size() > 1 && su.written;
    if (shared && !su.own) barriersNeeded = true;
    if (!h.empty() && res.hazard.empty() && !req.noBarriers) {
      res.hazard = h;
      res.hazardSplit = su.insts[1];
    }
  }
  res.barriers = req.insts.size() > 1 && barriersNeeded && !req.noBarriers;

  // ---- 4. the fused entry point: every kernel called in order, then inlined
  std::vector<llvm::Type *> ptypes;
  for (const FusedParam &fp : req.params)
    ptypes.push_back(callee[fp.inst]->getArg(fp.param)->getType());
  auto *fty = llvm::FunctionType::get(llvm::Type::getVoidTy(ctx), ptypes, false);
  llvm::Function *fused = llvm::Function::Create(fty, llvm::GlobalValue::ExternalLinkage,
                                                 req.fusedName + ".tmp", dst.get());
  fused->setCallingConv(llvm::CallingConv::SPIR_KERNEL);
  for (size_t p = 0; p < req.params.size(); ++p) {
    const FusedParam &fp = req.params[p];
    fused->getArg(p)->setName(fp.name);
    fused->addParamAttrs(p, sharedParamAttrs(req, callee, uint32_t(p), ctx));
  }
  llvm::BasicBlock *bb = llvm::BasicBlock::Create(ctx, "entry", fused);
  llvm::IRBuilder<> b(bb);
  llvm::FunctionCallee barrier = dst->getOrInsertFunction(
      "_Z7barrierj", llvm::FunctionType::get(b.getVoidTy(), {b.getInt32Ty()}, false));
  if (auto *bf = llvm::dyn_cast<llvm::Function>(barrier.getCallee())) {
    bf->setCallingConv(llvm::CallingConv::SPIR_FUNC);
    bf->addFnAttr(llvm::Attribute::Convergent);
    bf->addFnAttr(llvm::Attribute::NoUnwind);
  }
  std::vector<llvm::CallInst *> calls;
  for (size_t i = 0; i < req.insts.size(); ++i) {
    if (i > 0 && res.barriers) {
      // CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE
      llvm::CallInst *c = b.CreateCall(barrier, {b.getInt32(3)});
      c->setCallingConv(llvm::CallingConv::SPIR_FUNC);
    }
    llvm::Function *f = callee[i];
    std::vector<llvm::Value *> args;
    for (size_t p = 0; p < f->arg_size(); ++p) {
      llvm::Value *v = fused->getArg(req.insts[i].bind[p]);
      llvm::Type *want = f->getArg(p)->getType();
      if (v->getType() != want) {
        if (v->getType()->isPointerTy() && want->isPointerTy() &&
            v->getType()->getPointerAddressSpace() == want->getPointerAddressSpace())
          v = b.CreatePointerCast(v, want);
        else
          return makeError("kernel '" + req.insts[i].kernel + "' parameter " + std::to_string(p) +
                           " has another type than the argument it shares");
      }
      args.push_back(v);
    }
    const Instance &in = req.insts[i];
    if (req.literal && in.remap != Remap::Same) {
      // work-item remapping: this kernel's range is not the fused one
      llvm::ValueToValueMapTy vmap;
      llvm::Function *clone = llvm::CloneFunction(f, vmap);
      clone->setName(f->getName() + ".remap" + std::to_string(i));
      CGRAPH_RETURN_IF_ERROR(remapWorkItems(*clone, in, req.fused));
      llvm::Value *cond = guardFor(b, *dst, in, req.fused);
      llvm::BasicBlock *cont = nullptr;
      if (cond) {
        llvm::BasicBlock *run = llvm::BasicBlock::Create(ctx, "range" + std::to_string(i), fused);
        cont = llvm::BasicBlock::Create(ctx, "after" + std::to_string(i), fused);
        b.CreateCondBr(cond, run, cont);
        b.SetInsertPoint(run);
      }
      llvm::CallInst *c = b.CreateCall(clone, args);
      c->setCallingConv(llvm::CallingConv::SPIR_FUNC);
      calls.push_back(c);
      if (cont) {
        b.CreateBr(cont);
        b.SetInsertPoint(cont);
      }
      std::string g = shapeText(in.range, in.range.global),
                  fg = shapeText(req.fused, req.fused.global);
      if (in.remap == Remap::Guard)
        res.remarks.push_back("remapped " + in.node + ": global size " + g + " of " + fg +
                              ", the other work-items skip it");
      else
        res.remarks.push_back(
            "remapped " + in.node + ": global size " + g + " from the linear id of " + fg +
            (in.range.total() < req.fused.total()
                 ? ", the work-items from " + std::to_string(in.range.total()) + " on skip it"
                 : std::string()));
      continue;
    }
    llvm::CallInst *c = b.CreateCall(f, args);
    c->setCallingConv(llvm::CallingConv::SPIR_FUNC);
    calls.push_back(c);
  }
  b.CreateRetVoid();
  for (llvm::CallInst *c : calls) {
    llvm::InlineFunctionInfo ifi;
    llvm::InlineResult r = llvm::InlineFunction(*c, ifi);
    if (!r.isSuccess()) return makeError(std::string("inlining failed: ") + r.getFailureReason());
  }

  // ---- 5. constants
  res.kept.assign(req.params.size(), true);
  for (size_t p = 0; p < req.params.size(); ++p) {
    const FusedParam &fp = req.params[p];
    if (!fp.constCandidate || !req.constants) continue;
    llvm::Constant *c = literal(fused->getArg(p)->getType(), fp.bits);
    if (!c || fused->hasParamAttribute(p, llvm::Attribute::ByVal)) continue;
    fused->getArg(p)->replaceAllUsesWith(c);
    res.kept[p] = false;
    res.baked.push_back(uint32_t(p));
    res.remarks.push_back("constant " + fp.name + " = " + literalText(c));
  }
  runCleanup(*fused);

  // ---- 6. internalization: private memory where every access is at the work-item's
  // own index, else local memory where every access stays in the work-group's tile
  // (accesses rewritten to index % tile against a placeholder that becomes the fused
  // kernel's new __local parameter in step 7)
  std::map<size_t, llvm::Argument *> localArg; // FusedParam -> placeholder
  std::vector<std::unique_ptr<llvm::Argument>> placeholders;
  uint64_t localUsed = 0; // bytes of the tiles so far
  auto sameGlobal = [](const Range &a, const Range &b) {
    if (a.dims != b.dims) return false;
    for (uint32_t d = 0; d < a.dims; ++d)
      if (a.global[d] != b.global[d]) return false;
    return true;
  };
  if (req.internalize) {
    for (size_t p = 0; p < req.params.size(); ++p) {
      const FusedParam &fp = req.params[p];
      if (!fp.internalCandidate || fp.slotKey < 0) continue;
      const SlotUse &su = slots[fp.slotKey];
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
        // Kernels of different sizes (guarded or linearly remapped): by the seed's rule 8
        // a work-item has the same global linear id in every kernel of the fused range,
        // and own-index accesses are at that id, so one private variable per work-item
        // still holds its element from kernel to kernel. What a private variable cannot
        // hold is an element no kernel of the group wrote: every kernel reading the slot
        // must run on no more work-items than a kernel before it that writes it (else
        // it reads elements written outside the group, zeros in the unfused graph).
        // Local memory needs every kernel on the whole fused range (refused below).
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
            why = req.insts[j].node + " reads " + sname + " on " + std::to_string(need) +
                  " work-items, " +
                  (by.empty() ? std::string("no kernel before it writes it")
                              : "the kernels before it write it on " + std::to_string(covered) +
                                    " (" + by + ")") +
                  ": the other elements are not in any work-item's private memory (kernels of "
                  "different global sizes share a private variable only at the same global "
                  "linear id, seed rule 8): cannot internalize to private memory";
        }
        if (!why.empty()) {
          res.remarks.push_back(why);
          continue;
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
          Access acc;
          std::vector<llvm::GetElementPtrInst *> roots;
          OwnShape fusedShape;
          fusedShape.dims = req.literal || req.fused.dims == 1 ? req.fused.dims : 0;
          for (uint32_t d = 0; d < 3; ++d)
            fusedShape.global[d] = req.fused.global[d];
          for (uint32_t d = 0; d < 3; ++d)
            if (req.fused.offset[d] && req.fused.dims > 1) fusedShape.dims = 0;
          walkPointer(fused->getArg(p), 0, 0, dl, fusedShape, TileShape(), acc, &roots);
          if (!acc.own) { // the fused body should agree with the kernels' analysis
            res.remarks.push_back(sname + " is accessed at another work-item's index in the "
                                          "fused kernel: cannot internalize");
            continue;
          }
          res.kept[p] = false;
          res.internalized.push_back(uint32_t(p));
          if (roots.empty()) continue; // never accessed: the argument simply goes
          llvm::Type *elem = roots.front()->getSourceElementType();
          llvm::IRBuilder<> eb(&*fused->getEntryBlock().getFirstInsertionPt());
          llvm::AllocaInst *var = eb.CreateAlloca(elem, nullptr, sname + ".private");
          for (llvm::GetElementPtrInst *g : roots) {
            llvm::IRBuilder<> gb(g);
            llvm::Value *np = gb.CreatePointerCast(var, g->getResultElementType()->getPointerTo(0));
            rewriteToPrivate(g, np);
            g->eraseFromParent();
          }
          // what is left of the parameter (casts of the base) is dead
          for (llvm::User *u : llvm::make_early_inc_range(fused->getArg(p)->users()))
            if (auto *inst = llvm::dyn_cast<llvm::Instruction>(u))
              llvm::RecursivelyDeleteTriviallyDeadInstructions(inst);
          if (!fused->getArg(p)->use_empty())
            return makeError("internal error: slot '" + sname +
                             "' still used after internalization");
          res.remarks.push_back("internalized " + sname + " as a private " +
                                std::to_string(dl.getTypeAllocSize(elem)) + "-byte variable");
          continue;
        }
        if (fp.memory == Memory::Private) continue;
      }
      // local memory
      auto refuseLocal = [&](const std::string &why) {
        if (!privateWhy.empty() && fp.memory == Memory::Any) res.remarks.push_back(privateWhy);
        res.remarks.push_back(why);
      };
      if (!su.group) {
        refuseLocal(su.outside);
        continue;
      }
      if (!fusedSize) {
        refuseLocal("the kernels using " + sname +
                    " run on part of the fused range: cannot internalize to local memory");
        continue;
      }
      const TileShape &tile = su.tile;
      uint64_t bytes = tile.items() * su.tileElem;
      if (!bytes) {
        refuseLocal(sname + ": no access to tile: cannot internalize to local memory");
        continue;
      }
      if (localUsed + bytes > kLocalLimit) {
        refuseLocal(sname + " needs " + std::to_string(bytes) +
                    " bytes of local memory per work-group, " + std::to_string(localUsed + bytes) +
                    " in all, more than the " + std::to_string(kLocalLimit) +
                    " every OpenCL device has: cannot internalize to local memory");
        continue;
      }
      Access acc;
      std::vector<llvm::GetElementPtrInst *> roots;
      walkPointer(fused->getArg(p), 0, 0, dl, OwnShape(), tile, acc, &roots);
      bool sameElem = true;
      for (llvm::GetElementPtrInst *g : roots) {
        TileStrides st;
        sameElem = sameElem && dl.getTypeAllocSize(g->getSourceElementType()) == su.tileElem &&
                   inTile(g->getOperand(1), tile, &st) && st == su.tileStrides;
      }
      if (!acc.group || roots.empty() || !sameElem) {
        refuseLocal(sname + " is accessed outside the work-group's tile in the fused "
                            "kernel: cannot internalize to local memory");
        continue;
      }
      llvm::Type *elem = roots.front()->getSourceElementType();
      auto ph = std::make_unique<llvm::Argument>(elem->getPointerTo(3), sname + ".local");
      for (llvm::GetElementPtrInst *g : roots) {
        llvm::IRBuilder<> gb(g);
        llvm::Value *idx = g->getOperand(1);
        llvm::Value *inTileIdx = tileIndex(gb, idx, tile, su.tileStrides);
        llvm::Value *base =
            gb.CreatePointerCast(ph.get(), g->getSourceElementType()->getPointerTo(3));
        llvm::Value *np = gb.CreateGEP(g->getSourceElementType(), base, inTileIdx);
        rewriteToPrivate(g, np);
        g->eraseFromParent();
      }
      for (llvm::User *u : llvm::make_early_inc_range(fused->getArg(p)->users()))
        if (auto *inst = llvm::dyn_cast<llvm::Instruction>(u))
          llvm::RecursivelyDeleteTriviallyDeadInstructions(inst);
      if (!fused->getArg(p)->use_empty())
        return makeError("internal error: slot '" + sname + "' still used after internalization");
      localUsed += bytes;
      localArg[p] = ph.get();
      placeholders.push_back(std::move(ph));
      res.localized.push_back({uint32_t(p), bytes});
      res.remarks.push_back("internalized " + sname + " as a " + std::to_string(bytes) +
                            "-byte local tile per work-group (" + tileText(tile) + " elements of " +
                            std::to_string(su.tileElem) + " bytes" +
                            (tile.dims > 1 ? ", rows of " + std::to_string(su.tileStrides.s[1]) +
                                                 " elements in global memory"
                                           : std::string()) +
                            ")");
    }
    runCleanup(*fused);
  }

  // ---- 7. the final signature: the kept parameters
  std::vector<llvm::Type *> keptTypes;
  std::vector<unsigned> keptIdx;
  for (size_t p = 0; p < req.params.size(); ++p)
    if (res.kept[p]) {
      keptTypes.push_back(localArg.count(p) ? localArg[p]->getType() : ptypes[p]);
      keptIdx.push_back(unsigned(p));
    }
  llvm::Function *nf =
      llvm::Function::Create(llvm::FunctionType::get(llvm::Type::getVoidTy(ctx), keptTypes, false),
                             llvm::GlobalValue::ExternalLinkage, req.fusedName, dst.get());
  nf->setCallingConv(llvm::CallingConv::SPIR_KERNEL);
  nf->addFnAttr(llvm::Attribute::NoUnwind);
  nf->getBasicBlockList().splice(nf->begin(), fused->getBasicBlockList());
  std::vector<std::vector<llvm::Metadata *>> md(std::size(kArgMDKinds));
  std::vector<llvm::Metadata *> names;
  for (size_t k = 0; k < keptIdx.size(); ++k) {
    unsigned p = keptIdx[k];
    llvm::Argument *oldArg = fused->getArg(p), *newArg = nf->getArg(k);
    newArg->setName(req.params[p].name);
    auto local = localArg.find(p);
    if (local != localArg.end()) {
      // the slot promoted to local memory: a __local pointer, no attributes of the slot's
      local->second->replaceAllUsesWith(newArg);
      llvm::Function *rep = callee[req.params[p].inst];
      for (size_t m = 0; m < std::size(kArgMDKinds); ++m) {
        llvm::MDNode *n = rep->getMetadata(kArgMDKinds[m]);
        if (!n || req.params[p].param >= n->getNumOperands()) continue;
        llvm::StringRef kind = kArgMDKinds[m];
        if (kind == "kernel_arg_addr_space")
          md[m].push_back(llvm::ConstantAsMetadata::get(llvm::ConstantInt::get(b.getInt32Ty(), 3)));
        else if (kind == "kernel_arg_access_qual")
          md[m].push_back(llvm::MDString::get(ctx, "none"));
        else if (kind == "kernel_arg_type_qual")
          md[m].push_back(llvm::MDString::get(ctx, ""));
        else
          md[m].push_back(n->getOperand(req.params[p].param).get());
      }
      names.push_back(llvm::MDString::get(ctx, req.params[p].name));
      continue;
    }
    oldArg->replaceAllUsesWith(newArg);
    nf->addParamAttrs(k, llvm::AttrBuilder(ctx, fused->getAttributes().getParamAttrs(p)));
    // noalias on the parameter of a slot that has exactly one parameter (one offset):
    // sound only because the runtime refuses bindings where a written slot overlaps
    // another slot (lib/runtime enqueue), and distinct runtime-owned slots are distinct
    // allocations. It lets the backend keep values in registers across the former
    // kernel boundaries (a store through y no longer forces x to be reloaded).
    if (req.noAlias && req.params[p].slotKey >= 0 && ptypes[p]->isPointerTy() &&
        slots[req.params[p].slotKey].params.size() == 1 &&
        !fused->hasParamAttribute(p, llvm::Attribute::ByVal))
      nf->addParamAttr(k, llvm::Attribute::NoAlias);
    llvm::Function *rep = callee[req.params[p].inst];
    for (size_t m = 0; m < std::size(kArgMDKinds); ++m) {
      llvm::MDNode *n = rep->getMetadata(kArgMDKinds[m]);
      if (!n || req.params[p].param >= n->getNumOperands()) continue;
      if (llvm::StringRef(kArgMDKinds[m]) == "kernel_arg_type_qual")
        md[m].push_back(llvm::MDString::get(ctx, sharedTypeQual(req, callee, uint32_t(p))));
      else
        md[m].push_back(n->getOperand(req.params[p].param).get());
    }
    names.push_back(llvm::MDString::get(ctx, req.params[p].name));
  }
  for (size_t m = 0; m < std::size(kArgMDKinds); ++m)
    if (md[m].size() == keptIdx.size())
      nf->setMetadata(kArgMDKinds[m], llvm::MDNode::get(ctx, md[m]));
  nf->setMetadata("kernel_arg_name", llvm::MDNode::get(ctx, names));
  for (llvm::Function *f : callee)
    if (llvm::MDNode *r = f->getMetadata("reqd_work_group_size")) {
      nf->setMetadata("reqd_work_group_size", r);
      break;
    }
  fused->eraseFromParent();
  // Only for barrier-free kernels: forwarding a value across a barrier makes it live
  // across the barrier, which the cpu backend's barrier cut got wrong in one case (the
  // local.json group: a loop's result used after the next barrier).
  if (req.noAlias && !res.barriers && !req.hasLocalMem) runCleanup(*nf, true);
  runGlobalDCE(*dst);
  // the cost model's private memory: arrays the cleanup left on the stack
  for (llvm::Instruction &i : llvm::instructions(*nf))
    if (auto *a = llvm::dyn_cast<llvm::AllocaInst>(&i))
      if (auto *n = llvm::dyn_cast<llvm::ConstantInt>(a->getArraySize()))
        res.privateBytes += dl.getTypeAllocSize(a->getAllocatedType()) * n->getZExtValue();

  std::string verifyText;
  llvm::raw_string_ostream vs(verifyText);
  if (llvm::verifyModule(*dst, &vs))
    return makeError("fused module is invalid LLVM IR: " + vs.str());
  if (req.keepIR) {
    llvm::raw_string_ostream os(res.ir);
    dst->print(os, nullptr);
  }

  // ---- 8. back to SPIR-V, validated like any input
  SPIRV::TranslatorOpts topts(SPIRV::VersionNumber::SPIRV_1_0);
  topts.setPreserveOCLKernelArgTypeMetadataThroughString(true);
  std::ostringstream out;
  std::string err;
  if (!llvm::writeSpirv(dst.get(), topts, out, err))
    return makeError("SPIR-V translation of the fused kernel failed: " + err);
  std::string bytes = out.str();
  res.spirv.assign(bytes.begin(), bytes.end());
  CGRAPH_RETURN_IF_ERROR(validateSpirv(res.spirv.data(), res.spirv.size(), req.fusedName));
  return res;
}

} // namespace detail
} // namespace fusion
} // namespace cgraph
