// Work-item guards: narrowing the x loop of a work-group to the work-items that do
// something (the lowering uses it; LLVM types inside the CPU backend only).
//
// Many work-items test their x id against a group-uniform bound before doing anything:
// `if (i < count) ...` in a barrier-free kernel, `if (lid < s) scratch[lid] += ...` in
// each step of a tree reduction. Run as one x loop over the whole group, that test is a
// branch per work-item or, once the loop is vectorized, a mask on every load and store
// (slow on x86: vmaskmovps stores are microcoded on AMD) for work-items of which most do
// nothing (7 of 8 reduction steps leave more than half of the group idle). When the test
// has the form `V(x) < B` (<=, signed or unsigned; `>`/`>=` taken as the negation), where
// V(x) is the x id plus a group-uniform value (possibly truncated and extended: a
// global id as a uint) and B is group-uniform, and the work-items that fail it do
// nothing but return (and store the carried uniform values, every work-item alike), the
// wrapper computes how many leading work-items pass it and runs the x loop over those
// only, calling a clone of the function whose test always passes: no branch and no mask.
// Where the failing work-items do more (a fused kernel: the next kernel's part follows
// the first one's `if (x >= n) skip`), they run the original function after that loop.
// The test may be one side of `||` or `&&` whose other side is group-uniform.
// A barrier region must still return its next region and carried values: one idle
// work-item (the last) runs the original function after the loop. Where V(x) might
// wrap over the group, or the guard is not reached (uniform branches before it chose
// another path), every work-item runs the original function.
//
// Thread-safety: operates on one llvm::Function, whose context the caller owns.
#pragma once

#include <llvm/IR/Function.h>
#include <llvm/IR/IRBuilder.h>

#include <functional>
#include <utility>
#include <vector>

