// Work-item remapping: the clone of a kernel whose nd-range is not the fused one gets
// its work-item builtins answered for its own range (see Remap in internal.h), and
// runs behind a guard where it has fewer work-items.
#include "ir_internal.h"

#include <llvm/IR/Constants.h>
#include <llvm/IR/InstIterator.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/Module.h>
#include <llvm/Transforms/Utils/Cloning.h>

namespace cgraph {
namespace fusion {
namespace detail {
namespace {

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

} // namespace

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

namespace {

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

// The work-item builtin calls of `f` (a clone for instance `in`, helpers inlined).
// Fails, naming the reason, where `f` cannot be remapped.
Expected<std::vector<std::pair<llvm::CallInst *, Wi>>>
builtinCalls(llvm::Function &f, const Instance &in, const Range &fused) {
  const std::string &node = in.node;
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
  return calls;
}

// Linear: the fused range's global linear id and the instance's global ids recomputed
// from it in the instance's own shape.
struct LinearIds {
  llvm::Value *lin = nullptr;
  llvm::Value *ids[3] = {nullptr, nullptr, nullptr};
};

LinearIds linearIds(llvm::IRBuilder<> &b, llvm::Module &m, const Range &r, const Range &fused) {
  LinearIds l;
  l.lin = linearId(b, m, fused);
  llvm::Value *rest = l.lin;
  for (unsigned d = 0; d < r.dims; ++d) {
    if (d + 1 == r.dims) {
      l.ids[d] = rest;
    } else {
      l.ids[d] = b.CreateURem(rest, b.getInt64(r.global[d]));
      rest = b.CreateUDiv(rest, b.getInt64(r.global[d]));
    }
  }
  return l;
}

// Guard: the value builtin `k` in dimension d answers for an instance of range `r`
// (its own global size and group count); nullptr where the fused range's answer
// stands (work-item and work-group ids, dimensions of the same size).
llvm::Value *guardedValue(llvm::IRBuilder<> &b, llvm::Module &m, Wi k, unsigned d, const Range &r,
                          const Range &fused) {
  bool inDims = d < r.dims;
  uint64_t gs = inDims ? r.global[d] : 1;
  if (!inDims || r.global[d] == fused.global[d]) return nullptr;
  if (k == Wi::GlobalSize) return b.getInt64(gs);
  if (k != Wi::NumGroups) return nullptr;
  if (fused.hasLocal()) return b.getInt64((gs + fused.local[d] - 1) / fused.local[d]);
  llvm::CallInst *ls =
      b.CreateCall(builtinDecl(m, kernel::mangledName(Wi::LocalSize), true, false), {b.getInt32(d)});
  ls->setCallingConv(llvm::CallingConv::SPIR_FUNC);
  return b.CreateUDiv(b.CreateAdd(b.getInt64(gs - 1), ls), ls);
}

// Linear: the value builtin `k` in dimension d answers for an instance of range `r`
// that sees one work-group spanning its range.
llvm::Value *linearValue(llvm::IRBuilder<> &b, Wi k, unsigned d, const Range &r,
                         const LinearIds &l) {
  bool inDims = d < r.dims;
  uint64_t gs = inDims ? r.global[d] : 1;
  switch (k) {
  case Wi::GlobalId:
  case Wi::LocalId:
    return inDims ? l.ids[d] : b.getInt64(0);
  case Wi::GlobalSize:
  case Wi::LocalSize:
  case Wi::EnqueuedLocalSize:
    return b.getInt64(gs);
  case Wi::GroupId:
  case Wi::GlobalOffset:
    return b.getInt64(0);
  case Wi::NumGroups:
    return b.getInt64(1);
  case Wi::WorkDim:
    return b.getInt32(r.dims);
  case Wi::GlobalLinearId:
  case Wi::LocalLinearId:
    return l.lin;
  case Wi::Barrier: // not a query: builtinKind never gives it
  case Wi::None:
    break;
  }
  return nullptr;
}

} // namespace

// In `f` (a clone for instance `in`), the work-item builtins answer the instance's own
// nd-range inside the fused one (see Remap). Fails, naming the reason, for what cannot
// be remapped: barriers and group functions (not every work-item of a work-group runs
// the instance), builtins asked in a computed dimension.
Error remapWorkItems(llvm::Function &f, const Instance &in, const Range &fused) {
  CGRAPH_RETURN_IF_ERROR(inlineAll(f, in.node));
  Expected<std::vector<std::pair<llvm::CallInst *, Wi>>> calls = builtinCalls(f, in, fused);
  if (!calls) return calls.error();
  llvm::Module &m = *f.getParent();
  llvm::IRBuilder<> b(&*f.getEntryBlock().getFirstInsertionPt());
  const Range &r = in.range;
  LinearIds l;
  if (in.remap == Remap::Linear) l = linearIds(b, m, r, fused);
  for (auto &[call, k] : *calls) {
    unsigned d = 0;
    if (call->arg_size() == 1)
      d = unsigned(llvm::cast<llvm::ConstantInt>(call->getArgOperand(0))->getZExtValue());
    // Guard: work-item and work-group ids stay; sizes answer the instance's range
    llvm::Value *v =
        in.remap == Remap::Guard ? guardedValue(b, m, k, d, r, fused) : linearValue(b, k, d, r, l);
    if (!v) continue;
    if (v->getType() != call->getType()) v = b.CreateZExtOrTrunc(v, call->getType());
    call->replaceAllUsesWith(v);
  }
  for (auto &[call, k] : *calls)
    if (call->use_empty()) call->eraseFromParent();
  return Error();
}

} // namespace detail
} // namespace fusion
} // namespace cgraph
