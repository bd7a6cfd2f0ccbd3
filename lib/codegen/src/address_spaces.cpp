// The address-space remap of the table-ABI lowering (see address_spaces.h).
#include "address_spaces.h"

#include <llvm/ADT/DenseMap.h>
#include <llvm/IR/InstIterator.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/Module.h>
#include <llvm/Transforms/Utils/Cloning.h>
#include <llvm/Transforms/Utils/ValueMapper.h>

#include <set>
#include <vector>

namespace cgraph::codegen {

namespace {

using namespace llvm;

// Types with every pointer of a remapped space moved to the space it maps to; a type
// that holds none maps to itself.
class SpaceRemapper final : public ValueMapTypeRemapper {
public:
  SpaceRemapper(LLVMContext &ctx, const std::map<unsigned, unsigned> &spaces)
      : ctx_(ctx), spaces_(spaces) {}

  unsigned space(unsigned as) const {
    auto it = spaces_.find(as);
    return it == spaces_.end() ? as : it->second;
  }

  Type *remapType(Type *t) override {
    if (auto it = done_.find(t); it != done_.end()) return it->second;
    std::set<Type *> seen;
    if (!holdsRemapped(t, seen)) return done_[t] = t;
    auto *st = dyn_cast<StructType>(t);
    if (st && !st->isLiteral()) {
      // Mapped before its members, which may point back to it. The new struct takes
      // the name; the old one, used only by what the remap replaces, keeps none.
      StructType *n = StructType::create(ctx_);
      done_[t] = n;
      n->setBody(members(st), st->isPacked());
      const std::string name = st->getName().str();
      st->setName("");
      n->setName(name);
      return n;
    }
    Type *r = nullptr;
    if (auto *pt = dyn_cast<PointerType>(t)) {
      const unsigned as = space(pt->getAddressSpace());
      r = pt->isOpaque() ? PointerType::get(ctx_, as)
                         : PointerType::get(remapType(pt->getPointerElementType()), as);
    } else if (st) {
      r = StructType::get(ctx_, members(st), st->isPacked());
    } else if (auto *at = dyn_cast<ArrayType>(t)) {
      r = ArrayType::get(remapType(at->getElementType()), at->getNumElements());
    } else if (auto *vt = dyn_cast<VectorType>(t)) {
      r = VectorType::get(remapType(vt->getElementType()), vt->getElementCount());
    } else {
      auto *ft = cast<FunctionType>(t);
      std::vector<Type *> params;
      for (Type *p : ft->params())
        params.push_back(remapType(p));
      r = FunctionType::get(remapType(ft->getReturnType()), params, ft->isVarArg());
    }
    return done_[t] = r;
  }

private:
  bool holdsRemapped(Type *t, std::set<Type *> &seen) const {
    if (t->isPointerTy() && spaces_.count(t->getPointerAddressSpace())) return true;
    if (!seen.insert(t).second) return false;
    for (Type *s : t->subtypes())
      if (holdsRemapped(s, seen)) return true;
    return false;
  }

  std::vector<Type *> members(StructType *st) {
    std::vector<Type *> out;
    for (Type *e : st->elements())
      out.push_back(remapType(e));
    return out;
  }

