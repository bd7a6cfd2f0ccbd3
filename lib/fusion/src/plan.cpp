// Planning one group for the LLVM side: the fused node's name, the instances and
// their nd-ranges, the fused kernel's parameters (identical arguments shared, literals
// as constant candidates, scratch slots the group alone uses as internalization
// candidates), and notes on the scratch slots that must stay. Also which slots are
// named scratch at all.
#include "graph_internal.h"

#include <algorithm>
#include <sstream>
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
  std::map<std::tuple<int, uint64_t, uint64_t, uint32_t>, uint32_t> shared;
  std::set<std::string> names;
  auto uniqueName = [&](std::string n) {
    n = identifier(n);
    std::string r = n;
    for (unsigned k = 1; names.count(r); ++k)
      r = n + "_" + std::to_string(k);
    names.insert(r);
    return r;
  };
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
      const Arg &a = node.args[p];
      const KernelParam &kp = k.params[p];
      std::tuple<int, uint64_t, uint64_t, uint32_t> key;
      bool elidable = true;
      int32_t expr = -1;
      FusedParam fp;
      fp.inst = i;
      fp.param = p;
      std::string name;
      switch (a.kind) {
      case ArgKind::Slot:
        key = {0, a.index, a.value, uint32_t(kp.kind)};
        name = g.slots[a.index].name + (a.value ? "_" + std::to_string(a.value) : "");
        fp.slotKey = int32_t(a.index);
        // only a slot named scratch may leave the graph (FuseOptions::scratch)
        fp.internalCandidate = !outside.count(a.index) &&
                               g.slots[a.index].init == SlotInit::Transient &&
                               !scratch[a.index].empty();
        if (gr && gr->internalizeListed) {
          auto it =
              std::find(gr->internalize.begin(), gr->internalize.end(), g.slots[a.index].name);
          fp.internalCandidate = !outside.count(a.index) &&
                                 g.slots[a.index].init == SlotInit::Transient &&
                                 it != gr->internalize.end();
          size_t at = size_t(it - gr->internalize.begin());
          if (it != gr->internalize.end() && at < gr->internalizeTo.size())
            fp.memory = gr->internalizeTo[at];
        }
        break;
      case ArgKind::Param: {
        key = {1, a.index, 0, 0};
        name = g.params[a.index].name;
        auto c = constants.find(a.index);
        if (c != constants.end()) {
          fp.constCandidate = true;
          fp.bits = c->second;
        }
        break;
      }
      case ArgKind::Scalar:
        key = {2, a.value, uint64_t(a.type), kp.size};
        name = k.name + "_" + (kp.name.empty() ? std::to_string(p) : kp.name);
        // a value from a stored expression changes per submission: its own parameter
        expr = ex.arg(grp[i], p);
        elidable = expr < 0;
        fp.constCandidate = expr < 0;
        fp.bits = a.value;
        break;
      default: // LocalMem: each allocation is its own
        elidable = false;
        name = k.name + "_" + (kp.name.empty() ? std::to_string(p) : kp.name);
        req.hasLocalMem = true;
        break;
      }
      auto it = elidable ? shared.find(key) : shared.end();
      if (it != shared.end()) {
        in.bind.push_back(it->second);
        continue;
      }
      fp.name = uniqueName(name);
      uint32_t idx = uint32_t(req.params.size());
      req.params.push_back(fp);
      pl.paramArgs.push_back(a);
      pl.paramExpr.push_back(expr);
      if (elidable) shared[key] = idx;
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
    std::stringstream ss(value);
    std::string name;
    while (std::getline(ss, name, ',')) {
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
