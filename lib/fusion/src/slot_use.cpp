// Slot use: how the instances of a group together use each slot (own-index, inside the
// work-group's tile, written), the hazards a work-group barrier cannot order, and
// where an automatic chain must be cut because of them.
#include "ir_internal.h"

#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

namespace cgraph {
namespace fusion {
namespace detail {
namespace {

// Why an instance has no tile shape (tileOf), as a remark about `slot`.
std::string tileWhyNot(const IrRequest &req, const Instance &in, const std::string &slot) {
  const std::string tail = ": cannot internalize " + slot + " to local memory";
  if (!req.fused.hasLocal()) return "no local size" + tail;
  if (!req.literal) return "the nd-range has sizes from parameters" + tail;
  if (in.remap == Remap::Linear || in.range.dims != req.fused.dims)
    return in.node + " is remapped linearly (its work-groups change)" + tail;
  for (uint32_t d = 0; d < req.fused.dims; ++d)
    if (req.fused.offset[d]) return "the nd-range has a global offset" + tail;
  return "the global size of " + in.node + " is not a multiple of the local size" + tail;
}

std::string whyNotOwn(const IrRequest &req, uint32_t i, const Access &a, const std::string &slot) {
  return req.insts[i].node + " " + a.firstOther + " " + slot +
         (ownOf(req, req.insts[i]).dims ? " at another work-item's index"
                                        : " in a multi-dimensional nd-range with offsets, sizes "
                                          "from parameters or a remapped row length (own-index "
                                          "accesses are not proven there)");
}

} // namespace

// Adds instance i's accesses to `slots`.
void addUses(const IrRequest &req, uint32_t i, const std::vector<Access> &acc, SlotUses &slots) {
  TileShape t = tileOf(req, req.insts[i]);
  for (size_t p = 0; p < req.insts[i].bind.size(); ++p) {
    uint32_t fp = req.insts[i].bind[p];
    int32_t key = req.params[fp].slotKey;
    if (key < 0) continue;
    SlotUse &su = slots[key];
    su.params.insert(fp);
    if (!acc[p].read && !acc[p].write) continue;
    const std::string &slot = (*req.slots)[key].name;
    bool firstUse = su.insts.empty();
    if (su.insts.empty() || su.insts.back() != i) su.insts.push_back(i);
    su.written = su.written || acc[p].write;
    if (!acc[p].own && su.own) {
      su.own = false;
      su.other = whyNotOwn(req, i, acc[p], slot);
    }
    if (acc[p].own && su.own && acc[p].ownElem) {
      if (su.ownElem && su.ownElem != acc[p].ownElem) {
        su.own = false;
        su.other = req.insts[i].node + " accesses " + slot + " with another element size";
      }
      su.ownElem = acc[p].ownElem;
    }
    bool group = acc[p].group && t.dims;
    if (group && su.group && (firstUse || su.tile == t)) {
      su.tile = t;
      if (acc[p].tileElem) {
        if (su.tileElem && su.tileElem != acc[p].tileElem) {
          su.group = false;
          su.outside = req.insts[i].node + " accesses " + slot +
                       " with another element size: cannot internalize to local memory";
        } else if (su.tileStrides.dims && !(su.tileStrides == acc[p].tileStrides)) {
          su.group = false;
          su.outside = req.insts[i].node + " accesses " + slot +
                       " with another row length than the kernels before it: cannot "
                       "internalize to local memory";
        }
        su.tileElem = acc[p].tileElem;
        su.tileStrides = acc[p].tileStrides;
      }
    } else if (su.group) {
      su.group = false;
      su.tile = TileShape();
      if (!t.dims)
        su.outside = tileWhyNot(req, req.insts[i], slot);
      else
        su.outside = req.insts[i].node + " " +
                     (acc[p].firstOutside.empty() ? std::string("accesses") : acc[p].firstOutside) +
                     " " + slot + " outside its work-group: cannot internalize to local memory";
    }
  }
}

// A slot whose accesses a work-group barrier cannot order: written by one instance and
// accessed by another, not only at the work-items' own indices nor inside their
// work-group's tile, or at two offsets. Empty when none.
std::string hazardOf(const IrRequest &req, int32_t key, SlotUse &su) {
  if (su.params.size() > 1 && su.written && (su.own || su.group)) {
    // two offsets into one written slot: addresses may overlap (and tiles are relative
    // to each parameter's own base)
    su.own = false;
    su.group = false;
    su.other = req.insts[su.insts.front()].node + " accesses " + (*req.slots)[key].name +
               " at two offsets (the addresses may overlap)";
    su.outside = su.other + ": cannot internalize to local memory";
  }
  bool shared = su.insts.size() > 1 && su.written;
  if (shared && !su.own && !su.group) return su.other;
  return {};
}

SlotUses analyseSlots(const IrRequest &req,
                      const std::vector<const std::vector<Access> *> &accessOf, IrResult &res) {
  SlotUses slots;
  for (uint32_t i = 0; i < req.insts.size(); ++i)
    addUses(req, i, *accessOf[i], slots);
  bool barriersNeeded = req.hasLocalMem;
  for (auto &[key, su] : slots) {
    std::string h = hazardOf(req, key, su);
    bool shared = su.insts.size() > 1 && su.written;
    if (shared && !su.own) barriersNeeded = true;
    if (!h.empty() && res.hazard.empty() && !req.noBarriers) {
      res.hazard = h;
      res.hazardSplit = su.insts[1];
    }
  }
  res.barriers = req.insts.size() > 1 && barriersNeeded && !req.noBarriers;
  return slots;
}

Expected<std::vector<Cut>> chainCuts(const IrRequest &req) {
  llvm::LLVMContext ctx;
  auto dst = std::make_unique<llvm::Module>(req.fusedName, ctx);
  std::vector<llvm::Function *> callee;
  AccessMap analysis;
  std::vector<const std::vector<Access> *> accessOf;
  CGRAPH_RETURN_IF_ERROR(prepare(req, ctx, dst.get(), callee, analysis, accessOf));
  std::vector<Cut> cuts;
  std::map<int32_t, SlotUse> seg;
  uint32_t segStart = 0;
  for (uint32_t i = 0; i < req.insts.size(); ++i) {
    std::map<int32_t, SlotUse> with = seg;
    addUses(req, i, *accessOf[i], with);
    std::string reason;
    for (auto &[key, su] : with) {
      reason = hazardOf(req, key, su);
      if (!reason.empty()) break;
    }
    if (!reason.empty() && i > segStart) {
      cuts.push_back({i, reason});
      seg.clear();
      segStart = i;
      addUses(req, i, *accessOf[i], seg);
      continue;
    }
    seg = std::move(with);
  }
  return cuts;
}

} // namespace detail
} // namespace fusion
} // namespace cgraph
