// The nd-range rules: which kernels may run in one fused range, what that range is,
// and how each kernel's work-items are placed in it (see Remap in internal.h).
#include "graph_internal.h"

namespace cgraph {
namespace fusion {
namespace detail {
namespace {

bool sameDims(const Dim *a, const Dim *b, uint32_t dims) {
  for (uint32_t i = 0; i < dims; ++i)
    if (a[i].value != b[i].value || a[i].param != b[i].param) return false;
  return true;
}

} // namespace

bool literalRange(const NDRange &r) {
  for (uint32_t d = 0; d < 3; ++d)
    if (r.global[d].param != kNone || r.local[d].param != kNone || r.offset[d].param != kNone)
      return false;
  return true;
}

Range toRange(const NDRange &r) {
  Range x;
  x.dims = r.dims;
  for (uint32_t d = 0; d < r.dims && d < 3; ++d) {
    x.global[d] = r.global[d].value;
    x.local[d] = r.hasLocal() ? r.local[d].value : 0;
    x.offset[d] = r.offset[d].value;
  }
  return x;
}

std::string shapeText(const Range &r, const uint64_t *v) {
  std::string s;
  for (uint32_t d = 0; d < r.dims; ++d)
    s += (d ? "x" : "") + std::to_string(v[d]);
  return s;
}

bool sameVec(const Range &a, const uint64_t *x, const Range &b, const uint64_t *y) {
  if (a.dims != b.dims) return false;
  for (uint32_t d = 0; d < a.dims; ++d)
    if (x[d] != y[d]) return false;
  return true;
}

namespace {

// Ranges with a size from a graph parameter or an expression: only identical ranges
// fuse (the same dimension count, the same sizes or expressions).
std::string exprRangeWhyNot(const Graph &g, const ExprIndex &ex, const std::vector<uint32_t> &grp) {
  uint32_t n0 = grp[0];
  const NDRange &r0 = g.nodes[n0].range;
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
  return {};
}

// Rule: every local size given (hasLocal: by a kernel that depends on its work-groups)
// is the same one. `withLocal`: the first node giving one, -1 for none.
std::string localWhyNot(const std::vector<Range> &rs, const std::vector<bool> &hasLocal,
                        int &withLocal) {
  for (size_t i = 0; i < rs.size(); ++i) {
    if (!hasLocal[i]) continue;
    if (withLocal < 0) {
      withLocal = int(i);
      continue;
    }
    const Range &a = rs[size_t(withLocal)];
    if (!sameVec(a, a.local, rs[i], rs[i].local))
      return "local sizes differ: " + shapeText(a, a.local) + " vs " +
             shapeText(rs[i], rs[i].local);
  }
  return {};
}

// Rule: every offset is the same (unused dimensions count as 0).
std::string offsetWhyNot(const std::vector<Range> &rs) {
  for (size_t i = 1; i < rs.size(); ++i)
    for (uint32_t d = 0; d < 3; ++d)
      if (rs[i].offset[d] != rs[0].offset[d])
        return "global offsets differ: " + shapeText(rs[0], rs[0].offset) + " vs " +
               shapeText(rs[i], rs[i].offset);
  return {};
}

// The fused range: the node with the most work-items, with the local size given where
// that node gives none (it must fit the fused range).
std::string fusedRangeOf(const Graph &g, const std::vector<uint32_t> &grp,
                         const std::vector<Range> &rs, int withLocal, Range &fused) {
  // never more work-items than the largest node has
  size_t big = 0;
  for (size_t i = 1; i < rs.size(); ++i)
    if (rs[i].total() > rs[big].total()) big = i;
  fused = rs[big];
  if (withLocal >= 0 &&
      !sameVec(fused, fused.local, rs[size_t(withLocal)], rs[size_t(withLocal)].local)) {
    // the largest node leaves the local size to the runtime (or does not depend on its
    // work-groups): take the one given
    const Range &l = rs[size_t(withLocal)];
    if (l.dims != fused.dims)
      return "'" + g.nodes[grp[size_t(withLocal)]].name + "' has a local size (" +
             shapeText(l, l.local) + ") in a " + std::to_string(l.dims) +
             "-dimensional range, the fused range is " + std::to_string(fused.dims) +
             "-dimensional: its work-groups would change";
    for (uint32_t d = 0; d < fused.dims; ++d)
      if (fused.global[d] % l.local[d])
        return "the fused global size " + shapeText(fused, fused.global) +
               " is not a multiple of the local size " + shapeText(l, l.local) + " of '" +
               g.nodes[grp[size_t(withLocal)]].name + "'";
    for (uint32_t d = 0; d < 3; ++d)
      fused.local[d] = l.local[d];
  }
  return {};
}

// Each node's Remap in the fused range; a linearly remapped node must have no local
// size (hasLocal) and the offsets must be 0.
std::string assignRemaps(const Graph &g, const std::vector<uint32_t> &grp,
                         const std::vector<Range> &rs, const std::vector<bool> &hasLocal,
                         const Range &fused, std::vector<Remap> &remap) {
  for (size_t i = 0; i < rs.size(); ++i) {
    const Range &r = rs[i];
    const std::string &name = g.nodes[grp[i]].name;
    bool sameDimsCount = r.dims == fused.dims, within = sameDimsCount, equal = sameDimsCount;
    for (uint32_t d = 0; sameDimsCount && d < r.dims; ++d) {
      within = within && r.global[d] <= fused.global[d];
      equal = equal && r.global[d] == fused.global[d];
    }
    if (equal) {
      remap[i] = Remap::Same;
    } else if (within) {
      remap[i] = Remap::Guard;
    } else {
      remap[i] = Remap::Linear;
      std::string what =
          "global " + shapeText(r, r.global) + " in " + shapeText(fused, fused.global);
      if (hasLocal[i])
        return "'" + name + "' has a local size (" + shapeText(r, r.local) +
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

} // namespace

std::string planRanges(const Graph &g, const ExprIndex &ex, const std::vector<uint32_t> &grp,
                       Range &fused, std::vector<Remap> &remap, bool &literal,
                       const GroupFree &groupFree) {
  remap.assign(grp.size(), Remap::Same);
  literal = true;
  for (uint32_t n : grp)
    literal = literal && literalRange(g.nodes[n].range) && !ex.anyRange(n);
  if (!literal) {
    std::string why = exprRangeWhyNot(g, ex, grp);
    if (!why.empty()) return why;
    fused = toRange(g.nodes[grp[0]].range);
    return {};
  }
  std::vector<Range> rs;
  for (uint32_t n : grp)
    rs.push_back(toRange(g.nodes[n].range));
  // a local size counts unless no kernel of the group depends on its work-groups
  // (mixing work-group kernels with linearly remapped ones is left out, see
  // docs/fusion-internals.md)
  bool allFree = true;
  for (uint32_t n : grp)
    allFree = allFree && groupFree(n);
  std::vector<bool> hasLocal(rs.size());
  for (size_t i = 0; i < rs.size(); ++i)
    hasLocal[i] = rs[i].hasLocal() && !allFree;
  int withLocal = -1;
  std::string why = localWhyNot(rs, hasLocal, withLocal);
  if (why.empty()) why = offsetWhyNot(rs);
  if (why.empty()) why = fusedRangeOf(g, grp, rs, withLocal, fused);
  if (why.empty()) why = assignRemaps(g, grp, rs, hasLocal, fused, remap);
  return why;
}

// Empty when the nodes of `grp` may run in one fused range (planRanges); else why not.
std::string rangeWhyNot(const Graph &g, const ExprIndex &ex, const std::vector<uint32_t> &grp,
                        const GroupFree &groupFree) {
  Range fused;
  std::vector<Remap> remap;
  bool literal;
  return planRanges(g, ex, grp, fused, remap, literal, groupFree);
}

} // namespace detail
} // namespace fusion
} // namespace cgraph
