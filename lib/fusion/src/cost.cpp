// The cost model of --auto: which groups a chain should not form although they are
// legal. Explicit groups are fused whatever the cost.
#include "graph_internal.h"

#include <algorithm>

namespace cgraph {
namespace fusion {
namespace detail {

// The cost model of --auto. A chain does not take a kernel whose work-item count is
// below 1/kIdleRatio of the largest in the chain (or the other way round): the fused
// range is the largest, so most of its work-items would only test the guard of the
// small kernel (and the big kernel's inner loops would branch around it), for the gain
// of one launch. tryFuse also refuses, for --auto, a fused kernel keeping more than
// kPrivateLimit bytes of private arrays per work-item.
constexpr uint64_t kIdleRatio = 16;

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

std::string linearCostWhyNot(const Graph &g, const ExprIndex &ex, const std::vector<uint32_t> &grp,
                             const GroupFree &groupFree) {
  std::string why;
  Range fr;
  std::vector<Remap> remap;
  bool literal = true;
  (void)planRanges(g, ex, grp, fr, remap, literal, groupFree);
  for (size_t i = 0; i < grp.size() && why.empty(); ++i)
    if (remap[i] == Remap::Linear) {
      Range r = toRange(g.nodes[grp[i]].range);
      why = "cost: '" + g.nodes[grp[i]].name + "' would be remapped linearly (global " +
            shapeText(r, r.global) + " in " + shapeText(fr, fr.global) +
            "), which --auto leaves out unless asked (--auto-linear)";
    }
  return why;
}

} // namespace detail
} // namespace fusion
} // namespace cgraph
