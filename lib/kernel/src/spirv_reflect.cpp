// Kernel signatures are read back through the translator: it turns the SPIR-V
// entry points, OpName and decorations into kernel functions with the standard
// !kernel_arg_* metadata, which is simpler and more complete than walking SPIR-V
// types by hand (the translator also restores the OpenCL type spellings that
// compileOpenCL stores in an OpString).
#include <sstream>

#include <llvm/IR/CallingConv.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/DataLayout.h>
#include <llvm/IR/DerivedTypes.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Metadata.h>
#include <llvm/IR/Module.h>

#include "cgraph/kernel/spirv.h"
#include "internal.h"

namespace cgraph {
namespace {

constexpr unsigned kAddrGlobal = 1, kAddrConstant = 2, kAddrLocal = 3;

std::string mdString(const llvm::MDNode *md, unsigned i) {
  if (md == nullptr || i >= md->getNumOperands()) return {};
  if (auto *s = llvm::dyn_cast_or_null<llvm::MDString>(md->getOperand(i).get()))
    return s->getString().str();
  return {};
}

uint32_t parseQualifiers(const std::string &text) {
  uint32_t q = 0;
  std::istringstream in(text);
  std::string word;
  while (in >> word) {
    if (word == "const") q |= kQualConst;
    else if (word == "restrict") q |= kQualRestrict;
    else if (word == "volatile") q |= kQualVolatile;
  }
  return q;
}

uint32_t sizeOf(const llvm::DataLayout &dl, llvm::Type *t) {
  if (t == nullptr || !t->isSized()) return 0;
  return static_cast<uint32_t>(dl.getTypeAllocSize(t).getFixedSize());
}

KernelParam reflectParam(const llvm::DataLayout &dl, const llvm::Function &f, unsigned i) {
  const llvm::Argument *arg = f.getArg(i);
  KernelParam p;
  p.name = mdString(f.getMetadata("kernel_arg_name"), i);
  if (p.name.empty()) p.name = arg->getName().str();
  p.typeName = mdString(f.getMetadata("kernel_arg_type"), i);
  p.qualifiers = parseQualifiers(mdString(f.getMetadata("kernel_arg_type_qual"), i));
  llvm::Type *t = arg->getType();
  if (arg->hasByValAttr()) { // a struct passed by value
    p.kind = ParamKind::Scalar;
    p.size = sizeOf(dl, arg->getParamByValType());
    return p;
  }
  auto *ptr = llvm::dyn_cast<llvm::PointerType>(t);
  if (ptr == nullptr) {
    p.kind = ParamKind::Scalar;
    p.size = sizeOf(dl, t);
    return p;
  }
  switch (ptr->getAddressSpace()) {
  case kAddrGlobal: p.kind = ParamKind::GlobalBuffer; break;
  case kAddrConstant: p.kind = ParamKind::ConstantBuffer; break;
  case kAddrLocal: p.kind = ParamKind::LocalBuffer; break;
  default: p.kind = ParamKind::Scalar; break; // images, samplers, queues: opaque handles
  }
  // void* comes back as i8*; its pointee size is unknown, not 1.
  bool isVoid = p.typeName.rfind("void", 0) == 0;
  if (!isVoid && !ptr->isOpaque()) p.size = sizeOf(dl, ptr->getNonOpaquePointerElementType());
  if (p.kind == ParamKind::Scalar) p.size = sizeOf(dl, t);
  return p;
}

} // namespace

Expected<std::vector<Kernel>> reflectKernels(const uint8_t *spirv, size_t size) {
  CGRAPH_RETURN_IF_ERROR(validateSpirv(spirv, size, "spirv"));
  llvm::LLVMContext ctx;
  Expected<std::unique_ptr<llvm::Module>> module =
      kernel_detail::readValidSpirv(ctx, spirv, size, "spirv");
  if (!module) return module.error();
  const llvm::DataLayout &dl = (*module)->getDataLayout();
  std::vector<Kernel> kernels;
  for (const llvm::Function &f : **module) {
    if (f.isDeclaration() || f.getCallingConv() != llvm::CallingConv::SPIR_KERNEL) continue;
    Kernel k;
    k.name = f.getName().str();
    for (unsigned i = 0; i < f.arg_size(); ++i) k.params.push_back(reflectParam(dl, f, i));
    if (const llvm::MDNode *md = f.getMetadata("reqd_work_group_size")) {
      for (unsigned d = 0; d < 3 && d < md->getNumOperands(); ++d)
        if (auto *c = llvm::mdconst::dyn_extract_or_null<llvm::ConstantInt>(md->getOperand(d)))
          k.reqdLocal[d] = static_cast<uint32_t>(c->getZExtValue());
    }
    kernels.push_back(std::move(k));
  }
  return kernels;
}

} // namespace cgraph
