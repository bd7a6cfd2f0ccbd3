// The LLVM side of fusion: link the kernels' modules, clean and analyse each kernel,
// build the fused entry point, inline, bake constants, internalize, translate back to
// SPIR-V. See cgraph/fusion/fusion.h for the rules.
#include "internal.h"

#include <map>
#include <set>
#include <sstream>

#include <LLVMSPIRVLib.h>
#include <llvm/ADT/STLExtras.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/InstIterator.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/PassManager.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Linker/Linker.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Transforms/IPO/GlobalDCE.h>
#include <llvm/Transforms/Scalar/ADCE.h>
#include <llvm/Transforms/Scalar/EarlyCSE.h>
#include <llvm/Transforms/Scalar/SROA.h>
#include <llvm/Transforms/Scalar/SimplifyCFG.h>
#include <llvm/Transforms/Utils/Cloning.h>
#include <llvm/Transforms/Utils/Local.h>

#include "cgraph/kernel/spirv.h"
#include "cgraph/kernel/spirv_to_llvm.h"

namespace cgraph {
namespace fusion {
namespace detail {
namespace {

// ---- own-index analysis ---------------------------------------------------------
// True when `v` is get_global_id(0), possibly truncated/extended (an `int i =
// get_global_id(0)` index) or taken out of the <3 x i64> the translator builds.
bool isGlobalId0(llvm::Value *v) {
  for (int depth = 0; depth < 16; ++depth) {
    if (auto *c = llvm::dyn_cast<llvm::CastInst>(v)) {
      if (!c->getType()->isIntegerTy() || !c->getOperand(0)->getType()->isIntegerTy()) return false;
      v = c->getOperand(0);
      continue;
    }
    if (auto *ee = llvm::dyn_cast<llvm::ExtractElementInst>(v)) {
      auto *idx = llvm::dyn_cast<llvm::ConstantInt>(ee->getIndexOperand());
      if (!idx) return false;
      llvm::Value *vec = ee->getVectorOperand();
      bool found = false;
      while (auto *ie = llvm::dyn_cast<llvm::InsertElementInst>(vec)) {
        auto *i2 = llvm::dyn_cast<llvm::ConstantInt>(ie->getOperand(2));
        if (!i2) return false;
        if (i2->getZExtValue() == idx->getZExtValue()) {
          v = ie->getOperand(1);
          found = true;
          break;
        }
        vec = ie->getOperand(0);
      }
      if (!found) return false;
      continue;
    }
    if (auto *call = llvm::dyn_cast<llvm::CallInst>(v)) {
      llvm::Function *f = call->getCalledFunction();
      if (!f || f->getName() != "_Z13get_global_idj" || call->arg_size() != 1) return false;
      auto *d = llvm::dyn_cast<llvm::ConstantInt>(call->getArgOperand(0));
      return d && d->isZero();
    }
    return false;
  }
  return false;
}

struct Access {
  bool read = false, write = false;
  bool own = true;        // every access is at base + get_global_id(0) * elemsize
  std::string firstOther; // "reads" / "writes" for the first access that is not
};

// Walks every use of a kernel's pointer parameter. State: the pointer is the base, or
// base + gid * elemsize (Own, with the element size), or something else.
void walkPointer(llvm::Value *ptr, int state, uint64_t elemSize, const llvm::DataLayout &dl,
                 bool oneDim, Access &acc, std::vector<llvm::GetElementPtrInst *> *ownRoots) {
  enum { Base = 0, Own = 1, Other = 2 };
  auto notOwn = [&](const char *what) {
    if (acc.own && acc.firstOther.empty()) acc.firstOther = what;
    acc.own = false;
  };
  for (llvm::User *u : ptr->users()) {
    if (auto *ld = llvm::dyn_cast<llvm::LoadInst>(u)) {
      acc.read = true;
      if (state != Own || dl.getTypeStoreSize(ld->getType()) != elemSize || ld->isVolatile())
        notOwn("reads");
    } else if (auto *st = llvm::dyn_cast<llvm::StoreInst>(u)) {
      if (st->getValueOperand() == ptr) { // the pointer itself escapes
        acc.read = acc.write = true;
        notOwn("passes");
        continue;
      }
      acc.write = true;
      if (state != Own || dl.getTypeStoreSize(st->getValueOperand()->getType()) != elemSize ||
          st->isVolatile())
        notOwn("writes");
    } else if (llvm::isa<llvm::BitCastInst>(u) || llvm::isa<llvm::AddrSpaceCastInst>(u)) {
      walkPointer(u, state, elemSize, dl, oneDim, acc, ownRoots);
    } else if (auto *gep = llvm::dyn_cast<llvm::GetElementPtrInst>(u)) {
      if (gep->getPointerOperand() != ptr) {
        acc.read = acc.write = true;
        notOwn("passes");
        continue;
      }
      if (gep->hasAllZeroIndices()) {
        walkPointer(u, state, elemSize, dl, oneDim, acc, ownRoots);
      } else if (state == Base && oneDim && gep->getNumIndices() == 1 &&
                 isGlobalId0(gep->getOperand(1))) {
        uint64_t size = dl.getTypeAllocSize(gep->getSourceElementType());
        if (ownRoots) ownRoots->push_back(gep);
        walkPointer(u, Own, size, dl, oneDim, acc, ownRoots);
      } else {
        walkPointer(u, Other, 0, dl, oneDim, acc, ownRoots);
      }
    } else if (llvm::isa<llvm::ICmpInst>(u)) {
      // comparing addresses reads no memory (but an own-index address compared
      // would not survive promotion to a private variable)
      if (state == Own) notOwn("compares");
    } else {
      // calls, atomics, phis, selects, ptrtoint: anything may happen
      acc.read = acc.write = true;
      notOwn(llvm::isa<llvm::CallBase>(u) ? "passes" : "reads");
    }
  }
}

// ---- private internalization --------------------------------------------------------
// Replaces every access through `oldPtr` (an own-index address or a cast of it) with
// the same access through `newPtr` (the work-item's private variable).
void rewriteToPrivate(llvm::Value *oldPtr, llvm::Value *newPtr) {
  for (llvm::User *u : llvm::make_early_inc_range(oldPtr->users())) {
    auto *inst = llvm::cast<llvm::Instruction>(u);
    llvm::IRBuilder<> b(inst);
    if (auto *ld = llvm::dyn_cast<llvm::LoadInst>(inst)) {
      llvm::Value *p = b.CreatePointerCast(newPtr, ld->getType()->getPointerTo(0));
      llvm::LoadInst *nl = b.CreateAlignedLoad(ld->getType(), p, ld->getAlign());
      nl->takeName(ld);
      ld->replaceAllUsesWith(nl);
      ld->eraseFromParent();
    } else if (auto *st = llvm::dyn_cast<llvm::StoreInst>(inst)) {
      llvm::Value *v = st->getValueOperand();
      llvm::Value *p = b.CreatePointerCast(newPtr, v->getType()->getPointerTo(0));
      b.CreateAlignedStore(v, p, st->getAlign());
      st->eraseFromParent();
    } else {
      // bitcast, addrspacecast or all-zero GEP of the address: the pointee changes,
      // the address stays the variable's
      auto *pt = llvm::cast<llvm::PointerType>(inst->getType());
      llvm::Type *elem = pt->isOpaque() ? b.getInt8Ty() : pt->getNonOpaquePointerElementType();
      if (auto *gep = llvm::dyn_cast<llvm::GetElementPtrInst>(inst))
        elem = gep->getResultElementType();
      llvm::Value *np = b.CreatePointerCast(newPtr, elem->getPointerTo(0));
      rewriteToPrivate(inst, np);
      inst->eraseFromParent();
    }
  }
}

// Calls in `f` and the functions it calls (depth-limited) to a builtin whose name
// contains `what`.
bool callsBuiltin(llvm::Function &f, const char *what, int depth = 0) {
  if (depth > 8) return true;
  for (llvm::Instruction &i : llvm::instructions(f))
    if (auto *cb = llvm::dyn_cast<llvm::CallBase>(&i)) {
      llvm::Function *c = cb->getCalledFunction();
      if (!c) return true; // indirect: assume the worst
      if (c->getName().contains(what)) return true;
      if (!c->isDeclaration() && callsBuiltin(*c, what, depth + 1)) return true;
    }
  return false;
}

// In `f` (a clone for one instance), get_global_size(0) answers `global` and
// get_num_groups(0) answers `global / local`. Fails when `f` calls helpers that
// might ask (they are shared with other instances) or get_num_groups without a local size.
Error remapSizes(llvm::Function &f, uint64_t global, uint64_t local, const std::string &node) {
  for (llvm::Instruction &i : llvm::make_early_inc_range(llvm::instructions(f))) {
    auto *call = llvm::dyn_cast<llvm::CallInst>(&i);
    if (!call || !call->getCalledFunction()) continue;
    llvm::Function *c = call->getCalledFunction();
    llvm::StringRef name = c->getName();
    if (!c->isDeclaration()) {
      if (callsBuiltin(*c, "get_global_size") || callsBuiltin(*c, "get_num_groups"))
        return makeError(
            node + " asks its range size inside a helper function: cannot remap its work-items");
      continue;
    }
    bool gsize = name == "_Z15get_global_sizej", ngroups = name == "_Z14get_num_groupsj";
    if (!gsize && !ngroups) continue;
    auto *d = llvm::dyn_cast<llvm::ConstantInt>(call->getArgOperand(0));
    if (!d)
      return makeError(node +
                       " asks its range size in a computed dimension: cannot remap its work-items");
    if (!d->isZero()) continue;
    uint64_t v = global;
    if (ngroups) {
      if (local == 0)
        return makeError(
            node +
            " calls get_num_groups and the range has no local size: cannot remap its work-items");
      v = global / local;
    }
    call->replaceAllUsesWith(llvm::ConstantInt::get(call->getType(), v));
    call->eraseFromParent();
  }
  return Error();
}

void runCleanup(llvm::Function &f) {
  llvm::PassBuilder pb;
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cam;
  llvm::ModuleAnalysisManager mam;
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cam, mam);
  llvm::FunctionPassManager fpm;
  fpm.addPass(llvm::SROAPass());
  fpm.addPass(llvm::EarlyCSEPass());
  fpm.addPass(llvm::SimplifyCFGPass());
  fpm.addPass(llvm::ADCEPass());
  fpm.run(f, fam);
}

void runGlobalDCE(llvm::Module &m) {
  llvm::PassBuilder pb;
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cam;
  llvm::ModuleAnalysisManager mam;
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cam, mam);
  llvm::ModulePassManager mpm;
  mpm.addPass(llvm::GlobalDCEPass());
  mpm.run(m, mam);
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

const char *kArgMDKinds[] = {"kernel_arg_addr_space", "kernel_arg_access_qual", "kernel_arg_type",
                             "kernel_arg_type_qual", "kernel_arg_base_type"};

} // namespace

namespace {

// Steps 1 and 2 of the pipeline: every module the group uses read and linked into
// `dst`, kernels made internal functions, the used ones cleaned and analysed.
Error prepare(const IrRequest &req, llvm::LLVMContext &ctx, llvm::Module *dst,
              std::vector<llvm::Function *> &callee,
              std::map<llvm::Function *, std::vector<Access>> &analysis) {
  // ---- 1. read and link every module the group uses
  std::set<uint32_t> used;
  for (const Instance &in : req.insts)
    used.insert(in.module);
  bool first = true;
  for (uint32_t mi : used) {
    const KernelModule *km = req.modules[mi];
    if (km->forms.empty() || km->forms[0].kind != FormKind::SpirV)
      return makeError("module '" + km->name + "' has no SPIR-V form");
    const std::vector<uint8_t> &spv = km->forms[0].bytes;
    Expected<std::unique_ptr<llvm::Module>> m = spirvToLLVM(ctx, spv.data(), spv.size());
    if (!m) return m.error().withContext("module '" + km->name + "'");
    std::string prefix = "m" + std::to_string(mi) + ".";
    for (llvm::Function &f : **m)
      if (!f.isDeclaration()) f.setName(prefix + f.getName().str());
    for (llvm::GlobalVariable &gv : (*m)->globals())
      if (!gv.isDeclaration() && !gv.hasLocalLinkage()) gv.setName(prefix + gv.getName().str());
    if (first) {
      dst->setDataLayout((*m)->getDataLayout());
      dst->setTargetTriple((*m)->getTargetTriple());
      first = false;
    }
    if (llvm::Linker::linkModules(*dst, std::move(*m)))
      return makeError("module '" + km->name + "': linking failed");
  }
  dedupeNamedMetadata(*dst);
  const llvm::DataLayout &dl = dst->getDataLayout();

  // ---- 2. kernels become internal functions; clean and analyse the used ones
  callee.assign(req.insts.size(), nullptr);
  for (size_t i = 0; i < req.insts.size(); ++i) {
    const Instance &in = req.insts[i];
    llvm::Function *f = dst->getFunction("m" + std::to_string(in.module) + "." + in.kernel);
    if (!f || f->isDeclaration())
      return makeError("kernel '" + in.kernel + "' not found in its module");
    if (f->arg_size() != in.bind.size())
      return makeError("kernel '" + in.kernel + "' has " + std::to_string(f->arg_size()) +
                       " parameters but the graph gives " + std::to_string(in.bind.size()));
    callee[i] = f;
  }
  for (llvm::Function &f : *dst) {
    if (f.getCallingConv() != llvm::CallingConv::SPIR_KERNEL) continue;
    f.setCallingConv(llvm::CallingConv::SPIR_FUNC);
    f.setLinkage(llvm::GlobalValue::InternalLinkage);
    for (llvm::User *u : f.users())
      if (auto *cb = llvm::dyn_cast<llvm::CallBase>(u))
        cb->setCallingConv(llvm::CallingConv::SPIR_FUNC);
  }
  for (llvm::Function *f : callee) {
    if (analysis.count(f)) continue;
    runCleanup(*f);
    std::vector<Access> acc(f->arg_size());
    for (unsigned p = 0; p < f->arg_size(); ++p)
      if (f->getArg(p)->getType()->isPointerTy())
        walkPointer(f->getArg(p), 0, 0, dl, req.oneDim, acc[p], nullptr);
    analysis[f] = std::move(acc);
  }
  return Error();
}

} // namespace

Expected<std::vector<Cut>> chainCuts(const IrRequest &req) {
  llvm::LLVMContext ctx;
  auto dst = std::make_unique<llvm::Module>(req.fusedName, ctx);
  std::vector<llvm::Function *> callee;
  std::map<llvm::Function *, std::vector<Access>> analysis;
  CGRAPH_RETURN_IF_ERROR(prepare(req, ctx, dst.get(), callee, analysis));
  struct State {
    uint32_t touchers = 0;
    bool written = false, own = true;
    std::set<uint32_t> params;
    std::string other;
  };
  std::vector<Cut> cuts;
  std::map<int32_t, State> seg;
  for (uint32_t i = 0; i < req.insts.size(); ++i) {
    const std::vector<Access> &acc = analysis[callee[i]];
    // this instance's use of each slot
    std::map<int32_t, State> mine;
    for (size_t p = 0; p < req.insts[i].bind.size(); ++p) {
      uint32_t fp = req.insts[i].bind[p];
      int32_t key = req.params[fp].slotKey;
      if (key < 0) continue;
      State &m = mine[key];
      m.params.insert(fp);
      if (!acc[p].read && !acc[p].write) continue;
      m.touchers = 1;
      m.written = m.written || acc[p].write;
      if (!acc[p].own && m.own) {
        m.own = false;
        m.other = req.insts[i].node + " " + acc[p].firstOther + " " + req.slotNames[key] +
                  (req.oneDim ? " at another work-item's index"
                              : " in a multi-dimensional nd-range (own-index accesses are proven "
                                "in one dimension only)");
      }
    }
    std::string reason;
    for (auto &[key, m] : mine) {
      auto it = seg.find(key);
      if (it == seg.end()) continue;
      const State &o = it->second;
      std::set<uint32_t> params = o.params;
      params.insert(m.params.begin(), m.params.end());
      bool written = o.written || m.written, own = o.own && m.own && params.size() == 1;
      if (o.touchers + m.touchers >= 2 && written && !own) {
        reason = !o.own   ? o.other
                 : !m.own ? m.other
                          : req.insts[i].node + " accesses " + req.slotNames[key] +
                                " at another offset (the addresses may overlap)";
        break;
      }
    }
    if (!reason.empty() && i > 0) {
      cuts.push_back({i, reason});
      seg.clear();
    }
    for (auto &[key, m] : mine) {
      State &o = seg[key];
      if (o.own && !m.own) o.other = m.other;
      o.touchers += m.touchers;
      o.written = o.written || m.written;
      o.own = o.own && m.own;
      o.params.insert(m.params.begin(), m.params.end());
    }
  }
  return cuts;
}

Expected<IrResult> buildFusedKernel(const IrRequest &req) {
  IrResult res;
  llvm::LLVMContext ctx;
  auto dst = std::make_unique<llvm::Module>(req.fusedName, ctx);
  std::vector<llvm::Function *> callee;
  std::map<llvm::Function *, std::vector<Access>> analysis;
  CGRAPH_RETURN_IF_ERROR(prepare(req, ctx, dst.get(), callee, analysis));
  const llvm::DataLayout &dl = dst->getDataLayout();

  // ---- 3. per slot: who reads and writes, and is every access own-index
  struct SlotUse {
    std::vector<uint32_t> insts; // instances touching it
    bool written = false;
    bool own = true;
    std::set<uint32_t> params; // fused params bound to it (offsets)
    std::string other;         // "k2 reads tmp" for the first non-own access
  };
  std::map<int32_t, SlotUse> slots;
  for (size_t i = 0; i < req.insts.size(); ++i) {
    const std::vector<Access> &acc = analysis[callee[i]];
    for (size_t p = 0; p < req.insts[i].bind.size(); ++p) {
      uint32_t fp = req.insts[i].bind[p];
      int32_t key = req.params[fp].slotKey;
      if (key < 0) continue;
      SlotUse &su = slots[key];
      su.params.insert(fp);
      if (!acc[p].read && !acc[p].write) continue;
      if (su.insts.empty() || su.insts.back() != i) su.insts.push_back(uint32_t(i));
      su.written = su.written || acc[p].write;
      if (!acc[p].own && su.own) {
        su.own = false;
        su.other = req.insts[i].node + " " + acc[p].firstOther + " " + req.slotNames[key] +
                   (req.oneDim ? " at another work-item's index"
                               : " in a multi-dimensional nd-range (own-index accesses are proven "
                                 "in one dimension only)");
      }
    }
  }
  bool barriersNeeded = req.hasLocalMem || !req.oneDim;
  for (auto &[key, su] : slots) {
    bool shared = su.insts.size() > 1 && su.written;
    if (su.params.size() > 1 && su.written && su.own) {
      su.own = false; // two offsets into one written slot: addresses may overlap
      su.other = req.insts[su.insts.front()].node + " accesses " + req.slotNames[key] +
                 " at two offsets (the addresses may overlap)";
    }
    if (shared && !su.own) {
      barriersNeeded = true;
      if (res.hazard.empty() && !req.noBarriers) {
        res.hazard = su.other;
        res.hazardSplit = su.insts[1];
      }
    }
  }
  res.barriers = req.insts.size() > 1 && barriersNeeded && !req.noBarriers;

  // ---- 4. the fused entry point: every kernel called in order, then inlined
  std::vector<llvm::Type *> ptypes;
  for (const FusedParam &fp : req.params)
    ptypes.push_back(callee[fp.inst]->getArg(fp.param)->getType());
  auto *fty = llvm::FunctionType::get(llvm::Type::getVoidTy(ctx), ptypes, false);
  llvm::Function *fused = llvm::Function::Create(fty, llvm::GlobalValue::ExternalLinkage,
                                                 req.fusedName + ".tmp", dst.get());
  fused->setCallingConv(llvm::CallingConv::SPIR_KERNEL);
  for (size_t p = 0; p < req.params.size(); ++p) {
    const FusedParam &fp = req.params[p];
    fused->getArg(p)->setName(fp.name);
    llvm::AttributeSet as = callee[fp.inst]->getAttributes().getParamAttrs(fp.param);
    fused->addParamAttrs(p, llvm::AttrBuilder(ctx, as));
  }
  llvm::BasicBlock *bb = llvm::BasicBlock::Create(ctx, "entry", fused);
  llvm::IRBuilder<> b(bb);
  llvm::FunctionCallee barrier = dst->getOrInsertFunction(
      "_Z7barrierj", llvm::FunctionType::get(b.getVoidTy(), {b.getInt32Ty()}, false));
  if (auto *bf = llvm::dyn_cast<llvm::Function>(barrier.getCallee())) {
    bf->setCallingConv(llvm::CallingConv::SPIR_FUNC);
    bf->addFnAttr(llvm::Attribute::Convergent);
    bf->addFnAttr(llvm::Attribute::NoUnwind);
  }
  std::vector<llvm::CallInst *> calls;
  for (size_t i = 0; i < req.insts.size(); ++i) {
    if (i > 0 && res.barriers) {
      // CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE
      llvm::CallInst *c = b.CreateCall(barrier, {b.getInt32(3)});
      c->setCallingConv(llvm::CallingConv::SPIR_FUNC);
    }
    llvm::Function *f = callee[i];
    std::vector<llvm::Value *> args;
    for (size_t p = 0; p < f->arg_size(); ++p) {
      llvm::Value *v = fused->getArg(req.insts[i].bind[p]);
      llvm::Type *want = f->getArg(p)->getType();
      if (v->getType() != want) {
        if (v->getType()->isPointerTy() && want->isPointerTy() &&
            v->getType()->getPointerAddressSpace() == want->getPointerAddressSpace())
          v = b.CreatePointerCast(v, want);
        else
          return makeError("kernel '" + req.insts[i].kernel + "' parameter " + std::to_string(p) +
                           " has another type than the argument it shares");
      }
      args.push_back(v);
    }
    uint64_t g = req.insts[i].globalSize;
    if (req.fusedGlobal && g && g < req.fusedGlobal) {
      // work-item remapping: this kernel's range is smaller than the fused one
      if (callsBuiltin(*f, "barrier"))
        return makeError(req.insts[i].node +
                         " has a barrier: it cannot run on fewer work-items than the "
                         "fused range (global sizes " +
                         std::to_string(g) + " vs " + std::to_string(req.fusedGlobal) + ")");
      llvm::ValueToValueMapTy vmap;
      llvm::Function *clone = llvm::CloneFunction(f, vmap);
      clone->setName(f->getName() + ".range" + std::to_string(g));
      CGRAPH_RETURN_IF_ERROR(remapSizes(*clone, g, req.localSize, req.insts[i].node));
      llvm::FunctionCallee gidFn = dst->getOrInsertFunction(
          "_Z13get_global_idj", llvm::FunctionType::get(b.getInt64Ty(), {b.getInt32Ty()}, false));
      if (auto *gf = llvm::dyn_cast<llvm::Function>(gidFn.getCallee()))
        gf->setCallingConv(llvm::CallingConv::SPIR_FUNC);
      llvm::CallInst *gid = b.CreateCall(gidFn, {b.getInt32(0)});
      gid->setCallingConv(llvm::CallingConv::SPIR_FUNC);
      llvm::Value *in = b.CreateICmpULT(gid, b.getInt64(g));
      llvm::BasicBlock *run = llvm::BasicBlock::Create(ctx, "range" + std::to_string(i), fused);
      llvm::BasicBlock *cont = llvm::BasicBlock::Create(ctx, "after" + std::to_string(i), fused);
      b.CreateCondBr(in, run, cont);
      b.SetInsertPoint(run);
      llvm::CallInst *c = b.CreateCall(clone, args);
      c->setCallingConv(llvm::CallingConv::SPIR_FUNC);
      calls.push_back(c);
      b.CreateBr(cont);
      b.SetInsertPoint(cont);
      res.remarks.push_back("remapped " + req.insts[i].node + ": global size " + std::to_string(g) +
                            " of " + std::to_string(req.fusedGlobal) +
                            ", the other work-items skip it");
      continue;
    }
    llvm::CallInst *c = b.CreateCall(f, args);
    c->setCallingConv(llvm::CallingConv::SPIR_FUNC);
    calls.push_back(c);
  }
  b.CreateRetVoid();
  for (llvm::CallInst *c : calls) {
    llvm::InlineFunctionInfo ifi;
    llvm::InlineResult r = llvm::InlineFunction(*c, ifi);
    if (!r.isSuccess()) return makeError(std::string("inlining failed: ") + r.getFailureReason());
  }

  // ---- 5. constants
  res.kept.assign(req.params.size(), true);
  for (size_t p = 0; p < req.params.size(); ++p) {
    const FusedParam &fp = req.params[p];
    if (!fp.constCandidate || !req.constants) continue;
    llvm::Constant *c = literal(fused->getArg(p)->getType(), fp.bits);
    if (!c || fused->hasParamAttribute(p, llvm::Attribute::ByVal)) continue;
    fused->getArg(p)->replaceAllUsesWith(c);
    res.kept[p] = false;
    res.baked.push_back(uint32_t(p));
    res.remarks.push_back("constant " + fp.name + " = " + literalText(c));
  }
  runCleanup(*fused);

  // ---- 6. private internalization
  if (req.internalize) {
    for (size_t p = 0; p < req.params.size(); ++p) {
      const FusedParam &fp = req.params[p];
      if (!fp.internalCandidate || fp.slotKey < 0) continue;
      const SlotUse &su = slots[fp.slotKey];
      const std::string &sname = req.slotNames[fp.slotKey];
      bool sameSize = true;
      for (uint32_t i : su.insts)
        sameSize = sameSize && req.insts[i].globalSize == req.insts[su.insts[0]].globalSize;
      if (!sameSize) {
        res.remarks.push_back("the kernels using " + sname +
                              " have different global sizes: cannot internalize");
        continue;
      }
      if (!su.own) {
        res.remarks.push_back(su.other + ": cannot internalize");
        continue;
      }
      Access acc;
      std::vector<llvm::GetElementPtrInst *> roots;
      walkPointer(fused->getArg(p), 0, 0, dl, req.oneDim, acc, &roots);
      if (!acc.own) { // the fused body should agree with the kernels' analysis
        res.remarks.push_back(sname + " is accessed at another work-item's index in the fused "
                                      "kernel: cannot internalize");
        continue;
      }
      if (roots.empty()) {
        // never accessed: nothing to promote, the argument simply goes
        res.kept[p] = false;
        res.internalized.push_back(uint32_t(p));
        continue;
      }
      llvm::Type *elem = roots.front()->getSourceElementType();
      llvm::IRBuilder<> eb(&*fused->getEntryBlock().getFirstInsertionPt());
      llvm::AllocaInst *var = eb.CreateAlloca(elem, nullptr, sname + ".private");
      for (llvm::GetElementPtrInst *g : roots) {
        llvm::IRBuilder<> gb(g);
        llvm::Value *np = gb.CreatePointerCast(var, g->getResultElementType()->getPointerTo(0));
        rewriteToPrivate(g, np);
        g->eraseFromParent();
      }
      // what is left of the parameter (casts of the base) is dead
      for (llvm::User *u : llvm::make_early_inc_range(fused->getArg(p)->users()))
        if (auto *inst = llvm::dyn_cast<llvm::Instruction>(u))
          llvm::RecursivelyDeleteTriviallyDeadInstructions(inst);
      if (!fused->getArg(p)->use_empty()) {
        res.remarks.push_back(sname + ": uses remain after promotion: cannot internalize");
        return makeError("internal error: slot '" + sname + "' still used after internalization");
      }
      res.kept[p] = false;
      res.internalized.push_back(uint32_t(p));
      res.remarks.push_back("internalized " + sname + " as a private " +
                            std::to_string(dl.getTypeAllocSize(elem)) + "-byte variable");
    }
    runCleanup(*fused);
  }

  // ---- 7. the final signature: the kept parameters
  std::vector<llvm::Type *> keptTypes;
  std::vector<unsigned> keptIdx;
  for (size_t p = 0; p < req.params.size(); ++p)
    if (res.kept[p]) {
      keptTypes.push_back(ptypes[p]);
      keptIdx.push_back(unsigned(p));
    }
  llvm::Function *nf =
      llvm::Function::Create(llvm::FunctionType::get(llvm::Type::getVoidTy(ctx), keptTypes, false),
                             llvm::GlobalValue::ExternalLinkage, req.fusedName, dst.get());
  nf->setCallingConv(llvm::CallingConv::SPIR_KERNEL);
  nf->addFnAttr(llvm::Attribute::NoUnwind);
  nf->getBasicBlockList().splice(nf->begin(), fused->getBasicBlockList());
  std::vector<std::vector<llvm::Metadata *>> md(std::size(kArgMDKinds));
  std::vector<llvm::Metadata *> names;
  for (size_t k = 0; k < keptIdx.size(); ++k) {
    unsigned p = keptIdx[k];
    llvm::Argument *oldArg = fused->getArg(p), *newArg = nf->getArg(k);
    oldArg->replaceAllUsesWith(newArg);
    newArg->setName(req.params[p].name);
    nf->addParamAttrs(k, llvm::AttrBuilder(ctx, fused->getAttributes().getParamAttrs(p)));
    // noalias on the parameter of a slot that has exactly one parameter (one offset):
    // sound only because the runtime refuses bindings where a written slot overlaps
    // another slot (lib/runtime enqueue), and distinct runtime-owned slots are distinct
    // allocations. It lets the backend keep values in registers across the former
    // kernel boundaries (a store through y no longer forces x to be reloaded).
    if (req.noAlias && req.params[p].slotKey >= 0 && ptypes[p]->isPointerTy() &&
        slots[req.params[p].slotKey].params.size() == 1 &&
        !fused->hasParamAttribute(p, llvm::Attribute::ByVal))
      nf->addParamAttr(k, llvm::Attribute::NoAlias);
    llvm::Function *rep = callee[req.params[p].inst];
    for (size_t m = 0; m < std::size(kArgMDKinds); ++m) {
      llvm::MDNode *n = rep->getMetadata(kArgMDKinds[m]);
      if (n && req.params[p].param < n->getNumOperands())
        md[m].push_back(n->getOperand(req.params[p].param).get());
    }
    names.push_back(llvm::MDString::get(ctx, req.params[p].name));
  }
  for (size_t m = 0; m < std::size(kArgMDKinds); ++m)
    if (md[m].size() == keptIdx.size())
      nf->setMetadata(kArgMDKinds[m], llvm::MDNode::get(ctx, md[m]));
  nf->setMetadata("kernel_arg_name", llvm::MDNode::get(ctx, names));
  for (llvm::Function *f : callee)
    if (llvm::MDNode *r = f->getMetadata("reqd_work_group_size")) {
      nf->setMetadata("reqd_work_group_size", r);
      break;
    }
  fused->eraseFromParent();
  runGlobalDCE(*dst);

  std::string verifyText;
  llvm::raw_string_ostream vs(verifyText);
  if (llvm::verifyModule(*dst, &vs))
    return makeError("fused module is invalid LLVM IR: " + vs.str());
  if (req.keepIR) {
    llvm::raw_string_ostream os(res.ir);
    dst->print(os, nullptr);
  }

  // ---- 8. back to SPIR-V, validated like any input
  SPIRV::TranslatorOpts topts(SPIRV::VersionNumber::SPIRV_1_0);
  topts.setPreserveOCLKernelArgTypeMetadataThroughString(true);
  std::ostringstream out;
  std::string err;
  if (!llvm::writeSpirv(dst.get(), topts, out, err))
    return makeError("SPIR-V translation of the fused kernel failed: " + err);
  std::string bytes = out.str();
  res.spirv.assign(bytes.begin(), bytes.end());
  CGRAPH_RETURN_IF_ERROR(validateSpirv(res.spirv.data(), res.spirv.size(), req.fusedName));
  return res;
}

} // namespace detail
} // namespace fusion
} // namespace cgraph
