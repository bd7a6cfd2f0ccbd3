// LLVM utilities the steps share: the cleanup pipelines, metadata after linking,
// literal constants.
#include "ir_internal.h"

#include <llvm/IR/Constants.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/PassManager.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Transforms/IPO/GlobalDCE.h>
#include <llvm/Transforms/Scalar/ADCE.h>
#include <llvm/Transforms/Scalar/DeadStoreElimination.h>
#include <llvm/Transforms/Scalar/EarlyCSE.h>
#include <llvm/Transforms/Scalar/GVN.h>
#include <llvm/Transforms/Scalar/SROA.h>
#include <llvm/Transforms/Scalar/SimplifyCFG.h>

namespace cgraph {
namespace fusion {
namespace detail {

namespace {
// The new pass manager's four analysis managers, registered and cross-linked.
struct Analyses {
  llvm::PassBuilder pb;
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cam;
  llvm::ModuleAnalysisManager mam;
  Analyses() {
    pb.registerModuleAnalyses(mam);
    pb.registerCGSCCAnalyses(cam);
    pb.registerFunctionAnalyses(fam);
    pb.registerLoopAnalyses(lam);
    pb.crossRegisterProxies(lam, fam, cam, mam);
  }
};
} // namespace

// `memory`: also forward loads and drop dead stores using alias analysis (the noalias
// parameters): EarlyCSE with MemorySSA, GVN, DSE. Run on the final fused kernel, where a
// slot written by one kernel and read by the next no longer goes through memory.
void runCleanup(llvm::Function &f, bool memory) {
  Analyses a;
  llvm::FunctionPassManager fpm;
  fpm.addPass(llvm::SROAPass());
  fpm.addPass(llvm::EarlyCSEPass(memory));
  if (memory) {
    fpm.addPass(llvm::GVNPass());
    fpm.addPass(llvm::DSEPass());
  }
  fpm.addPass(llvm::SimplifyCFGPass());
  fpm.addPass(llvm::ADCEPass());
  fpm.run(f, a.fam);
}

void runGlobalDCE(llvm::Module &m) {
  Analyses a;
  llvm::ModulePassManager mpm;
  mpm.addPass(llvm::GlobalDCEPass());
  mpm.run(m, a.mam);
}

// Named metadata that every translated module carries once (versions, memory model):
// after linking, keep each distinct operand once.
void dedupeNamedMetadata(llvm::Module &m) {
  for (llvm::NamedMDNode &nmd : m.named_metadata()) {
    std::vector<llvm::MDNode *> ops;
    std::set<llvm::MDNode *> seen;
    for (llvm::MDNode *op : nmd.operands())
      if (seen.insert(op).second) ops.push_back(op);
    if (ops.size() == nmd.getNumOperands()) continue;
    nmd.clearOperands();
    for (llvm::MDNode *op : ops)
      nmd.addOperand(op);
  }
}

llvm::Constant *literal(llvm::Type *t, uint64_t bits) {
  if (auto *it = llvm::dyn_cast<llvm::IntegerType>(t)) return llvm::ConstantInt::get(it, bits);
  if (t->isHalfTy() || t->isFloatTy() || t->isDoubleTy()) {
    unsigned w = t->getPrimitiveSizeInBits();
    llvm::APInt ai(w, w == 64 ? bits : bits & ((uint64_t(1) << w) - 1));
    return llvm::ConstantFP::get(t->getContext(), llvm::APFloat(t->getFltSemantics(), ai));
  }
  return nullptr;
}

std::string literalText(llvm::Constant *c) {
  std::string s;
  llvm::raw_string_ostream os(s);
  if (auto *ci = llvm::dyn_cast<llvm::ConstantInt>(c))
    os << ci->getValue().getSExtValue();
  else if (auto *cf = llvm::dyn_cast<llvm::ConstantFP>(c))
    os << cf->getValueAPF().convertToDouble();
  return os.str();
}

} // namespace detail
} // namespace fusion
} // namespace cgraph
