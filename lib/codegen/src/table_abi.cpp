// The table-ABI lowering shared by the cuda and hip backends (see the header).
#include "cgraph/codegen/table_abi.h"

#include "cgraph/kernel/spirv_to_llvm.h"
#include "cgraph/kernel/work_item.h"

#include "address_spaces.h"
#include "coarsen.h"
#include "env.h"

#include <llvm/AsmParser/Parser.h>
#include <llvm/Bitcode/BitcodeReader.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/InlineAsm.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Linker/Linker.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/SourceMgr.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/Transforms/IPO.h>
#include <llvm/Transforms/IPO/AlwaysInliner.h>
#include <llvm/Transforms/Utils.h>
#include <llvm/Transforms/Vectorize/LoadStoreVectorizer.h>

#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <set>

namespace cgraph::codegen {

namespace {

using namespace llvm;
using kernel::WorkItemFn;

constexpr const char *kBodyPrefix = "__cgraph_body.";
constexpr const char *kSharedName = "__cgraph_smem";

std::string errText(const SMDiagnostic &d, const std::string &prog) {
  std::string s;
  raw_string_ostream os(s);
  d.print(prog.c_str(), os, false);
  return os.str();
}

// Step 2: a wrapper with the table ABI around kernel body `body`: table, {a_i, m_i}
// per parameter, offsets 0..2, work_dim and, for a coarse wrapper (coarsen.h), the
// global size of dimension 0.
Function *declareWrapper(Module &m, Function *body, const std::string &name, bool coarse) {
  LLVMContext &ctx = m.getContext();
  Type *i32 = Type::getInt32Ty(ctx), *i64 = Type::getInt64Ty(ctx);
  std::vector<Type *> params{PointerType::get(i64, 1)};
  for (size_t i = 0; i < body->arg_size(); ++i) {
    params.push_back(i64);
    params.push_back(i32);
  }
  params.insert(params.end(), {i64, i64, i64, i32});
  if (coarse) params.push_back(i64);
  Function *w = Function::Create(FunctionType::get(Type::getVoidTy(ctx), params, false),
                                 GlobalValue::ExternalLinkage, name, m);
  w->setCallingConv(CallingConv::C); // the target's kernel convention comes with markKernel
  return w;
}

// The body's arguments read from wrapper `w`'s table-ABI arguments (may add blocks: b
// ends in the last one).
Expected<std::vector<Value *>> loadArgs(IRBuilder<> &b, Function *w, Function *body, const std::string &name,
                                        GlobalVariable *smem, const TableAbiTarget &target) {
  const std::string &backend = target.backend;
  LLVMContext &ctx = w->getContext();
  const DataLayout &dl = w->getParent()->getDataLayout();
  Type *i64 = Type::getInt64Ty(ctx);
  Argument *table = w->getArg(0);
  std::vector<Value *> callArgs;
  for (size_t i = 0; i < body->arg_size(); ++i) {
    Argument *formal = body->getArg(unsigned(i));
    Value *a = w->getArg(unsigned(1 + 2 * i));
    Value *mi = w->getArg(unsigned(2 + 2 * i));
    Type *t = formal->getType();
    // The table does not change while a kernel runs (the loader node or a copy writes
    // it before the graph's kernels; nothing inside one does): invariant loads, which
    // NVPTX emits as ld.global.nc (the read-only path, no coherence with stores).
    auto tableAt = [&](Value *idx) {
      LoadInst *l = b.CreateLoad(i64, b.CreateInBoundsGEP(i64, table, b.CreateZExt(idx, i64)));
      l->setMetadata(LLVMContext::MD_invariant_load, MDNode::get(ctx, {}));
      return l;
    };
    if (auto *pt = dyn_cast<PointerType>(t)) {
      if (formal->hasByValAttr())
        return makeError("kernel '" + name + "': parameter " + std::to_string(i) +
                         " is a by-value struct, which the " + backend + " backend does not pass");
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
  for (const std::string &text : target.entryAsm)
    b.CreateCall(InlineAsm::get(FunctionType::get(Type::getVoidTy(ctx), false), text, "~{memory}", true), {});
  return callArgs;
}

Expected<Function *> makeWrapper(Module &m, Function *body, const std::string &name,
                                 GlobalVariable *smem, const TableAbiTarget &target) {
  Function *w = declareWrapper(m, body, name, false);
  IRBuilder<> b(BasicBlock::Create(m.getContext(), "entry", w));
  auto args = loadArgs(b, w, body, name, smem, target);
  if (!args) return args.error();
  b.CreateCall(body->getFunctionType(), body, *args)->setCallingConv(CallingConv::C);
  b.CreateRetVoid();
  return w;
}

// The coarse wrapper (coarsen.h) around `clones` (coarseBodies of `body`).
Expected<Function *> makeCoarseWrapper(Module &m, Function *body, const std::vector<Function *> &clones,
                                       const std::string &name, GlobalVariable *smem,
                                       const TableAbiTarget &target) {
  LLVMContext &ctx = m.getContext();
  const DataLayout &dl = m.getDataLayout();
  Function *w = declareWrapper(m, body, kCoarseEntryPrefix + name, true);
  IRBuilder<> b(BasicBlock::Create(ctx, "entry", w));
  auto argsOr = loadArgs(b, w, body, name, smem, target);
  if (!argsOr) return argsOr.error();
  std::vector<Value *> args = std::move(*argsOr);
  Type *i32 = Type::getInt32Ty(ctx), *i64 = Type::getInt64Ty(ctx);
  const unsigned offBase = unsigned(1 + 2 * body->arg_size());
  Value *off0 = w->getArg(offBase), *n = w->getArg(offBase + 4);
  FunctionType *idFn = FunctionType::get(i64, {i32}, false);
  auto item = [&](WorkItemFn fn) {
    CallInst *r = b.CreateCall(m.getOrInsertFunction(kernel::mangledName(fn), idFn), {b.getInt32(0)});
    r->setCallingConv(CallingConv::C);
    return r;
  };
  Value *t = b.CreateAdd(b.CreateMul(item(WorkItemFn::GroupId), item(WorkItemFn::LocalSize)),
                         item(WorkItemFn::LocalId));
  Value *first = b.CreateAdd(off0, b.CreateMul(t, b.getInt64(kCoarseItems)));
  Value *end = b.CreateAdd(off0, n);
  Value *misaligned = b.CreateAnd(off0, b.getInt64(kCoarseItems - 1));
  std::vector<Value *> pointers;
  for (Value *a : args)
    if (a->getType()->isPointerTy()) {
      pointers.push_back(a);
      misaligned = b.CreateOr(misaligned, b.CreateAnd(b.CreatePtrToInt(a, i64), b.getInt64(15)));
    }
  Value *whole = b.CreateICmpULE(b.CreateAdd(first, b.getInt64(kCoarseItems)), end);
  BasicBlock *fast = BasicBlock::Create(ctx, "coarse.vector", w);
  BasicBlock *slow = BasicBlock::Create(ctx, "coarse.each", w);
  b.CreateCondBr(b.CreateAnd(whole, b.CreateICmpEQ(misaligned, b.getInt64(0))), fast, slow);

  // All in range and aligned: the copies in a row, every buffer 16-byte aligned and the
  // first id a multiple of 4 (as bits the optimizer can see).
  b.SetInsertPoint(fast);
  for (Value *p : pointers)
    b.CreateAlignmentAssumption(dl, p, 16);
  // first with off0's low bits cleared: equal here, and every copy's id is then base | k
  // with base's low bits known zero (the vectorizer sees 4 consecutive elements).
  Value *base = b.CreateAdd(b.CreateAnd(off0, b.getInt64(~uint64_t(kCoarseItems - 1))),
                            b.CreateMul(t, b.getInt64(kCoarseItems)));
  for (unsigned k = 0; k < clones.size(); ++k) {
    std::vector<Value *> a = args;
    a.push_back(b.CreateOr(base, b.getInt64(k)));
    b.CreateCall(clones[k]->getFunctionType(), clones[k], a)->setCallingConv(CallingConv::C);
  }
  b.CreateRetVoid();

  // Otherwise one at a time, while in range (the first clone: one copy of the code).
  b.SetInsertPoint(slow);
  BasicBlock *loop = BasicBlock::Create(ctx, "coarse.item", w);
  BasicBlock *run = BasicBlock::Create(ctx, "coarse.run", w);
  BasicBlock *done = BasicBlock::Create(ctx, "coarse.done", w);
  b.CreateBr(loop);
  b.SetInsertPoint(loop);
  PHINode *k = b.CreatePHI(i64, 2);
  k->addIncoming(b.getInt64(0), slow);
  Value *gid = b.CreateAdd(first, k);
  b.CreateCondBr(b.CreateAnd(b.CreateICmpULT(k, b.getInt64(kCoarseItems)), b.CreateICmpULT(gid, end)), run, done);
  b.SetInsertPoint(run);
  std::vector<Value *> a = args;
  a.push_back(gid);
  b.CreateCall(clones[0]->getFunctionType(), clones[0], a)->setCallingConv(CallingConv::C);
  k->addIncoming(b.CreateAdd(k, b.getInt64(1)), run);
  b.CreateBr(loop);
  b.SetInsertPoint(done);
  b.CreateRetVoid();
  return w;
}

// Step 2 (before the wrappers): loads through a restrict buffer parameter (noalias in
// the SPIR-V) that the kernel only loads from are invariant: while the kernel runs
// nothing writes that memory (restrict: no other pointer does; and this one only
// reads, with no call, store or escape of it). nvcc makes the loads of `const
// __restrict__` pointers ld.global.nc (the read-only data path); NVPTX does so for
// invariant loads, but cannot see through the table ABI that the pointer is such a
// parameter. `body` has its parameters' allocas promoted.
void markInvariantLoads(Function &body) {
  MDNode *empty = MDNode::get(body.getContext(), {});
  for (Argument &a : body.args()) {
    auto *pt = dyn_cast<PointerType>(a.getType());
    if (!pt || pt->getAddressSpace() == 3 || !a.hasNoAliasAttr()) continue;
    std::vector<Value *> work{&a};
    std::set<Value *> seen{&a};
    std::vector<LoadInst *> loads;
    bool onlyLoads = true;
    while (!work.empty() && onlyLoads) {
      Value *v = work.back();
      work.pop_back();
      for (User *u : v->users()) {
        if (auto *l = dyn_cast<LoadInst>(u)) {
          if (l->isVolatile() || l->isAtomic()) onlyLoads = false;
          loads.push_back(l);
        } else if (isa<GetElementPtrInst>(u) || isa<BitCastInst>(u) || isa<AddrSpaceCastInst>(u) ||
                   isa<PHINode>(u) || isa<SelectInst>(u)) {
          if (seen.insert(u).second) work.push_back(u);
        } else if (!isa<ICmpInst>(u)) {
          onlyLoads = false; // a store, call, ptrtoint...: it may be written or escape
          break;
        }
      }
    }
    if (onlyLoads)
      for (LoadInst *l : loads)
        l->setMetadata(LLVMContext::MD_invariant_load, empty);
  }
}

// Step 3: work-item functions that depend on the launch's offset and dimension.
// `offBase`: the wrapper's argument index of offset 0.
void replaceWorkItemCalls(Module &m, Function *w, unsigned offBase) {
  LLVMContext &ctx = m.getContext();
  Type *i32 = Type::getInt32Ty(ctx), *i64 = Type::getInt64Ty(ctx);
  FunctionType *idFn = FunctionType::get(i64, {i32}, false);
  Value *off[3] = {w->getArg(offBase), w->getArg(offBase + 1), w->getArg(offBase + 2)};
  Value *dim = w->getArg(offBase + 3);
  std::vector<CallInst *> calls;
  for (BasicBlock &bb : *w)
    for (Instruction &inst : bb)
      if (auto *c = dyn_cast<CallInst>(&inst))
        if (Function *f = c->getCalledFunction()) {
          WorkItemFn q = kernel::workItemQuery(f->getName());
          if (q == WorkItemFn::GlobalId || q == WorkItemFn::GlobalOffset || q == WorkItemFn::WorkDim)
            calls.push_back(c);
        }
  for (CallInst *c : calls) {
    IRBuilder<> b(c);
    WorkItemFn q = kernel::workItemQuery(c->getCalledFunction()->getName());
    Value *v;
    if (q == WorkItemFn::WorkDim) {
      v = dim;
    } else {
      Value *d = c->getArgOperand(0);
      Value *o = b.CreateSelect(
          b.CreateICmpEQ(d, b.getInt32(0)), off[0],
          b.CreateSelect(b.CreateICmpEQ(d, b.getInt32(1)), off[1],
                         b.CreateSelect(b.CreateICmpEQ(d, b.getInt32(2)), off[2], b.getInt64(0))));
      if (q == WorkItemFn::GlobalOffset) {
        v = o;
      } else {
        auto call = [&](WorkItemFn fn) {
          CallInst *r = b.CreateCall(m.getOrInsertFunction(kernel::mangledName(fn), idFn), {d});
          r->setCallingConv(CallingConv::C);
          return r;
        };
        v = b.CreateAdd(
            b.CreateAdd(b.CreateMul(call(WorkItemFn::GroupId), call(WorkItemFn::LocalSize)),
                        call(WorkItemFn::LocalId)),
            o);
      }
    }
    if (v->getType() != c->getType()) v = b.CreateZExtOrTrunc(v, c->getType());
    c->replaceAllUsesWith(v);
    c->eraseFromParent();
  }
}

// Named-metadata entries (nvvm.annotations) that named a function since erased.
void dropAnnotationsOfErased(Module &m) {
  for (NamedMDNode &nmd : m.named_metadata()) {
    std::vector<MDNode *> keep;
    bool dropped = false;
    for (MDNode *n : nmd.operands()) {
      if (n->getNumOperands() > 0 && !n->getOperand(0)) {
        dropped = true;
        continue;
      }
      keep.push_back(n);
    }
    if (!dropped) continue;
    nmd.clearOperands();
    for (MDNode *n : keep)
      nmd.addOperand(n);
  }
}

} // namespace

// See the header: 64-bit atom_* (cl_khr_int64_*_atomics) for the given spaces, scalar
// mad_hi, recip and divide. Linked before libclc.
std::string builtinSupplementIR(const std::vector<std::string> &atomics64ForSpaces) {
  std::string s;
  std::vector<const char *> aspaces;
  for (const std::string &a : atomics64ForSpaces)
    aspaces.push_back(a.c_str());
  const std::pair<const char *, const char *> types[] = {{"l", "min"}, {"m", "umin"}};
  for (const char *as : aspaces) {
    for (const auto &t : types) {
      const bool u = t.first[0] == 'm';
      const std::string ptr = std::string("i64 addrspace(") + as + ")*";
      const std::string q = std::string("PU3AS") + as + "V" + t.first;
      const std::pair<const char *, const char *> ops[] = {{"atom_add", "add"},
                                                           {"atom_sub", "sub"},
                                                           {"atom_xchg", "xchg"},
                                                           {"atom_and", "and"},
                                                           {"atom_or", "or"},
                                                           {"atom_xor", "xor"},
                                                           {"atom_min", u ? "umin" : "min"},
                                                           {"atom_max", u ? "umax" : "max"}};
      for (const auto &op : ops) {
        std::string name =
            std::string("_Z") + std::to_string(std::strlen(op.first)) + op.first + q + t.first;
        s += "define linkonce_odr i64 @" + name + "(" + ptr + " %p, i64 %v) {\n  %r = atomicrmw " +
             op.second + " " + ptr + " %p, i64 %v seq_cst\n  ret i64 %r\n}\n";
      }
      for (const auto &op : {std::make_pair("atom_inc", "add"), std::make_pair("atom_dec", "sub")})
        s += std::string("define linkonce_odr i64 @_Z8") + op.first + q + "(" + ptr +
             " %p) {\n  %r = atomicrmw " + op.second + " " + ptr +
             " %p, i64 1 seq_cst\n  ret i64 %r\n}\n";
      s += "define linkonce_odr i64 @_Z12atom_cmpxchg" + q + t.first + t.first + "(" + ptr +
           " %p, i64 %c, i64 %v) {\n  %x = cmpxchg " + ptr +
           " %p, i64 %c, i64 %v seq_cst seq_cst\n  %r = extractvalue { i64, i1 } %x, 0\n  ret i64 "
           "%r\n}\n";
    }
  }
  // mad_hi(a, b, c) = mul_hi(a, b) + c for the scalar integer types.
  const struct {
    const char *m;
    int bits;
    bool sign;
  } ints[] = {{"c", 8, true},  {"h", 8, false},  {"s", 16, true}, {"t", 16, false},
              {"i", 32, true}, {"j", 32, false}, {"l", 64, true}, {"m", 64, false}};
  for (const auto &t : ints) {
    const std::string ty = "i" + std::to_string(t.bits), wide = "i" + std::to_string(2 * t.bits);
    const char *ext = t.sign ? "sext" : "zext";
    s += "define linkonce_odr " + ty + " @_Z6mad_hi" + t.m + t.m + t.m + "(" + ty + " %a, " + ty +
         " %b, " + ty + " %c) {\n  %wa = " + ext + " " + ty + " %a to " + wide +
         "\n  %wb = " + ext + " " + ty + " %b to " + wide + "\n  %p = mul " + wide +
         " %wa, %wb\n  %h = lshr " + wide + " %p, " + std::to_string(t.bits) + "\n  %t = trunc " +
         wide + " %h to " + ty + "\n  %r = add " + ty + " %t, %c\n  ret " + ty + " %r\n}\n";
  }
  // recip and divide: what native_/half_recip and _divide become (see preciseForNative).
  s += "define linkonce_odr float @_Z5recipf(float %x) {\n  %r = fdiv float 1.0, %x\n  ret float "
       "%r\n}\n";
  s += "define linkonce_odr float @_Z6divideff(float %a, float %b) {\n  %r = fdiv float %a, %b\n  "
       "ret float %r\n}\n";
  return s;
}

std::string findLibclc(const char *file) {
  std::vector<std::string> dirs;
  if (auto e = envText("CGRAPH_LIBCLC_DIR")) dirs.push_back(*e);
  char exe[4096];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  if (n > 0) {
    exe[n] = 0;
    dirs.push_back(
        (std::filesystem::path(exe).parent_path().parent_path() / "share" / "clc").string());
  }
  dirs.push_back("/usr/lib/clc");
  for (const std::string &d : dirs) {
    std::error_code ec;
    std::filesystem::path p = std::filesystem::path(d) / file;
    if (std::filesystem::is_regular_file(p, ec)) return p.string();
  }
  return {};
}

namespace {

// A wrapper (entry) the lowering made: its name and the argument index of offset 0.
struct Wrapper {
  std::string name;
  unsigned offBase;
};

// Every function but those in `keep` inlined where it is called (then dropped with `dce`).
void inlineAllBut(Module &m, const std::set<const Function *> &keep, bool dce) {
  for (Function &f : m) {
    if (f.isDeclaration() || keep.count(&f)) continue;
    f.removeFnAttr(Attribute::NoInline);
    f.removeFnAttr(Attribute::OptimizeNone);
    f.addFnAttr(Attribute::AlwaysInline);
    f.setLinkage(GlobalValue::InternalLinkage);
  }
  legacy::PassManager pm;
  pm.add(createAlwaysInlinerLegacyPass());
  if (dce) pm.add(createGlobalDCEPass());
  pm.run(m);
}

// Step 1: the C calling convention everywhere, the target's triple and layout; returns
// the kernels (empty: none in the module).
std::vector<Function *> prepareModule(Module &m, const TableAbiTarget &target) {
  std::vector<Function *> kernels;
  for (Function &f : m) {
    if (f.getCallingConv() == CallingConv::SPIR_KERNEL) kernels.push_back(&f);
    f.setCallingConv(CallingConv::C);
    for (BasicBlock &bb : f)
      for (Instruction &inst : bb)
        if (auto *c = dyn_cast<CallBase>(&inst)) c->setCallingConv(CallingConv::C);
  }
  m.setTargetTriple(target.triple);
  m.setDataLayout(target.dataLayout);
  return kernels;
}

// The kernels' allocas promoted and their invariant loads marked (before wrapping).
void promoteKernels(Module &m, const std::vector<Function *> &kernels) {
  legacy::FunctionPassManager fpm(&m);
  fpm.add(createPromoteMemoryToRegisterPass());
  fpm.doInitialization();
  for (Function *k : kernels) {
    fpm.run(*k);
    markInvariantLoads(*k);
  }
  fpm.doFinalization();
}

// Steps 2 and 3: each kernel renamed to a body, a wrapper (and a coarse entry where
// allowed) made for it, everything else inlined into the wrappers, and the work-item
// calls that depend on the offsets replaced. Fills out.kernels and out.coarse.
Expected<std::vector<Wrapper>> makeWrappers(Module &m, const std::vector<Function *> &kernels,
                                            const TableAbiTarget &target, LoweredModule &out) {
  auto *smem = new GlobalVariable(m, ArrayType::get(Type::getInt8Ty(m.getContext()), 0), false,
                                  GlobalValue::ExternalLinkage, nullptr, kSharedName, nullptr,
                                  GlobalValue::NotThreadLocal, 3);
  smem->setAlignment(Align(16));
  // Coarsening judges a kernel with its callees inlined (coarsen.h).
  if (target.coarsen) inlineAllBut(m, std::set<const Function *>(kernels.begin(), kernels.end()), false);
  promoteKernels(m, kernels);
  std::vector<Wrapper> wrappers;
  for (Function *k : kernels) {
    const std::string kname = k->getName().str();
    k->setName(kBodyPrefix + kname);
    const unsigned offBase = unsigned(1 + 2 * k->arg_size());
    auto w = makeWrapper(m, k, kname, smem, target);
    if (!w) return w.error();
    wrappers.push_back({kname, offBase});
    out.kernels.push_back(kname);
    if (target.coarsen && coarsenBlocker(*k).empty()) {
      auto cw = makeCoarseWrapper(m, k, coarseBodies(m, *k), kname, smem, target);
      if (!cw) return cw.error();
      wrappers.push_back({(*cw)->getName().str(), offBase});
      out.coarse.push_back(kname);
    }
  }
  std::set<const Function *> wrapperFns;
  for (const Wrapper &w : wrappers) wrapperFns.insert(m.getFunction(w.name));
  inlineAllBut(m, wrapperFns, true);
  for (const Wrapper &w : wrappers) {
    replaceWorkItemCalls(m, m.getFunction(w.name), w.offBase);
    if (StringRef(w.name).startswith(kCoarseEntryPrefix)) scopeCoarseItems(*m.getFunction(w.name));
  }
  return wrappers;
}

// Step 5, first half: the builtin supplement and libclc linked (only what is used).
Error linkBuiltins(Module &m, const TableAbiTarget &target, const std::string &where) {
  LLVMContext &ctx = m.getContext();
  SMDiagnostic sd;
  std::unique_ptr<Module> sup = parseAssemblyString(target.supplementIR, sd, ctx);
  if (!sup)
    return makeError(where + ": the builtin supplement does not parse: " +
                     errText(sd, target.backend + "-lowering"));
  sup->setTargetTriple(m.getTargetTriple());
  sup->setDataLayout(m.getDataLayout());
  if (Linker::linkModules(m, std::move(sup), Linker::LinkOnlyNeeded))
    return makeError(where + ": linking the builtin supplement failed");
  const std::string clc = findLibclc(target.libclcFile.c_str());
  if (clc.empty())
    return makeError(where + ": libclc's " + target.libclcFile +
                     " not found (set CGRAPH_LIBCLC_DIR "
                     "or install libclc-14)");
  auto buf = MemoryBuffer::getFile(clc);
  if (!buf) return makeError(where + ": cannot read '" + clc + "': " + buf.getError().message());
  // Lazily: the linker materializes only the builtins the kernels reach, not the whole
  // library.
  auto lib = getOwningLazyBitcodeModule(std::move(*buf), ctx);
  if (!lib) {
    std::string e;
    raw_string_ostream os(e);
    os << lib.takeError();
    return makeError(where + ": cannot parse '" + clc + "': " + os.str());
  }
  (*lib)->setTargetTriple(m.getTargetTriple());
  (*lib)->setDataLayout(m.getDataLayout());
  if (Linker::linkModules(m, std::move(*lib), Linker::LinkOnlyNeeded))
    return makeError(where + ": linking libclc failed");
  return Error::success();
}

// Step 5, second half: every builtin resolved, everything but the wrappers internal,
// the wrappers made kernel entries, the module verified.
Error finishEntries(Module &m, const std::vector<Wrapper> &wrappers, const TableAbiTarget &target,
                    const std::string &where) {
  std::set<std::string> wrapperSet;
  for (const Wrapper &w : wrappers) wrapperSet.insert(w.name);
  std::vector<std::string> unresolved;
  for (Function &f : m) {
    if (f.isDeclaration()) {
      if (!f.isIntrinsic() && !f.use_empty() &&
          !(target.allowUnresolved && target.allowUnresolved(f.getName().str())))
        unresolved.push_back(f.getName().str());
      continue;
    }
    if (!wrapperSet.count(f.getName().str())) f.setLinkage(GlobalValue::InternalLinkage);
  }
  if (!unresolved.empty()) {
    std::string list;
    for (size_t i = 0; i < unresolved.size() && i < 8; ++i)
      list += (i ? ", " : "") + unresolved[i];
    return makeError(where + ": builtins missing from libclc: " + list);
  }
  for (GlobalVariable &gv : m.globals())
    if (!gv.isDeclaration()) gv.setLinkage(GlobalValue::InternalLinkage);
  for (const Wrapper &w : wrappers) {
    Function *f = m.getFunction(w.name);
    f->setLinkage(GlobalValue::ExternalLinkage);
    target.markKernel(m, *f);
  }
  std::string vt;
  raw_string_ostream vs(vt);
  if (verifyModule(m, &vs)) return makeError(where + ": lowered module is invalid: " + vs.str());
  return Error::success();
}

// O3 with the target machine. Coarse entries whose copies' accesses did not merge into
// wide ones would only make every access strided (uncoalesced): they go, and those
// kernels launch plainly (out.coarse keeps the others).
void optimize(Module &m, const TableAbiTarget &target, LoweredModule &out) {
  LoopAnalysisManager lam;
  FunctionAnalysisManager fam;
  CGSCCAnalysisManager cam;
  ModuleAnalysisManager mam;
  PassBuilder pb(target.machine);
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cam, mam);
  ModulePassManager mpm = pb.buildPerModuleDefaultPipeline(OptimizationLevel::O3);
  mpm.run(m, mam);
  if (!target.coarsen) return;
  FunctionPassManager fpm;
  fpm.addPass(LoadStoreVectorizerPass());
  std::vector<std::string> kept;
  for (const std::string &k : out.coarse) {
    Function *f = m.getFunction(kCoarseEntryPrefix + k);
    if (!f) continue;
    fpm.run(*f, fam);
    if (coarseAccessesMerged(*f)) {
      kept.push_back(k);
    } else {
      fam.clear(*f, f->getName());
      f->eraseFromParent();
    }
  }
  if (kept.size() != out.coarse.size()) dropAnnotationsOfErased(m);
  out.coarse = std::move(kept);
}

// The module as NAME<suffix> in the folder the target's dump variable names, if set.
void dumpModule(const Module &m, const TableAbiTarget &target, const std::string &name,
                const char *suffix) {
  if (!target.dumpEnv) return;
  if (auto dump = envText(target.dumpEnv)) {
    std::string file = name; // a module named after its source path: one file in the folder
    for (char &c : file)
      if (c == '/' || c == '\\') c = '_';
    std::error_code ec;
    raw_fd_ostream os(*dump + "/" + file + suffix, ec);
    if (!ec) m.print(os, nullptr);
  }
}

} // namespace

Expected<LoweredModule> lowerToTableAbi(LLVMContext &ctx, const uint8_t *spirv, size_t size,
                                        const std::string &name, const TableAbiTarget &target) {
  const std::string where = "module '" + name + "'";
  auto spirOr = spirvToLLVM(ctx, spirv, size);
  if (!spirOr) return spirOr.error().withContext(where);
  std::unique_ptr<Module> m = std::move(*spirOr);

  // 1. calling conventions; 2. bodies and wrappers; 3. offset-dependent work-item calls.
  const std::vector<Function *> kernels = prepareModule(*m, target);
  if (kernels.empty()) return makeError(where + ": no kernel in the module");
  LoweredModule out;
  auto wrappers = makeWrappers(*m, kernels, target, out);
  if (!wrappers) return wrappers.error().withContext(where);

  // 4. address spaces remapped on the IR (address_spaces.h).
  if (Error e = remapAddressSpaces(*m, target.addressSpaces, target.builtinName))
    return e.withContext(where);
  if (target.afterRemap)
    if (Error e = target.afterRemap(*m)) return e.withContext(where);

  // 5. the supplement, libclc, internalize, optimize.
  CGRAPH_RETURN_IF_ERROR(linkBuiltins(*m, target, where));
  CGRAPH_RETURN_IF_ERROR(finishEntries(*m, *wrappers, target, where));
  m->setDataLayout(target.machine->createDataLayout());
  dumpModule(*m, target, name, ".pre-opt.ll");
  optimize(*m, target, out);
  dumpModule(*m, target, name, ".ll");
  out.module = std::move(m);
  return out;
}

} // namespace cgraph::codegen
