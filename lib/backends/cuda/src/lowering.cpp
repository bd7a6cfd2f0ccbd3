// SPIR-V -> PTX (see ptx.h for the kernel ABI and the address-space mapping).
//
// Steps:
//   1. SPIR-V -> spir64 LLVM 14 IR (lib/kernel); every function gets the C calling
//      convention (libclc's functions have it; a call with a mismatched convention is
//      undefined and the optimizer deletes it);
//   2. each kernel `k` is renamed to an internal body and a wrapper named `k` with the
//      table ABI calls it; every non-wrapper function is inlined (AlwaysInliner);
//   3. get_global_id / get_global_offset / get_work_dim become wrapper arguments;
//   4. address spaces are remapped on the textual IR (4 -> 0, 2 -> 1, in types,
//      mangled builtin names and intrinsic suffixes): with typed pointers a textual
//      remap is far smaller than cloning every function through a type remapper, and
//      the parser re-checks the result. Casts between 0 and 4, which would become
//      no-op casts, are parked in marker calls first and removed after parsing;
//   5. link libclc's nvptx64--nvidiacl.bc (only what is used), internalize, O3 with
//      the NVPTX target machine, emit PTX.
#include "cgraph/backends/cuda/ptx.h"

#include "cgraph/kernel/spirv_to_llvm.h"

#include <llvm/Bitcode/BitcodeReader.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/AsmParser/Parser.h>
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
#include <regex>
#include <set>

extern "C" void LLVMInitializeNVPTXTargetInfo();
extern "C" void LLVMInitializeNVPTXTarget();
extern "C" void LLVMInitializeNVPTXTargetMC();
extern "C" void LLVMInitializeNVPTXAsmPrinter();

