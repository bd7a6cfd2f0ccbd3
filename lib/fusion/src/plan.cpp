// Planning one group for the LLVM side: the fused node's name, the instances and
// their nd-ranges, the fused kernel's parameters (identical arguments shared, literals
// as constant candidates, scratch slots the group alone uses as internalization
// candidates), and notes on the scratch slots that must stay. Also which slots are
// named scratch at all.
#include "graph_internal.h"

#include <algorithm>
#include <tuple>

namespace cgraph {
namespace fusion {
namespace detail {
namespace {

std::string identifier(const std::string &s) {
  std::string r;
  for (char c : s)
    r += (std::isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
  if (r.empty() || std::isdigit(static_cast<unsigned char>(r[0]))) r = "_" + r;
  return r;
}

// Notes on the scratch slots the group uses that cannot leave the graph (not transient,
// used outside the group); the transient slots only the group uses that could leave it
// but were not named scratch go to pl.unnamed.
void scratchNotes(const Graph &g, const std::vector<uint32_t> &grp, const FuseOptions &o,
                  const GroupRequest *gr, const SlotUsers &users, const ScratchSlots &scratch,
                  const std::set<uint32_t> &outside, Planned &pl) {
  std::set<uint32_t> seen;
  for (uint32_t n : grp)
    for (uint32_t s : users.slotsOf[n]) {
      if (!seen.insert(s).second) continue;
      const Slot &slot = g.slots[s];
      bool transient = slot.init == SlotInit::Transient, in = !outside.count(s);
      bool listed = gr && gr->internalizeListed &&
                    std::find(gr->internalize.begin(), gr->internalize.end(), slot.name) !=
                        gr->internalize.end();
      if (!scratch[s].empty() && !listed) {
        if (!transient)
          pl.notes.push_back(slot.name + " is named scratch but is not transient: it stays in "
                                         "the graph");
        else if (!in)
          pl.notes.push_back(slot.name + " is named scratch but is used outside the group: it "
                                         "stays in the graph");
      } else if (scratch[s].empty() && !listed && transient && in && o.internalize) {
        pl.unnamed.push_back(slot.name);
      }
    }
}

// The fused parameters bound so far: identical arguments (one slot at one offset and
// access kind, one graph parameter, one literal) share one; names are unique
// identifiers.
struct Binder {
  std::map<std::tuple<int, uint64_t, uint64_t, uint32_t>, uint32_t> shared;
  std::set<std::string> names;
  std::string uniqueName(std::string n) {
    n = identifier(n);
    std::string r = n;
    for (unsigned k = 1; names.count(r); ++k)
      r = n + "_" + std::to_string(k);
    names.insert(r);
    return r;
  }
};

// Kernel argument p of instance i as a fused parameter: the key it is shared by
// (`elidable` false: never shared), its name before uniquing, its stored expression
// (-1: none) and its constant and internalization candidacy.
struct ArgPlan {
  std::tuple<int, uint64_t, uint64_t, uint32_t> key;
  bool elidable = true;
  int32_t expr = -1;
  FusedParam fp;
  std::string name;
};

ArgPlan planArg(const Graph &g, const std::vector<uint32_t> &grp, uint32_t i, uint32_t p,
                const GroupRequest *gr, const std::map<uint32_t, uint64_t> &constants,
                const std::set<uint32_t> &outside, const ScratchSlots &scratch, const ExprIndex &ex,
                IrRequest &req) {
  const Node &node = g.nodes[grp[i]];
  const Kernel &k = g.kernels[node.kernel];
  const Arg &a = node.args[p];
  const KernelParam &kp = k.params[p];
  ArgPlan ap;
  ap.fp.inst = i;
  ap.fp.param = p;
  switch (a.kind) {
  case ArgKind::Slot:
    ap.key = {0, a.index, a.value, uint32_t(kp.kind)};
    ap.name = g.slots[a.index].name + (a.value ? "_" + std::to_string(a.value) : "");
    ap.fp.slotKey = int32_t(a.index);
    // only a slot named scratch may leave the graph (FuseOptions::scratch)
    ap.fp.internalCandidate = !outside.count(a.index) &&
                              g.slots[a.index].init == SlotInit::Transient &&
                              !scratch[a.index].empty();
    if (gr && gr->internalizeListed) {
      auto it = std::find(gr->internalize.begin(), gr->internalize.end(), g.slots[a.index].name);
      ap.fp.internalCandidate = !outside.count(a.index) &&
                                g.slots[a.index].init == SlotInit::Transient &&
                                it != gr->internalize.end();
      size_t at = size_t(it - gr->internalize.begin());
      if (it != gr->internalize.end() && at < gr->internalizeTo.size())
        ap.fp.memory = gr->internalizeTo[at];
    }
    break;
  case ArgKind::Param: {
    ap.key = {1, a.index, 0, 0};
    ap.name = g.params[a.index].name;
    auto c = constants.find(a.index);
    if (c != constants.end()) {
      ap.fp.constCandidate = true;
      ap.fp.bits = c->second;
    }
    break;
  }
  case ArgKind::Scalar:
    ap.key = {2, a.value, uint64_t(a.type), kp.size};
    ap.name = k.name + "_" + (kp.name.empty() ? std::to_string(p) : kp.name);
    // a value from a stored expression changes per submission: its own parameter
    ap.expr = ex.arg(grp[i], p);
    ap.elidable = ap.expr < 0;
    ap.fp.constCandidate = ap.expr < 0;
    ap.fp.bits = a.value;
    break;
  default: // LocalMem: each allocation is its own
    ap.elidable = false;
    ap.name = k.name + "_" + (kp.name.empty() ? std::to_string(p) : kp.name);
    req.hasLocalMem = true;
    break;
  }
  return ap;
}

} // namespace

Planned plan(const Graph &g, const std::vector<uint32_t> &grp, const FuseOptions &o,
             const std::set<std::string> &takenNames, const GroupRequest *gr,
             const std::map<uint32_t, uint64_t> &constants, const GroupFree &groupFree,
             const SlotUsers &users, const ScratchSlots &scratch, const ExprIndex &ex) {
  Planned pl;
  pl.grp = grp;
  std::string base =
      "fused_" + identifier(g.nodes[grp.front()].name) + "_" + identifier(g.nodes[grp.back()].name);
  pl.nodeName = base;
  for (unsigned k = 1; takenNames.count(pl.nodeName); ++k)
    pl.nodeName = base + "_" + std::to_string(k);
  IrRequest &req = pl.req;
  req.fusedName = pl.nodeName;
  req.modules = &g.modules;
  req.slots = &g.slots;
  std::vector<Remap> remap;
  (void)planRanges(g, ex, grp, req.fused, remap, req.literal, groupFree); // checked
  req.internalize = o.internalize;
  req.constants = o.constants;
  req.keepIR = o.keepIR;
  req.noBarriers = gr && gr->noBarriers;
  req.noAlias = o.noAlias;
  std::set<uint32_t> outside = users.outside(grp);
  // scratch slots the group uses that cannot leave the graph; slots that could but
  // were not named scratch
  scratchNotes(g, grp, o, gr, users, scratch, outside, pl);
  Binder binder;
  for (uint32_t i = 0; i < grp.size(); ++i) {
    const Node &node = g.nodes[grp[i]];
    const Kernel &k = g.kernels[node.kernel];
    Instance in;
    in.node = node.name;
    in.module = k.module;
    in.kernel = k.name;
    in.range = req.literal ? toRange(node.range) : req.fused;
    in.remap = i < remap.size() ? remap[i] : Remap::Same;
    for (uint32_t p = 0; p < node.args.size(); ++p) {
      ArgPlan ap = planArg(g, grp, i, p, gr, constants, outside, scratch, ex, req);
      auto it = ap.elidable ? binder.shared.find(ap.key) : binder.shared.end();
      if (it != binder.shared.end()) {
        in.bind.push_back(it->second);
        continue;
      }
      ap.fp.name = binder.uniqueName(ap.name);
      uint32_t idx = uint32_t(req.params.size());
      req.params.push_back(ap.fp);
      pl.paramArgs.push_back(node.args[p]);
      pl.paramExpr.push_back(ap.expr);
      if (ap.elidable) binder.shared[ap.key] = idx;
      in.bind.push_back(idx);
    }
    req.insts.push_back(std::move(in));
  }
  return pl;
}

// The slots named scratch (FuseOptions::scratch, the graph's "scratch" metadata), each
// with where it was named. A name the options give that is no slot is an Error; one the
// metadata gives is a Note.
Expected<ScratchSlots> scratchSlots(const Graph &g, const FuseOptions &o, FuseReport &rep) {
  ScratchSlots scratch(g.slots.size());
  for (const std::string &name : o.scratch) {
    uint32_t s = g.findSlot(name);
    if (s == kNone) return makeError("no slot named '" + name + "' to internalize");
    scratch[s] = "named scratch by the options";
  }
  for (const auto &[key, value] : g.metadata) {
    if (key != "scratch") continue;
    for (std::string name : splitNames(value)) {
      name.erase(0, name.find_first_not_of(" \t"));
      name.erase(name.find_last_not_of(" \t") + 1);
      if (name.empty()) continue;
      uint32_t s = g.findSlot(name);
      if (s == kNone)
        rep.remarks.push_back(
            {Remark::Note, "",
             "the graph's 'scratch' metadata names '" + name + "', which is not a slot"});
      else if (scratch[s].empty())
        scratch[s] = "named scratch by the graph's metadata";
    }
  }
  for (uint32_t s = 0; s < g.slots.size(); ++s)
    if (!scratch[s].empty() && g.slots[s].init != SlotInit::Transient)
      rep.remarks.push_back({Remark::Note, "",
                             g.slots[s].name + " is named scratch but is not transient: it stays "
                                               "in the graph"});
  return scratch;
}

} // namespace detail
} // namespace fusion
} // namespace cgraph
