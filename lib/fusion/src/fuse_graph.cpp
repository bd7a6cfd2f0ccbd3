// The graph side of fusion: which groups are legal, which arguments are shared, and
// rewriting the Graph once the fused kernels exist. See cgraph/fusion/fusion.h.
#include "cgraph/fusion/fusion.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

#include "cgraph/expr.h"
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

// The graph's stored parameter expressions (.cgf 2.0, Graph::exprs) by node: those of
// each nd-range field (ExprField order: global, local, offset per dimension) and of
// each scalar argument. Fusion carries them into the fused node; a node whose nd-range
// has one is not literal, so its group must share one nd-range (the same expressions).
struct ExprIndex {
  const Graph &g;
  std::vector<std::array<int32_t, 9>> range;                    // per node; -1: none
  std::vector<std::vector<std::pair<uint32_t, uint32_t>>> args; // per node: (arg, expr)
  explicit ExprIndex(const Graph &graph) : g(graph) {
    if (g.exprs.empty()) return;
    std::array<int32_t, 9> none;
    none.fill(-1);
    range.assign(g.nodes.size(), none);
    args.resize(g.nodes.size());
    for (uint32_t e = 0; e < g.exprs.size(); ++e) {
      const FieldExpr &x = g.exprs[e];
      if (x.node >= g.nodes.size()) continue;
      uint16_t f = uint16_t(x.field);
      if (f <= uint16_t(ExprField::Offset2))
        range[x.node][f] = int32_t(e);
      else if (x.field == ExprField::ScalarArg)
        args[x.node].push_back({x.arg, e});
    }
  }
  // Expression index of node n's nd-range field f (ExprField value 0..8), or -1.
  int32_t field(uint32_t n, unsigned f) const { return range.empty() ? -1 : range[n][f]; }
  bool anyRange(uint32_t n) const {
    for (unsigned f = 0; f < 9; ++f)
      if (field(n, f) >= 0) return true;
    return false;
  }
  // Expression index of node n's argument a, or -1.
  int32_t arg(uint32_t n, uint32_t a) const {
    if (args.empty()) return -1;
    for (auto [i, e] : args[n])
      if (i == a) return int32_t(e);
    return -1;
  }
  bool sameField(uint32_t a, uint32_t b, unsigned f) const {
    int32_t x = field(a, f), y = field(b, f);
    if (x < 0 || y < 0) return x == y;
    return g.exprs[size_t(x)].code == g.exprs[size_t(y)].code;
  }
  // "$batch * 2048"
  std::string text(int32_t e) const {
    const std::vector<uint8_t> &code = g.exprs[size_t(e)].code;
    Expected<expr::Program> p = expr::decode(code.data(), code.size(), uint32_t(g.params.size()));
    if (!p) return "?";
    for (const Param &q : g.params)
      p->names.push_back(q.name);
    return p->toString();
  }
};

