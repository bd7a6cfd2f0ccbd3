// Small graph fixtures shared by the graph tests.
#pragma once

#include <cgraph/graph/builder.h>

#include <algorithm>
#include <set>
#include <utility>
#include <vector>

namespace cgraph::test {

using EdgeSet = std::set<std::pair<uint32_t, uint32_t>>;

EdgeSet edgeSet(const Graph &g);
Slot slot(const std::string &name, uint64_t size, SlotInit init = SlotInit::External);
KernelParam bufferParam(const std::string &name, bool isConst = false);
KernelParam scalarParam(const std::string &name, const std::string &type, uint32_t size);
// Adds module "m.cl" and kernel `name` with the given params; returns the kernel index.
uint32_t addKernel(GraphBuilder &b, const std::string &name, std::vector<KernelParam> params);
Graph kernelOnly(const std::string &name, std::vector<KernelParam> params);
uint32_t f32Bits(float f);
// Slot::size of every slot, in slot order.
std::vector<uint64_t> slotSizes(const Graph &g);

} // namespace cgraph::test
