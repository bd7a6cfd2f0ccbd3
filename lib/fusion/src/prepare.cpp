// Steps 1 and 2 of building a fused kernel: the group's modules read back from SPIR-V
// and linked into one, its kernels made internal functions of it, and each instance's
// pointer accesses analysed (access.cpp) in the shapes of its place in the fused range.
#include "ir_internal.h"

#include <llvm/IR/DataLayout.h>
#include <llvm/IR/InstrTypes.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Linker/Linker.h>
#include <llvm/Transforms/Utils/Cloning.h>

#include "cgraph/kernel/spirv_to_llvm.h"

namespace cgraph {
namespace fusion {
namespace detail {
namespace {

// Step 1: every module the group uses read and linked into `dst`. Definitions get a
// per-module prefix ("m<index>.") so that kernels and globals of the same name in two
// modules stay apart.
Error linkModules(const IrRequest &req, llvm::LLVMContext &ctx, llvm::Module *dst) {
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
  return Error();
}

// Step 2a: each instance's kernel found (`callee`) and checked against the node's
// arguments; every kernel becomes an internal function (the fused entry point calls
// and inlines them).
Error internalKernels(const IrRequest &req, llvm::Module *dst,
                      std::vector<llvm::Function *> &callee) {
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
  return Error();
}

// Step 2b: the used kernels cleaned, and each instance's pointer accesses analysed once
// per function and shape.
void analyseAccesses(const IrRequest &req, const llvm::DataLayout &dl,
                     const std::vector<llvm::Function *> &callee, AccessMap &analysis,
                     std::vector<const std::vector<Access> *> &accessOf) {
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
}

} // namespace

Error prepare(const IrRequest &req, llvm::LLVMContext &ctx, llvm::Module *dst,
              std::vector<llvm::Function *> &callee, AccessMap &analysis,
              std::vector<const std::vector<Access> *> &accessOf) {
  CGRAPH_RETURN_IF_ERROR(linkModules(req, ctx, dst));
  CGRAPH_RETURN_IF_ERROR(internalKernels(req, dst, callee));
  analyseAccesses(req, dst->getDataLayout(), callee, analysis, accessOf);
  return Error();
}

} // namespace detail
} // namespace fusion
} // namespace cgraph
