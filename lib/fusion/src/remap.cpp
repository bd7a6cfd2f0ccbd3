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

} // namespace

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

} // namespace detail
} // namespace fusion
} // namespace cgraph
