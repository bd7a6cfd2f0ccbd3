// Thread coarsening: which kernel bodies qualify and their per-work-item clones (coarsen.h).
#include "coarsen.h"

#include "cgraph/kernel/work_item.h"

#include <llvm/IR/Constants.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/IR/MDBuilder.h>
#include <llvm/IR/Module.h>
#include <llvm/Transforms/Utils/Cloning.h>

namespace cgraph::codegen {

using namespace llvm;

namespace {

constexpr unsigned kLocalSpace = 3; // SPIR's (and both targets') __local
// Which copy a memory access of a coarse body belongs to, until scopeCoarseItems: the
// inliner gives each inlined call fresh alias scopes, so the scopes are made after it.
constexpr const char *kItemMark = "cgraph.coarse.item";
constexpr const char *kScopeDomain = "cgraph.coarse";
std::string scopeName(unsigned k) { return "work-item " + std::to_string(k); }

// Builtins whose result or effect depends on the thread that runs a work-item, or that
// order work-items: substrings of their (mangled) names.
bool launchShapeBuiltin(StringRef name) {
  using kernel::WorkItemFn;
  WorkItemFn f = kernel::workItemQuery(name);
  if (f == WorkItemFn::GlobalId || f == WorkItemFn::GlobalOffset || f == WorkItemFn::WorkDim)
    return false;
  // "get_": every other work-item function (sizes, local and group ids, linear ids).
  for (const char *s : {"barrier", "fence", "atom", "group", "get_", "printf", "__spirv", "enqueue"})
    if (name.contains(s)) return true;
  return false;
}

bool localPointer(Type *t) {
  auto *p = dyn_cast<PointerType>(t);
  return p && p->getAddressSpace() == kLocalSpace;
}

} // namespace

std::string coarsenBlocker(const Function &body) {
  for (const Argument &a : body.args())
    if (localPointer(a.getType())) return "a __local parameter";
  size_t count = 0;
  for (const BasicBlock &bb : body)
    for (const Instruction &inst : bb) {
      if (++count > kMaxCoarsenInstructions) return "more than " + std::to_string(kMaxCoarsenInstructions) + " instructions";
      if (inst.isAtomic()) return "an atomic operation";
      if (auto *l = dyn_cast<LoadInst>(&inst); l && l->isVolatile()) return "a volatile access";
      if (auto *s = dyn_cast<StoreInst>(&inst); s && s->isVolatile()) return "a volatile access";
      if (localPointer(inst.getType())) return "__local memory";
      for (const Value *op : inst.operands())
        if (auto *gv = dyn_cast<GlobalVariable>(op->stripPointerCasts()); gv && gv->getAddressSpace() == kLocalSpace)
          return "__local memory";
      if (auto *c = dyn_cast<CallBase>(&inst)) {
        if (c->isInlineAsm()) return "inline assembly";
        const Function *f = c->getCalledFunction();
        if (!f) return "an indirect call";
        if (f->isIntrinsic()) continue;
        if (!f->isDeclaration()) return "a call of '" + f->getName().str() + "'";
        if (launchShapeBuiltin(f->getName())) return "'" + f->getName().str() + "'";
      }
    }
  return {};
}

std::vector<Function *> coarseBodies(Module &m, Function &body) {
  LLVMContext &ctx = m.getContext();
  Type *i32 = Type::getInt32Ty(ctx), *i64 = Type::getInt64Ty(ctx);
  std::vector<Type *> params(body.getFunctionType()->param_begin(), body.getFunctionType()->param_end());
  params.push_back(i64);
  FunctionType *ft = FunctionType::get(body.getReturnType(), params, false);

  std::vector<Function *> out;
  for (unsigned k = 0; k < kCoarseItems; ++k) {
    Function *f = Function::Create(ft, GlobalValue::InternalLinkage,
                                   body.getName() + ".x4." + std::to_string(k), m);
    ValueToValueMapTy vmap;
    auto fa = f->arg_begin();
    for (Argument &a : body.args()) {
      fa->setName(a.getName());
      vmap[&a] = &*fa++;
    }
    Argument *gid = &*fa;
    gid->setName("gid0");
    SmallVector<ReturnInst *, 4> returns;
    CloneFunctionInto(f, &body, vmap, CloneFunctionChangeType::LocalChangesOnly, returns);
    f->setCallingConv(CallingConv::C);
    f->addFnAttr(Attribute::AlwaysInline);

    MDNode *mark = MDNode::get(ctx, {ConstantAsMetadata::get(ConstantInt::get(i32, k))});
    std::vector<CallInst *> ids;
    for (BasicBlock &bb : *f)
      for (Instruction &inst : bb) {
        if (auto *c = dyn_cast<CallInst>(&inst))
          if (Function *callee = c->getCalledFunction(); callee && kernel::workItemQuery(callee->getName()) == kernel::WorkItemFn::GlobalId) {
            ids.push_back(c);
            continue;
          }
        if (inst.mayReadOrWriteMemory()) inst.setMetadata(kItemMark, mark);
      }
    // get_global_id(d): gid0 for d == 0, else 0 (a 1-D launch: offsets 1 and 2 are 0).
    for (CallInst *c : ids) {
      IRBuilder<> b(c);
      Value *d = c->getArgOperand(0);
      Value *v = b.CreateSelect(b.CreateICmpEQ(d, ConstantInt::get(i32, 0)), gid, ConstantInt::get(i64, 0));
      if (v->getType() != c->getType()) v = b.CreateZExtOrTrunc(v, c->getType());
      c->replaceAllUsesWith(v);
      c->eraseFromParent();
    }
    out.push_back(f);
  }
  return out;
}

bool coarseAccessesMerged(const Function &wrapper) {
  for (const BasicBlock &bb : wrapper)
    for (const Instruction &inst : bb) {
      if (!isa<LoadInst>(inst) && !isa<StoreInst>(inst)) continue;
      const MDNode *s = inst.getMetadata(LLVMContext::MD_alias_scope);
      if (!s) continue;
      // Our scopes in its list (others come from inlined restrict parameters): a merged
      // access has several, an access of copy 0 (or of the one-by-one path) only its own.
      size_t ours = 0;
      StringRef copy;
      for (const MDOperand &op : s->operands()) {
        const auto *scope = dyn_cast<MDNode>(op);
        if (!scope || scope->getNumOperands() < 3) continue;
        const auto *domain = dyn_cast<MDNode>(scope->getOperand(1));
        const auto *name = dyn_cast<MDString>(scope->getOperand(2));
        const auto *domainName =
            domain && domain->getNumOperands() > 1 ? dyn_cast<MDString>(domain->getOperand(1)) : nullptr;
        if (name && domainName && domainName->getString() == kScopeDomain) {
          ++ours;
          copy = name->getString();
        }
      }
      if (ours == 1 && copy != scopeName(0)) return false; // a copy 1..3 access on its own
    }
  return true;
}

void scopeCoarseItems(Function &wrapper) {
  LLVMContext &ctx = wrapper.getContext();
  const unsigned kind = ctx.getMDKindID(kItemMark);
  MDBuilder mdb(ctx);
  MDNode *domain = mdb.createAnonymousAliasScopeDomain(kScopeDomain);
  std::vector<MDNode *> own, others;
  for (unsigned k = 0; k < kCoarseItems; ++k)
    own.push_back(MDNode::get(ctx, {mdb.createAnonymousAliasScope(domain, scopeName(k))}));
  for (unsigned k = 0; k < kCoarseItems; ++k) {
    std::vector<Metadata *> o;
    for (unsigned j = 0; j < kCoarseItems; ++j)
      if (j != k) o.push_back(own[j]->getOperand(0));
    others.push_back(MDNode::get(ctx, o));
  }
  for (BasicBlock &bb : wrapper)
    for (Instruction &inst : bb) {
      MDNode *m = inst.getMetadata(kind);
      if (!m) continue;
      inst.setMetadata(kind, nullptr);
      const uint64_t k = mdconst::extract<ConstantInt>(m->getOperand(0))->getZExtValue();
      if (k >= kCoarseItems) continue;
      inst.setMetadata(LLVMContext::MD_alias_scope,
                       MDNode::concatenate(inst.getMetadata(LLVMContext::MD_alias_scope), own[k]));
      inst.setMetadata(LLVMContext::MD_noalias,
                       MDNode::concatenate(inst.getMetadata(LLVMContext::MD_noalias), others[k]));
    }
}

} // namespace cgraph::codegen