namespace cgraph::cuda {

namespace {

using namespace llvm;

constexpr const char *kBodyPrefix = "__cgraph_body.";
constexpr const char *kCastPrefix = "__cgraph_ascast.";
constexpr const char *kSharedName = "__cgraph_smem";

void initNvptx() {
  static std::once_flag once;
  std::call_once(once, [] {
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetMC();
    LLVMInitializeNVPTXAsmPrinter();
  });
}

std::string errText(const SMDiagnostic &d) {
  std::string s;
  raw_string_ostream os(s);
  d.print("ptx-lowering", os, false);
  return os.str();
}

// Step 2: the wrapper with the table ABI around kernel body `body`.
Expected<Function *> makeWrapper(Module &m, Function *body, const std::string &name,
                                 GlobalVariable *smem) {
  LLVMContext &ctx = m.getContext();
  const DataLayout &dl = m.getDataLayout();
  Type *i32 = Type::getInt32Ty(ctx), *i64 = Type::getInt64Ty(ctx);
  Type *tablePtr = PointerType::get(i64, 1);
  std::vector<Type *> params{tablePtr};
  for (size_t i = 0; i < body->arg_size(); ++i) {
    params.push_back(i64);
    params.push_back(i32);
  }
  params.insert(params.end(), {i64, i64, i64, i32});
  Function *w = Function::Create(FunctionType::get(Type::getVoidTy(ctx), params, false),
                                 GlobalValue::ExternalLinkage, name, m);
  w->setCallingConv(CallingConv::C); // PTX_Kernel is set after the textual remap
  BasicBlock *bb = BasicBlock::Create(ctx, "entry", w);
  IRBuilder<> b(bb);
  Argument *table = w->getArg(0);
  std::vector<Value *> callArgs;
  for (size_t i = 0; i < body->arg_size(); ++i) {
    Argument *formal = body->getArg(unsigned(i));
    Value *a = w->getArg(unsigned(1 + 2 * i));
    Value *mi = w->getArg(unsigned(2 + 2 * i));
    Type *t = formal->getType();
    auto tableAt = [&](Value *idx) {
      return b.CreateLoad(i64, b.CreateInBoundsGEP(i64, table, b.CreateZExt(idx, i64)));
    };
    if (auto *pt = dyn_cast<PointerType>(t)) {
      if (formal->hasByValAttr())
        return makeError("kernel '" + name + "': parameter " + std::to_string(i) +
                         " is a by-value struct, which the cuda backend does not pass");
      if (pt->getAddressSpace() == 3) {
        Value *p = b.CreateInBoundsGEP(smem->getValueType(), smem, {b.getInt64(0), a});
        callArgs.push_back(b.CreatePointerCast(p, t));
      } else {
        callArgs.push_back(b.CreateIntToPtr(b.CreateAdd(tableAt(mi), a), t));
      }
      continue;
    }
    const uint64_t bits = dl.getTypeSizeInBits(t);
    if (bits == 0 || bits > 64 || !(t->isIntegerTy() || t->isFloatingPointTy() || t->isVectorTy()))
      return makeError("kernel '" + name + "': parameter " + std::to_string(i) +
                       " has a type wider than 8 bytes or not a scalar");
    Value *lit = b.CreateICmpEQ(mi, b.getInt32(kLiteral));
    // Only load from the table when the value is not a literal: the index is kLiteral then.
    BasicBlock *cur = b.GetInsertBlock();
    BasicBlock *load = BasicBlock::Create(ctx, "param", w);
    BasicBlock *join = BasicBlock::Create(ctx, "arg", w);
    b.CreateCondBr(lit, join, load);
    b.SetInsertPoint(load);
    Value *fromTable = tableAt(mi);
    b.CreateBr(join);
    b.SetInsertPoint(join);
    PHINode *phi = b.CreatePHI(i64, 2);
    phi->addIncoming(a, cur);
    phi->addIncoming(fromTable, load);
    Value *v = b.CreateTrunc(phi, IntegerType::get(ctx, unsigned(bits)));
    if (v->getType() != t) v = b.CreateBitCast(v, t);
    callArgs.push_back(v);
  }
  CallInst *call = b.CreateCall(body->getFunctionType(), body, callArgs);
  call->setCallingConv(CallingConv::C);
  b.CreateRetVoid();
  return w;
}

// Step 3: work-item functions that depend on the launch's offset and dimension.
void replaceWorkItemCalls(Module &m, Function *w) {
  LLVMContext &ctx = m.getContext();
  Type *i32 = Type::getInt32Ty(ctx), *i64 = Type::getInt64Ty(ctx);
  FunctionType *idFn = FunctionType::get(i64, {i32}, false);
  const unsigned nargs = unsigned(w->arg_size());
  Value *off[3] = {w->getArg(nargs - 4), w->getArg(nargs - 3), w->getArg(nargs - 2)};
  Value *dim = w->getArg(nargs - 1);
  std::vector<CallInst *> calls;
  for (BasicBlock &bb : *w)
    for (Instruction &inst : bb)
      if (auto *c = dyn_cast<CallInst>(&inst))
        if (Function *f = c->getCalledFunction()) {
          StringRef n = f->getName();
          if (n == "_Z13get_global_idj" || n == "_Z17get_global_offsetj" || n == "_Z12get_work_dimv")
            calls.push_back(c);
        }
  for (CallInst *c : calls) {
    IRBuilder<> b(c);
    StringRef n = c->getCalledFunction()->getName();
    Value *v;
    if (n == "_Z12get_work_dimv") {
      v = dim;
    } else {
      Value *d = c->getArgOperand(0);
      Value *o = b.CreateSelect(b.CreateICmpEQ(d, b.getInt32(0)), off[0],
                                b.CreateSelect(b.CreateICmpEQ(d, b.getInt32(1)), off[1],
                                               b.CreateSelect(b.CreateICmpEQ(d, b.getInt32(2)), off[2],
                                                              b.getInt64(0))));
      if (n == "_Z17get_global_offsetj") {
        v = o;
      } else {
        auto call = [&](const char *fn) {
          CallInst *r = b.CreateCall(m.getOrInsertFunction(fn, idFn), {d});
          r->setCallingConv(CallingConv::C);
          return r;
        };
        v = b.CreateAdd(b.CreateAdd(b.CreateMul(call("_Z12get_group_idj"), call("_Z14get_local_sizej")),
                                    call("_Z12get_local_idj")),
                        o);
      }
    }
    if (v->getType() != c->getType()) v = b.CreateZExtOrTrunc(v, c->getType());
    c->replaceAllUsesWith(v);
    c->eraseFromParent();
  }
}

// Step 4 (before printing): casts between address spaces 0 and 4 become marker calls.
void parkFlatCasts(Module &m) {
  std::vector<AddrSpaceCastInst *> casts;
  for (Function &f : m)
    for (BasicBlock &bb : f)
      for (Instruction &inst : bb)
        if (auto *c = dyn_cast<AddrSpaceCastInst>(&inst)) {
          unsigned s = c->getSrcAddressSpace(), d = c->getDestAddressSpace();
          if ((s == 0 && d == 4) || (s == 4 && d == 0)) casts.push_back(c);
        }
  LLVMContext &ctx = m.getContext();
  for (AddrSpaceCastInst *c : casts) {
    IRBuilder<> b(c);
    unsigned s = c->getSrcAddressSpace(), d = c->getDestAddressSpace();
    Type *src8 = Type::getInt8PtrTy(ctx, s), *dst8 = Type::getInt8PtrTy(ctx, d);
    FunctionCallee f = m.getOrInsertFunction(std::string(kCastPrefix) + std::to_string(s) + "." +
                                                 std::to_string(d),
                                             FunctionType::get(dst8, {src8}, false));
    Value *r = b.CreateCall(f, {b.CreateBitCast(c->getOperand(0), src8)});
    c->replaceAllUsesWith(b.CreateBitCast(r, c->getType()));
    c->eraseFromParent();
  }
}

void unparkFlatCasts(Module &m) {
  std::vector<Function *> markers;
  for (Function &f : m)
    if (f.getName().startswith(kCastPrefix)) markers.push_back(&f);
  for (Function *f : markers) {
    for (User *u : make_early_inc_range(f->users()))
      if (auto *c = dyn_cast<CallInst>(u)) {
        c->replaceAllUsesWith(c->getArgOperand(0));
        c->eraseFromParent();
      }
    if (f->use_empty()) f->eraseFromParent();
  }
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

// Builtins libclc's nvptx build lacks, as IR in nvptx address spaces: 64-bit atom_*
// (cl_khr_int64_*_atomics) and scalar mad_hi. Linked before libclc.
std::string supplementIR() {
  std::string s;
  const char *aspaces[] = {"1", "3"};
  const std::pair<const char *, const char *> types[] = {{"l", "min"}, {"m", "umin"}};
  for (const char *as : aspaces) {
    for (const auto &t : types) {
      const bool u = t.first[0] == 'm';
      const std::string ptr = std::string("i64 addrspace(") + as + ")*";
      const std::string q = std::string("PU3AS") + as + "V" + t.first;
      const std::pair<const char *, const char *> ops[] = {
          {"atom_add", "add"}, {"atom_sub", "sub"}, {"atom_xchg", "xchg"}, {"atom_and", "and"},
          {"atom_or", "or"}, {"atom_xor", "xor"}, {"atom_min", u ? "umin" : "min"},
          {"atom_max", u ? "umax" : "max"}};
      for (const auto &op : ops) {
        std::string name = std::string("_Z") + std::to_string(std::strlen(op.first)) + op.first + q + t.first;
        s += "define linkonce_odr i64 @" + name + "(" + ptr + " %p, i64 %v) {\n  %r = atomicrmw " +
             op.second + " " + ptr + " %p, i64 %v seq_cst\n  ret i64 %r\n}\n";
      }
      for (const auto &op : {std::make_pair("atom_inc", "add"), std::make_pair("atom_dec", "sub")})
        s += std::string("define linkonce_odr i64 @_Z8") + op.first + q + "(" + ptr +
             " %p) {\n  %r = atomicrmw " + op.second + " " + ptr + " %p, i64 1 seq_cst\n  ret i64 %r\n}\n";
      s += "define linkonce_odr i64 @_Z12atom_cmpxchg" + q + t.first + t.first + "(" + ptr +
           " %p, i64 %c, i64 %v) {\n  %x = cmpxchg " + ptr +
           " %p, i64 %c, i64 %v seq_cst seq_cst\n  %r = extractvalue { i64, i1 } %x, 0\n  ret i64 %r\n}\n";
    }
  }
  // mad_hi(a, b, c) = mul_hi(a, b) + c for the scalar integer types.
  const struct { const char *m; int bits; bool sign; } ints[] = {
      {"c", 8, true}, {"h", 8, false}, {"s", 16, true}, {"t", 16, false},
      {"i", 32, true}, {"j", 32, false}, {"l", 64, true}, {"m", 64, false}};
  for (const auto &t : ints) {
    const std::string ty = "i" + std::to_string(t.bits), wide = "i" + std::to_string(2 * t.bits);
    const char *ext = t.sign ? "sext" : "zext";
    s += "define linkonce_odr " + ty + " @_Z6mad_hi" + t.m + t.m + t.m + "(" + ty + " %a, " + ty +
         " %b, " + ty + " %c) {\n  %wa = " + ext + " " + ty + " %a to " + wide + "\n  %wb = " + ext +
         " " + ty + " %b to " + wide + "\n  %p = mul " + wide + " %wa, %wb\n  %h = lshr " + wide +
         " %p, " + std::to_string(t.bits) + "\n  %t = trunc " + wide + " %h to " + ty +
         "\n  %r = add " + ty + " %t, %c\n  ret " + ty + " %r\n}\n";
  }
  // recip and divide: what native_/half_recip and _divide become (see preciseForNative).
  s += "define linkonce_odr float @_Z5recipf(float %x) {\n  %r = fdiv float 1.0, %x\n  ret float %r\n}\n";
  s += "define linkonce_odr float @_Z6divideff(float %a, float %b) {\n  %r = fdiv float %a, %b\n  ret float %r\n}\n";
  return s;
}

// Step 4: the textual remap. Returns the new text.
std::string remapAddressSpaces(const std::string &in) {
  std::string s = std::regex_replace(in, std::regex(" addrspace\\(4\\)"), "");
  s = std::regex_replace(s, std::regex("addrspace\\(2\\)"), "addrspace(1)");
  // Mangled names (Itanium, OpenCL address spaces): generic -> unqualified (flat),
  // constant -> global, as libclc's nvptx build names them.
  s = std::regex_replace(s, std::regex("U3AS4"), "");
  s = std::regex_replace(s, std::regex("U3AS2"), "U3AS1");
  // Overloaded intrinsic suffixes (llvm.memcpy.p4i8.p2i8.i64).
  std::regex intrinsic("@llvm\\.[A-Za-z0-9_.]+");
  std::string out;
  auto begin = std::sregex_iterator(s.begin(), s.end(), intrinsic);
  size_t last = 0;
  for (auto it = begin; it != std::sregex_iterator(); ++it) {
    out.append(s, last, size_t(it->position()) - last);
    std::string name = it->str();
    name = std::regex_replace(name, std::regex("\\.p4"), ".p0");
    name = std::regex_replace(name, std::regex("\\.p2"), ".p1");
    out += name;
    last = size_t(it->position() + it->length());
  }
  out.append(s, last, std::string::npos);
  out = preciseForNative(out);
  // Two declarations may now have one name (vload4 from global and from constant):
  // keep the first.
  std::string result;
  std::set<std::string> declared;
  std::regex declName("^declare [^@]*@([^ (]+)\\(");
  size_t pos = 0;
  while (pos < out.size()) {
    size_t eol = out.find('\n', pos);
    if (eol == std::string::npos) eol = out.size();
    std::string line = out.substr(pos, eol - pos);
    std::smatch mt;
    bool keep = true;
    if (line.rfind("declare ", 0) == 0 && std::regex_search(line, mt, declName))
      keep = declared.insert(mt[1].str()).second;
    if (keep) {
      result += line;
      result += '\n';
    }
    pos = eol + 1;
  }
  return result;
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
  static const unsigned kTargets[] = {86, 80, 75, 72, 70, 62, 61, 60, 53, 52, 50, 37, 35};
  for (unsigned t : kTargets)
    if (t <= cc) return t;
  return 0;
}

std::string loweringVersion() { return "cgraph-cuda-lowering-3;llvm-14;ptx75"; }

std::string libclcPath() {
  const char *file = "nvptx64--nvidiacl.bc";
  std::vector<std::string> dirs;
  if (const char *e = std::getenv("CGRAPH_LIBCLC_DIR")) dirs.push_back(e);
  char exe[4096];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  if (n > 0) {
    exe[n] = 0;
    dirs.push_back((std::filesystem::path(exe).parent_path().parent_path() / "share" / "clc").string());
  }
  dirs.push_back("/usr/lib/clc");
  for (const std::string &d : dirs) {
    std::error_code ec;
    std::filesystem::path p = std::filesystem::path(d) / file;
    if (std::filesystem::is_regular_file(p, ec)) return p.string();
  }
  return {};
}

Expected<PtxModule> lowerSpirvToPtx(const uint8_t *spirv, size_t size, const std::string &name,
                                    unsigned sm) {
  const std::string where = "module '" + name + "'";
  if (sm == 0) return makeError(where + ": no nvptx target for this device");
  LLVMContext ctx;
  auto spirOr = spirvToLLVM(ctx, spirv, size);
  if (!spirOr) return spirOr.error().withContext(where);
  std::unique_ptr<Module> m = std::move(*spirOr);

  // 1. calling conventions; 2. bodies and wrappers.
  std::vector<Function *> kernels;
  for (Function &f : *m) {
    if (f.getCallingConv() == CallingConv::SPIR_KERNEL) kernels.push_back(&f);
    f.setCallingConv(CallingConv::C);
    for (BasicBlock &bb : f)
      for (Instruction &inst : bb)
        if (auto *c = dyn_cast<CallBase>(&inst)) c->setCallingConv(CallingConv::C);
  }
  if (kernels.empty()) return makeError(where + ": no kernel in the module");
  m->setTargetTriple("nvptx64-nvidia-cuda");
  m->setDataLayout("e-i64:64-i128:128-v16:16-v32:32-n16:32:64");
  auto *smem = new GlobalVariable(*m, ArrayType::get(Type::getInt8Ty(ctx), 0), false,
                                  GlobalValue::ExternalLinkage, nullptr, kSharedName, nullptr,
                                  GlobalValue::NotThreadLocal, 3);
  smem->setAlignment(Align(16));
  PtxModule out;
  out.sm = sm;
  std::vector<std::string> wrappers;
  for (Function *k : kernels) {
    const std::string kname = k->getName().str();
    k->setName(kBodyPrefix + kname);
    auto w = makeWrapper(*m, k, kname, smem);
    if (!w) return w.error().withContext(where);
    wrappers.push_back(kname);
    out.kernels.push_back(kname);
  }
  std::set<std::string> wrapperSet(wrappers.begin(), wrappers.end());
  for (Function &f : *m) {
    if (f.isDeclaration() || wrapperSet.count(f.getName().str())) continue;
    f.removeFnAttr(Attribute::NoInline);
    f.removeFnAttr(Attribute::OptimizeNone);
    f.addFnAttr(Attribute::AlwaysInline);
    f.setLinkage(GlobalValue::InternalLinkage);
  }
  {
    legacy::PassManager pm;
    pm.add(createAlwaysInlinerLegacyPass());
    pm.add(createGlobalDCEPass());
    pm.run(*m);
  }
  for (const std::string &w : wrappers) replaceWorkItemCalls(*m, m->getFunction(w));
  parkFlatCasts(*m);

  // 4. textual address-space remap, then parse back.
  std::string text;
  {
    raw_string_ostream os(text);
    m->print(os, nullptr);
  }
  m.reset();
  text = remapAddressSpaces(text);
  SMDiagnostic diag;
  std::unique_ptr<Module> g = parseAssemblyString(text, diag, ctx);
  if (!g) return makeError(where + ": address-space remap produced invalid IR: " + errText(diag));
  unparkFlatCasts(*g);

  // 5. the supplement, libclc, internalize, optimize, emit.
  {
    SMDiagnostic sd;
    std::unique_ptr<Module> sup = parseAssemblyString(supplementIR(), sd, ctx);
    if (!sup) return makeError(where + ": the builtin supplement does not parse: " + errText(sd));
    sup->setTargetTriple(g->getTargetTriple());
    sup->setDataLayout(g->getDataLayout());
    if (Linker::linkModules(*g, std::move(sup), Linker::LinkOnlyNeeded))
      return makeError(where + ": linking the builtin supplement failed");
  }
  const std::string clc = libclcPath();
  if (clc.empty())
    return makeError(where + ": libclc's nvptx64--nvidiacl.bc not found (set CGRAPH_LIBCLC_DIR "
                             "or install libclc-14)");
  auto buf = MemoryBuffer::getFile(clc);
  if (!buf) return makeError(where + ": cannot read '" + clc + "': " + buf.getError().message());
  auto lib = parseBitcodeFile((*buf)->getMemBufferRef(), ctx);
  if (!lib) {
    std::string e;
    raw_string_ostream os(e);
    os << lib.takeError();
    return makeError(where + ": cannot parse '" + clc + "': " + os.str());
  }
  (*lib)->setTargetTriple(g->getTargetTriple());
  (*lib)->setDataLayout(g->getDataLayout());
  if (Linker::linkModules(*g, std::move(*lib), Linker::LinkOnlyNeeded))
    return makeError(where + ": linking libclc failed");
  std::vector<std::string> unresolved;
  for (Function &f : *g) {
    if (f.isDeclaration()) {
      if (!f.isIntrinsic() && !f.use_empty() && !f.getName().startswith("__nvvm_reflect"))
        unresolved.push_back(f.getName().str());
      continue;
    }
    if (!wrapperSet.count(f.getName().str())) f.setLinkage(GlobalValue::InternalLinkage);
  }
  if (!unresolved.empty()) {
    std::string list;
    for (size_t i = 0; i < unresolved.size() && i < 8; ++i) list += (i ? ", " : "") + unresolved[i];
    return makeError(where + ": builtins missing from libclc: " + list);
  }
  for (GlobalVariable &gv : g->globals())
    if (!gv.isDeclaration()) gv.setLinkage(GlobalValue::InternalLinkage);
  NamedMDNode *ann = g->getOrInsertNamedMetadata("nvvm.annotations");
  for (const std::string &w : wrappers) {
    Function *f = g->getFunction(w);
    f->setCallingConv(CallingConv::PTX_Kernel);
    f->setLinkage(GlobalValue::ExternalLinkage);
    ann->addOperand(MDNode::get(ctx, {ValueAsMetadata::get(f), MDString::get(ctx, "kernel"),
                                      ConstantAsMetadata::get(ConstantInt::get(Type::getInt32Ty(ctx), 1))}));
  }
  {
    std::string vt;
    raw_string_ostream vs(vt);
    if (verifyModule(*g, &vs)) return makeError(where + ": lowered module is invalid: " + vs.str());
  }
  auto tmOr = nvptxMachine(sm);
  if (!tmOr) return tmOr.error().withContext(where);
  TargetMachine &tm = **tmOr;
  g->setDataLayout(tm.createDataLayout());
  {
    LoopAnalysisManager lam;
    FunctionAnalysisManager fam;
    CGSCCAnalysisManager cam;
    ModuleAnalysisManager mam;
    PassBuilder pb(&tm);
    pb.registerModuleAnalyses(mam);
    pb.registerCGSCCAnalyses(cam);
    pb.registerFunctionAnalyses(fam);
    pb.registerLoopAnalyses(lam);
    pb.crossRegisterProxies(lam, fam, cam, mam);
    ModulePassManager mpm = pb.buildPerModuleDefaultPipeline(OptimizationLevel::O3);
    mpm.run(*g, mam);
  }
  if (const char *dump = std::getenv("CGRAPH_CUDA_DUMP_IR")) {
    std::error_code ec;
    raw_fd_ostream os(std::string(dump) + "/" + name + ".ll", ec);
    if (!ec) g->print(os, nullptr);
  }
  SmallString<0> ptx;
  {
    raw_svector_ostream os(ptx);
    legacy::PassManager pm;
    if (tm.addPassesToEmitFile(pm, os, nullptr, CGFT_AssemblyFile))
      return makeError(where + ": the nvptx64 target cannot emit PTX");
    pm.run(*g);
  }
  out.ptx = std::string(ptx.str());
  return out;
}

} // namespace cgraph::cuda
