// Work-group tile analysis. An index as sum_d (a_d * get_group_id(d) + b_d * get_local_id(d)) +
// sum_k c_k * v_k + c, the v_k values of known ranges (a remainder, a select, ...), in a range of
// `dims` dimensions of work-groups of local[d] work-items (uniform groups, offset 0). An access
// stays inside its work-group's tile when the index is, in a mixed radix of strides
// S_0 = 1 < S_1 < S_2 (each a multiple of the one before, S_{d+1} >= S_d * global[d]),
//   index = sum_d S_d * (local[d] * group_id(d) + e_d)   with e_d in [0, local[d])
// (1-D: index = local * group_id + e, e in [0, local)). Then e_d = (index / S_d) %
// (S_{d+1} / S_d) % local[d] (the last dimension: (index / S_d) % local[d]), the element's
// place in the tile is sum_d e_d * local[0] * ... * local[d-1], and two work-groups never
// reach the same element. A linearized `index % (tile elements)`, right in 1-D, would mix
// rows of a 2-D tile: each dimension is taken apart on its own.
#include "ir_internal.h"

#include <optional>

#include <llvm/IR/ConstantRange.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/InstrTypes.h>
#include <llvm/IR/Instructions.h>

namespace cgraph {
namespace fusion {
namespace detail {
namespace {

struct Term {
  int64_t coef = 1;
  llvm::ConstantRange r{64, true};
};

struct Lin {
  int64_t a[3] = {0, 0, 0}, b[3] = {0, 0, 0};
  std::vector<Term> terms;
  int64_t c = 0;
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

// A work-item builtin (`kind`, asked in dimension `dim`) as a Lin.
std::optional<Lin> builtinLin(Wi kind, unsigned dim, const TileShape &t) {
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

// An integer cast `c` of a value `x`: `x` itself where the cast keeps every value.
std::optional<Lin> castLin(llvm::CastInst *c, std::optional<Lin> x, const TileShape &t) {
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

// A select between `x` and `y`: where both have the same ids, those ids plus one term
// of every value the rest of either can take; else one term of every value.
Lin selectLin(const Lin &x, const Lin &y, const TileShape &t) {
  auto sameIds = [](const Lin &p, const Lin &q) {
    for (int d = 0; d < 3; ++d)
      if (p.a[d] != q.a[d] || p.b[d] != q.b[d]) return false;
    return true;
  };
  // the part of `l` that is not a group or local id
  auto rest = [&](const Lin &l) {
    Lin r = l;
    for (int d = 0; d < 3; ++d)
      r.a[d] = r.b[d] = 0;
    return whole(r, t);
  };
  if (sameIds(x, y)) {
    Lin r = x;
    r.terms.clear();
    r.c = 0;
    Lin p = pureLin(rest(x).unionWith(rest(y)));
    r.terms = p.terms;
    r.c = p.c;
    return r;
  }
  return pureLin(whole(x, t).unionWith(whole(y, t)));
}

// Whether `l` is a constant, which goes to `c`.
bool constantLin(const Lin &l, int64_t *c) {
  for (int d = 0; d < 3; ++d)
    if (l.a[d] || l.b[d]) return false;
  if (!l.terms.empty()) return false;
  *c = l.c;
  return true;
}

// `l` multiplied by `k`.
void scaleLin(Lin &l, int64_t k) {
  for (int d = 0; d < 3; ++d) {
    l.a[d] *= k;
    l.b[d] *= k;
  }
  for (Term &term : l.terms)
    term.coef *= k;
  l.c *= k;
}

// A binary operator `op` on `x` and `y`: linear where it can be (add, sub, multiplying
// or shifting by a constant), else one term of every value it can take.
std::optional<Lin> binaryLin(llvm::Instruction::BinaryOps op, std::optional<Lin> x,
                             std::optional<Lin> y, const TileShape &t) {
  int64_t c = 0;
  switch (op) {
  case llvm::Instruction::Add:
  case llvm::Instruction::Sub: {
    if (op == llvm::Instruction::Sub) scaleLin(*y, -1);
    for (int d = 0; d < 3; ++d) {
      x->a[d] += y->a[d];
      x->b[d] += y->b[d];
    }
    x->terms.insert(x->terms.end(), y->terms.begin(), y->terms.end());
    x->c += y->c;
    return x;
  }
  case llvm::Instruction::Mul:
    if (constantLin(*y, &c) || (constantLin(*x, &c) && (std::swap(x, y), true))) {
      scaleLin(*x, c);
      return x;
    }
    return pureLin(whole(*x, t).multiply(whole(*y, t)));
  case llvm::Instruction::Shl:
    if (constantLin(*y, &c) && c >= 0 && c < 32) {
      scaleLin(*x, int64_t(1) << c);
      return x;
    }
    return std::nullopt;
  default:
    return pureLin(whole(*x, t).binaryOp(op, whole(*y, t)));
  }
}

// An index as a Lin over the tile shape `t`; nullopt where it is not one.
std::optional<Lin> linear(llvm::Value *v, const TileShape &t, int depth = 0) {
  if (depth > 24 || !v->getType()->isIntegerTy() || v->getType()->getIntegerBitWidth() > 64)
    return std::nullopt;
  if (auto *c = llvm::dyn_cast<llvm::ConstantInt>(v)) return pureLin(point(c->getSExtValue()));
  unsigned dim = 0;
  Wi kind = builtinOf(v, &dim);
  if (kind != Wi::None) return builtinLin(kind, dim, t);
  if (auto *c = llvm::dyn_cast<llvm::CastInst>(v)) {
    if (!c->getOperand(0)->getType()->isIntegerTy()) return std::nullopt;
    std::optional<Lin> x = linear(c->getOperand(0), t, depth + 1);
    if (!x) return std::nullopt;
    return castLin(c, std::move(x), t);
  }
  if (auto *sel = llvm::dyn_cast<llvm::SelectInst>(v)) {
    std::optional<Lin> x = linear(sel->getTrueValue(), t, depth + 1);
    std::optional<Lin> y = x ? linear(sel->getFalseValue(), t, depth + 1) : std::nullopt;
    if (!y) return std::nullopt;
    return selectLin(*x, *y, t);
  }
  auto *bo = llvm::dyn_cast<llvm::BinaryOperator>(v);
  if (!bo) return std::nullopt;
  std::optional<Lin> x = linear(bo->getOperand(0), t, depth + 1);
  std::optional<Lin> y = x ? linear(bo->getOperand(1), t, depth + 1) : std::nullopt;
  if (!y) return std::nullopt;
  return binaryLin(bo->getOpcode(), std::move(x), std::move(y), t);
}

} // namespace

// True when `idx` (a GEP index) stays inside the work-item's work-group tile; its
// strides go to `strides`.
bool inTile(llvm::Value *idx, const TileShape &t, TileStrides *strides) {
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

std::string tileText(const TileShape &t) {
  std::string s;
  for (uint32_t d = 0; d < t.dims; ++d)
    s += (d ? "x" : "") + std::to_string(t.local[d]);
  return s;
}

} // namespace detail
} // namespace fusion
} // namespace cgraph
