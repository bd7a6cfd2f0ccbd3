// Steps 4 and 5 of building a fused kernel: the fused entry point, which calls every
// kernel of the group in order (remapped clones behind their guards, barriers between
// kernels where needed) and has the calls inlined; then the literal parameters baked
// in as constants.
#include "ir_internal.h"

#include <llvm/IR/Constants.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/Module.h>
#include <llvm/Transforms/Utils/Cloning.h>

namespace cgraph {
namespace fusion {
namespace detail {
namespace {

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

// The fused kernel `<fusedName>.tmp` with one parameter per FusedParam (named, with
// the attributes every kernel bound to it allows) and an empty entry block.
llvm::Function *declareEntry(const IrRequest &req, llvm::Module &dst,
                             const std::vector<llvm::Function *> &callee) {
  llvm::LLVMContext &ctx = dst.getContext();
  std::vector<llvm::Type *> ptypes;
  for (const FusedParam &fp : req.params)
    ptypes.push_back(callee[fp.inst]->getArg(fp.param)->getType());
  auto *fty = llvm::FunctionType::get(llvm::Type::getVoidTy(ctx), ptypes, false);
  llvm::Function *fused =
      llvm::Function::Create(fty, llvm::GlobalValue::ExternalLinkage, req.fusedName + ".tmp", &dst);
  fused->setCallingConv(llvm::CallingConv::SPIR_KERNEL);
  for (size_t p = 0; p < req.params.size(); ++p) {
    const FusedParam &fp = req.params[p];
    fused->getArg(p)->setName(fp.name);
    fused->addParamAttrs(p, sharedParamAttrs(req, callee, uint32_t(p), ctx));
  }
  llvm::BasicBlock::Create(ctx, "entry", fused);
  return fused;
}

// barrier(uint), convergent: no transform may make it conditional.
llvm::FunctionCallee barrierDecl(llvm::Module &dst, llvm::IRBuilder<> &b) {
  llvm::FunctionCallee barrier = dst.getOrInsertFunction(
      kernel::mangledName(Wi::Barrier), llvm::FunctionType::get(b.getVoidTy(), {b.getInt32Ty()}, false));
  if (auto *bf = llvm::dyn_cast<llvm::Function>(barrier.getCallee())) {
    bf->setCallingConv(llvm::CallingConv::SPIR_FUNC);
    bf->addFnAttr(llvm::Attribute::Convergent);
    bf->addFnAttr(llvm::Attribute::NoUnwind);
  }
  return barrier;
}

// The arguments of instance i's call of `f`: the fused kernel's parameters, a pointer
// cast where kernels sharing a parameter see different pointee types.
Expected<std::vector<llvm::Value *>> callArgs(const IrRequest &req, size_t i, llvm::Function *f,
                                              llvm::Function *fused, llvm::IRBuilder<> &b) {
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
  return args;
}

// Instance i's call where its range is not the fused one: a clone of its kernel with
// the work-items remapped, behind its guard; a remark says how it runs.
Expected<llvm::CallInst *> callRemapped(const IrRequest &req, size_t i, llvm::Function *f,
                                        const std::vector<llvm::Value *> &args,
                                        llvm::Function *fused, llvm::IRBuilder<> &b,
                                        IrResult &res) {
  llvm::LLVMContext &ctx = fused->getContext();
  llvm::Module &dst = *fused->getParent();
  const Instance &in = req.insts[i];
  llvm::ValueToValueMapTy vmap;
  llvm::Function *clone = llvm::CloneFunction(f, vmap);
  clone->setName(f->getName() + ".remap" + std::to_string(i));
  CGRAPH_RETURN_IF_ERROR(remapWorkItems(*clone, in, req.fused));
  llvm::Value *cond = guardFor(b, dst, in, req.fused);
  llvm::BasicBlock *cont = nullptr;
  if (cond) {
    llvm::BasicBlock *run = llvm::BasicBlock::Create(ctx, "range" + std::to_string(i), fused);
    cont = llvm::BasicBlock::Create(ctx, "after" + std::to_string(i), fused);
    b.CreateCondBr(cond, run, cont);
    b.SetInsertPoint(run);
  }
  llvm::CallInst *c = b.CreateCall(clone, args);
  c->setCallingConv(llvm::CallingConv::SPIR_FUNC);
  if (cont) {
    b.CreateBr(cont);
    b.SetInsertPoint(cont);
  }
  std::string g = shapeText(in.range, in.range.global), fg = shapeText(req.fused, req.fused.global);
  if (in.remap == Remap::Guard)
    res.remarks.push_back("remapped " + in.node + ": global size " + g + " of " + fg +
                          ", the other work-items skip it");
  else
    res.remarks.push_back(
        "remapped " + in.node + ": global size " + g + " from the linear id of " + fg +
        (in.range.total() < req.fused.total()
             ? ", the work-items from " + std::to_string(in.range.total()) + " on skip it"
             : std::string()));
  return c;
}

} // namespace

Expected<llvm::Function *> buildEntry(const IrRequest &req, llvm::Module &dst,
                                      const std::vector<llvm::Function *> &callee, IrResult &res) {
  llvm::Function *fused = declareEntry(req, dst, callee);
  llvm::IRBuilder<> b(&fused->getEntryBlock());
  llvm::FunctionCallee barrier = barrierDecl(dst, b);
  std::vector<llvm::CallInst *> calls;
  for (size_t i = 0; i < req.insts.size(); ++i) {
    if (i > 0 && res.barriers) {
      // CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE
      llvm::CallInst *c = b.CreateCall(barrier, {b.getInt32(3)});
      c->setCallingConv(llvm::CallingConv::SPIR_FUNC);
    }
    llvm::Function *f = callee[i];
    Expected<std::vector<llvm::Value *>> args = callArgs(req, i, f, fused, b);
    if (!args) return args.error();
    if (req.literal && req.insts[i].remap != Remap::Same) {
      // work-item remapping: this kernel's range is not the fused one
      Expected<llvm::CallInst *> c = callRemapped(req, i, f, *args, fused, b, res);
      if (!c) return c.error();
      calls.push_back(*c);
      continue;
    }
    llvm::CallInst *c = b.CreateCall(f, *args);
    c->setCallingConv(llvm::CallingConv::SPIR_FUNC);
    calls.push_back(c);
  }
  b.CreateRetVoid();
  for (llvm::CallInst *c : calls) {
    llvm::InlineFunctionInfo ifi;
    llvm::InlineResult r = llvm::InlineFunction(*c, ifi);
    if (!r.isSuccess()) return makeError(std::string("inlining failed: ") + r.getFailureReason());
  }
  return fused;
}

void bakeConstants(const IrRequest &req, llvm::Function &fused, IrResult &res) {
  res.kept.assign(req.params.size(), true);
  for (size_t p = 0; p < req.params.size(); ++p) {
    const FusedParam &fp = req.params[p];
    if (!fp.constCandidate || !req.constants) continue;
    llvm::Constant *c = literal(fused.getArg(p)->getType(), fp.bits);
    if (!c || fused.hasParamAttribute(p, llvm::Attribute::ByVal)) continue;
    fused.getArg(p)->replaceAllUsesWith(c);
    res.kept[p] = false;
    res.baked.push_back(uint32_t(p));
    res.remarks.push_back("constant " + fp.name + " = " + literalText(c));
  }
  runCleanup(fused);
}

} // namespace detail
} // namespace fusion
} // namespace cgraph
