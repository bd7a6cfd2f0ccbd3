// SPIR-V -> PTX (see ptx.h for the kernel ABI and the address-space mapping).
//
// Steps:
//   1. SPIR-V -> spir64 LLVM 14 IR (lib/kernel); every function gets the C calling
//      convention (libclc's functions have it; a call with a mismatched convention is
//      undefined and the optimizer deletes it);
//   2. each kernel `k` is renamed to an internal body and a wrapper named `k` with the
//      table ABI calls it; every non-wrapper function is inlined (AlwaysInliner);
//   3. get_global_id / get_global_offset / get_work_dim become wrapper arguments;
//   4. address spaces are remapped on the IR (4 -> 0, 2 -> 1: types through a type
//      remapper, globals and functions re-created, intrinsics re-declared under their
//      new overloads, casts between 0 and 4 dropped) and builtin declarations renamed
//      to libclc's nvptx names (builtinName);
//   5. link libclc's nvptx64--nvidiacl.bc (only what is used), internalize, O3 with
//      the NVPTX target machine, emit PTX.
#include "cgraph/codegen/ptx.h"

#include "cgraph/codegen/table_abi.h"
#include "address_spaces.h"

#include <llvm/Bitcode/BitcodeReader.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Linker/Linker.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/SourceMgr.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/Transforms/IPO.h>
#include <llvm/Transforms/IPO/AlwaysInliner.h>

#include <unistd.h>

#include <cctype>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <mutex>

extern "C" void LLVMInitializeNVPTXTargetInfo();
extern "C" void LLVMInitializeNVPTXTarget();
extern "C" void LLVMInitializeNVPTXTargetMC();
extern "C" void LLVMInitializeNVPTXAsmPrinter();

