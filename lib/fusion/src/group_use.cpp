// Whether a kernel's results may depend on its work-groups (workGroupUse): the
// nd-range rules ignore the local size of a kernel that does not.
#include "ir_internal.h"

#include <llvm/IR/InstIterator.h>
#include <llvm/IR/InstrTypes.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include "cgraph/kernel/spirv_to_llvm.h"

namespace cgraph {
namespace fusion {
namespace detail {
namespace {

bool dependsOnGroups(llvm::Function &f, std::map<llvm::Function *, bool> &memo, int depth = 0) {
  auto it = memo.find(&f);
  if (it != memo.end()) return it->second;
  memo[&f] = true; // recursion: assume the worst
  bool uses = depth > 16;
  for (llvm::Argument &a : f.args())
    if (a.getType()->isPointerTy() && a.getType()->getPointerAddressSpace() == 3) uses = true;
  for (llvm::Instruction &i : llvm::instructions(f)) {
    if (uses) break;
    auto *cb = llvm::dyn_cast<llvm::CallBase>(&i);
    if (!cb) continue;
    llvm::Function *c = cb->getCalledFunction();
    if (!c) {
      uses = true;
      break;
    }
    llvm::StringRef n = c->getName();
    if (kernel::observesGroupShape(builtinKind(n))) uses = true;
    if (n.contains("barrier") || n.contains("work_group") || n.contains("sub_group") ||
        n.contains("mem_fence"))
      uses = true;
    if (!uses && !c->isDeclaration()) uses = dependsOnGroups(*c, memo, depth + 1);
  }
  for (llvm::GlobalVariable &gv : f.getParent()->globals())
    if (gv.getAddressSpace() == 3) uses = true; // program-scope __local variables
  memo[&f] = uses;
  return uses;
}

} // namespace

Expected<std::map<std::string, bool>> workGroupUse(const KernelModule &km) {
  if (km.forms.empty() || km.forms[0].kind != FormKind::SpirV)
    return makeError("module '" + km.name + "' has no SPIR-V form");
  llvm::LLVMContext ctx;
  const std::vector<uint8_t> &spv = km.forms[0].bytes;
  Expected<std::unique_ptr<llvm::Module>> m = spirvToLLVM(ctx, spv.data(), spv.size());
  if (!m) return m.error().withContext("module '" + km.name + "'");
  std::map<std::string, bool> out;
  std::map<llvm::Function *, bool> memo;
  for (llvm::Function &f : **m)
    if (f.getCallingConv() == llvm::CallingConv::SPIR_KERNEL && !f.isDeclaration())
      out[f.getName().str()] = dependsOnGroups(f, memo);
  return out;
}

} // namespace detail
} // namespace fusion
} // namespace cgraph