  LLVMContext &ctx_;
  const std::map<unsigned, unsigned> &spaces_;
  DenseMap<Type *, Type *> done_;
};

// The name of intrinsic `id`'s overload of type `t`; empty when `t` is none of them.
std::string intrinsicName(Intrinsic::ID id, FunctionType *t, Module &m) {
  SmallVector<Intrinsic::IITDescriptor, 8> table;
  Intrinsic::getIntrinsicInfoTableEntries(id, table);
  ArrayRef<Intrinsic::IITDescriptor> rest = table;
  SmallVector<Type *, 4> overloads;
  if (Intrinsic::matchIntrinsicSignature(t, rest, overloads) !=
      Intrinsic::MatchIntrinsicTypes_Match)
    return {};
  return Intrinsic::getName(id, overloads, &m, t);
}

// `a` with the types that attributes carry (byval, sret, elementtype, ...) remapped.
AttributeList remapAttributeTypes(LLVMContext &ctx, AttributeList a, SpaceRemapper &types) {
  for (unsigned i : a.indexes())
    for (int k = Attribute::FirstTypeAttr; k <= Attribute::LastTypeAttr; ++k) {
      const auto kind = Attribute::AttrKind(k);
      if (Type *t = a.getAttributeAtIndex(i, kind).getValueAsType())
        a = a.replaceAttributeTypeAtIndex(ctx, i, kind, types.remapType(t));
    }
  return a;
}

} // namespace

Error remapAddressSpaces(Module &m, const std::map<unsigned, unsigned> &spaces,
                         const std::function<std::string(const std::string &)> &builtinName) {
  LLVMContext &ctx = m.getContext();
  SpaceRemapper types(ctx, spaces);

  // Functions: the name and type each ends up with, and the first function of each name,
  // which the others of that name merge into; checked before any global value changes.
  struct Plan {
    Function *f;
    std::string name;
    FunctionType *type;
    size_t first; // index of the first plan with this name
    bool kept;    // a declaration whose name and type stay
  };
  std::vector<Plan> plans;
  std::map<std::string, size_t> firstOf;
  for (Function &f : m) {
    auto *t = cast<FunctionType>(types.remapType(f.getFunctionType()));
    std::string name = f.getName().str();
    if (f.isIntrinsic()) {
      if (t != f.getFunctionType()) name = intrinsicName(f.getIntrinsicID(), t, m);
      if (name.empty())
        return makeError("intrinsic '" + f.getName().str() +
                         "' has no overload for the remapped address spaces");
    } else if (f.isDeclaration() && builtinName) {
      name = builtinName(name);
    }
    const size_t first = firstOf.try_emplace(name, plans.size()).first->second;
    if (first != plans.size()) {
      const Function *k = plans[first].f;
      if (!k->isDeclaration() || !f.isDeclaration() || plans[first].type != t)
        return makeError("the address-space remap gives '" + k->getName().str() + "' and '" +
                         f.getName().str() + "' one name '" + name + "' but not one declaration");
    }
    const bool kept = first == plans.size() && f.isDeclaration() && name == f.getName() &&
                      t == f.getFunctionType();
    plans.push_back({&f, name, t, first, kept});
  }

  ValueToValueMapTy vmap;
  std::vector<GlobalValue *> replaced; // erased at the end
  // Globals of a new type or space, each in its old one's place: (old, new), one global
  // where nothing changes.
  std::vector<std::pair<GlobalVariable *, GlobalVariable *>> globals;
  for (GlobalVariable &gv : make_early_inc_range(m.globals())) {
    Type *t = types.remapType(gv.getValueType());
    const unsigned as = types.space(gv.getAddressSpace());
    if (t == gv.getValueType() && as == gv.getAddressSpace()) {
      globals.push_back({&gv, &gv});
      continue;
    }
    auto *n = new GlobalVariable(m, t, gv.isConstant(), gv.getLinkage(), nullptr, "", &gv,
                                 gv.getThreadLocalMode(), as);
    n->copyAttributesFrom(&gv);
    n->setComdat(gv.getComdat());
    n->copyMetadata(&gv, 0);
    n->takeName(&gv);
    vmap[&gv] = n;
    globals.push_back({&gv, n});
    replaced.push_back(&gv);
  }

  // Every function not kept gives up its name before the new ones take theirs.
  for (const Plan &p : plans)
    if (!p.kept) {
      p.f->setName("");
      replaced.push_back(p.f);
    }
  std::vector<std::pair<Function *, Function *>> bodies; // (old, new) definitions
  for (size_t i = 0; i < plans.size(); ++i) {
    const Plan &p = plans[i];
    if (p.first != i) {
      vmap[p.f] = vmap.lookup(plans[p.first].f);
      continue;
    }
    if (p.kept) {
      vmap[p.f] = p.f;
      continue;
    }
    Function *n = Function::Create(p.type, p.f->getLinkage(), p.f->getAddressSpace(), p.name);
    m.getFunctionList().insert(p.f->getIterator(), n);
    vmap[p.f] = n;
    // An intrinsic has the attributes of its ID (set by Function's constructor).
    if (n->isIntrinsic())
      n->setCallingConv(p.f->getCallingConv());
    else
      n->copyAttributesFrom(p.f);
    if (p.f->isDeclaration()) {
      n->setAttributes(remapAttributeTypes(ctx, n->getAttributes(), types));
      continue;
    }
    for (unsigned a = 0; a < n->arg_size(); ++a) {
      n->getArg(a)->setName(p.f->getArg(a)->getName());
      vmap[p.f->getArg(a)] = n->getArg(a);
    }
    bodies.push_back({p.f, n});
  }

  for (auto &[old, n] : globals)
    if (old->hasInitializer())
      n->setInitializer(MapValue(old->getInitializer(), vmap, RF_None, &types));
  for (auto &[old, n] : bodies) {
    SmallVector<ReturnInst *, 4> returns;
    CloneFunctionInto(n, old, vmap, CloneFunctionChangeType::GlobalChanges, returns, "", nullptr,
                      &types);
    n->setAttributes(remapAttributeTypes(ctx, n->getAttributes(), types));
    // Casts between spaces that are one now.
    for (Instruction &i : make_early_inc_range(instructions(*n)))
      if (auto *c = dyn_cast<AddrSpaceCastInst>(&i))
        if (c->getSrcAddressSpace() == c->getDestAddressSpace()) {
          Value *v = c->getOperand(0);
          if (v->getType() != c->getType()) v = new BitCastInst(v, c->getType(), "", c);
          c->replaceAllUsesWith(v);
          c->eraseFromParent();
        }
  }
  for (NamedMDNode &nmd : m.named_metadata())
    for (unsigned i = 0; i < nmd.getNumOperands(); ++i)
      nmd.setOperand(i, MapMetadata(nmd.getOperand(i), vmap, RF_None, &types));

  for (GlobalValue *old : replaced)
    if (auto *f = dyn_cast<Function>(old))
      f->dropAllReferences(); // its body too
    else
      cast<GlobalVariable>(old)->dropAllReferences();
  for (GlobalValue *old : replaced) {
    old->removeDeadConstantUsers();
    if (!old->use_empty())
      return makeError("the address-space remap leaves uses of a replaced global (internal error)");
    old->eraseFromParent();
  }
  return Error::success();
}

} // namespace cgraph::codegen
