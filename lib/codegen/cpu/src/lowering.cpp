// Host lowering of a SPIR-V module (spir64 IR from the translator), lowerToObject:
//   1. link the builtin library (only what is used) and inline every non-kernel function;
//   2. turn each kernel into an internal "body" that takes the work-item ids and the
//      launch geometry as extra arguments, so work-item builtins become plain values
//      (the x id is the innermost loop variable after inlining: vectorizable);
//   3. __local variables become offsets into a per-group local block (an argument);
//   4. wrap: barrier-free kernels get `cgk.<k>.wg` looping z/y/x over the group;
//      kernels with barriers are cut into regions (barrier_regions.h) and get a
//      `cgk.<k>.wg` that runs one z/y/x loop per region, or, where the cut declines,
//      `cgk.<k>.wi` (one work-item, run as a fiber);
//   5. retarget to the host, O3, emit an object file.
// Address spaces 1-4 are left in place: the x86-64 backend treats every address space
// below 256 as the flat one (isNoopAddrSpaceCast), so no rewrite of pointer types is
// needed for correct code, and the optimizer does not assume they are disjoint.
// This file is the driver: each step below is one function, the passes it runs live in
// the files lowering_internal.h lists.
#include "lowering_internal.h"

#include "cgraph/kernel/spirv_to_llvm.h"

#include <llvm/ADT/SmallPtrSet.h>
#include <llvm/Analysis/CFG.h>
#include <llvm/IR/DiagnosticInfo.h>
#include <llvm/IR/DiagnosticPrinter.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Transforms/IPO/AlwaysInliner.h>

#include <algorithm>
#include <system_error>

