// The OpenCL builtin library (builtins/*.cl, compiled to spir64 bitcode at build time and
// embedded: CMakeLists.txt) linked into each kernel module before host lowering.
#include "lowering_internal.h"

#include <llvm/Bitcode/BitcodeReader.h>
#include <llvm/IR/Instructions.h>
#include <llvm/Linker/Linker.h>
#include <llvm/Support/MemoryBuffer.h>

namespace cgraph::codegen::cpu {

using namespace llvm;

Error linkBuiltins(Module &m) {
  auto buf = MemoryBuffer::getMemBuffer(
      StringRef(reinterpret_cast<const char *>(kBuiltinsBitcode), kBuiltinsBitcodeSize),
      "cgraph-cpu-builtins", false);
  auto lib = getOwningLazyBitcodeModule(std::move(buf), m.getContext());
  if (!lib) return makeError("cannot read the builtin library: " + toText(lib.takeError()));
  (*lib)->setDataLayout(m.getDataLayout());
  (*lib)->setTargetTriple(m.getTargetTriple());
  if (Linker::linkModules(m, std::move(*lib), Linker::LinkOnlyNeeded))
    return makeError("cannot link the builtin library");
  return Error::success();
}

void lowerAtomicPeeks(Module &m) {
  for (const char *name : {"cgraph_cpu_atomic_peek_global", "cgraph_cpu_atomic_peek_local"}) {
    Function *f = m.getFunction(name);
    if (!f) continue;
    for (User *u : make_early_inc_range(f->users())) {
      auto *c = dyn_cast<CallInst>(u);
      if (!c || c->getCalledFunction() != f) continue;
      IRBuilder<> b(c);
      LoadInst *l = b.CreateAlignedLoad(c->getType(), c->getArgOperand(0), Align(8));
      l->setAtomic(AtomicOrdering::Monotonic);
      c->replaceAllUsesWith(l);
      c->eraseFromParent();
    }
    if (f->use_empty()) f->eraseFromParent();
  }
}

} // namespace cgraph::codegen::cpu
