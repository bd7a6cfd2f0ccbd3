// Internal to lib/runtime: what the Executable's sources share (runtime.cpp: finalize
// state and enqueue; enqueue_validation.cpp; stored_exprs.cpp; updates.cpp).
#pragma once

#include "cgraph/graph/labels.h"
#include "cgraph/runtime/runtime.h"

#include <algorithm>
#include <cstdint>
#include <string>

namespace cgraph::rt::detail {

// "backend (device name)", as messages name a device.
inline std::string deviceLabel(const Device &d) {
  const DeviceInfo &info = d.info();
  return info.backend + " (" + info.name + ")";
}

// Node `n`'s nd-range against the device's limits; `value` gives a dimension's value.
template <typename V>
Error checkNodeRange(const Graph &graph_, uint32_t n, const Capabilities &caps, V value) {
  const Node &node = graph_.nodes[n];
  const NDRange &r = node.range;
  auto where = [&] { return nodeLabel(graph_, n); }; // only for an error
  const bool hasLocal = r.hasLocal();
  const uint32_t dims = std::min<uint32_t>(r.dims, 3);
  uint64_t items = 1, total = 1;
  bool wrapped = false;
  for (uint32_t d = 0; d < dims; ++d) {
    const uint64_t g = value(r.global[d]), off = value(r.offset[d]);
    if (g == 0)
      return makeError(where() + ": global size in dimension " + std::to_string(d) + " is 0");
    // Backends count work-items and global ids in 64 bits: neither may wrap (at most
    // 2^63 - 1 work-items in all, no id past 2^64 - 1), as validation has it for
    // literal ranges.
    uint64_t end;
    if (__builtin_add_overflow(off, g, &end))
      return makeError(where() + ": offset " + std::to_string(off) + " + global size " +
                       std::to_string(g) + " in dimension " + std::to_string(d) +
                       " overflows 64 bits");
    wrapped = wrapped || __builtin_mul_overflow(total, g, &total);
    if (wrapped || total > uint64_t(INT64_MAX)) {
      std::string sizes;
      for (uint32_t k = 0; k < dims; ++k)
        sizes += (k ? "," : "") + std::to_string(value(r.global[k]));
      return makeError(where() + ": global size (" + sizes +
                       ") has more than 2^63 - 1 work-items in all");
    }
    if (!hasLocal) continue;
    const uint64_t l = value(r.local[d]);
    if (l == 0)
      return makeError(where() + ": local size in dimension " + std::to_string(d) + " is 0");
    items = l > (~uint64_t(0)) / items ? ~uint64_t(0) : items * l;
  }
  if (!hasLocal) return Error::success();
  if (caps.maxWorkGroupSize && items > caps.maxWorkGroupSize)
    return makeError(where() + ": work-group of " + std::to_string(items) +
                     " work-items is larger than the device's maximum of " +
                     std::to_string(caps.maxWorkGroupSize));
  if (!caps.nonUniformWorkGroups)
    for (uint32_t d = 0; d < dims; ++d) {
      const uint64_t g = value(r.global[d]), l = value(r.local[d]);
      if (g % l != 0)
        return makeError(where() + ": local size " + std::to_string(l) +
                         " does not divide global size " + std::to_string(g) + " in dimension " +
                         std::to_string(d) + " (the device needs uniform work-groups)");
    }
  return Error::success();
}

} // namespace cgraph::rt::detail
