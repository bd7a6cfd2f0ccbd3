#include "cgraph/kernel/spirv_to_llvm.h"

#include <sstream>

#include <LLVMSPIRVLib.h>
#include <llvm/ADT/STLExtras.h>
#include <llvm/Bitcode/BitcodeWriter.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/raw_ostream.h>

#include "cgraph/kernel/spirv.h"
#include "internal.h"

namespace cgraph {
namespace kernel_detail {
Expected<std::unique_ptr<llvm::Module>> readValidSpirv(llvm::LLVMContext &ctx, const uint8_t *data,
                                                       size_t size, const std::string &name) {
  CGRAPH_RETURN_IF_ERROR(checkReaderPreconditions(data, size, name));
  SPIRV::TranslatorOpts opts(SPIRV::VersionNumber::MaximumVersion);
  opts.setDesiredBIsRepresentation(SPIRV::BIsRepresentation::OpenCL12);
  opts.setGenKernelArgNameMDEnabled(true);
  opts.setPreserveOCLKernelArgTypeMetadataThroughString(true);
  std::istringstream in(std::string(reinterpret_cast<const char *>(data), size));
  llvm::Module *raw = nullptr;
  std::string err;
  bool ok = llvm::readSpirv(ctx, opts, in, raw, err);
  std::unique_ptr<llvm::Module> module(raw);
  if (!ok || !module)
    return makeError(name + ": SPIR-V to LLVM translation failed: " +
                     (err.empty() ? std::string("unknown reason") : err));
  std::string verifyText;
  llvm::raw_string_ostream verifyStream(verifyText);
  if (llvm::verifyModule(*module, &verifyStream)) {
    verifyStream.flush();
    return makeError(name + ": translated module is invalid LLVM IR: " + verifyText);
  }
  return module;
}

} // namespace kernel_detail

Expected<std::unique_ptr<llvm::Module>> spirvToLLVM(llvm::LLVMContext &ctx, const uint8_t *spirv,
                                                    size_t size) {
  CGRAPH_RETURN_IF_ERROR(validateSpirv(spirv, size, "spirv"));
  return kernel_detail::readValidSpirv(ctx, spirv, size, "spirv");
}

namespace {

// Clang turns OpenCL C's `a * b + c` into llvm.fmuladd (contraction is on by default
// for OpenCL), the translator writes that as OpenCL.std `mad`, and reading the SPIR-V
// back gives calls to the mad() builtin. A driver may implement mad() unfused: PoCL 3.1
// rounds the product, while the same source built by PoCL itself fuses it. One ulp per
// multiply-add then grows, in long dependent chains such as Gram-Schmidt QR, into
// results that no longer match the source build or our cpu backend (which lowers mad()
// as a contractable a * b + c). mad() leaves the product's rounding undefined, so
// llvm.fmuladd is a valid lowering, and it gives the driver the choice its own
// compiler makes for the source.
void madToFmuladd(llvm::Module &m) {
  for (llvm::Function &f : llvm::make_early_inc_range(m.functions())) {
    // `_Z3mad` + the parameter types: exactly mad(gentype, gentype, gentype); mad24,
    // mad_hi and mad_sat mangle with other lengths.
    if (!f.isDeclaration() || !f.getName().startswith("_Z3mad") || f.arg_size() != 3) continue;
    llvm::Type *t = f.getReturnType();
    if (!t->isFPOrFPVectorTy()) continue;
    bool sameTypes = true;
    for (const llvm::Argument &a : f.args())
      sameTypes = sameTypes && a.getType() == t;
    if (!sameTypes) continue;
    llvm::Function *fmuladd = llvm::Intrinsic::getDeclaration(&m, llvm::Intrinsic::fmuladd, {t});
    for (llvm::User *u : llvm::make_early_inc_range(f.users())) {
      auto *call = llvm::dyn_cast<llvm::CallInst>(u);
      if (!call || call->getCalledFunction() != &f) continue;
      llvm::IRBuilder<> b(call);
      llvm::CallInst *fused = b.CreateCall(
          fmuladd, {call->getArgOperand(0), call->getArgOperand(1), call->getArgOperand(2)});
      fused->takeName(call);
      call->replaceAllUsesWith(fused);
      call->eraseFromParent();
    }
    if (f.use_empty()) f.eraseFromParent();
  }
}

} // namespace

Expected<std::vector<uint8_t>> spirvToSpirBitcode(const uint8_t *spirv, size_t size) {
  llvm::LLVMContext ctx;
  Expected<std::unique_ptr<llvm::Module>> module = spirvToLLVM(ctx, spirv, size);
  if (!module) return module.error();
  madToFmuladd(**module);
  llvm::SmallVector<char, 0> buf;
  llvm::raw_svector_ostream os(buf);
  llvm::WriteBitcodeToFile(**module, os);
  return std::vector<uint8_t>(buf.begin(), buf.end());
}

} // namespace cgraph