namespace cgraph::codegen::cpu {

using namespace llvm;

namespace {

// LLVM's diagnostics never reach stderr (lib/ never prints): errors are kept in
// `diagnosed` and fail the lowering (lowerToObject); warnings, remarks and optimization
// failures (the x loop asks for unroll-and-jam whether or not it can apply) are dropped.
void keepDiagnosedErrors(LLVMContext &ctx, std::string &diagnosed) {
  ctx.setDiagnosticHandlerCallBack(
      [](const DiagnosticInfo &d, void *out) {
        if (d.getSeverity() != DS_Error) return;
        std::string &text = *static_cast<std::string *>(out);
        raw_string_ostream os(text);
        DiagnosticPrinterRawOStream dp(os);
        if (!text.empty()) os << "; ";
        d.print(dp);
      },
      &diagnosed);
}

// Returns the module's kernels; every other defined function becomes an internal,
// always-inlined helper, and every function and call the C calling convention.
std::vector<Function *> prepareFunctions(Module &m) {
  std::vector<Function *> kernels;
  for (Function &f : m) {
    if (f.getCallingConv() == CallingConv::SPIR_KERNEL && !f.isDeclaration()) {
      kernels.push_back(&f);
      continue;
    }
    if (f.isDeclaration()) continue;
    f.removeFnAttr(Attribute::NoInline);
    f.removeFnAttr(Attribute::OptimizeNone);
    f.addFnAttr(Attribute::AlwaysInline);
    f.setLinkage(GlobalValue::InternalLinkage);
  }
  // Calls keep their own calling convention: make everything C for the host.
  for (Function &f : m) {
    if (f.getCallingConv() == CallingConv::SPIR_FUNC) f.setCallingConv(CallingConv::C);
    for (BasicBlock &bb : f)
      for (Instruction &i : bb)
        if (auto *c = dyn_cast<CallBase>(&i))
          if (c->getCallingConv() == CallingConv::SPIR_FUNC) c->setCallingConv(CallingConv::C);
  }
  return kernels;
}

// The runtime functions lowered kernels call (cgraph/codegen/cpu.h): the fiber barrier, and with
// bounds checks the failure record (null callee without).
struct RuntimeCalls {
  FunctionCallee barrier;
  FunctionCallee boundsFail;
};

RuntimeCalls declareRuntimeCalls(Module &m, bool checkBounds) {
  LLVMContext &lc = m.getContext();
  Type *i64 = Type::getInt64Ty(lc);
  RuntimeCalls calls;
  calls.barrier = m.getOrInsertFunction("cgraph_cpu_barrier", Type::getVoidTy(lc));
  if (checkBounds) {
    calls.boundsFail =
        m.getOrInsertFunction("cgraph_cpu_bounds_fail", Type::getVoidTy(lc), i64, i64, i64, i64, i64, i64);
    auto *f = cast<Function>(calls.boundsFail.getCallee());
    f->addFnAttr(Attribute::Cold);
    f->addFnAttr(Attribute::NoUnwind);
  }
  return calls;
}

// A specialized compile (LocalSpecialization) lowers one kernel: `kernels` becomes that
// one, and the other kernels are erased where nothing calls them.
Error keepSpecializedKernel(std::vector<Function *> &kernels, const LocalSpecialization &spec,
                            const std::string &moduleName) {
  auto it = std::find_if(kernels.begin(), kernels.end(),
                         [&](Function *k) { return k->getName() == spec.kernel; });
  if (it == kernels.end())
    return makeError("module '" + moduleName + "' has no kernel '" + spec.kernel + "'");
  for (Function *k : kernels)
    if (k != *it && k->use_empty()) k->eraseFromParent();
  kernels = {*it};
  return Error::success();
}

// Moves kernel `k`'s code into a new internal function `<k>.body` taking the kernel's
// parameters and then the BodyArgs (cgraph/codegen/cpu.h's ctx fields); `k` is left empty.
Expected<KernelPlan> makeBody(Module &m, Function &k, const LocalSpecialization *spec,
                              const std::string &moduleName) {
  LLVMContext &lc = m.getContext();
  Type *i64 = Type::getInt64Ty(lc);
  Type *i8p = Type::getInt8PtrTy(lc);
  if (!k.use_empty())
    return makeError("module '" + moduleName + "': kernel '" + k.getName().str() +
                     "' is called from another function (not supported by the cpu backend)");
  KernelPlan plan;
  plan.name = k.getName().str();
  if (spec)
    for (int d = 0; d < 3; ++d)
      plan.fixedLocal[d] = std::max<uint64_t>(spec->local[d], 1);
  plan.numParams = uint32_t(k.arg_size());
  std::vector<Type *> params;
  for (Argument &a : k.args()) {
    if (a.hasByValAttr() ||
        (!a.getType()->isPointerTy() && m.getDataLayout().getTypeAllocSize(a.getType()) > 8))
      return makeError("module '" + moduleName + "': kernel '" + plan.name + "': parameter " +
                       std::to_string(a.getArgNo()) +
                       " is passed by value and larger than 8 bytes (not supported)");
    params.push_back(a.getType());
  }
  for (int d = 0; d < 3; ++d)
    params.push_back(i64);
  params.push_back(i8p);
  for (uint32_t d = 0; d < kCtxFields; ++d)
    params.push_back(i64);
  Function *body = Function::Create(FunctionType::get(Type::getVoidTy(lc), params, false),
                                    GlobalValue::InternalLinkage, plan.name + ".body", m);
  body->getBasicBlockList().splice(body->end(), k.getBasicBlockList());
  for (unsigned i = 0; i < k.arg_size(); ++i) {
    k.getArg(i)->replaceAllUsesWith(body->getArg(i));
    body->getArg(i)->takeName(k.getArg(i));
    // `restrict` (noalias) and the like: once the body is inlined into the wrapper,
    // the inliner turns noalias parameters into scoped alias metadata, which is what
    // lets the vectorizers and unroll-and-jam reorder a kernel's loads and stores.
    AttributeSet pa = k.getAttributes().getParamAttrs(i);
    if (pa.hasAttributes()) body->addParamAttrs(i, AttrBuilder(lc, pa));
  }
  // AlwaysInline only once the wrapper calls it: the always-inliner erases dead ones.
  body->addFnAttr(Attribute::NoUnwind);
  plan.body = body;
  return plan;
}

// A plan and a body for every kernel (makeBody); the kernels themselves are erased.
Expected<std::vector<KernelPlan>> makeBodies(Module &m, const std::vector<Function *> &kernels,
                                             const LocalSpecialization *spec,
                                             const std::string &moduleName) {
  std::vector<KernelPlan> plans;
  for (Function *k : kernels) {
    auto plan = makeBody(m, *k, spec, moduleName);
    if (!plan) return plan.error();
    plans.push_back(*plan);
  }
  for (Function *k : kernels)
    k->eraseFromParent();
  return plans;
}

// Inline helpers and builtins into the bodies (OpenCL C has no recursion).
void inlineHelpers(Module &m) {
  ModulePassManager mpm;
  mpm.addPass(AlwaysInlinerPass(false));
  runPasses(m, mpm);
}

// The plan's facts about the work-item that the wrapper and the launcher use: loops,
// long and straight bodies, its cost and contended atomics. Guards the body's divisions
// (safe_division.cpp) before it is costed.
void analyseBody(KernelPlan &plan) {
  Function *body = plan.body;
  SmallVector<std::pair<const BasicBlock *, const BasicBlock *>, 4> backEdges;
  FindFunctionBackedges(*body, backEdges);
  plan.loops = !backEdges.empty();
  plan.longBody = !plan.loops && body->getInstructionCount() >= kLongBody;
  plan.straight = plan.longBody && std::all_of(body->begin(), body->end(), [](BasicBlock &bb) {
                    auto *br = dyn_cast<BranchInst>(bb.getTerminator());
                    return isa<ReturnInst>(bb.getTerminator()) || (br && br->isUnconditional());
                  });
  guardDivisions(*body);
  plan.itemCost = itemCost(*body);
  plan.contended = contendedAtomics(*body, plan.numParams);
}

// Lowers one kernel body: work-item builtins become the body's arguments, __local
// variables offsets into the local block (`locals`: the module's), accesses are checked
// (`checkBounds`), the plan is filled in, and the kernel is wrapped: cut at its barriers
// into regions where it has them (unless `fibers`), else as a whole.
void lowerKernel(Module &m, KernelPlan &plan, const SmallPtrSetImpl<GlobalVariable *> &locals,
                 RuntimeCalls calls, bool checkBounds, bool fibers) {
  Function *body = plan.body;
  unsigned base = plan.numParams;
  BodyArgs ba;
  for (int d = 0; d < 3; ++d)
    ba.l[d] = body->getArg(base + d);
  ba.local = body->getArg(base + 3);
  for (uint32_t d = 0; d < kCtxFields; ++d)
    ba.ctx[d] = body->getArg(base + 4 + d);
  plan.barrier = replaceWorkItemCalls(*body, ba, calls.barrier, plan.groupShape);
  for (unsigned i = 0; i < plan.numParams; ++i)
    if (auto *pt = dyn_cast<PointerType>(body->getArg(i)->getType()))
      if (pt->getAddressSpace() == 3) plan.groupShape = true;

  if (!locals.empty()) placeLocalVariables(*body, ba.local, locals, plan.staticLocal);
  if (plan.staticLocal) plan.groupShape = true;
  if (checkBounds) {
    plan.checkBounds = true;
    promoteAllocas(*body); // parameters' pointers followed through SSA values, not allocas
    instrumentBounds(*body, plan.numParams, ba.ctx[kCtxBounds], calls.boundsFail);
  }
  analyseBody(plan);
  std::string whyNot;
  if (plan.barrier && !fibers) promoteAllocas(*body);
  if (plan.barrier && !fibers &&
      splitAtBarriers(*body, *cast<Function>(calls.barrier.getCallee()), plan.numParams, plan.regions,
                      whyNot)) {
    emitWrappers(m, plan);
    for (Function *r : plan.regions.regions)
      r->addFnAttr(Attribute::AlwaysInline);
    body->eraseFromParent();
    plan.body = nullptr;
    return;
  }
  emitWrappers(m, plan);
  body->addFnAttr(Attribute::AlwaysInline);
}

// Every kernel lowered (lowerKernel); the __local variables, now unused, are erased.
void lowerKernels(Module &m, std::vector<KernelPlan> &plans, RuntimeCalls calls,
                  bool checkBounds, bool fibers) {
  SmallPtrSet<GlobalVariable *, 8> locals;
  for (GlobalVariable &g : m.globals())
    if (g.getAddressSpace() == 3) locals.insert(&g);
  for (KernelPlan &plan : plans)
    lowerKernel(m, plan, locals, calls, checkBounds, fibers);
  for (GlobalVariable *g : locals)
    if (g->use_empty()) g->eraseFromParent();
}

// Anything still calling a work-item builtin did not come through a kernel body.
Error checkWorkItemCalls(Module &m, const std::string &moduleName) {
  for (Function &f : m)
    if (f.isDeclaration() && classify(f.getName()) != WiFunc::None && !f.use_empty())
      return makeError("module '" + moduleName + "': '" + f.getName().str() +
                       "' is called outside a kernel (not supported by the cpu backend)");
  return Error::success();
}

// Only the wrappers stay external.
void internalize(Module &m) {
  for (Function &f : m)
    if (!f.isDeclaration() && !f.getName().startswith(kWrapperPrefix))
      f.setLinkage(GlobalValue::InternalLinkage);
}

// The module gets the host's triple and data layout, and the lowered IR is verified.
Error retarget(Module &m, const TargetMachine &tm, const std::string &moduleName) {
  m.setTargetTriple(tm.getTargetTriple().str());
  m.setDataLayout(tm.createDataLayout());
  std::string msg;
  raw_string_ostream os(msg);
  if (verifyModule(m, &os))
    return makeError("module '" + moduleName + "': lowered IR is invalid: " + os.str());
  return Error::success();
}

// After O3, every OpenCL builtin (an Itanium-mangled name) the kernels still call must
// have come from the builtin library.
Error checkBuiltins(Module &m, const std::string &moduleName) {
  for (Function &f : m)
    if (f.isDeclaration() && !f.isIntrinsic() && !f.use_empty() && f.getName().startswith("_Z"))
      return makeError("module '" + moduleName + "': builtin '" + f.getName().str() +
                       "' is not provided by the cpu backend");
  return Error::success();
}

// Debugging aid (the cpu backend's CpuOptions::dumpDir): the optimized IR of every module compiled (not
// cached) as <dir>/<module>.ll (llc-14 -mcpu=native turns it into asm).
void dumpIR(Module &m, const std::string &dir, const std::string &moduleName) {
  std::error_code ec;
  std::string file = moduleName;
  for (char &c : file)
    if (c == '/' || c == '\\') c = '_';
  raw_fd_ostream ll(dir + "/" + file + ".ll", ec);
  if (!ec) m.print(ll, nullptr);
}

// The host object file of `m` into `obj`.
Error emitObject(Module &m, TargetMachine &tm, const std::string &moduleName,
                 SmallVectorImpl<char> &obj) {
  raw_svector_ostream os(obj);
  legacy::PassManager pm;
  if (tm.addPassesToEmitFile(pm, os, nullptr, CGFT_ObjectFile))
    return makeError("module '" + moduleName + "': the host target cannot emit object files");
  pm.run(m);
  return Error::success();
}

} // namespace

Expected<std::vector<uint8_t>> lowerToObject(const uint8_t *spirv, size_t size,
                                             const std::string &moduleName,
                                             const LocalSpecialization *spec, bool checkBounds,
                                             const std::string *dumpDir, bool fibers) {
  initTargets();
  LLVMContext ctx;
  std::string diagnosed;
  keepDiagnosedErrors(ctx, diagnosed);
  auto mod = spirvToLLVM(ctx, spirv, size);
  if (!mod) return mod.error().withContext("module '" + moduleName + "'");
  Module &m = **mod;
  CGRAPH_RETURN_IF_ERROR(linkBuiltins(m).withContext("module '" + moduleName + "'"));
  lowerAtomicPeeks(m);

  std::vector<Function *> kernels = prepareFunctions(m);
  RuntimeCalls calls = declareRuntimeCalls(m, checkBounds);
  if (spec) CGRAPH_RETURN_IF_ERROR(keepSpecializedKernel(kernels, *spec, moduleName));
  auto plans = makeBodies(m, kernels, spec, moduleName);
  if (!plans) return plans.error();
  inlineHelpers(m);
  lowerKernels(m, *plans, calls, checkBounds, fibers);
  CGRAPH_RETURN_IF_ERROR(checkWorkItemCalls(m, moduleName));
  internalize(m);

  auto tm = hostMachine();
  if (!tm) return tm.error();
  CGRAPH_RETURN_IF_ERROR(retarget(m, **tm, moduleName));
  CGRAPH_RETURN_IF_ERROR(runO3(m, **tm));
  expandIdempotentRmws(m, **tm);
  CGRAPH_RETURN_IF_ERROR(checkBuiltins(m, moduleName));
  if (dumpDir) dumpIR(m, *dumpDir, moduleName);

  SmallVector<char, 0> obj;
  CGRAPH_RETURN_IF_ERROR(emitObject(m, **tm, moduleName, obj));
  if (!diagnosed.empty()) return makeError("module '" + moduleName + "': code generation failed: " + diagnosed);
  return std::vector<uint8_t>(obj.begin(), obj.end());
}

} // namespace cgraph::codegen::cpu
