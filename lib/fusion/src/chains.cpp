// Automatic chains (FuseOptions::autoFuse): from each kernel node not yet fused, in
// execution order, a chain grows along the first successor while the group stays legal
// and the cost model agrees; it is cut where a kernel would access a slot another
// kernel of the part writes at another work-item's index outside its work-group
// (chainCuts), and each part is fused (without its tail where a hazard is found only
// in the fused kernel).
#include "graph_internal.h"

#include <algorithm>

namespace cgraph {
namespace fusion {
namespace detail {
namespace {

// Why the chain should not take its next node `s`; empty when it may.
std::string whyNotTake(FuseState &st, const std::vector<uint32_t> &chain, uint32_t s,
                       const std::vector<bool> &inChain) {
  const Graph &g = st.g;
  std::string why;
  if (st.taken[s] || inChain[s]) {
    why = "'" + g.nodes[s].name + "' is already fused";
  } else if (st.o.maxGroupKernels && chain.size() >= st.o.maxGroupKernels) {
    why = "the chain has " + std::to_string(chain.size()) +
          " kernels, the most one group takes (FuseOptions::maxGroupKernels): the rest "
          "starts a new chain";
  } else {
    std::vector<uint32_t> next = chain;
    next.push_back(s);
    why = st.checker.whyNot(next);
    if (why.empty()) why = rangeWhyNot(g, st.ex, next, st.groupFree);
    if (why.empty()) why = costWhyNot(g, st.ex, next);
    if (why.empty() && !st.o.autoLinear) why = linearCostWhyNot(g, st.ex, next, st.groupFree);
  }
  return why;
}

// The chain from node n (`pos`: execution order positions; `inChain` marks are cleared
// before it returns). A note says why it ends.
std::vector<uint32_t> growChain(FuseState &st, uint32_t n, const std::vector<uint32_t> &pos,
                                std::vector<bool> &inChain) {
  const Graph &g = st.g;
  std::vector<uint32_t> chain{n};
  inChain[n] = true;
  for (;;) {
    uint32_t last = chain.back();
    std::vector<uint32_t> succ = st.adj.succ[last];
    std::sort(succ.begin(), succ.end(), [&](uint32_t a, uint32_t b) { return pos[a] < pos[b]; });
    succ.erase(std::unique(succ.begin(), succ.end()), succ.end());
    if (succ.empty()) break;
    uint32_t s = succ.front();
    std::string why = whyNotTake(st, chain, s, inChain);
    if (!why.empty()) {
      st.rep.remarks.push_back(
          {Remark::Note, join(g, chain), "chain ends before '" + g.nodes[s].name + "': " + why});
      break;
    }
    chain.push_back(s);
    inChain[s] = true;
  }
  for (uint32_t c : chain)
    inChain[c] = false;
  return chain;
}

// The chain in parts, cut where a kernel would read another work-item's results (a
// note per cut); none, with a remark, where the chain cannot be analysed.
std::vector<std::vector<uint32_t>> cutChain(FuseState &st, const std::vector<uint32_t> &chain) {
  const Graph &g = st.g;
  Expected<std::vector<Cut>> cuts = chainCuts(
      plan(g, chain, st.o, st.newNames, nullptr, {}, st.groupFree, st.users, st.scratch, st.ex)
          .req);
  if (!cuts) {
    st.rep.remarks.push_back(
        {Remark::Refused, join(g, chain), "cannot analyse the chain: " + cuts.error().message()});
    return {};
  }
  std::vector<std::vector<uint32_t>> parts(1);
  size_t next = 0;
  for (uint32_t i = 0; i < chain.size(); ++i) {
    if (next < cuts->size() && (*cuts)[next].at == i) {
      st.rep.remarks.push_back(
          {Remark::Note, join(g, chain),
           "chain cut before '" + g.nodes[chain[i]].name + "': " + (*cuts)[next].reason +
               ": a work-group barrier cannot order work-items of different work-groups"});
      parts.emplace_back();
      ++next;
    }
    parts.back().push_back(chain[i]);
  }
  return parts;
}

// Each part of two or more kernels fused; a part whose fused kernel has a hazard is
// tried again with the nodes before it.
void fuseParts(FuseState &st, const std::vector<std::vector<uint32_t>> &parts) {
  const Graph &g = st.g;
  for (const std::vector<uint32_t> &part : parts) {
    // the parts run in chain order; each is a legal group (a piece of a legal chain)
    std::vector<uint32_t> chain = part;
    if (chain.size() >= 2 && parts.size() > 1) {
      std::string why = st.checker.whyNot(chain);
      if (why.empty()) why = rangeWhyNot(g, st.ex, chain, st.groupFree);
      if (!why.empty()) {
        st.rep.remarks.push_back({Remark::Refused, join(g, chain), why});
        continue;
      }
    }
    while (chain.size() >= 2) {
      uint32_t keep = tryFuse(st, chain, true, nullptr, {});
      if (keep < 2 || keep >= chain.size()) break;
      chain.resize(keep);
      st.rep.remarks.push_back(
          {Remark::Note, join(g, chain),
           "trying the chain without the nodes after '" + g.nodes[chain.back()].name + "'"});
    }
  }
}

} // namespace

void fuseChains(FuseState &st) {
  const Graph &g = st.g;
  const std::vector<uint32_t> &order = st.order;
  std::vector<uint32_t> pos(g.nodes.size());
  for (uint32_t i = 0; i < order.size(); ++i)
    pos[order[i]] = i;
  std::vector<bool> inChain(g.nodes.size(), false); // cleared after each chain
  for (uint32_t n : order) {
    if (st.taken[n] || g.nodes[n].kind != NodeKind::Kernel) continue;
    std::vector<uint32_t> chain = growChain(st, n, pos, inChain);
    if (chain.size() < 2) continue;
    // cut the chain where a kernel would read another work-item's results, then fuse
    // each part of two or more kernels
    fuseParts(st, cutChain(st, chain));
  }
}

} // namespace detail
} // namespace fusion
} // namespace cgraph
