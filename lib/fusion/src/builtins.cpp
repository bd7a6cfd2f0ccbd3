// Work-item builtins: recognising the calls the SPIR-V reader emits for the work-item
// built-in variables, and emitting new ones (work-item remapping).
#include "ir_internal.h"

#include <llvm/IR/Constants.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/Module.h>

namespace cgraph {
namespace fusion {
namespace detail {

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
      b.CreateCall(builtinDecl(m, kernel::mangledName(Wi::GlobalId), true, false), {b.getInt32(d)});
  c->setCallingConv(llvm::CallingConv::SPIR_FUNC);
  return c;
}

} // namespace detail
} // namespace fusion
} // namespace cgraph
