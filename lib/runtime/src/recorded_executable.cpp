// The part of the recorded executables that does not depend on the backend's recording
// type: preparation (partition plan, host tasks, owned slots), the current slots and
// kernel arguments.
#include "cgraph/runtime/recorded_executable.h"

#include "cgraph/graph/labels.h"

#include <algorithm>

namespace cgraph::rt {

RecordedExecutableBase::RecordedExecutableBase(Device &device, Graph flattened, ExecMode mode,
                                               const Config &config)
    : Executable(device, std::move(flattened), mode), config_(config) {}

Error RecordedExecutableBase::prepare(const FinalizeOptions &opts) {
  planPartitions();
  CGRAPH_RETURN_IF_ERROR(prepareDevice(opts));
  CGRAPH_RETURN_IF_ERROR(prepareHostTasks(opts.host));
  auto owned = allocateOwnedSlots(opts.host, config_.ownedAlignment, opts.planMemory);
  if (!owned) return owned.error();
  owned_ = std::move(*owned);
  return Error::success();
}

void RecordedExecutableBase::planPartitions() {
  // The graph's stored partitions (flattenSubgraphs checked or computed them): one
  // recorded list each, or a host task between them. Inside a partition the graph's
  // edges order the recorded commands; a partition starts after the earlier ones
  // completed, so edges between partitions need nothing recorded.
  std::vector<uint32_t> partOf(graph_.nodes.size(), 0);
  parts_.clear();
  for (uint32_t p = 0; p < graph_.partitions.size(); ++p) {
    const Partition &part = graph_.partitions[p];
    const bool host = part.nodes.size() == 1 && graph_.nodes[part.nodes[0]].kind == NodeKind::Host;
    parts_.push_back({part.nodes, host});
    for (uint32_t n : part.nodes)
      partOf[n] = p;
  }
  partPreds_.assign(graph_.nodes.size(), {});
  hasPartSucc_.assign(graph_.nodes.size(), 0);
  for (const Edge &e : graph_.edges)
    if (partOf[e.from] == partOf[e.to]) {
      partPreds_[e.to].push_back(e.from);
      hasPartSucc_[e.from] = 1;
    }
}

Error RecordedExecutableBase::prepareHostTasks(const HostPolicy &policy) {
  const bool anyHost = std::any_of(graph_.nodes.begin(), graph_.nodes.end(),
                                   [](const Node &n) { return n.kind == NodeKind::Host; });
  if (!anyHost) return Error::success();
  auto h = HostTasks::prepare(graph_, policy);
  if (!h) return h.error();
  hostTasks_ = std::move(*h);
  return Error::success();
}

std::vector<bool> RecordedExecutableBase::kernelsUsed() const {
  std::vector<bool> used(graph_.kernels.size(), false);
  for (const Node &n : graph_.nodes) {
    if (n.kind == NodeKind::Kernel) used[n.kernel] = true;
    for (uint32_t k : n.alternatives)
      used[k] = true; // an update may switch to it
  }
  return used;
}

void RecordedExecutableBase::resolveSlots(const std::vector<ResolvedSlot> &slots) {
  mems_.resize(graph_.slots.size());
  forEachSlotStorage(slots, owned_, [&](size_t i, Buffer *b, uint64_t offset, uint64_t length) {
    mems_[i] = b ? SlotMem{b, offset, length, b->serial()} : SlotMem{};
  });
}

Expected<RecordedExecutableBase::KernelArg>
RecordedExecutableBase::kernelArg(uint32_t n, uint32_t i,
                                  const std::vector<uint64_t> &params) const {
  const Node &node = graph_.nodes[n];
  const Kernel &kern = graph_.kernels[node.kernel];
  const Arg &a = node.args[i];
  auto fail = [&](const std::string &what) {
    return makeError(nodeLabel(graph_, n) + ": arg " + std::to_string(i) + ": " + what);
  };
  KernelArg out;
  switch (a.kind) {
  case ArgKind::Slot: {
    const SlotMem &m = mems_[a.index];
    if (!m.buffer) return fail("slot is unbound");
    if (m.length && a.value >= m.length)
      return fail("offset " + std::to_string(a.value) + " is past the bound range");
    out.kind = KernelArg::Slot;
    out.slot = &m;
    out.offset = a.value;
    return out;
  }
  case ArgKind::Scalar:
  case ArgKind::Param: {
    out.bits = a.kind == ArgKind::Scalar ? a.value : params[a.index];
    // A Param index past graph_.params is a stored expression (Executable appends their
    // values to the parameters); its Arg keeps the argument's own type.
    const uint32_t psize = i < kern.params.size() ? kern.params[i].size : 0;
    out.size = psize ? psize
                     : scalarSize(a.kind == ArgKind::Param && a.index < graph_.params.size()
                                      ? graph_.params[a.index].type
                                      : a.type);
    if (out.size > 8)
      return fail("by-value argument of " + std::to_string(out.size) +
                  " bytes is wider than a scalar");
    return out;
  }
  case ArgKind::LocalMem:
    out.kind = KernelArg::Local;
    out.size = a.value;
    return out;
  case ArgKind::String:
    break;
  }
  return fail("string argument for a kernel");
}

Error RecordedExecutableBase::waitOnHost(Event &e) {
  return e.wait().withContext("waiting for a prior submission");
}

} // namespace cgraph::rt
