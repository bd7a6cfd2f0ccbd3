// buildFusedKernel: the LLVM side of fusion, step by step. Each step lives in its own
// file: 1-2 prepare.cpp (link the kernels' modules, clean and analyse each kernel),
// 3 slot_use.cpp (slot use, hazards, barriers), 4-5 entry.cpp (the fused entry point,
// remapped clones, inlining, constants), 6 internalize.cpp (private and local memory),
// 7 signature.cpp (the kept parameters and their metadata); here the last cleanup,
// verification and the translation back to SPIR-V. See cgraph/fusion/fusion.h for
// the rules.
#include "ir_internal.h"

#include <sstream>

#include <LLVMSPIRVLib.h>
#include <llvm/IR/InstIterator.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/raw_ostream.h>

#include "cgraph/kernel/spirv.h"

namespace cgraph {
namespace fusion {
namespace detail {
namespace {

// After step 7: the last cleanup, the private arrays left (the cost model's figure),
// verification, and the IR text where asked.
Error finishModule(const IrRequest &req, llvm::Module &dst, llvm::Function &nf, IrResult &res) {
  const llvm::DataLayout &dl = dst.getDataLayout();
  // Only for barrier-free kernels without __local memory. Alias analysis takes a
  // barrier call for one that cannot touch a noalias buffer, so with barriers these
  // passes could forward a value a work-item read before a barrier past it, although
  // another work-item of the group rewrote it in between (members of a fused group
  // communicate through the same noalias buffers across the barriers fusion inserts).
  if (req.noAlias && !res.barriers && !req.hasLocalMem) runCleanup(nf, true);
  runGlobalDCE(dst);
  // the cost model's private memory: arrays the cleanup left on the stack
  for (llvm::Instruction &i : llvm::instructions(nf))
    if (auto *a = llvm::dyn_cast<llvm::AllocaInst>(&i))
      if (auto *n = llvm::dyn_cast<llvm::ConstantInt>(a->getArraySize()))
        res.privateBytes += dl.getTypeAllocSize(a->getAllocatedType()) * n->getZExtValue();

  std::string verifyText;
  llvm::raw_string_ostream vs(verifyText);
  if (llvm::verifyModule(dst, &vs))
    return makeError("fused module is invalid LLVM IR: " + vs.str());
  if (req.keepIR) {
    llvm::raw_string_ostream os(res.ir);
    dst.print(os, nullptr);
  }
  return Error();
}

// Step 8: back to SPIR-V, validated like any input.
Error toSpirv(const IrRequest &req, llvm::Module &dst, IrResult &res) {
  SPIRV::TranslatorOpts topts(SPIRV::VersionNumber::SPIRV_1_0);
  topts.setPreserveOCLKernelArgTypeMetadataThroughString(true);
  std::ostringstream out;
  std::string err;
  if (!llvm::writeSpirv(&dst, topts, out, err))
    return makeError("SPIR-V translation of the fused kernel failed: " + err);
  std::string bytes = out.str();
  res.spirv.assign(bytes.begin(), bytes.end());
  CGRAPH_RETURN_IF_ERROR(validateSpirv(res.spirv.data(), res.spirv.size(), req.fusedName));
  return Error();
}

} // namespace

Expected<IrResult> buildFusedKernel(const IrRequest &req) {
  IrResult res;
  llvm::LLVMContext ctx;
  auto dst = std::make_unique<llvm::Module>(req.fusedName, ctx);
  std::vector<llvm::Function *> callee;
  AccessMap analysis;
  std::vector<const std::vector<Access> *> accessOf;
  // 1-2: link the group's modules, analyse each kernel's pointer accesses
  CGRAPH_RETURN_IF_ERROR(prepare(req, ctx, dst.get(), callee, analysis, accessOf));
  // 3: per slot, who reads and writes where; hazards; whether barriers are needed
  SlotUses slots = analyseSlots(req, accessOf, res);
  // 4: the fused entry point calling every kernel in order, then inlined
  Expected<llvm::Function *> fused = buildEntry(req, *dst, callee, res);
  if (!fused) return fused.error();
  // 5: literal scalars baked in
  bakeConstants(req, **fused, res);
  // 6: scratch slots to private or local memory (the tiles outlive step 7's use)
  LocalTiles tiles;
  CGRAPH_RETURN_IF_ERROR(internalizeSlots(req, **fused, slots, accessOf, tiles, res));
  // 7: the kernel with the kept parameters
  llvm::Function *nf = finalSignature(req, *fused, callee, slots, tiles, res);
  CGRAPH_RETURN_IF_ERROR(finishModule(req, *dst, *nf, res));
  // 8: SPIR-V
  CGRAPH_RETURN_IF_ERROR(toSpirv(req, *dst, res));
  return res;
}

} // namespace detail
} // namespace fusion
} // namespace cgraph