namespace cgraph::codegen::cpu {

struct WorkItemGuard {
  llvm::Function *low = nullptr; // the function with the guard always passing; null: none
  // Uniform conditions on the path from the entry to the guard, with the value each must
  // have for the guard to be reached (values of the function, cloned by the wrapper).
  std::vector<std::pair<llvm::Value *, bool>> path;
  llvm::Value *offsetExpr = nullptr; // V(x) before truncation/extension: an i64 add chain over x
  unsigned width = 64;               // V's wrap width (a trunc of offsetExpr), bits
  bool extended = false;             // V is zero- or sign-extended (per isSigned) before the compare
  bool isSigned = false;
  bool orEqual = false;              // `V(x) <= B`
  llvm::Value *bound = nullptr;      // B
  // The work-items that fail the guard do nothing but return (the x loop skips them);
  // else they run the original function.
  bool idleRest = true;
};

// Looks for a guard in `f` (parameters: `numParams` kernel params, then x/y/z local ids,
// the local block, the ctx values, then anything else; parameters from `firstOut` on
// point at carried uniform values, the only memory an idle work-item may write). `f`'s
// allocas should have been promoted. On success `g.low` is a new internal function in
// f's module. Returns false (and leaves `g` empty) when there is none.
bool findWorkItemGuard(llvm::Function &f, unsigned numParams, unsigned firstOut, WorkItemGuard &g);

// In the wrapper, at the x level: the number of leading work-items that pass the guard
// (0..lx), and whether that count may be used (`usable`: the guard is reached and V does
// not wrap over the group; otherwise every work-item must run the original function).
// `callArgs`: the operands the wrapper passes to `f` (x's may be anything).
void emitGuardCount(llvm::IRBuilder<> &b, const WorkItemGuard &g,
                    const std::vector<llvm::Value *> &callArgs, unsigned numParams,
                    llvm::Value *lx, llvm::Value *&count, llvm::Value *&usable);

// Division by a group-uniform value of an x-affine one: `i % cols`, `i / cols` with i
// the x id plus a group-uniform value (add_bias's `bias[i % cols]`). A scalar division
// per work-item, and a gather the vectorizers leave alone. Over a run of consecutive
// work-items where the quotient does not change, the remainder is the first one plus
// the distance: the wrapper cuts the x loop into such runs (one division per run) and
// calls a clone that takes the quotient and remainder as two extra parameters, so
// `bias[i % cols]` is a contiguous load. Unsigned divisions (udiv/urem) only.
struct XDivision {
  llvm::Function *seg = nullptr; // the clone taking (quotient, remainder) last; null: none
  llvm::Value *offsetExpr = nullptr; // the dividend before truncation: an i64 add chain over x
  unsigned width = 64;               // the dividend's width (a trunc of offsetExpr)
  llvm::Value *divisor = nullptr;
};

// Looks for such divisions in `f` (parameters as for findWorkItemGuard); all of them
// must share one dividend and divisor. On success `d.seg` is a new internal function.
bool findXDivision(llvm::Function &f, unsigned numParams, XDivision &d);

// The x loop over [0, end) (end >= 1) calling `plain` per work-item, or, where the
// divisor is not 0 and the dividend does not wrap over the range, in runs calling
// `d.seg` with `extra` set to {quotient, remainder}. `item(f, x)` emits the call of f
// for work-item x.
void emitDivisionRuns(llvm::IRBuilder<> &b, const XDivision &d, const std::vector<llvm::Value *> &callArgs,
                      unsigned numParams, llvm::Value *end, llvm::Function *plain,
                      std::vector<llvm::Value *> &extra,
                      const std::function<void(llvm::Function *, llvm::Value *)> &item,
                      const std::function<void(llvm::Value *, llvm::Value *, const char *,
                                               llvm::Function *)> &loop);

// Clamped x indices: a min/max (smin/smax/umin/umax, as an intrinsic or in select form)
// of an x-affine value V against a group-uniform bound, or a select on `V pred B` whose
// clamped arm is B itself (OpenCL C's clamp-to-edge `v < lo ? lo : (v > hi ? hi : v)`);
// V(x) is the x id plus a group-uniform value through add, sub and trunc (`int x =
// get_global_id(0)`, `x - 1`). Such an index is not provably consecutive across
// work-items, so the vectorized x loop gathers (examples/image's sobel: 8 clamped loads,
// 144 gathers in its wrapper, 1.2x PoCL's time). Over the work-items where none of them
// fires (the interior of an image), a clone in which each is replaced by the arm it
// picks there (V for a min/max) computes the same values with consecutive indices. The
// wrapper computes that range at run time and runs the clone over it, the original
// function over the work-items before and after it (the edges still clamp).
// Legality: V(x) == V(0) + x modulo 2^w; over a range where V(0) + x (exact) stays
// within V's w-bit range, V does not wrap and is increasing, so each compare of V with
// its bound holds for the whole range iff it holds at the range's first work-item (a
// lower bound) or last one (an upper bound). emitClampRange intersects these ranges.
struct XClamps {
  llvm::Function *inner = nullptr; // the clone without the clamps; null: none found
  struct Clamp {
    llvm::Value *v = nullptr;     // V(x) (a value of `inner`): x plus invariants, add/sub/trunc
    llvm::Value *bound = nullptr; // the group-uniform bound (a value of `inner`)
    bool isSigned = false;
    // Where the clamp does not fire: V >= bound + adjust (isLower: max(V, bound), or a
    // select that clamps below), else V <= bound + adjust.
    bool isLower = false;
    int adjust = 0; // -1, 0 or 1 (a strict compare)
  };
  std::vector<Clamp> clamps;
};

// Looks for such clamps in `f` (parameters as for findWorkItemGuard; allocas promoted).
// On success `c.inner` is a new internal function (f's parameters) in f's module, with
// each clamp replaced and, where a clamped V is extended to 64 bits, the extension
// written as ext(V(0)) + x (exact where the clone runs). Returns false (and leaves `c`
// empty) when there is none.
bool findXClamps(llvm::Function &f, unsigned numParams, XClamps &c);

// In the wrapper, at the x level: [lo, hi) within [begin, end) (begin <= end), the
// work-items on which no clamp of `c` fires and no clamped V wraps (lo == hi where
// there are none). `callArgs` as for emitGuardCount.
void emitClampRange(llvm::IRBuilder<> &b, const XClamps &c, const std::vector<llvm::Value *> &callArgs,
                    unsigned numParams, llvm::Value *begin, llvm::Value *end, llvm::Value *&lo,
                    llvm::Value *&hi);

} // namespace cgraph::codegen::cpu
