// SPIR-V -> amdgcn code object (see amdgcn.h for the address-space mapping).
//
// The shared table-ABI pipeline (table_abi.h) does the work; this file supplies the
// amdgcn parts: the address-space map (generic 4 -> flat 0, constant 2 -> 4) and the
// builtin names that go with it (constant U3AS2 -> U3AS4, generic U3AS4 marked U3ASG
// until the caller's space is known), the after-remap step (allocas into space 5,
// InferAddressSpaces, builtins with private/generic pointer parameters renamed to the
// variant of the pointer's space; lifetime markers on flat pointers dropped), the kernel
// attributes, codegen to an ELF object and ld.lld.
#include "cgraph/codegen/amdgcn.h"
#include "address_spaces.h"
#include "env.h"

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Module.h>
#include <llvm/MC/MCSubtargetInfo.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/Transforms/Scalar.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>

extern "C" void LLVMInitializeAMDGPUTargetInfo();
extern "C" void LLVMInitializeAMDGPUTarget();
extern "C" void LLVMInitializeAMDGPUTargetMC();
extern "C" void LLVMInitializeAMDGPUAsmPrinter();

#ifndef CGRAPH_LLD
#define CGRAPH_LLD ""
#endif

namespace cgraph::codegen {

namespace {

using namespace llvm;
namespace fs = std::filesystem;

constexpr const char *kTriple = "amdgcn-amd-amdhsa";
constexpr const char *kGenericMark = "U3ASG"; // a generic pointer parameter, space unknown yet
// LLVM 14's AMDGPU data layout (AMDGPUTargetMachine.cpp): private is 5 (32-bit).
constexpr const char *kDataLayout =
    "e-p:64:64-p1:64:64-p2:32:32-p3:32:32-p4:64:64-p5:32:32-p6:32:32-i64:64-v16:16-v24:32-"
    "v32:32-v48:64-v96:128-v192:256-v256:256-v512:512-v1024:1024-v2048:2048-n32:64-S32-A5-G1-ni:7";

void initAmdgpu() {
  static std::once_flag once;
  std::call_once(once, [] {
    LLVMInitializeAMDGPUTargetInfo();
    LLVMInitializeAMDGPUTarget();
    LLVMInitializeAMDGPUTargetMC();
    LLVMInitializeAMDGPUAsmPrinter();
  });
}

// A builtin's name once constant pointers are in space 4 (libclc's U3AS4) and generic
// ones flat: marked U3ASG for specializePointerBuiltins.
std::string amdgcnBuiltinName(const std::string &name) {
  return replaceAll(replaceAll(name, "U3AS4", kGenericMark), "U3AS2", "U3AS4");
}

// Positions (in `name`) just after the `P` of each pointer parameter of an Itanium-
// mangled OpenCL builtin, in parameter order. Builtin parameter types are lower-case
// letters, Dv<n>_, Dh, S<n>_, U3AS<n>, K, V, r and P: after the name, `P` only marks
// a pointer.
std::vector<size_t> pointerMarks(const std::string &name) {
  std::vector<size_t> out;
  if (name.compare(0, 2, "_Z") != 0) return out;
  size_t i = 2, n = 0;
  while (i < name.size() && std::isdigit(static_cast<unsigned char>(name[i])))
    n = n * 10 + size_t(name[i++] - '0');
  for (i += n; i < name.size(); ++i)
    if (name[i] == 'P') out.push_back(i + 1);
  return out;
}

// A builtin called with a flat pointer for a private (unqualified in the name) or
// generic (U3ASG) parameter is renamed to the variant of the space the pointer comes
// from, once InferAddressSpaces has pushed the casts to the call.
Error specializePointerBuiltins(Module &m) {
  struct Site {
    CallInst *call;
  };
  std::vector<CallInst *> calls;
  for (Function &f : m)
    for (BasicBlock &bb : f)
      for (Instruction &inst : bb)
        if (auto *c = dyn_cast<CallInst>(&inst))
          if (Function *callee = c->getCalledFunction())
            if (callee->isDeclaration() && !callee->isIntrinsic() &&
                callee->getName().startswith("_Z"))
              for (Value *a : c->args())
                if (auto *pt = dyn_cast<PointerType>(a->getType()))
                  if (pt->getAddressSpace() == 0) {
                    calls.push_back(c);
                    break;
                  }
  for (CallInst *c : calls) {
    Function *callee = c->getCalledFunction();
    std::string name = callee->getName().str();
    std::vector<size_t> marks = pointerMarks(name);
    std::vector<Value *> args(c->arg_begin(), c->arg_end());
    std::vector<Type *> types;
    size_t ptrIndex = 0, shift = 0;
    std::string newName = name;
    for (size_t i = 0; i < args.size(); ++i) {
      auto *pt = dyn_cast<PointerType>(args[i]->getType());
      if (!pt) {
        types.push_back(args[i]->getType());
        continue;
      }
      const size_t at = ptrIndex < marks.size() ? marks[ptrIndex] + shift : std::string::npos;
      ++ptrIndex;
      if (pt->getAddressSpace() != 0 || at == std::string::npos) {
        types.push_back(pt);
        continue;
      }
      Value *base = args[i];
      while (auto *bc = dyn_cast<BitCastInst>(base))
        base = bc->getOperand(0);
      unsigned as = 0;
      if (auto *cast = dyn_cast<AddrSpaceCastInst>(base)) {
        as = cast->getSrcAddressSpace();
        base = cast->getOperand(0);
      } else if (auto *ce = dyn_cast<ConstantExpr>(base)) {
        if (ce->getOpcode() == Instruction::AddrSpaceCast) {
          as = ce->getOperand(0)->getType()->getPointerAddressSpace();
          base = ce->getOperand(0);
        }
      }
      if (as == 0)
        return makeError("builtin '" + name +
                         "' is called with a generic pointer whose address space "
                         "cannot be inferred (libclc's amdgcn build has no generic variant)");
      const std::string q = "U3AS" + std::to_string(as);
      if (newName.compare(at, 5, kGenericMark) == 0) {
        newName.replace(at, 5, q);
      } else {
        newName.insert(at, q);
        shift += q.size();
      }
      IRBuilder<> b(c);
      Type *want = PointerType::get(pt->getPointerElementType(), as);
      args[i] = b.CreatePointerCast(base, want);
      types.push_back(want);
    }
    if (newName == name) continue;
    FunctionCallee nf =
        m.getOrInsertFunction(newName, FunctionType::get(c->getType(), types, false));
    IRBuilder<> b(c);
    CallInst *nc = b.CreateCall(nf, args);
    nc->setCallingConv(c->getCallingConv());
    nc->setAttributes(c->getAttributes());
    c->replaceAllUsesWith(nc);
    c->eraseFromParent();
  }
  // Leftover generic marks name no libclc builtin: say so plainly.
  for (Function &f : m)
    if (f.isDeclaration() && !f.use_empty() && f.getName().contains(kGenericMark))
      return makeError("builtin '" + f.getName().str() +
                       "' takes a generic pointer (libclc's amdgcn build has no generic variant)");
  return Error::success();
}

// After the remap: the amdgcn data layout, allocas in space 5, InferAddressSpaces, the
// builtin renames.
Error afterRemap(Module &m) {
  m.setDataLayout(kDataLayout);
  for (Function &f : m) {
    std::vector<AllocaInst *> allocas;
    for (BasicBlock &bb : f)
      for (Instruction &inst : bb)
        if (auto *a = dyn_cast<AllocaInst>(&inst))
          if (a->getType()->getAddressSpace() != 5) allocas.push_back(a);
    for (AllocaInst *a : allocas) {
      IRBuilder<> b(a);
      AllocaInst *na = b.CreateAlloca(a->getAllocatedType(), 5, a->getArraySize());
      na->setAlignment(a->getAlign());
      na->takeName(a);
      Value *flat = b.CreateAddrSpaceCast(na, a->getType());
      a->replaceAllUsesWith(flat);
      a->eraseFromParent();
    }
  }
  {
    legacy::FunctionPassManager fpm(&m);
    fpm.add(createInferAddressSpacesPass(0));
    fpm.doInitialization();
    for (Function &f : m)
      if (!f.isDeclaration()) fpm.run(f);
    fpm.doFinalization();
  }
  // Lifetime markers on flat pointers (casts of private allocas that InferAddressSpaces
  // leaves for intrinsics it does not rewrite) crash LLVM 14's SROA: drop them; they are
  // optimization hints only.
  std::vector<IntrinsicInst *> markers;
  for (Function &f : m)
    for (BasicBlock &bb : f)
      for (Instruction &inst : bb)
        if (auto *ii = dyn_cast<IntrinsicInst>(&inst))
          if ((ii->getIntrinsicID() == Intrinsic::lifetime_start ||
               ii->getIntrinsicID() == Intrinsic::lifetime_end) &&
              ii->getArgOperand(1)->getType()->getPointerAddressSpace() != 5)
            markers.push_back(ii);
  for (IntrinsicInst *ii : markers)
    ii->eraseFromParent();
  return specializePointerBuiltins(m);
}

Expected<std::unique_ptr<TargetMachine>> amdgcnMachine(const std::string &gfx) {
  initAmdgpu();
  std::string err;
  const Target *t = TargetRegistry::lookupTarget(kTriple, err);
  if (!t) return makeError("amdgcn target not available in LLVM: " + err);
  if (!amdgcnTargetKnown(gfx))
    return makeError("LLVM 14's amdgcn target does not know '" + gfx + "'");
  TargetOptions to;
  std::unique_ptr<TargetMachine> tm(
      t->createTargetMachine(kTriple, gfx, "", to, Reloc::PIC_, None, CodeGenOpt::Aggressive));
  if (!tm) return makeError("cannot create the amdgcn target machine for " + gfx);
  return tm;
}

std::string readAll(const fs::path &p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

} // namespace

bool amdgcnTargetKnown(const std::string &gfx) {
  initAmdgpu();
  std::string err;
  const Target *t = TargetRegistry::lookupTarget(kTriple, err);
  if (!t || gfx.rfind("gfx", 0) != 0) return false;
  std::unique_ptr<MCSubtargetInfo> sti(t->createMCSubtargetInfo(kTriple, gfx, ""));
  return sti && sti->isCPUStringValid(gfx);
}

std::string amdgcnTargetFor(const std::string &arch) {
  std::string gfx = arch.substr(0, arch.find(':'));
  return amdgcnTargetKnown(gfx) ? gfx : std::string();
}

std::string lldPath() {
  std::vector<std::string> candidates;
  if (auto e = envText("CGRAPH_LLD")) candidates.push_back(*e);
  if (*CGRAPH_LLD) candidates.push_back(CGRAPH_LLD);
  for (const char *dir : {"/usr/bin", "/usr/lib/llvm-14/bin"})
    for (const char *n : {"ld.lld-14", "ld.lld"})
      candidates.push_back(std::string(dir) + "/" + n);
  for (const std::string &c : candidates) {
    std::error_code ec;
    if (!c.empty() && fs::is_regular_file(c, ec) && access(c.c_str(), X_OK) == 0) return c;
  }
  return {};
}

std::string amdgcnLoweringVersion() {
  return "cgraph-hip-lowering-3;llvm-14;amdgcn-amdhsa;cov4;ld.lld;table-invariant";
}

Expected<std::vector<uint8_t>> lowerSpirvToAmdgcnObject(const uint8_t *spirv, size_t size,
                                                        const std::string &name,
                                                        const std::string &gfx,
                                                        std::vector<std::string> *kernels) {
  const std::string where = "module '" + name + "'";
  auto tmOr = amdgcnMachine(gfx);
  if (!tmOr) return tmOr.error().withContext(where);
  TableAbiTarget target;
  target.backend = "hip";
  target.triple = kTriple;
  // Until the remap, private pointers are still flat (0) and allocas live in 0;
  // afterRemap installs the amdgcn layout.
  target.dataLayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64";
  target.addressSpaces = {{4, 0}, {2, 4}};
  target.builtinName = amdgcnBuiltinName;
  target.afterRemap = afterRemap;
  target.supplementIR = builtinSupplementIR({});
  target.libclcFile = "amdgcn--amdhsa.bc";
  target.markKernel = [](Module &, Function &f) {
    f.setCallingConv(CallingConv::AMDGPU_KERNEL);
    f.addFnAttr("amdgpu-flat-work-group-size", "1,1024");
  };
  target.machine = tmOr->get();
  target.dumpEnv = "CGRAPH_HIP_DUMP_IR";
  LLVMContext ctx;
  auto lowered = lowerToTableAbi(ctx, spirv, size, name, target);
  if (!lowered) return lowered.error();
  SmallString<0> obj;
  {
    raw_svector_ostream os(obj);
    legacy::PassManager pm;
    if ((*tmOr)->addPassesToEmitFile(pm, os, nullptr, CGFT_ObjectFile))
      return makeError(where + ": the amdgcn target cannot emit an object for " + gfx);
    pm.run(*lowered->module);
  }
  if (kernels) *kernels = lowered->kernels;
  return std::vector<uint8_t>(obj.begin(), obj.end());
}

Expected<AmdgcnModule> lowerSpirvToAmdgcn(const uint8_t *spirv, size_t size,
                                          const std::string &name, const std::string &gfx) {
  const std::string where = "module '" + name + "'";
  AmdgcnModule out;
  out.gfx = gfx;
  auto obj = lowerSpirvToAmdgcnObject(spirv, size, name, gfx, &out.kernels);
  if (!obj) return obj.error();
  const std::string lld = lldPath();
  if (lld.empty())
    return makeError(where + ": ld.lld not found (install lld-14 or set CGRAPH_LLD)");
  std::string tmpl = (fs::temp_directory_path() / "cgraph-hip-XXXXXX").string();
  if (!mkdtemp(tmpl.data()))
    return makeError(where + ": cannot create a temporary folder for ld.lld");
  const fs::path dir = tmpl;
  struct Cleanup {
    fs::path d;
    ~Cleanup() {
      std::error_code ec;
      fs::remove_all(d, ec);
    }
  } cleanup{dir};
  {
    std::ofstream f(dir / "k.o", std::ios::binary);
    f.write(reinterpret_cast<const char *>(obj->data()), std::streamsize(obj->size()));
    if (!f) return makeError(where + ": cannot write the object for ld.lld");
  }
  const std::string cmd = "'" + lld + "' -shared --no-undefined -o '" + (dir / "k.co").string() +
                          "' '" + (dir / "k.o").string() + "' > '" + (dir / "log").string() +
                          "' 2>&1";
  const int rc = std::system(cmd.c_str());
  if (!WIFEXITED(rc) || WEXITSTATUS(rc) != 0)
    return makeError(where + ": " + lld + " failed: " + readAll(dir / "log"));
  const std::string co = readAll(dir / "k.co");
  if (co.empty()) return makeError(where + ": " + lld + " wrote no code object");
  out.codeObject.assign(co.begin(), co.end());
  return out;
}

} // namespace cgraph::codegen