// Node n's nd-range dimensions of one kind (0 global, 1 local, 2 offset): "64x$n", with
// an expression in parentheses.
std::string dimText(const Graph &g, const ExprIndex &ex, uint32_t n, unsigned kind) {
  const NDRange &r = g.nodes[n].range;
  const Dim *d = kind == 0 ? r.global : kind == 1 ? r.local : r.offset;
  std::string s;
  for (uint32_t i = 0; i < r.dims; ++i) {
    if (i) s += "x";
    int32_t e = ex.field(n, kind * 3 + i);
    if (e >= 0)
      s += "(" + ex.text(e) + ")";
    else
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

std::string planRanges(const Graph &g, const ExprIndex &ex, const std::vector<uint32_t> &grp,
                       detail::Range &fused, std::vector<detail::Remap> &remap, bool &literal,
                       const GroupFree &groupFree) {
  remap.assign(grp.size(), detail::Remap::Same);
  literal = true;
  for (uint32_t n : grp)
    literal = literal && literalRange(g.nodes[n].range) && !ex.anyRange(n);
  uint32_t n0 = grp[0];
  const NDRange &r0 = g.nodes[n0].range;
  if (!literal) {
    // a size from a graph parameter or an expression: only identical ranges fuse
    auto same = [&](uint32_t n, unsigned kind) {
      const NDRange &r = g.nodes[n].range;
      const Dim *a = kind == 0 ? r0.global : kind == 1 ? r0.local : r0.offset;
      const Dim *b = kind == 0 ? r.global : kind == 1 ? r.local : r.offset;
      if (!sameDims(a, b, r0.dims)) return false;
      for (uint32_t d = 0; d < r0.dims; ++d)
        if (!ex.sameField(n0, n, kind * 3 + d)) return false;
      return true;
    };
    for (size_t i = 1; i < grp.size(); ++i) {
      uint32_t n = grp[i];
      const NDRange &r = g.nodes[n].range;
      if (r.dims != r0.dims)
        return "dimensions differ: " + std::to_string(r0.dims) + " vs " + std::to_string(r.dims) +
               " (work-item remapping needs literal sizes)";
      if (!same(n, 0))
        return "global sizes differ: " + dimText(g, ex, n0, 0) + " vs " + dimText(g, ex, n, 0) +
               " (work-item remapping needs literal sizes)";
      if (!same(n, 1))
        return "local sizes differ: " + dimText(g, ex, n0, 1) + " vs " + dimText(g, ex, n, 1);
      if (!same(n, 2))
        return "global offsets differ: " + dimText(g, ex, n0, 2) + " vs " + dimText(g, ex, n, 2);
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

std::string costWhyNot(const Graph &g, const ExprIndex &ex, const std::vector<uint32_t> &grp) {
  uint64_t most = 0;
  for (uint32_t n : grp) {
    if (!literalRange(g.nodes[n].range) || ex.anyRange(n)) return {};
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

// Whether a group's shape in the graph allows fusing it: the rules that do not depend
// on nd-ranges. Each query costs time in proportion to the group, the edges of its
// nodes and the nodes between its first and last node (in execution order) that
// descend from it, never to the whole graph (--auto asks once per node it adds to a
// chain); the marks it sets are cleared before it returns.
class GroupChecker {
public:
  GroupChecker(const Graph &g, const Adjacency &adj, const std::vector<uint32_t> &order)
      : g_(g), adj_(adj), topo_(g.nodes.size(), 0), pos_(g.nodes.size(), -1),
        mark_(g.nodes.size(), 0) {
    for (uint32_t i = 0; i < order.size(); ++i)
      topo_[order[i]] = i;
  }

  // Empty when `grp` (node indices in the requested order) has the shape of a fusable
  // group; else the rule it breaks.
  std::string whyNot(const std::vector<uint32_t> &grp) {
    if (grp.size() < 2) return "a group needs at least two nodes";
    for (uint32_t n : grp)
      if (g_.nodes[n].kind != NodeKind::Kernel)
        return "'" + g_.nodes[n].name + "' is a " + nodeKindName(g_.nodes[n].kind) +
               " node, not a kernel";
    for (size_t i = 0; i < grp.size(); ++i)
      pos_[grp[i]] = int(i);
    std::string why = between(grp);
    if (why.empty()) why = edgeRules(grp);
    for (uint32_t n : grp)
      pos_[n] = -1;
    return why;
  }

private:
  // A node outside the group that depends on one node of the group while another
  // depends on it: fusing would need it to run inside the fused kernel. Such a node
  // lies strictly between the group's first and last node in execution order, and so
  // does every node on the paths through it, which bounds both searches.
  std::string between(const std::vector<uint32_t> &grp) {
    uint32_t lo = topo_[grp[0]], hi = lo;
    for (uint32_t n : grp) {
      lo = std::min(lo, topo_[n]);
      hi = std::max(hi, topo_[n]);
    }
    std::vector<uint32_t> touched, stack;
    auto search = [&](const std::vector<std::vector<uint32_t>> &adj, uint8_t bit, bool down) {
      for (uint32_t n : grp)
        for (uint32_t s : adj[n])
          stack.push_back(s);
      while (!stack.empty()) {
        uint32_t n = stack.back();
        stack.pop_back();
        if ((mark_[n] & bit) || (down ? topo_[n] > hi : topo_[n] < lo)) continue;
        if (!mark_[n]) touched.push_back(n);
        mark_[n] |= bit;
        for (uint32_t s : adj[n])
          stack.push_back(s);
      }
    };
    search(adj_.succ, 1, true);
    search(adj_.pred, 2, false);
    uint32_t first = kNone;
    for (uint32_t n : touched) {
      if (mark_[n] == 3 && pos_[n] < 0) first = std::min(first, n);
      mark_[n] = 0;
    }
    if (first == kNone) return {};
    return "'" + g_.nodes[first].name + "' (" + nodeKindName(g_.nodes[first].kind) +
           ") sits between nodes of the group";
  }

  // The group's own edges go forward in the requested order, and only its last node
  // has successors outside it.
  std::string edgeRules(const std::vector<uint32_t> &grp) {
    for (uint32_t from : grp)
      for (uint32_t to : adj_.succ[from])
        if (pos_[to] >= 0 && pos_[from] > pos_[to])
          return "'" + g_.nodes[from].name + "' must run before '" + g_.nodes[to].name + "'";
    for (uint32_t from : grp)
      for (uint32_t to : adj_.succ[from])
        if (pos_[from] + 1 < int(grp.size()) && pos_[to] < 0)
          return "'" + g_.nodes[to].name + "' depends on intermediate node '" +
                 g_.nodes[from].name + "'";
    return {};
  }

  const Graph &g_;
  const Adjacency &adj_;
  std::vector<uint32_t> topo_; // node -> position in execution order
  std::vector<int> pos_;       // node -> position in the group asked about, -1 outside
  std::vector<uint8_t> mark_;  // 1: below the group, 2: above it (cleared after use)
};

// Empty when the nodes of `grp` may run in one fused range (planRanges); else why not.
std::string rangeWhyNot(const Graph &g, const ExprIndex &ex, const std::vector<uint32_t> &grp,
                        const GroupFree &groupFree) {
  detail::Range fused;
  std::vector<detail::Remap> remap;
  bool literal;
  return planRanges(g, ex, grp, fused, remap, literal, groupFree);
}

std::string identifier(const std::string &s) {
  std::string r;
  for (char c : s)
    r += (std::isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
  if (r.empty() || std::isdigit(static_cast<unsigned char>(r[0]))) r = "_" + r;
  return r;
}

// Which nodes use which slots (any kind of use), so that "is this slot used outside
// the group" costs time in proportion to the group.
struct SlotUsers {
  std::vector<std::vector<uint32_t>> slotsOf; // per node, each slot once
  std::vector<uint32_t> users;                // per slot, how many nodes use it
  explicit SlotUsers(const Graph &g) : slotsOf(g.nodes.size()), users(g.slots.size(), 0) {
    for (uint32_t n = 0; n < g.nodes.size(); ++n) {
      const Node &node = g.nodes[n];
      std::vector<uint32_t> &v = slotsOf[n];
      for (const Arg &a : node.args)
        if (a.kind == ArgKind::Slot) v.push_back(a.index);
      if (node.kind == NodeKind::Copy || node.kind == NodeKind::CopyRect) {
        v.push_back(node.copy.srcSlot);
        v.push_back(node.copy.dstSlot);
      }
      if (node.kind == NodeKind::Fill) v.push_back(node.fill.slot);
      for (uint32_t s : node.subgraphSlots)
        v.push_back(s);
      if (node.kind == NodeKind::Conditional) v.push_back(node.cond.slot);
      v.erase(std::remove_if(v.begin(), v.end(), [&](uint32_t s) { return s >= users.size(); }),
              v.end());
      std::sort(v.begin(), v.end());
      v.erase(std::unique(v.begin(), v.end()), v.end());
      for (uint32_t s : v)
        ++users[s];
    }
  }
  // The slots some node outside `grp` uses, among those the group uses.
  std::set<uint32_t> outside(const std::vector<uint32_t> &grp) const {
    std::map<uint32_t, uint32_t> inGroup;
    for (uint32_t n : grp)
      for (uint32_t s : slotsOf[n])
        ++inGroup[s];
    std::set<uint32_t> out;
    for (auto [s, count] : inGroup)
      if (users[s] > count) out.insert(s);
    return out;
  }
};

struct Planned {
  std::vector<uint32_t> grp;
  IrRequest req;
  std::vector<Arg> paramArgs;     // per FusedParam: the argument the fused node passes
  std::vector<int32_t> paramExpr; // per FusedParam: its stored expression (Graph::exprs), -1
  IrResult res;
  std::string nodeName;
  std::vector<std::string> notes;   // remarks for the group once it is fused
  std::vector<std::string> unnamed; // transient slots only it uses, not named scratch
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

// Where a scratch slot was named (Remark text), per slot; empty: not scratch.
using ScratchSlots = std::vector<std::string>;

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
  std::vector<detail::Remap> remap;
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
    in.remap = i < remap.size() ? remap[i] : detail::Remap::Same;
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

bool isFloat(ScalarType t) {
  return t == ScalarType::F16 || t == ScalarType::F32 || t == ScalarType::F64;
}

// Sets the field `e` names to `v` (a specialized expression's value).
Error setField(Graph &g, const FieldExpr &e, int64_t v) {
  std::string where = e.node == kNone ? "slot '" + g.slots[e.arg].name + "'"
                                      : "node '" + g.nodes[e.node].name + "'";
  where += " " + exprFieldName(e.field, e.arg);
  if (v < 0 && e.field != ExprField::ScalarArg)
    return makeError(where + " is " + std::to_string(v) + " with the given parameter values");
  uint16_t f = uint16_t(e.field);
  if (e.node == kNone) {
    g.slots[e.arg].size = uint64_t(v);
    return Error();
  }
  Node &n = g.nodes[e.node];
  if (f <= uint16_t(ExprField::Offset2)) {
    Dim *d = f < 3 ? n.range.global : f < 6 ? n.range.local : n.range.offset;
    d[f % 3].value = uint64_t(v);
    d[f % 3].param = kNone;
    return Error();
  }
  switch (e.field) {
  case ExprField::ScalarArg: {
    Arg &a = n.args[e.arg];
    uint32_t size = scalarSize(a.type);
    a.value = uint64_t(v);
    if (size < 8) a.value &= (uint64_t(1) << (8 * size)) - 1;
    return Error();
  }
  case ExprField::CopySrcOffset:
    n.copy.srcOffset = uint64_t(v);
    return Error();
  case ExprField::CopyDstOffset:
    n.copy.dstOffset = uint64_t(v);
    return Error();
  case ExprField::CopyBytes:
    n.copy.bytes = uint64_t(v);
    return Error();
  case ExprField::FillOffset:
    n.fill.offset = uint64_t(v);
    return Error();
  case ExprField::FillBytes:
    n.fill.bytes = uint64_t(v);
    return Error();
  default:
    return makeError(where + ": unknown expression field");
  }
}

// FuseOptions::paramValues: each named parameter takes its value in every stored
// expression (folded to a literal where it was the last variable), nd-range size and
// kernel argument that uses it.
Error specialize(Graph &g, const std::vector<std::pair<std::string, std::string>> &values,
                 FuseReport &rep) {
  std::vector<bool> fixed(g.params.size(), false);
  std::vector<int64_t> ival(g.params.size(), 0);
  std::string list;
  for (const auto &[name, text] : values) {
    uint32_t p = g.findParam(name);
    if (p == kNone) return makeError("--param: no parameter named '" + name + "'");
    Expected<uint64_t> bits = constantBits(g.params[p], text);
    if (!bits) return bits.error().withContext("--param");
    fixed[p] = true;
    g.params[p].defaultBits = *bits;
    ival[p] = isFloat(g.params[p].type) ? 0 : expr::integerValue(g.params[p].type, *bits);
    g.metadata.push_back({"specialized." + name, text});
    list += (list.empty() ? "" : ", ") + name + " = " + text;
  }
  unsigned folded = 0, literals = 0;
  std::vector<FieldExpr> keep;
  for (FieldExpr &e : g.exprs) {
    Expected<expr::Program> prog =
        expr::decode(e.code.data(), e.code.size(), uint32_t(g.params.size()));
    if (!prog) return prog.error().withContext("stored expression");
    bool changed = false, open = false;
    for (expr::Instr &in : prog->code) {
      if (in.op != expr::Op::Var) continue;
      if (!fixed[size_t(in.operand)]) {
        open = true;
        continue;
      }
      in = {expr::Op::Lit, ival[size_t(in.operand)]};
      changed = true;
    }
    if (!changed) {
      keep.push_back(std::move(e));
      continue;
    }
    if (open) { // other parameters remain: the expression stays, with the values in it
      e.code = expr::encode(*prog);
      keep.push_back(std::move(e));
      continue;
    }
    Expected<int64_t> v = expr::evaluate(*prog, nullptr, 0);
    if (!v) return v.error().withContext("stored expression of " + exprFieldName(e.field, e.arg));
    CGRAPH_RETURN_IF_ERROR(setField(g, e, *v));
    ++folded;
  }
  g.exprs = std::move(keep);
  for (Node &n : g.nodes) {
    for (Dim *d : {n.range.global, n.range.local, n.range.offset})
      for (uint32_t i = 0; i < 3; ++i)
        if (d[i].param != kNone && d[i].param < fixed.size() && fixed[d[i].param]) {
          d[i].value = uint64_t(ival[d[i].param]);
          d[i].param = kNone;
          ++literals;
        }
    if (n.kind != NodeKind::Kernel) continue;
    for (Arg &a : n.args)
      if (a.kind == ArgKind::Param && a.index < fixed.size() && fixed[a.index]) {
        a = Arg::scalar(g.params[a.index].type, g.params[a.index].defaultBits);
        ++literals;
      }
  }
  rep.remarks.push_back({Remark::Note, "",
                         "specialized " + list + ": " + std::to_string(folded) +
                             " stored expressions folded, " + std::to_string(literals) +
                             " nd-range sizes and arguments made literal; the fused graph "
                             "ignores other values of these parameters"});
  return Error();
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

} // namespace

Expected<FuseReport> fuseGraph(Graph &g, const FuseOptions &o) {
  FuseReport rep;
  CGRAPH_RETURN_IF_ERROR(
      firstError(validateGraph(g, {false, true, true})).withContext("input graph"));
  if (!o.paramValues.empty()) CGRAPH_RETURN_IF_ERROR(specialize(g, o.paramValues, rep));
  // Stored parameter expressions (.cgf 2.0) stay with their fields: nodes whose nd-ranges
  // have them fuse only with nodes of the same nd-range, arguments keep them.
  const ExprIndex ex(g);
  Expected<std::vector<uint32_t>> order = executionOrder(g);
  if (!order) return order.error();
  Expected<ScratchSlots> scratch = scratchSlots(g, o, rep);
  if (!scratch) return scratch.error();
  Adjacency adj(g);
  GroupChecker checker(g, adj, *order);
  SlotUsers users(g);
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
  // names a fused node or kernel must not take: the graph's and the new ones
  std::set<std::string> newNames;
  std::map<std::string, uint32_t> nodeIndex;
  for (uint32_t n = 0; n < g.nodes.size(); ++n) {
    newNames.insert(g.nodes[n].name);
    nodeIndex.emplace(g.nodes[n].name, n);
  }
  for (const Kernel &k : g.kernels)
    newNames.insert(k.name);

  // Returns, for an automatic chain refused because of a hazard, how many of its first
  // nodes may still be fused together (0 otherwise).
  auto attempt = [&](const std::vector<uint32_t> &grp, bool automatic, const GroupRequest *gr,
                     const std::map<uint32_t, uint64_t> &constants) -> uint32_t {
    std::string gname = join(g, grp);
    Planned pl = plan(g, grp, o, newNames, gr, constants, groupFree, users, *scratch, ex);
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
    if (automatic && res->privateBytes > kPrivateLimit) {
      for (const std::string &r : res->remarks)
        rep.remarks.push_back({Remark::Note, gname, r});
      rep.remarks.push_back({Remark::Refused, gname,
                             "cost: the fused kernel keeps " + std::to_string(res->privateBytes) +
                                 " bytes of private arrays per work-item, over the limit of " +
                                 std::to_string(kPrivateLimit)});
      return 0;
    }
    for (const std::string &r : res->remarks)
      rep.remarks.push_back({Remark::Note, gname, r});
    for (const std::string &r : pl.notes)
      rep.remarks.push_back({Remark::Note, gname, r});
    if (!pl.unnamed.empty()) {
      std::string list;
      for (const std::string &x : pl.unnamed)
        list += (list.empty() ? "" : ",") + x;
      rep.remarks.push_back(
          {Remark::Note, gname,
           "kept " + list + " in the graph with " + (pl.unnamed.size() > 1 ? "their" : "its") +
               " final contents: transient and used only by the group, but not named scratch "
               "(internalize " +
               (pl.unnamed.size() > 1 ? "them" : "it") + " with --internalize " + list + ")"});
    }
    pl.res = std::move(*res);
    for (uint32_t n : grp)
      taken[n] = true;
    newNames.insert(pl.nodeName);
    done.push_back(std::move(pl));
    return 0;
  };

  // explicit groups: a group whose shape breaks a rule is an error; one whose nd-ranges
  // or kernels cannot be fused is left as it is, with a remark
  for (const GroupRequest &gr : o.groups) {
    const std::vector<std::string> &names = gr.nodes;
    std::vector<uint32_t> grp;
    std::string gname;
    for (const std::string &n : names)
      gname += (gname.empty() ? "" : ",") + n;
    std::set<uint32_t> inGroup;
    for (const std::string &n : names) {
      auto found = nodeIndex.find(n);
      if (found == nodeIndex.end())
        return makeError("group '" + gname + "': no node named '" + n + "'");
      uint32_t idx = found->second;
      if (!inGroup.insert(idx).second)
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
    std::string why = checker.whyNot(grp);
    if (!why.empty()) return makeError("group '" + gname + "': " + why);
    std::set<uint32_t> outside = users.outside(grp);
    for (const std::string &sname : gr.internalize) {
      uint32_t s = g.findSlot(sname);
      if (s == kNone) return makeError("group '" + gname + "': no slot named '" + sname + "'");
      bool used = false;
      for (uint32_t n : grp)
        for (const Arg &a : g.nodes[n].args)
          used = used || (a.kind == ArgKind::Slot && a.index == s);
      if (!used)
        rep.remarks.push_back(
            {Remark::Note, gname, sname + " is not used by the group: cannot internalize"});
      else if (g.slots[s].init != SlotInit::Transient)
        rep.remarks.push_back(
            {Remark::Note, gname, sname + " is not transient: cannot internalize"});
      else if (outside.count(s))
        rep.remarks.push_back(
            {Remark::Note, gname, sname + " is used outside the group: cannot internalize"});
    }
    why = rangeWhyNot(g, ex, grp, groupFree);
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
    std::vector<bool> inChain(g.nodes.size(), false); // cleared after each chain
    for (uint32_t n : *order) {
      if (taken[n] || g.nodes[n].kind != NodeKind::Kernel) continue;
      std::vector<uint32_t> chain{n};
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
        if (taken[s] || inChain[s]) {
          why = "'" + g.nodes[s].name + "' is already fused";
        } else if (o.maxGroupKernels && chain.size() >= o.maxGroupKernels) {
          why = "the chain has " + std::to_string(chain.size()) +
                " kernels, the most one group takes (FuseOptions::maxGroupKernels): the rest "
                "starts a new chain";
        } else {
          std::vector<uint32_t> next = chain;
          next.push_back(s);
          why = checker.whyNot(next);
          if (why.empty()) why = rangeWhyNot(g, ex, next, groupFree);
          if (why.empty()) why = costWhyNot(g, ex, next);
          if (why.empty() && !o.autoLinear) {
            detail::Range fr;
            std::vector<detail::Remap> remap;
            bool literal = true;
            (void)planRanges(g, ex, next, fr, remap, literal, groupFree);
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
          rep.remarks.push_back({Remark::Note, join(g, chain),
                                 "chain ends before '" + g.nodes[s].name + "': " + why});
          break;
        }
        chain.push_back(s);
        inChain[s] = true;
      }
      for (uint32_t c : chain)
        inChain[c] = false;
      if (chain.size() < 2) continue;
      // cut the chain where a kernel would read another work-item's results, then fuse
      // each part of two or more kernels
      Expected<std::vector<detail::Cut>> cuts = detail::chainCuts(
          plan(g, chain, o, newNames, nullptr, {}, groupFree, users, *scratch, ex).req);
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
          std::string why = checker.whyNot(chain);
          if (why.empty()) why = rangeWhyNot(g, ex, chain, groupFree);
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
  if (done.empty() && o.paramValues.empty()) return rep;
  std::vector<uint32_t> owner(g.nodes.size(), kNone);
  for (uint32_t f = 0; f < done.size(); ++f)
    for (uint32_t n : done[f].grp)
      owner[n] = f;
  std::vector<Node> nodes;
  std::vector<uint32_t> nodeMap(g.nodes.size(), kNone), fusedNode(done.size(), kNone);
  std::vector<uint32_t> dropSlots;
  std::vector<FieldExpr> newExprs;
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
      std::string gone; // the slots leaving the graph, and why they may
      auto leaves = [&](uint32_t slot) {
        const std::string &why = (*scratch)[slot];
        gone += (gone.empty() ? "" : ", ") + g.slots[slot].name + " (" +
                (why.empty() ? std::string("listed by the plan") : why) + ")";
      };
      for (uint32_t p : pl.res.internalized)
        leaves(uint32_t(pl.req.params[p].slotKey));
      for (auto &lp : pl.res.localized)
        leaves(uint32_t(pl.req.params[lp.first].slotKey));
      if (!gone.empty())
        rep.remarks.push_back({Remark::Note, join(g, pl.grp),
                               "slots leaving the graph: " + gone +
                                   "; scratch, transient and used only by the group"});
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
      // the fused node's stored expressions: the nd-range the group shares (planRanges
      // took the first node's where any is an expression) and those of its arguments
      const uint32_t fusedIndex = uint32_t(nodes.size());
      if (!pl.req.literal)
        for (unsigned fld = 0; fld < 9; ++fld)
          if (int32_t e = ex.field(pl.grp.front(), fld); e >= 0)
            newExprs.push_back({fusedIndex, ExprField(fld), 0, g.exprs[size_t(e)].code});
      for (size_t p = 0; p < pl.req.params.size(); ++p)
        if (pl.res.kept[p]) {
          if (pl.paramExpr[p] >= 0)
            newExprs.push_back({fusedIndex, ExprField::ScalarArg, uint32_t(fused.args.size()),
                                g.exprs[size_t(pl.paramExpr[p])].code});
          fused.args.push_back(pl.paramArgs[p]);
        }
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
  for (const FieldExpr &e : g.exprs)
    if (e.node != kNone && owner[e.node] == kNone) {
      newExprs.push_back(e);
      newExprs.back().node = nodeMap[e.node];
    } else if (e.node == kNone) {
      newExprs.push_back(e); // a slot's size: remapped with the slots below
    }
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
    std::vector<FieldExpr> kept;
    for (FieldExpr &e : newExprs) {
      if (e.node == kNone && e.field == ExprField::SlotSize) {
        if (e.arg >= map.size() || map[e.arg] == kNone) continue; // the slot left the graph
        e.arg = map[e.arg];
      }
      kept.push_back(std::move(e));
    }
    newExprs = std::move(kept);
  }
  std::sort(newExprs.begin(), newExprs.end(), [](const FieldExpr &a, const FieldExpr &b) {
    return std::make_tuple(a.node, uint16_t(a.field), a.arg) <
           std::make_tuple(b.node, uint16_t(b.field), b.arg);
  });
  g.exprs = std::move(newExprs);
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
