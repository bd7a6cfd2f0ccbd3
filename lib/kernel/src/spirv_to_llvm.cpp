#include "cgraph/kernel/spirv_to_llvm.h"

#include <sstream>

#include <LLVMSPIRVLib.h>
#include <llvm/Bitcode/BitcodeWriter.h>
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

Expected<std::vector<uint8_t>> spirvToSpirBitcode(const uint8_t *spirv, size_t size) {
  llvm::LLVMContext ctx;
  Expected<std::unique_ptr<llvm::Module>> module = spirvToLLVM(ctx, spirv, size);
  if (!module) return module.error();
  llvm::SmallVector<char, 0> buf;
  llvm::raw_svector_ostream os(buf);
  llvm::WriteBitcodeToFile(**module, os);
  return std::vector<uint8_t>(buf.begin(), buf.end());
}

} // namespace cgraph
