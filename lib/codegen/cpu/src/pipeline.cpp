// The optimization pipeline of the lowered module: LLVM's O3 for the host, tuned through
// its own PipelineTuningOptions and passes (never LLVM's process-wide options, which
// the cuda and hip lowerings of the same process would see), plus the passes this
// backend adds: work-item scope declarations dropped from the x loops before the
// vectorizers, unroll-and-jam of the x loops and a second SLP pass after O3, the
// interleaving of long work-items (ilp.h); in TSan builds, the kernels instrumented.
#include "ilp.h"
#include "lowering_internal.h"

#include <llvm/Analysis/LoopInfo.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Transforms/InstCombine/InstCombine.h>
#include <llvm/Transforms/Scalar/LICM.h>
#include <llvm/Transforms/Scalar/LoopUnrollAndJamPass.h>
#include <llvm/Transforms/Scalar/SimplifyCFG.h>
#include <llvm/Transforms/Utils/LoopUtils.h>
#include <llvm/Transforms/Vectorize/SLPVectorizer.h>
#include <llvm/Transforms/Vectorize/VectorCombine.h>
#ifdef CGRAPH_CPU_TSAN
#include <llvm/Transforms/Instrumentation/ThreadSanitizer.h>
#endif

#include <vector>

namespace cgraph::codegen::cpu {

using namespace llvm;

namespace {

// The kernel body is inlined into the x loop once per work-item, and with it the
// `llvm.experimental.noalias.scope.decl` of its `restrict` parameters: a call that
// may touch memory, in the x loop's own blocks, so unroll-and-jam declines the loop
// (matmul: a scalar k loop per work-item, not 8 work-items jammed and vectorized). A
// declaration there limits the scopes to one work-item; OpenCL's `restrict` holds for
// the whole launch, and accesses of different work-items may be reordered anyway (two
// that conflict are a data race without a barrier, which is why the x loop's accesses
// are parallel), so dropping those declarations claims nothing new. Only declarations
// directly in a loop that asks for unroll-and-jam (emitLoop's x loop) are dropped; those
// in the kernel's own loops stay.
struct WorkItemScopesPass : PassInfoMixin<WorkItemScopesPass> {
  PreservedAnalyses run(Function &f, FunctionAnalysisManager &fam) {
    if (!f.getName().startswith(kWrapperPrefix)) return PreservedAnalyses::all();
    LoopInfo &li = fam.getResult<LoopAnalysis>(f);
    std::vector<Instruction *> dead;
    for (Loop *l : li.getLoopsInPreorder()) {
      if (!findOptionMDForLoop(l, "llvm.loop.unroll_and_jam.count")) continue;
      for (BasicBlock *bb : l->blocks()) {
        if (li.getLoopFor(bb) != l) continue; // inside one of the kernel's loops
        for (Instruction &i : *bb)
          if (auto *ii = dyn_cast<IntrinsicInst>(&i))
            if (ii->getIntrinsicID() == Intrinsic::experimental_noalias_scope_decl) dead.push_back(ii);
      }
    }
    for (Instruction *i : dead)
      i->eraseFromParent();
    if (dead.empty()) return PreservedAnalyses::all();
    PreservedAnalyses pa;
    pa.preserveSet<CFGAnalyses>();
    return pa;
  }
};

#ifdef CGRAPH_CPU_TSAN
// ThreadSanitizer leaves accesses outside address space 0 alone. On the host every
// OpenCL address space is ordinary memory, so TSan builds move each load, store and
// atomic to address space 0 (the same address on x86) before TSan instruments them.
struct FlatAccessesPass : PassInfoMixin<FlatAccessesPass> {
  PreservedAnalyses run(Function &f, FunctionAnalysisManager &) {
    bool changed = false;
    for (BasicBlock &bb : f)
      for (Instruction &i : bb) {
        unsigned op;
        if (isa<LoadInst>(i) || isa<AtomicRMWInst>(i) || isa<AtomicCmpXchgInst>(i))
          op = 0;
        else if (isa<StoreInst>(i))
          op = 1;
        else
          continue;
        auto *pt = dyn_cast<PointerType>(i.getOperand(op)->getType());
        if (!pt || pt->getAddressSpace() == 0) continue;
        // Through an integer: TSan looks through an addrspacecast to the original space.
        IRBuilder<> b(&i);
        Value *bits = b.CreatePtrToInt(i.getOperand(op), b.getInt64Ty());
        i.setOperand(op, b.CreateIntToPtr(bits, PointerType::getWithSamePointeeType(pt, 0)));
        changed = true;
      }
    return changed ? PreservedAnalyses::none() : PreservedAnalyses::all();
  }
};
#endif

} // namespace

Error runO3(Module &m, TargetMachine &tm) {
  LoopAnalysisManager lam;
  FunctionAnalysisManager fam;
  CGSCCAnalysisManager cgam;
  ModuleAnalysisManager mam;
  PipelineTuningOptions pto;
  pto.LoopVectorization = true;
  pto.SLPVectorization = true;
  PassBuilder pb(&tm, pto);
#ifdef CGRAPH_CPU_TSAN
  // ThreadSanitizer builds check the kernels' own loads and stores (two nodes of one
  // level writing one buffer is a race TSan must see). Instrumented first, on scalar
  // code: TSan skips accesses wider than 16 bytes, and its calls keep the vectorizers
  // from widening the accesses it checks.
  for (Function &f : m)
    if (!f.isDeclaration()) f.addFnAttr(Attribute::SanitizeThread);
  pb.registerPipelineStartEPCallback([](ModulePassManager &mpm, OptimizationLevel) {
    FunctionPassManager fpm;
    fpm.addPass(FlatAccessesPass());
    fpm.addPass(ThreadSanitizerPass());
    mpm.addPass(createModuleToFunctionPassAdaptor(std::move(fpm)));
  });
#endif
  pb.registerVectorizerStartEPCallback([](FunctionPassManager &fpm, OptimizationLevel) {
    fpm.addPass(WorkItemScopesPass());
  });
  fam.registerPass([&] { return tm.getTargetIRAnalysis(); });
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  ModulePassManager mpm = pb.buildPerModuleDefaultPipeline(OptimizationLevel::O3);
  // Unroll-and-jam of the work-item x loops that ask for it (emitLoop's
  // llvm.loop.unroll_and_jam.count: the x loop around a kernel loop, matmul's k) turns
  // per-item scalar code into contiguous loads the SLP vectorizer packs. LLVM 14's O3
  // adds the pass only under its process-wide `enable-unroll-and-jam` option, which
  // would change every other pipeline of the process (the cuda and hip lowerings')
  // behind their cache keys, so this pipeline adds it itself, after O3, with the
  // clean-up O3 runs after it (instruction combining, hoisting of what the jammed
  // work-items share).
  {
    FunctionPassManager jam;
    jam.addPass(createFunctionToLoopPassAdaptor(LoopUnrollAndJamPass(OptimizationLevel::O3.getSpeedupLevel())));
    jam.addPass(InstCombinePass());
    jam.addPass(createFunctionToLoopPassAdaptor(LICMPass(), /*UseMemorySSA=*/true, /*UseBlockFrequencyInfo=*/true));
    mpm.addPass(createModuleToFunctionPassAdaptor(std::move(jam)));
  }
  // LLVM 14's O3 runs the SLP vectorizer before unroll-and-jam: once more after it, so
  // the jammed work-items (emitLoop) become vectors.
  {
    FunctionPassManager late;
    late.addPass(SLPVectorizerPass());
    late.addPass(VectorCombinePass());
    late.addPass(InstCombinePass());
    late.addPass(SimplifyCFGPass());
    mpm.addPass(createModuleToFunctionPassAdaptor(std::move(late)));
  }
  mpm.run(m, mam);
  interleaveMarkedLoops(m, tm, kIlpCount);
  return Error::success();
}

} // namespace cgraph::codegen::cpu
