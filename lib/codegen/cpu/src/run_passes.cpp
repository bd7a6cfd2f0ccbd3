// LLVM's new pass manager run over one function or module of the lowering, with the
// analysis managers it needs set up once here.
#include "lowering_internal.h"

#include <llvm/Passes/PassBuilder.h>

namespace cgraph::codegen::cpu {

using namespace llvm;

namespace {

struct Analyses {
  LoopAnalysisManager lam;
  FunctionAnalysisManager fam;
  CGSCCAnalysisManager cgam;
  ModuleAnalysisManager mam;
  Analyses() {
    PassBuilder pb;
    pb.registerModuleAnalyses(mam);
    pb.registerCGSCCAnalyses(cgam);
    pb.registerFunctionAnalyses(fam);
    pb.registerLoopAnalyses(lam);
    pb.crossRegisterProxies(lam, fam, cgam, mam);
  }
};

} // namespace

void runPasses(Function &f, FunctionPassManager &fpm) {
  Analyses a;
  fpm.run(f, a.fam);
}

void runPasses(Module &m, ModulePassManager &mpm) {
  Analyses a;
  mpm.run(m, a.mam);
}

} // namespace cgraph::codegen::cpu
