// The graph side of fusion: which groups are legal, which arguments are shared, and
// rewriting the Graph once the fused kernels exist. See cgraph/fusion/fusion.h.
#include "cgraph/fusion/fusion.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <set>
#include <tuple>

#include "cgraph/graph/order.h"
#include "cgraph/graph/validate.h"
#include "cgraph/kernel/spirv.h"
#include "internal.h"

namespace cgraph {
namespace fusion {
namespace {

using detail::FusedParam;
using detail::Instance;
using detail::IrRequest;
using detail::IrResult;

// "a,b,c"; long groups as "a,b,...,z (1000 nodes)" so that remarks stay one line.
std::string join(const Graph &g, const std::vector<uint32_t> &nodes) {
  std::string s;
  if (nodes.size() > 8)
    return g.nodes[nodes[0]].name + "," + g.nodes[nodes[1]].name + ",...," +
           g.nodes[nodes.back()].name + " (" + std::to_string(nodes.size()) + " nodes)";
  for (uint32_t n : nodes)
    s += (s.empty() ? "" : ",") + g.nodes[n].name;
  return s;
}

std::string dimText(const Graph &g, const Dim *d, uint32_t dims) {
  std::string s;
  for (uint32_t i = 0; i < dims; ++i) {
    if (i) s += "x";
    s += d[i].param != kNone ? "$" + g.params[d[i].param].name : std::to_string(d[i].value);
  }
  return s;
}

bool sameDims(const Dim *a, const Dim *b, uint32_t dims) {
  for (uint32_t i = 0; i < dims; ++i)
    if (a[i].value != b[i].value || a[i].param != b[i].param) return false;
  return true;
}

bool literalRange(const NDRange &r) {
  for (uint32_t d = 0; d < 3; ++d)
    if (r.global[d].param != kNone || r.local[d].param != kNone || r.offset[d].param != kNone)
      return false;
  return true;
}

detail::Range toRange(const NDRange &r) {
  detail::Range x;
  x.dims = r.dims;
  for (uint32_t d = 0; d < r.dims && d < 3; ++d) {
    x.global[d] = r.global[d].value;
    x.local[d] = r.hasLocal() ? r.local[d].value : 0;
    x.offset[d] = r.offset[d].value;
  }
  return x;
}

std::string rangeText(const detail::Range &r, const uint64_t *v) {
  std::string s;
  for (uint32_t d = 0; d < r.dims; ++d)
    s += (d ? "x" : "") + std::to_string(v[d]);
  return s;
}

bool sameVec(const detail::Range &a, const uint64_t *x, const detail::Range &b, const uint64_t *y) {
  if (a.dims != b.dims) return false;
  for (uint32_t d = 0; d < a.dims; ++d)
    if (x[d] != y[d]) return false;
  return true;
}

// The nd-range rules of work-item remapping (see detail::Remap). Empty when the nodes
// of `grp` may run in one fused range, which goes to `fused` with each node's mode in
// `remap`; else the rule that refuses them.
// `groupFree(node)`: the node's kernel does not depend on its work-groups, so its local
// size does not count.
using GroupFree = std::function<bool(uint32_t)>;

std::string planRanges(const Graph &g, const std::vector<uint32_t> &grp, detail::Range &fused,
                       std::vector<detail::Remap> &remap, bool &literal,
                       const GroupFree &groupFree) {
  remap.assign(grp.size(), detail::Remap::Same);
  literal = true;
  for (uint32_t n : grp)
    literal = literal && literalRange(g.nodes[n].range);
  const NDRange &r0 = g.nodes[grp[0]].range;
  if (!literal) {
    // a size from a graph parameter: only identical ranges fuse
    for (size_t i = 1; i < grp.size(); ++i) {
      const NDRange &r = g.nodes[grp[i]].range;
      if (r.dims != r0.dims)
        return "dimensions differ: " + std::to_string(r0.dims) + " vs " + std::to_string(r.dims) +
               " (work-item remapping needs literal sizes)";
      if (!sameDims(r0.global, r.global, r0.dims))
        return "global sizes differ: " + dimText(g, r0.global, r0.dims) + " vs " +
               dimText(g, r.global, r.dims) + " (work-item remapping needs literal sizes)";
      if (!sameDims(r0.local, r.local, r0.dims))
        return "local sizes differ: " + dimText(g, r0.local, r0.dims) + " vs " +
               dimText(g, r.local, r.dims);
      if (!sameDims(r0.offset, r.offset, r0.dims))
        return "global offsets differ: " + dimText(g, r0.offset, r0.dims) + " vs " +
               dimText(g, r.offset, r.dims);
    }
    fused = toRange(r0);
    return {};
  }
  std::vector<detail::Range> rs;
  for (uint32_t n : grp)
    rs.push_back(toRange(g.nodes[n].range));
  // rule: every local size given (by a kernel that depends on its work-groups) is the
  // same one
  // (only where no kernel of the group does: mixing work-group kernels with linearly
  // remapped ones is left out, see README)
  bool allFree = true;
  for (uint32_t n : grp)
    allFree = allFree && groupFree(n);
  std::vector<bool> hasLocal(rs.size());
  for (size_t i = 0; i < rs.size(); ++i)
    hasLocal[i] = rs[i].hasLocal() && !allFree;
  int withLocal = -1;
  for (size_t i = 0; i < rs.size(); ++i) {
    if (!hasLocal[i]) continue;
    if (withLocal < 0) {
      withLocal = int(i);
      continue;
    }
    const detail::Range &a = rs[size_t(withLocal)];
    if (!sameVec(a, a.local, rs[i], rs[i].local))
      return "local sizes differ: " + rangeText(a, a.local) + " vs " +
             rangeText(rs[i], rs[i].local);
  }
  // rule: every offset is the same (unused dimensions count as 0)
  for (size_t i = 1; i < rs.size(); ++i)
    for (uint32_t d = 0; d < 3; ++d)
      if (rs[i].offset[d] != rs[0].offset[d])
        return "global offsets differ: " + rangeText(rs[0], rs[0].offset) + " vs " +
               rangeText(rs[i], rs[i].offset);
  // the fused range: the node with the most work-items (never more than the largest)
  size_t big = 0;
  for (size_t i = 1; i < rs.size(); ++i)
    if (rs[i].total() > rs[big].total()) big = i;
  fused = rs[big];
  if (withLocal >= 0 &&
      !sameVec(fused, fused.local, rs[size_t(withLocal)], rs[size_t(withLocal)].local)) {
    // the largest node leaves the local size to the runtime (or does not depend on its
    // work-groups): take the one given
    const detail::Range &l = rs[size_t(withLocal)];
    if (l.dims != fused.dims)
      return "'" + g.nodes[grp[size_t(withLocal)]].name + "' has a local size (" +
             rangeText(l, l.local) + ") in a " + std::to_string(l.dims) +
             "-dimensional range, the fused range is " + std::to_string(fused.dims) +
             "-dimensional: its work-groups would change";
    for (uint32_t d = 0; d < fused.dims; ++d)
      if (fused.global[d] % l.local[d])
        return "the fused global size " + rangeText(fused, fused.global) +
               " is not a multiple of the local size " + rangeText(l, l.local) + " of '" +
               g.nodes[grp[size_t(withLocal)]].name + "'";
    for (uint32_t d = 0; d < 3; ++d)
      fused.local[d] = l.local[d];
  }
  for (size_t i = 0; i < rs.size(); ++i) {
    const detail::Range &r = rs[i];
    const std::string &name = g.nodes[grp[i]].name;
    bool sameDimsCount = r.dims == fused.dims, within = sameDimsCount, equal = sameDimsCount;
    for (uint32_t d = 0; sameDimsCount && d < r.dims; ++d) {
      within = within && r.global[d] <= fused.global[d];
      equal = equal && r.global[d] == fused.global[d];
    }
    if (equal) {
      remap[i] = detail::Remap::Same;
    } else if (within) {
      remap[i] = detail::Remap::Guard;
    } else {
      remap[i] = detail::Remap::Linear;
      std::string what =
          "global " + rangeText(r, r.global) + " in " + rangeText(fused, fused.global);
      if (hasLocal[i])
        return "'" + name + "' has a local size (" + rangeText(r, r.local) +
               ") and its work-items would be remapped (" + what +
               "): its work-groups would change";
      for (uint32_t d = 0; d < 3; ++d)
        if (fused.offset[d])
          return "global offsets are not 0 and the work-items of '" + name +
                 "' would be remapped (" + what + ")";
    }
  }
  return {};
}

// The cost model of --auto. A chain does not take a kernel whose work-item count is
// below 1/kIdleRatio of the largest in the chain (or the other way round): the fused
// range is the largest, so most of its work-items would only test the guard of the
// small kernel (and the big kernel's inner loops would branch around it), for the gain
// of one launch. A fused kernel keeping more than kPrivateLimit bytes of private
// arrays per work-item is not used (registers spill; GPUs run fewer work-items).
constexpr uint64_t kIdleRatio = 16;
constexpr uint64_t kPrivateLimit = 4096;

std::string costWhyNot(const Graph &g, const std::vector<uint32_t> &grp) {
  uint64_t most = 0;
  for (uint32_t n : grp) {
    if (!literalRange(g.nodes[n].range)) return {};
    most = std::max(most, toRange(g.nodes[n].range).total());
  }
  for (uint32_t n : grp) {
    uint64_t t = toRange(g.nodes[n].range).total();
    if (t * kIdleRatio < most)
      return "cost: '" + g.nodes[n].name + "' runs " + std::to_string(t) +
             (t == 1 ? " work-item" : " work-items") + ", the fused " + "range " +
             std::to_string(most) + ": most work-items would idle through it (limit 1/" +
             std::to_string(kIdleRatio) + ")";
  }
  return {};
}

struct Adjacency {
  std::vector<std::vector<uint32_t>> succ, pred;
  explicit Adjacency(const Graph &g) : succ(g.nodes.size()), pred(g.nodes.size()) {
    for (const Edge &e : g.edges) {
      succ[e.from].push_back(e.to);
      pred[e.to].push_back(e.from);
    }
  }
};

std::vector<bool> reach(const std::vector<std::vector<uint32_t>> &adj,
                        const std::vector<uint32_t> &from) {
  std::vector<bool> seen(adj.size(), false);
  std::vector<uint32_t> stack;
  for (uint32_t f : from)
    for (uint32_t s : adj[f])
      stack.push_back(s);
  while (!stack.empty()) {
    uint32_t n = stack.back();
    stack.pop_back();
    if (seen[n]) continue;
    seen[n] = true;
    for (uint32_t s : adj[n])
      stack.push_back(s);
  }
  return seen;
}

// Empty when `grp` (node indices in the requested order) may be fused; else why not.
std::string whyNot(const Graph &g, const Adjacency &adj, const std::vector<uint32_t> &grp,
                   const GroupFree &groupFree) {
  if (grp.size() < 2) return "a group needs at least two nodes";
  for (uint32_t n : grp)
    if (g.nodes[n].kind != NodeKind::Kernel)
      return "'" + g.nodes[n].name + "' is a " + nodeKindName(g.nodes[n].kind) +
             " node, not a kernel";
  {
    detail::Range fused;
    std::vector<detail::Remap> remap;
    bool literal;
    std::string d = planRanges(g, grp, fused, remap, literal, groupFree);
    if (!d.empty()) return d;
  }
  std::vector<int> pos(g.nodes.size(), -1);
  for (size_t i = 0; i < grp.size(); ++i)
    pos[grp[i]] = int(i);
  std::vector<bool> down = reach(adj.succ, grp), up = reach(adj.pred, grp);
  for (uint32_t n = 0; n < g.nodes.size(); ++n)
    if (pos[n] < 0 && down[n] && up[n])
      return "'" + g.nodes[n].name + "' (" + nodeKindName(g.nodes[n].kind) +
             ") sits between nodes of the group";
  for (const Edge &e : g.edges) {
    if (pos[e.from] >= 0 && pos[e.to] >= 0 && pos[e.from] > pos[e.to])
      return "'" + g.nodes[e.from].name + "' must run before '" + g.nodes[e.to].name + "'";
    if (pos[e.from] >= 0 && pos[e.from] + 1 < int(grp.size()) && pos[e.to] < 0)
      return "'" + g.nodes[e.to].name + "' depends on intermediate node '" + g.nodes[e.from].name +
             "'";
  }
  return {};
}

std::string identifier(const std::string &s) {
  std::string r;
  for (char c : s)
    r += (std::isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
  if (r.empty() || std::isdigit(static_cast<unsigned char>(r[0]))) r = "_" + r;
  return r;
}

// Slots some node outside `grp` uses (any kind of use).
std::vector<bool> usedOutside(const Graph &g, const std::vector<uint32_t> &grp) {
  std::vector<bool> in(g.nodes.size(), false), out(g.slots.size(), false);
  for (uint32_t n : grp)
    in[n] = true;
  for (uint32_t n = 0; n < g.nodes.size(); ++n) {
    if (in[n]) continue;
    const Node &node = g.nodes[n];
    for (const Arg &a : node.args)
      if (a.kind == ArgKind::Slot && a.index < out.size()) out[a.index] = true;
    if (node.kind == NodeKind::Copy || node.kind == NodeKind::CopyRect) {
      if (node.copy.srcSlot < out.size()) out[node.copy.srcSlot] = true;
      if (node.copy.dstSlot < out.size()) out[node.copy.dstSlot] = true;
    }
    if (node.kind == NodeKind::Fill && node.fill.slot < out.size()) out[node.fill.slot] = true;
    for (uint32_t s : node.subgraphSlots)
      if (s < out.size()) out[s] = true;
  }
  return out;
}

struct Planned {
  std::vector<uint32_t> grp;
  IrRequest req;
  std::vector<Arg> paramArgs; // per FusedParam: the argument the fused node passes
  IrResult res;
  std::string nodeName;
};

// Builds the request for one group: instances, shared parameters, candidates.
// The value bits of `text` typed as parameter `p`.
Expected<uint64_t> constantBits(const Param &p, const std::string &text) {
  const char *b = text.c_str();
  char *end = nullptr;
  errno = 0;
  uint64_t bits = 0;
  switch (p.type) {
  case ScalarType::F32: {
    float f = std::strtof(b, &end);
    uint32_t u;
    std::memcpy(&u, &f, 4);
    bits = u;
    break;
  }
  case ScalarType::F64: {
    double d = std::strtod(b, &end);
    std::memcpy(&bits, &d, 8);
    break;
  }
  case ScalarType::F16:
    return makeError("parameter '" + p.name + "': f16 constants are not supported");
  default: {
    uint32_t size = scalarSize(p.type);
    bool isSigned = p.type == ScalarType::I8 || p.type == ScalarType::I16 ||
                    p.type == ScalarType::I32 || p.type == ScalarType::I64;
    if (isSigned)
      bits = uint64_t(std::strtoll(b, &end, 0));
    else
      bits = std::strtoull(b, &end, 0);
    if (size < 8) bits &= (uint64_t(1) << (8 * size)) - 1;
    break;
  }
  }
  if (text.empty() || end == b || *end != 0 || errno == ERANGE)
    return makeError("parameter '" + p.name + "': '" + text + "' is not a " + scalarName(p.type) +
                     " value");
  return bits;
}

Planned plan(const Graph &g, const std::vector<uint32_t> &grp, const FuseOptions &o,
             const std::set<std::string> &takenNames, unsigned serial, const GroupRequest *gr,
             const std::map<uint32_t, uint64_t> &constants, const GroupFree &groupFree) {
  Planned pl;
  pl.grp = grp;
  std::string base =
      "fused_" + identifier(g.nodes[grp.front()].name) + "_" + identifier(g.nodes[grp.back()].name);
  pl.nodeName = base;
  for (unsigned k = 1; takenNames.count(pl.nodeName) || g.findNode(pl.nodeName) != kNone ||
                       g.findKernel(pl.nodeName) != kNone;
       ++k)
    pl.nodeName = base + "_" + std::to_string(k);
  (void)serial;
  IrRequest &req = pl.req;
  req.fusedName = pl.nodeName;
  for (const KernelModule &m : g.modules)
    req.modules.push_back(&m);
  std::vector<detail::Remap> remap;
  (void)planRanges(g, grp, req.fused, remap, req.literal, groupFree); // whyNot checked it
  req.internalize = o.internalize;
  req.constants = o.constants;
  req.keepIR = o.keepIR;
  req.noBarriers = gr && gr->noBarriers;
  req.noAlias = o.noAlias;
  for (const Slot &s : g.slots) {
    req.slotNames.push_back(s.name);
    req.slotBytes.push_back(s.size);
  }
  std::vector<bool> outside = usedOutside(g, grp);
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
    in.remap = i < remap.size() ? remap[i] : detail::Remap::Same;
    for (uint32_t p = 0; p < node.args.size(); ++p) {
      const Arg &a = node.args[p];
      const KernelParam &kp = k.params[p];
      std::tuple<int, uint64_t, uint64_t, uint32_t> key;
      bool elidable = true;
      FusedParam fp;
      fp.inst = i;
      fp.param = p;
      std::string name;
      switch (a.kind) {
      case ArgKind::Slot:
        key = {0, a.index, a.value, uint32_t(kp.kind)};
        name = g.slots[a.index].name + (a.value ? "_" + std::to_string(a.value) : "");
        fp.slotKey = int32_t(a.index);
        fp.internalCandidate = !outside[a.index] && g.slots[a.index].init == SlotInit::Transient;
        if (gr && gr->internalizeListed) {
          auto it =
              std::find(gr->internalize.begin(), gr->internalize.end(), g.slots[a.index].name);
          fp.internalCandidate = fp.internalCandidate && it != gr->internalize.end();
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
        fp.constCandidate = true;
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
      if (elidable) shared[key] = idx;
      in.bind.push_back(idx);
    }
    req.insts.push_back(std::move(in));
  }
  return pl;
}

void remapSlots(Graph &g, const std::vector<uint32_t> &map) {
  for (Node &n : g.nodes) {
    for (Arg &a : n.args)
      if (a.kind == ArgKind::Slot) a.index = map[a.index];
    if (n.kind == NodeKind::Copy || n.kind == NodeKind::CopyRect) {
      n.copy.srcSlot = map[n.copy.srcSlot];
      n.copy.dstSlot = map[n.copy.dstSlot];
    }
    if (n.kind == NodeKind::Fill) n.fill.slot = map[n.fill.slot];
    for (uint32_t &s : n.subgraphSlots)
      s = map[s];
  }
}

// Drops kernels no node uses, then modules no kernel uses.
void collectKernels(Graph &g) {
  std::vector<bool> usedK(g.kernels.size(), false), usedM(g.modules.size(), false);
  for (const Node &n : g.nodes)
    if (n.kind == NodeKind::Kernel && n.kernel < usedK.size()) usedK[n.kernel] = true;
  std::vector<uint32_t> kmap(g.kernels.size(), kNone), mmap(g.modules.size(), kNone);
  std::vector<Kernel> ks;
  for (uint32_t k = 0; k < g.kernels.size(); ++k)
    if (usedK[k]) {
      kmap[k] = uint32_t(ks.size());
      ks.push_back(std::move(g.kernels[k]));
      if (ks.back().module < usedM.size()) usedM[ks.back().module] = true;
    }
  std::vector<KernelModule> ms;
  for (uint32_t m = 0; m < g.modules.size(); ++m)
    if (usedM[m]) {
      mmap[m] = uint32_t(ms.size());
      ms.push_back(std::move(g.modules[m]));
    }
  for (Kernel &k : ks)
    k.module = mmap[k.module];
  for (Node &n : g.nodes)
    if (n.kind == NodeKind::Kernel) n.kernel = kmap[n.kernel];
  g.kernels = std::move(ks);
  g.modules = std::move(ms);
}

} // namespace

Expected<FuseReport> fuseGraph(Graph &g, const FuseOptions &o) {
  FuseReport rep;
  // Stored parameter expressions (.cgf 2.0) name nodes by index and shape ranges per
  // submission; fusion renumbers nodes and needs literal ranges. Refused, not dropped.
  if (!g.exprs.empty())
    return makeError(
        "the graph stores " + std::to_string(g.exprs.size()) +
        " parameter expressions (format 2.0); fusing such graphs is not supported yet");
  CGRAPH_RETURN_IF_ERROR(
      firstError(validateGraph(g, {false, true, true})).withContext("input graph"));
  Expected<std::vector<uint32_t>> order = executionOrder(g);
  if (!order) return order.error();
  Adjacency adj(g);
  std::map<uint32_t, std::map<std::string, bool>> groupUse; // per module, read on first use
  GroupFree groupFree = [&](uint32_t n) {
    const Node &node = g.nodes[n];
    if (node.kind != NodeKind::Kernel || node.kernel >= g.kernels.size()) return false;
    const Kernel &k = g.kernels[node.kernel];
    auto it = groupUse.find(k.module);
    if (it == groupUse.end()) {
      Expected<std::map<std::string, bool>> use = detail::workGroupUse(g.modules[k.module]);
      it = groupUse.emplace(k.module, use ? *use : std::map<std::string, bool>()).first;
    }
    auto f = it->second.find(k.name);
    return f != it->second.end() && !f->second;
  };
  std::vector<bool> taken(g.nodes.size(), false);
  std::vector<Planned> done;
  std::set<std::string> newNames;

  // Returns, for an automatic chain refused because of a hazard, how many of its first
  // nodes may still be fused together (0 otherwise).
  auto attempt = [&](const std::vector<uint32_t> &grp, bool automatic, const GroupRequest *gr,
                     const std::map<uint32_t, uint64_t> &constants) -> uint32_t {
    std::string gname = join(g, grp);
    Planned pl = plan(g, grp, o, newNames, unsigned(done.size()), gr, constants, groupFree);
    Expected<IrResult> res = detail::buildFusedKernel(pl.req);
    if (!res) {
      rep.remarks.push_back(
          {Remark::Refused, gname, "cannot build the fused kernel: " + res.error().message()});
      return 0;
    }
    if (!res->hazard.empty()) {
      if (automatic) {
        rep.remarks.push_back({Remark::Refused, gname,
                               res->hazard + ": a work-group barrier cannot order work-items of "
                                             "different work-groups"});
        return res->hazardSplit;
      }
      rep.remarks.push_back({Remark::Note, gname,
                             res->hazard + ": fused with work-group barriers as requested; "
                                           "correct only if work-groups do not share data"});
    }
    for (const std::string &r : res->remarks)
      rep.remarks.push_back({Remark::Note, gname, r});
    if (automatic && res->privateBytes > kPrivateLimit) {
      rep.remarks.push_back({Remark::Refused, gname,
                             "cost: the fused kernel keeps " + std::to_string(res->privateBytes) +
                                 " bytes of private arrays per work-item, over the limit of " +
                                 std::to_string(kPrivateLimit)});
      return 0;
    }
    pl.res = std::move(*res);
    for (uint32_t n : grp)
      taken[n] = true;
    newNames.insert(pl.nodeName);
    done.push_back(std::move(pl));
    return 0;
  };

  // explicit groups
  for (const GroupRequest &gr : o.groups) {
    const std::vector<std::string> &names = gr.nodes;
    std::vector<uint32_t> grp;
    std::string gname;
    for (const std::string &n : names)
      gname += (gname.empty() ? "" : ",") + n;
    for (const std::string &n : names) {
      uint32_t idx = g.findNode(n);
      if (idx == kNone) return makeError("group '" + gname + "': no node named '" + n + "'");
      if (std::find(grp.begin(), grp.end(), idx) != grp.end())
        return makeError("group '" + gname + "': node '" + n + "' is named twice");
      if (taken[idx]) return makeError("group '" + gname + "': node '" + n + "' is already fused");
      grp.push_back(idx);
    }
    std::map<uint32_t, uint64_t> constants;
    for (const auto &[pname, text] : gr.constants) {
      uint32_t p = g.findParam(pname);
      if (p == kNone) return makeError("group '" + gname + "': no parameter named '" + pname + "'");
      Expected<uint64_t> bits = constantBits(g.params[p], text);
      if (!bits) return bits.error().withContext("group '" + gname + "'");
      constants[p] = *bits;
    }
    std::vector<bool> outside = usedOutside(g, grp);
    for (const std::string &sname : gr.internalize) {
      uint32_t s = g.findSlot(sname);
      if (s == kNone) return makeError("group '" + gname + "': no slot named '" + sname + "'");
      bool inGroup = false;
      for (uint32_t n : grp)
        for (const Arg &a : g.nodes[n].args)
          inGroup = inGroup || (a.kind == ArgKind::Slot && a.index == s);
      if (!inGroup)
        rep.remarks.push_back(
            {Remark::Note, gname, sname + " is not used by the group: cannot internalize"});
      else if (g.slots[s].init != SlotInit::Transient)
        rep.remarks.push_back(
            {Remark::Note, gname, sname + " is not transient: cannot internalize"});
      else if (outside[s])
        rep.remarks.push_back(
            {Remark::Note, gname, sname + " is used outside the group: cannot internalize"});
    }
    std::string why = whyNot(g, adj, grp, groupFree);
    if (!why.empty()) {
      rep.remarks.push_back({Remark::Refused, gname, why});
      continue;
    }
    (void)attempt(grp, false, &gr, constants);
  }

  // automatic chains
  if (o.autoFuse) {
    std::vector<uint32_t> pos(g.nodes.size());
    for (uint32_t i = 0; i < order->size(); ++i)
      pos[(*order)[i]] = i;
    for (uint32_t n : *order) {
      if (taken[n] || g.nodes[n].kind != NodeKind::Kernel) continue;
      std::vector<uint32_t> chain{n};
      std::vector<bool> inChain(g.nodes.size(), false);
      inChain[n] = true;
      for (;;) {
        uint32_t last = chain.back();
        std::vector<uint32_t> succ = adj.succ[last];
        std::sort(succ.begin(), succ.end(),
                  [&](uint32_t a, uint32_t b) { return pos[a] < pos[b]; });
        succ.erase(std::unique(succ.begin(), succ.end()), succ.end());
        if (succ.empty()) break;
        uint32_t s = succ.front();
        std::string why;
        if (taken[s] || inChain[s])
          why = "'" + g.nodes[s].name + "' is already fused";
        else {
          std::vector<uint32_t> next = chain;
          next.push_back(s);
          why = whyNot(g, adj, next, groupFree);
          if (why.empty()) why = costWhyNot(g, next);
          if (why.empty() && !o.autoLinear) {
            detail::Range fr;
            std::vector<detail::Remap> remap;
            bool literal = true;
            (void)planRanges(g, next, fr, remap, literal, groupFree);
            for (size_t i = 0; i < next.size() && why.empty(); ++i)
              if (remap[i] == detail::Remap::Linear) {
                detail::Range r = toRange(g.nodes[next[i]].range);
                why = "cost: '" + g.nodes[next[i]].name + "' would be remapped linearly (global " +
                      rangeText(r, r.global) + " in " + rangeText(fr, fr.global) +
                      "), which --auto leaves out unless asked (--auto-linear)";
              }
          }
        }
        if (!why.empty()) {
          if (chain.size() > 1 || g.nodes[s].kind == NodeKind::Kernel || true)
            rep.remarks.push_back({Remark::Note, join(g, chain),
                                   "chain ends before '" + g.nodes[s].name + "': " + why});
          break;
        }
        chain.push_back(s);
        inChain[s] = true;
      }
      if (chain.size() < 2) continue;
      // cut the chain where a kernel would read another work-item's results, then fuse
      // each part of two or more kernels
      Expected<std::vector<detail::Cut>> cuts =
          detail::chainCuts(plan(g, chain, o, newNames, 0, nullptr, {}, groupFree).req);
      if (!cuts) {
        rep.remarks.push_back({Remark::Refused, join(g, chain),
                               "cannot analyse the chain: " + cuts.error().message()});
        continue;
      }
      std::vector<std::vector<uint32_t>> parts(1);
      size_t next = 0;
      for (uint32_t i = 0; i < chain.size(); ++i) {
        if (next < cuts->size() && (*cuts)[next].at == i) {
          rep.remarks.push_back(
              {Remark::Note, join(g, chain),
               "chain cut before '" + g.nodes[chain[i]].name + "': " + (*cuts)[next].reason +
                   ": a work-group barrier cannot order work-items of different work-groups"});
          parts.emplace_back();
          ++next;
        }
        parts.back().push_back(chain[i]);
      }
      for (std::vector<uint32_t> &part : parts) {
        // the parts run in chain order; each is a legal group (a piece of a legal chain)
        chain = part;
        if (chain.size() >= 2 && parts.size() > 1) {
          std::string why = whyNot(g, adj, chain, groupFree);
          if (!why.empty()) {
            rep.remarks.push_back({Remark::Refused, join(g, chain), why});
            continue;
          }
        }
        while (chain.size() >= 2) {
          uint32_t keep = attempt(chain, true, nullptr, {});
          if (keep < 2 || keep >= chain.size()) break;
          chain.resize(keep);
          rep.remarks.push_back(
              {Remark::Note, join(g, chain),
               "trying the chain without the nodes after '" + g.nodes[chain.back()].name + "'"});
        }
      }
    }
  }

  // rewrite the graph
  if (done.empty()) return rep;
  std::vector<uint32_t> owner(g.nodes.size(), kNone);
  for (uint32_t f = 0; f < done.size(); ++f)
    for (uint32_t n : done[f].grp)
      owner[n] = f;
  std::vector<Node> nodes;
  std::vector<uint32_t> nodeMap(g.nodes.size(), kNone), fusedNode(done.size(), kNone);
  std::vector<uint32_t> dropSlots;
  for (uint32_t n = 0; n < g.nodes.size(); ++n) {
    uint32_t f = owner[n];
    if (f == kNone) {
      nodeMap[n] = uint32_t(nodes.size());
      nodes.push_back(std::move(g.nodes[n]));
      continue;
    }
    if (fusedNode[f] == kNone) {
      Planned &pl = done[f];
      Expected<std::vector<Kernel>> ks = reflectKernels(pl.res.spirv.data(), pl.res.spirv.size());
      if (!ks) return ks.error().withContext("fused kernel '" + pl.nodeName + "'");
      auto it = std::find_if(ks->begin(), ks->end(),
                             [&](const Kernel &k) { return k.name == pl.nodeName; });
      if (it == ks->end())
        return makeError("fused kernel '" + pl.nodeName + "' missing from its module");
      KernelModule km;
      km.name = pl.nodeName + ".spv";
      KernelForm form;
      form.kind = FormKind::SpirV;
      form.target = "spirv64";
      form.bytes = pl.res.spirv;
      km.forms.push_back(std::move(form));
      Kernel k = *it;
      k.module = uint32_t(g.modules.size());
      g.modules.push_back(std::move(km));
      Node fused;
      fused.name = pl.nodeName;
      fused.kind = NodeKind::Kernel;
      fused.kernel = uint32_t(g.kernels.size());
      fused.range = g.nodes[pl.grp.front()].range;
      if (pl.req.literal) {
        // the range of the node with the most work-items, with the group's local size
        const detail::Range &r = pl.req.fused;
        for (uint32_t m : pl.grp) {
          detail::Range x = toRange(g.nodes[m].range);
          if (sameVec(x, x.global, r, r.global)) {
            fused.range = g.nodes[m].range;
            break;
          }
        }
        if (r.hasLocal())
          for (uint32_t d = 0; d < r.dims; ++d)
            fused.range.local[d].value = r.local[d];
      }
      g.kernels.push_back(std::move(k));
      FusedGroup fg;
      fg.node = pl.nodeName;
      fg.kernel = pl.nodeName;
      for (uint32_t m : pl.grp)
        fg.from.push_back(g.nodes[m].name);
      uint64_t savedTraffic = 0;
      for (uint32_t p : pl.res.internalized) {
        fg.internalized.push_back(g.slots[pl.req.params[p].slotKey].name);
        dropSlots.push_back(uint32_t(pl.req.params[p].slotKey));
        savedTraffic += 2 * g.slots[pl.req.params[p].slotKey].size;
      }
      for (auto &[p, bytes] : pl.res.localized) {
        // the slot leaves the graph; the fused node passes a __local tile instead
        fg.localized.push_back(g.slots[pl.req.params[p].slotKey].name);
        dropSlots.push_back(uint32_t(pl.req.params[p].slotKey));
        savedTraffic += 2 * g.slots[pl.req.params[p].slotKey].size;
        pl.paramArgs[p] = Arg::localMem(bytes);
      }
      for (size_t p = 0; p < pl.req.params.size(); ++p)
        if (pl.res.kept[p]) fused.args.push_back(pl.paramArgs[p]);
      std::string bakedParams;
      for (uint32_t p : pl.res.baked) {
        fg.constants.push_back(pl.req.params[p].name);
        if (pl.paramArgs[p].kind == ArgKind::Param)
          bakedParams += (bakedParams.empty() ? "" : ",") + g.params[pl.paramArgs[p].index].name;
      }
      size_t total = 0;
      for (const Instance &in : pl.req.insts)
        total += in.bind.size();
      fg.elided = unsigned(total - pl.req.params.size());
      fg.barriers = pl.res.barriers;
      fg.ir = std::move(pl.res.ir);
      std::string from;
      for (const std::string &s : fg.from)
        from += (from.empty() ? "" : ",") + s;
      g.metadata.push_back({"fused." + pl.nodeName, from});
      // a graph parameter baked in no longer follows the values a submission gives it
      if (!bakedParams.empty())
        g.metadata.push_back({"fused." + pl.nodeName + ".baked-params", bakedParams});
      if (!fg.internalized.empty()) {
        std::string s;
        for (const std::string &x : fg.internalized)
          s += (s.empty() ? "" : ",") + x;
        g.metadata.push_back({"fused." + pl.nodeName + ".private", s});
      }
      if (!fg.localized.empty()) {
        std::string s;
        for (const std::string &x : fg.localized)
          s += (s.empty() ? "" : ",") + x;
        g.metadata.push_back({"fused." + pl.nodeName + ".local", s});
      }
      rep.remarks.push_back(
          {Remark::Note, join(g, pl.grp),
           "cost: " + std::to_string(fg.from.size() - 1) + " fewer launches, about " +
               std::to_string(savedTraffic) + " bytes less global memory traffic per run, " +
               std::to_string(pl.res.privateBytes) + " bytes of private arrays per work-item"});
      rep.remarks.push_back(
          {Remark::Fused, join(g, pl.grp),
           "fused into '" + pl.nodeName + "' (" + std::to_string(fg.from.size()) + " kernels, " +
               std::to_string(fused.args.size()) + " arguments, " + std::to_string(fg.elided) +
               " elided, " + std::to_string(fg.constants.size()) + " constant, " +
               std::to_string(fg.internalized.size() + fg.localized.size()) + " internalized, " +
               (fg.barriers ? "barriers between kernels" : "no barriers") + ")"});
      rep.fused.push_back(std::move(fg));
      fusedNode[f] = uint32_t(nodes.size());
      nodes.push_back(std::move(fused));
    }
    nodeMap[n] = fusedNode[f];
  }
  g.nodes = std::move(nodes);
  std::set<std::pair<uint32_t, uint32_t>> seen;
  std::vector<Edge> edges;
  for (const Edge &e : g.edges) {
    Edge ne{nodeMap[e.from], nodeMap[e.to]};
    if (ne.from == ne.to || !seen.insert({ne.from, ne.to}).second) continue;
    edges.push_back(ne);
  }
  g.edges = std::move(edges);
  if (!dropSlots.empty()) {
    std::sort(dropSlots.begin(), dropSlots.end());
    std::vector<uint32_t> map(g.slots.size(), kNone);
    std::vector<Slot> slots;
    for (uint32_t s = 0; s < g.slots.size(); ++s)
      if (!std::binary_search(dropSlots.begin(), dropSlots.end(), s)) {
        map[s] = uint32_t(slots.size());
        slots.push_back(std::move(g.slots[s]));
      }
    g.slots = std::move(slots);
    remapSlots(g, map);
  }
  collectKernels(g);
  g.order.clear();
  g.partitions.clear();
  CGRAPH_RETURN_IF_ERROR(finalizeForFile(g).withContext("fused graph"));
  CGRAPH_RETURN_IF_ERROR(
      firstError(validateGraph(g, {false, true, true})).withContext("fused graph"));
  return rep;
}

} // namespace fusion
} // namespace cgraph
