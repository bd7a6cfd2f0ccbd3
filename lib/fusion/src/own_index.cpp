// Own-index analysis: whether an index is the work-item's global linear id in its
// kernel's range, so that every work-item touches only its own element (no barrier
// needed between kernels; the slot may become one private variable per work-item).
#include "ir_internal.h"

#include <optional>

#include <llvm/IR/Constants.h>
#include <llvm/IR/InstrTypes.h>
#include <llvm/IR/Instructions.h>

namespace cgraph {
namespace fusion {
namespace detail {
namespace {

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

// An index as sum_d k[d] * get_global_id(d) + c (affine below).
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

} // namespace

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
} // namespace detail
} // namespace fusion
} // namespace cgraph
