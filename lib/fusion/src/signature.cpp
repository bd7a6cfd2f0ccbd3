// Step 7 of building a fused kernel: the final signature. The entry point built with
// one parameter per FusedParam becomes the kernel of the fused node with the kept
// parameters only (the local tiles as __local pointers), the attributes the kernels
// bound to each allow (noalias per slot), and OpenCL argument metadata for reflection.
#include "ir_internal.h"

#include <sstream>

#include <llvm/IR/Constants.h>
#include <llvm/IR/Metadata.h>
#include <llvm/IR/Module.h>

namespace cgraph {
namespace fusion {
namespace detail {
namespace {

const char *kArgMDKinds[] = {"kernel_arg_addr_space", "kernel_arg_access_qual", "kernel_arg_type",
                             "kernel_arg_type_qual", "kernel_arg_base_type"};

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

// Each argument metadata kind of the kernel that represents fused parameter p, for a
// slot promoted to local memory: a __local pointer with no qualifiers.
void localArgMetadata(const IrRequest &req, unsigned p, const std::vector<llvm::Function *> &callee,
                      llvm::LLVMContext &ctx, std::vector<std::vector<llvm::Metadata *>> &md) {
  llvm::Function *rep = callee[req.params[p].inst];
  for (size_t m = 0; m < std::size(kArgMDKinds); ++m) {
    llvm::MDNode *n = rep->getMetadata(kArgMDKinds[m]);
    if (!n || req.params[p].param >= n->getNumOperands()) continue;
    llvm::StringRef kind = kArgMDKinds[m];
    if (kind == "kernel_arg_addr_space")
      md[m].push_back(
          llvm::ConstantAsMetadata::get(llvm::ConstantInt::get(llvm::Type::getInt32Ty(ctx), 3)));
    else if (kind == "kernel_arg_access_qual")
      md[m].push_back(llvm::MDString::get(ctx, "none"));
    else if (kind == "kernel_arg_type_qual")
      md[m].push_back(llvm::MDString::get(ctx, ""));
    else
      md[m].push_back(n->getOperand(req.params[p].param).get());
  }
}

// Each argument metadata kind of the kernel that represents fused parameter p, the
// type qualifiers shared by every kernel bound to it.
void argMetadata(const IrRequest &req, unsigned p, const std::vector<llvm::Function *> &callee,
                 llvm::LLVMContext &ctx, std::vector<std::vector<llvm::Metadata *>> &md) {
  llvm::Function *rep = callee[req.params[p].inst];
  for (size_t m = 0; m < std::size(kArgMDKinds); ++m) {
    llvm::MDNode *n = rep->getMetadata(kArgMDKinds[m]);
    if (!n || req.params[p].param >= n->getNumOperands()) continue;
    if (llvm::StringRef(kArgMDKinds[m]) == "kernel_arg_type_qual")
      md[m].push_back(llvm::MDString::get(ctx, sharedTypeQual(req, callee, uint32_t(p))));
    else
      md[m].push_back(n->getOperand(req.params[p].param).get());
  }
}

} // namespace

llvm::Function *finalSignature(const IrRequest &req, llvm::Function *fused,
                               const std::vector<llvm::Function *> &callee, SlotUses &slots,
                               const LocalTiles &tiles, const IrResult &res) {
  llvm::LLVMContext &ctx = fused->getContext();
  const std::map<size_t, llvm::Argument *> &localArg = tiles.arg;
  std::vector<llvm::Type *> keptTypes;
  std::vector<unsigned> keptIdx;
  for (size_t p = 0; p < req.params.size(); ++p)
    if (res.kept[p]) {
      keptTypes.push_back(localArg.count(p) ? localArg.at(p)->getType()
                                            : fused->getArg(p)->getType());
      keptIdx.push_back(unsigned(p));
    }
  llvm::Function *nf =
      llvm::Function::Create(llvm::FunctionType::get(llvm::Type::getVoidTy(ctx), keptTypes, false),
                             llvm::GlobalValue::ExternalLinkage, req.fusedName, fused->getParent());
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
      localArgMetadata(req, p, callee, ctx, md);
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
    if (req.noAlias && req.params[p].slotKey >= 0 && fused->getArg(p)->getType()->isPointerTy() &&
        slots[req.params[p].slotKey].params.size() == 1 &&
        !fused->hasParamAttribute(p, llvm::Attribute::ByVal))
      nf->addParamAttr(k, llvm::Attribute::NoAlias);
    argMetadata(req, p, callee, ctx, md);
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
  return nf;
}

} // namespace detail
} // namespace fusion
} // namespace cgraph