namespace cgraph::codegen {

namespace {

using namespace llvm;

void initNvptx() {
  static std::once_flag once;
  std::call_once(once, [] {
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetMC();
    LLVMInitializeNVPTXAsmPrinter();
  });
}

// native_X and half_X may be as precise as X: libclc's nvptx build has no native_exp
// (it becomes an llvm.exp call the NVPTX target cannot lower) nor half_cos, so both
// name the precise builtin. `_Z10native_expf` -> `_Z3expf`.
std::string preciseForNative(const std::string &in) {
  std::string out;
  out.reserve(in.size());
  size_t i = 0;
  while (i < in.size()) {
    if (in.compare(i, 2, "_Z") == 0 && (i == 0 || !std::isalnum(static_cast<unsigned char>(in[i - 1])))) {
      size_t j = i + 2, n = 0;
      while (j < in.size() && std::isdigit(static_cast<unsigned char>(in[j]))) n = n * 10 + size_t(in[j++] - '0');
      for (const char *prefix : {"native_", "half_"}) {
        const size_t pl = std::strlen(prefix);
        if (n > pl && in.compare(j, pl, prefix) == 0) {
          out += "_Z" + std::to_string(n - pl) + in.substr(j + pl, n - pl);
          i = j + n;
          goto next;
        }
      }
      out += in.substr(i, j - i);
      i = j;
      continue;
    }
    out += in[i++];
  next:;
  }
  return out;
}

// Step 4: a builtin's name in libclc's nvptx build, which names generic pointers
// unqualified (flat) and has no constant variants (constant is global here).
std::string nvptxBuiltinName(const std::string &name) {
  return preciseForNative(replaceAll(replaceAll(name, "U3AS4", ""), "U3AS2", "U3AS1"));
}

Expected<std::unique_ptr<TargetMachine>> nvptxMachine(unsigned sm) {
  initNvptx();
  std::string err;
  const std::string triple = "nvptx64-nvidia-cuda";
  const Target *t = TargetRegistry::lookupTarget(triple, err);
  if (!t) return makeError("nvptx64 target not available in LLVM: " + err);
  TargetOptions to;
  std::unique_ptr<TargetMachine> tm(t->createTargetMachine(
      triple, "sm_" + std::to_string(sm), "+ptx75", to, Reloc::PIC_, None, CodeGenOpt::Aggressive));
  if (!tm) return makeError("cannot create the nvptx64 target machine for sm_" + std::to_string(sm));
  return tm;
}

} // namespace

unsigned ptxTargetFor(unsigned major, unsigned minor) {
  const unsigned cc = major * 10 + minor;
  static const unsigned kTargets[] = {90, 86, 80, 75, 72, 70, 62, 61, 60, 53, 52, 50, 37, 35};
  for (unsigned t : kTargets)
    if (t <= cc) return t;
  return 0;
}

std::string ptxLoweringVersion() { return "cgraph-cuda-lowering-9;llvm-14;ptx75;sm90-griddepcontrol-wait;coarse-x4;restrict-nc;table-nc"; }

bool waitsForGridDependencies(unsigned sm) { return sm >= 90; }

std::string nvptxLibclcPath() { return findLibclc("nvptx64--nvidiacl.bc"); }

Expected<PtxModule> lowerSpirvToPtx(const uint8_t *spirv, size_t size, const std::string &name,
                                    unsigned sm) {
  const std::string where = "module '" + name + "'";
  if (sm == 0) return makeError(where + ": no nvptx target for this device");
  // sm_90 is LLVM 14's sm_86 code under an sm_90 / PTX 7.8 header (PTX is forward
  // compatible), plus the griddepcontrol prologue that LLVM 14 cannot emit itself.
  const bool gridWait = waitsForGridDependencies(sm);
  auto tmOr = nvptxMachine(gridWait ? 86 : sm);
  if (!tmOr) return tmOr.error().withContext(where);
  TableAbiTarget target;
  target.backend = "cuda";
  target.triple = "nvptx64-nvidia-cuda";
  target.dataLayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64";
  target.addressSpaces = {{4, 0}, {2, 1}};
  target.builtinName = nvptxBuiltinName;
  target.supplementIR = builtinSupplementIR({"1", "3"});
  target.libclcFile = "nvptx64--nvidiacl.bc";
  target.allowUnresolved = [](const std::string &n) { return n.rfind("__nvvm_reflect", 0) == 0; };
  target.markKernel = [](Module &g, Function &f) {
    LLVMContext &ctx = g.getContext();
    f.setCallingConv(CallingConv::PTX_Kernel);
    g.getOrInsertNamedMetadata("nvvm.annotations")
        ->addOperand(MDNode::get(ctx, {ValueAsMetadata::get(&f), MDString::get(ctx, "kernel"),
                                       ConstantAsMetadata::get(ConstantInt::get(Type::getInt32Ty(ctx), 1))}));
  };
  target.machine = tmOr->get();
  target.dumpEnv = "CGRAPH_CUDA_DUMP_IR";
  target.coarsen = true;
  // Wait for the grids this one depends on programmatically (a no-op otherwise). No
  // griddepcontrol.launch_dependents: a dependent grid launches as this one's CTAs
  // exit (the implicit trigger) and reads its table before its own wait. An explicit
  // trigger, even one skipped by large grids, slowed most kernels that had it (the
  // logs in benchmarks/cuda/results/).
  if (gridWait) target.entryAsm = {"griddepcontrol.wait;"};
  LLVMContext ctx;
  auto lowered = lowerToTableAbi(ctx, spirv, size, name, target);
  if (!lowered) return lowered.error();
  std::unique_ptr<Module> g = std::move(lowered->module);
  TargetMachine &tm = **tmOr;
  PtxModule out;
  out.sm = sm;
  out.kernels = lowered->kernels;
  out.coarse = lowered->coarse;
  SmallString<0> ptx;
  {
    raw_svector_ostream os(ptx);
    legacy::PassManager pm;
    if (tm.addPassesToEmitFile(pm, os, nullptr, CGFT_AssemblyFile))
      return makeError(where + ": the nvptx64 target cannot emit PTX");
    pm.run(*g);
  }
  out.ptx = std::string(ptx.str());
  if (gridWait) {
    const std::pair<const char *, const char *> header[] = {{".version 7.5", ".version 7.8"},
                                                            {".target sm_86", ".target sm_90"}};
    for (const auto &h : header) {
      const size_t at = out.ptx.find(h.first);
      if (at == std::string::npos)
        return makeError(where + ": the PTX has no '" + h.first + "' line to retarget to sm_90 (internal error)");
      out.ptx.replace(at, std::strlen(h.first), h.second);
    }
  }
  return out;
}

} // namespace cgraph::codegen
