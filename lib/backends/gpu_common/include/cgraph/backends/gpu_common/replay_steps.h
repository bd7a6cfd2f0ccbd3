// The replay steps the CUDA and HIP executables share, as templates over the backend's
// partition, plan and launch records and driver calls (lambdas that make the one typed
// driver call: cuGraphAddKernelNode / hipGraphAddKernelNode, ...):
//   - initTable: the slot/param table's first contents (owned slots' addresses,
//     parameter defaults, the placeholders of stored expressions);
//   - updateParamRanges: nd-ranges that read parameters recomputed, and only the kernel
//     nodes whose launch changed set again on the instantiated graph;
// Ownership: the callers' records; nothing is kept. Thread-safety: as the executable
// calling them (one thread at a time). Failure modes: the first Error a callback
// returns, unchanged.
#pragma once

#include "cgraph/error.h"
#include "cgraph/model.h"
#include "cgraph/runtime/host_tasks.h"

#include <cstdint>
#include <cstring>
#include <vector>

namespace cgraph::gpu {

// table = [slots | params | one int64 per stored expression]; slotLength per slot.
// `owned(s, &address, &bytes)` says whether slot s is runtime-owned and where.
template <class Owned>
void initTable(const Graph &g, Owned owned, std::vector<uint64_t> &table,
               std::vector<uint64_t> &slotLength, uint32_t &nSlots, uint32_t &nParams) {
  nSlots = uint32_t(g.slots.size());
  // Parameters, then one int64 per stored expression (the runtime evaluates them per
  // submission; the graph reads them as parameters g.params.size() + e).
  nParams = uint32_t(g.params.size() + g.exprs.size());
  table.assign(nSlots + nParams, 0);
  slotLength.assign(nSlots, 0);
  for (uint32_t s = 0; s < nSlots; ++s) {
    uint64_t address = 0, bytes = 0;
    if (owned(s, &address, &bytes)) {
      table[s] = address;
      slotLength[s] = bytes;
    }
  }
  for (uint32_t p = 0; p < g.params.size(); ++p)
    table[nSlots + p] = g.params[p].defaultBits;
  // Until the first submission an expression holds the placeholder cgc stored.
  for (size_t e = 0; e < g.exprs.size(); ++e) {
    const FieldExpr &fe = g.exprs[e];
    if (fe.node >= g.nodes.size()) continue; // a slot size (node kNone): no placeholder
    const Node &node = g.nodes[fe.node];
    const uint16_t f = uint16_t(fe.field);
    uint64_t v = 0;
    if (f <= 8)
      v = (f < 3 ? node.range.global : f < 6 ? node.range.local : node.range.offset)[f % 3].value;
    else if (fe.field == ExprField::ScalarArg && fe.arg < node.args.size())
      v = node.args[fe.arg].value;
    table[nSlots + g.params.size() + e] = v;
  }
}

// Parts: records with `kernelNodes` (node index, graph node) pairs; plans[n] has
// `paramRange` and `launch` (vals, grid, block). `recompute(n, params, launch)` plans the
// range again; `set(part, graphNode, n, launch)` updates the instantiated graph.
template <class Parts, class Plans, class Recompute, class Set>
Error updateParamRanges(const std::vector<uint64_t> &params, std::vector<uint64_t> &rangeParams,
                        bool &resolved, Parts &parts, Plans &plans, Recompute recompute, Set set) {
  if (resolved && params == rangeParams) return Error::success();
  resolved = true;
  rangeParams = params;
  for (auto &pg : parts)
    for (auto &kn : pg.kernelNodes) {
      auto &p = plans[kn.first];
      if (!p.paramRange) continue;
      auto before = p.launch;
      CGRAPH_RETURN_IF_ERROR(recompute(kn.first, params, p.launch));
      if (std::memcmp(before.grid, p.launch.grid, sizeof(before.grid)) == 0 &&
          std::memcmp(before.block, p.launch.block, sizeof(before.block)) == 0 &&
          before.vals == p.launch.vals)
        continue;
      CGRAPH_RETURN_IF_ERROR(set(pg, kn.second, kn.first, p.launch));
    }
  return Error::success();
}

} // namespace cgraph::gpu
