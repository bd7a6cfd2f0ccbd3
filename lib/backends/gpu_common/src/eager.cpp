// The GPU executable's eager path (graph_executable.h): one node at a time on the
// stream, for eager executables and for the host partitions of replay ones.
#include "cgraph/backends/gpu_common/graph_executable.h"

#include "cgraph/backends/gpu_common/launch_plan.h"

namespace cgraph::gpu {

Error GraphExecutable::runExtensionEager(uint32_t p, const std::vector<uint64_t> &) {
  return makeError(ErrorCode::Internal, planLabel(p) + ": no eager form of this node");
}

Error GraphExecutable::runHost(uint32_t n, const std::vector<uint64_t> &params) {
  if (!hostStaging_) // pinned blocks: the copies need no driver-side staging of their own
    hostStaging_ = std::make_unique<rt::HostStaging>([this](size_t bytes) { return sharedPinned(bytes); });
  return rt::runStagedHostTask(
      graph_, n, nSlots_, *hostTasks_, params, *hostStaging_, [&](uint32_t slot) { return slotLength_[slot]; },
      [&]() { return driver_->streamSynchronize(); },
      [&](void *dst, uint32_t slot, size_t bytes) { return driver_->copyToHost(dst, slotBase(slot), bytes); },
      [&](uint32_t slot, const void *src, size_t bytes) { return driver_->copyToDevice(slotBase(slot), src, bytes); });
}

Error GraphExecutable::runNodeEager(uint32_t n, const std::vector<uint64_t> &params) {
  if (!nodeEnabled(n)) return Error::success(); // disabled: its edges still order
  const Node &node = graph_.nodes[n];
  NodePlan &p = plans_[n];
  if (node.kind == NodeKind::Host) return runHost(n, params); // HostTasks' errors name the node
  if (p.kind == NodePlan::Extension) return runExtensionEager(n, params);
  if (p.kind != NodePlan::Kernel) return Error::success();
  if (node.kind == NodeKind::Kernel && p.paramRange) CGRAPH_RETURN_IF_ERROR(rangeOf(n, params, p.launch));
  if (p.exprTransfer) patchTransfer(n, transfer(n, params));
  Copy3D c3;
  Memset ms;
  Error e;
  if (p.exprTransfer)
    e = launchEager(n, p.launch);
  else if ((node.kind == NodeKind::Copy || node.kind == NodeKind::CopyRect) &&
      copy3DFor(node, slotBase(node.copy.srcSlot), slotBase(node.copy.dstSlot), c3))
    e = driver_->memcpy3D(c3);
  else if (node.kind == NodeKind::Fill && memsetFor(node.fill, slotBase(node.fill.slot), ms))
    e = driver_->memset(ms);
  else
    e = launchEager(n, p.launch);
  if (e) return std::move(e).withContext(planLabel(n));
  return Error::success();
}

} // namespace cgraph::gpu
