// The executable graph: preparation (modules, kernels, fill sources), kernel state and
// the recordings, regular command lists per binding set: a recorded launch captures its
// arguments and group counts when it is appended, and loader 1.8's headers have no
// mutable command list extension to change them afterwards
// (cgraph/runtime/recorded_executable.h says why that needs them).
#include "exec.h"

#include "cgraph/runtime/finalize_progress.h"

#include <algorithm>
#include <cstring>

namespace cgraph::level_zero {

namespace {

bool nativeFill(const FillOp &f, uint64_t maxPattern) {
  const size_t n = f.pattern.size();
  return n != 0 && (n & (n - 1)) == 0 && n <= maxPattern;
}

} // namespace

Recording::~Recording() {
  for (Segment &s : segments)
    if (s.list) ze->zeCommandListDestroy(s.list);
  for (ze_event_handle_t e : events)
    ze->zeEventDestroy(e);
  if (pool) ze->zeEventPoolDestroy(pool);
}

LevelZeroExecutable::LevelZeroExecutable(LevelZeroDevice &device, Graph flattened,
                                         rt::ExecMode mode)
    : RecordedExecutable(device, std::move(flattened), mode,
                         Config{64, device.options().maxRecordings, true}),
      dev_(&device), ze_(&device.ze()) {}

LevelZeroExecutable::~LevelZeroExecutable() {
  if (previous_) (void)previous_->wait(); // its failure was reported through its event
  recordings_.clear();
  for (ze_kernel_handle_t k : kernels_)
    if (k) ze_->zeKernelDestroy(k);
  kernels_.clear();
  modules_.clear();
}

Error LevelZeroExecutable::prepareDevice(const rt::FinalizeOptions &opts) {
  // Modules (validated SPIR-V) and one kernel handle per graph kernel a node launches
  // or may launch after an update.
  const std::vector<bool> used = kernelsUsed();
  rt::ModuleProgress progress(opts, graph_.modules.size());
  kernels_.assign(graph_.kernels.size(), nullptr);
  offsetSet_.assign(graph_.kernels.size(), 0);
  std::vector<std::shared_ptr<const Module>> byModule(graph_.modules.size());
  for (size_t k = 0; k < graph_.kernels.size(); ++k) {
    if (!used[k]) continue;
    const Kernel &kern = graph_.kernels[k];
    auto &mod = byModule[kern.module];
    if (!mod) {
      auto m = dev_->buildModule(graph_.modules[kern.module], opts.useCache);
      if (!m) return m.error();
      mod = *m;
      modules_.push_back(mod);
      progress.ready(kern.module);
    }
    ze_kernel_desc_t kd{};
    kd.stype = ZE_STRUCTURE_TYPE_KERNEL_DESC;
    kd.pKernelName = kern.name.c_str();
    ze_result_t rc = ze_->zeKernelCreate(mod->module, &kd, &kernels_[k]);
    if (rc != ZE_RESULT_SUCCESS) {
      kernels_[k] = nullptr;
      return zeError("zeKernelCreate", rc).withContext("kernel '" + kern.name + "'");
    }
  }
  // Fills the device cannot do natively: copied from a buffer holding the result.
  fillSources_.resize(graph_.nodes.size());
  for (uint32_t n = 0; n < graph_.nodes.size(); ++n) {
    const Node &node = graph_.nodes[n];
    if (node.kind != NodeKind::Fill || nativeFill(node.fill, dev_->props().maxFillPatternSize))
      continue;
    const FillOp &f = node.fill;
    if (f.pattern.empty() || f.bytes == 0) continue;
    std::vector<uint8_t> bytes(size_t(f.bytes));
    for (size_t i = 0; i < bytes.size(); ++i)
      bytes[i] = f.pattern[i % f.pattern.size()];
    auto b = dev_->allocate(f.bytes, 64);
    if (!b) return b.error().withContext(nodeLabel(graph_, n) + ": fill source");
    CGRAPH_RETURN_IF_ERROR(
        dev_->write(**b, 0, bytes.data(), bytes.size()).withContext(nodeLabel(graph_, n)));
    fillSources_[n] = std::move(*b);
  }
  return Error::success();
}

Error LevelZeroExecutable::setKernel(uint32_t n, const std::vector<uint64_t> &params,
                                     ze_group_count_t &groups) {
  const Node &node = graph_.nodes[n];
  const Kernel &kern = graph_.kernels[node.kernel];
  ze_kernel_handle_t k = kernels_[node.kernel];
  const std::string where = nodeLabel(graph_, n);
  // Arguments: device pointers (the slot's bound address + the argument's offset),
  // scalar bits, __local sizes.
  for (uint32_t i = 0; i < node.args.size(); ++i) {
    Expected<KernelArg> a = kernelArg(n, i, params);
    if (!a) return a.error();
    ze_result_t rc = ZE_RESULT_SUCCESS;
    switch (a->kind) {
    case KernelArg::Slot: {
      void *p = ptrOf(*a->slot) + a->offset;
      rc = ze_->zeKernelSetArgumentValue(k, i, sizeof(void *), &p);
      break;
    }
    case KernelArg::Value:
      rc = ze_->zeKernelSetArgumentValue(k, i, size_t(a->size), &a->bits);
      break;
    case KernelArg::Local:
      rc = ze_->zeKernelSetArgumentValue(k, i, size_t(a->size), nullptr);
      break;
    }
    if (rc != ZE_RESULT_SUCCESS)
      return zeError("zeKernelSetArgumentValue", rc)
          .withContext(where + ": arg " + std::to_string(i));
  }
  // Sizes: Level Zero launches whole groups (group size x group count).
  auto val = [&](const Dim &d) { return d.param != kNone ? params[d.param] : d.value; };
  uint64_t global[3] = {1, 1, 1}, local[3] = {1, 1, 1}, offset[3] = {0, 0, 0};
  const uint32_t dims = node.range.dims;
  for (uint32_t d = 0; d < dims; ++d) {
    global[d] = val(node.range.global[d]);
    local[d] = val(node.range.local[d]);
    offset[d] = val(node.range.offset[d]);
  }
  for (uint32_t d = 0; d < 3; ++d)
    if (global[d] > UINT32_MAX || offset[d] > UINT32_MAX)
      return makeError(where + ": global size or offset in dimension " + std::to_string(d) +
                       " exceeds Level Zero's 32-bit range");
  if (!node.range.hasLocal()) {
    if (kern.reqdLocal[0] != 0) {
      for (uint32_t d = 0; d < 3; ++d)
        local[d] = kern.reqdLocal[d] ? kern.reqdLocal[d] : 1;
    } else {
      uint32_t s[3] = {1, 1, 1};
      ze_result_t rc = ze_->zeKernelSuggestGroupSize(k, uint32_t(global[0]), uint32_t(global[1]),
                                                     uint32_t(global[2]), &s[0], &s[1], &s[2]);
      if (rc != ZE_RESULT_SUCCESS)
        return zeError("zeKernelSuggestGroupSize", rc).withContext(where);
      for (uint32_t d = 0; d < 3; ++d)
        local[d] = s[d];
    }
  } else {
    for (uint32_t d = dims; d < 3; ++d)
      local[d] = 1;
  }
  for (uint32_t d = 0; d < 3; ++d) {
    if (local[d] == 0 || global[d] % local[d] != 0)
      return makeError(where + ": group size " + std::to_string(local[d]) +
                       " does not divide global size " + std::to_string(global[d]) +
                       " in dimension " + std::to_string(d));
  }
  ze_result_t rc =
      ze_->zeKernelSetGroupSize(k, uint32_t(local[0]), uint32_t(local[1]), uint32_t(local[2]));
  if (rc != ZE_RESULT_SUCCESS) return zeError("zeKernelSetGroupSize", rc).withContext(where);
  groups.groupCountX = uint32_t(global[0] / local[0]);
  groups.groupCountY = uint32_t(global[1] / local[1]);
  groups.groupCountZ = uint32_t(global[2] / local[2]);
  // A global offset is kernel state: set it where asked, and back to zero for the next
  // launch of the same kernel without one.
  const bool anyOffset = offset[0] || offset[1] || offset[2];
  if (anyOffset || offsetSet_[node.kernel]) {
    if (!dev_->props().globalOffset)
      return makeError(where + ": a global offset needs the " +
                       std::string(ZE_GLOBAL_OFFSET_EXP_NAME) +
                       " extension, which this driver does not report");
    rc = ze_->zeKernelSetGlobalOffsetExp(k, uint32_t(offset[0]), uint32_t(offset[1]),
                                         uint32_t(offset[2]));
    if (rc != ZE_RESULT_SUCCESS)
      return zeError("zeKernelSetGlobalOffsetExp", rc).withContext(where);
    offsetSet_[node.kernel] = anyOffset;
  }
  return Error::success();
}

Error LevelZeroExecutable::appendNode(ze_command_list_handle_t list, uint32_t n,
                                      const std::vector<uint64_t> &params, ze_event_handle_t signal,
                                      const std::vector<ze_event_handle_t> &waits) {
  const Node &node = graph_.nodes[n];
  const uint32_t nWait = uint32_t(waits.size());
  ze_event_handle_t *w = waits.empty() ? nullptr : const_cast<ze_event_handle_t *>(waits.data());
  ze_result_t rc = ZE_RESULT_SUCCESS;
  const char *call = "";
  switch (node.kind) {
  case NodeKind::Kernel: {
    ze_group_count_t groups{};
    CGRAPH_RETURN_IF_ERROR(setKernel(n, params, groups));
    call = "zeCommandListAppendLaunchKernel";
    rc = ze_->zeCommandListAppendLaunchKernel(list, kernels_[node.kernel], &groups, signal, nWait,
                                              w);
    break;
  }
  case NodeKind::Copy: {
    const CopyOp &c = node.copy;
    call = "zeCommandListAppendMemoryCopy";
    rc = ze_->zeCommandListAppendMemoryCopy(list, ptrOf(mems_[c.dstSlot]) + c.dstOffset,
                                            ptrOf(mems_[c.srcSlot]) + c.srcOffset, size_t(c.bytes),
                                            signal, nWait, w);
    break;
  }
  case NodeKind::CopyRect: {
    const CopyOp &c = node.copy;
    const uint64_t vals[] = {c.region[0],     c.region[1],   c.region[2],    c.srcRowPitch,
                             c.srcSlicePitch, c.dstRowPitch, c.dstSlicePitch};
    for (uint64_t v : vals)
      if (v > UINT32_MAX)
        return makeError(nodeLabel(graph_, n) +
                         ": rectangular copy sizes exceed Level Zero's 32-bit range");
    // Origins stay zero: the slot offsets are folded into the base pointers.
    ze_copy_region_t src{
        0, 0, 0, uint32_t(c.region[0]), uint32_t(c.region[1]), uint32_t(c.region[2])};
    ze_copy_region_t dst = src;
    call = "zeCommandListAppendMemoryCopyRegion";
    rc = ze_->zeCommandListAppendMemoryCopyRegion(
        list, ptrOf(mems_[c.dstSlot]) + c.dstOffset, &dst, uint32_t(c.dstRowPitch),
        uint32_t(c.dstSlicePitch), ptrOf(mems_[c.srcSlot]) + c.srcOffset, &src,
        uint32_t(c.srcRowPitch), uint32_t(c.srcSlicePitch), signal, nWait, w);
    break;
  }
  case NodeKind::Fill: {
    const FillOp &f = node.fill;
    char *dst = ptrOf(mems_[f.slot]) + f.offset;
    if (fillSources_[n]) {
      call = "zeCommandListAppendMemoryCopy";
      rc = ze_->zeCommandListAppendMemoryCopy(
          list, dst, static_cast<LevelZeroBuffer &>(*fillSources_[n]).ptr(), size_t(f.bytes),
          signal, nWait, w);
    } else {
      call = "zeCommandListAppendMemoryFill";
      rc = ze_->zeCommandListAppendMemoryFill(list, dst, f.pattern.data(), f.pattern.size(),
                                              size_t(f.bytes), signal, nWait, w);
    }
    break;
  }
  default:
    return makeError(nodeLabel(graph_, n) + ": a " + std::string(nodeKindName(node.kind)) +
                     " node cannot be appended to a command list");
  }
  if (rc != ZE_RESULT_SUCCESS) return zeError(call, rc).withContext(nodeLabel(graph_, n));
  return Error::success();
}

Error LevelZeroExecutable::record(Recording &rec, const std::vector<uint64_t> &params,
                                  bool profile) {
  const DeviceProps &props = dev_->props();
  rec.profiled = profile;
  // Events carry the graph's edges inside a partition: one per recorded command that a
  // later command of its partition waits for; profiled, one per kernel node as well.
  auto needsEvent = [&](uint32_t n) {
    const NodeKind kind = graph_.nodes[n].kind;
    return nodeEnabled(n) && kind != NodeKind::Barrier &&
           (hasPartSucc_[n] || (profile && kind == NodeKind::Kernel));
  };
  uint32_t nEvents = 0;
  for (const PartPlan &plan : parts_)
    if (!plan.host)
      for (uint32_t n : plan.nodes)
        if (needsEvent(n)) ++nEvents;
  if (nEvents) {
    ze_event_pool_desc_t pd{};
    pd.stype = ZE_STRUCTURE_TYPE_EVENT_POOL_DESC;
    // Device-only events unless profiled: then the host reads the kernels' timestamps.
    pd.flags = profile ? ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP | ZE_EVENT_POOL_FLAG_HOST_VISIBLE : 0;
    pd.count = nEvents;
    ze_device_handle_t dev = props.device;
    CGRAPH_ZE_CHECK("zeEventPoolCreate",
                    ze_->zeEventPoolCreate(dev_->context(), &pd, 1, &dev, &rec.pool));
  }
  std::vector<std::vector<ze_event_handle_t>> done(graph_.nodes.size());
  ze_command_list_handle_t list = nullptr;
  std::vector<ze_event_handle_t> signalled; // in the open list
  auto closeList = [&]() -> Error {
    if (!list) return Error::success();
    if (!signalled.empty()) {
      // Every command has run (barrier), then the list's events are reset so that the
      // next execution of the list starts with none signalled.
      CGRAPH_ZE_CHECK("zeCommandListAppendBarrier",
                      ze_->zeCommandListAppendBarrier(list, nullptr, 0, nullptr));
      for (ze_event_handle_t e : signalled)
        CGRAPH_ZE_CHECK("zeCommandListAppendEventReset",
                        ze_->zeCommandListAppendEventReset(list, e));
    }
    signalled.clear();
    CGRAPH_ZE_CHECK("zeCommandListClose", ze_->zeCommandListClose(list));
    list = nullptr;
    return Error::success();
  };
  for (const PartPlan &plan : parts_) {
    if (plan.host) {
      CGRAPH_RETURN_IF_ERROR(closeList());
      Recording::Segment s;
      s.hostNode = plan.nodes[0];
      rec.segments.push_back(s);
      continue;
    }
    if (!list) {
      ze_command_list_desc_t ld{};
      ld.stype = ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC;
      ld.commandQueueGroupOrdinal = props.computeOrdinal;
      ld.flags = 0;
      Recording::Segment s;
      CGRAPH_ZE_CHECK("zeCommandListCreate",
                      ze_->zeCommandListCreate(dev_->context(), props.device, &ld, &s.list));
      rec.segments.push_back(s);
      list = s.list;
    } else {
      // Partitions run in index order: everything recorded so far completes first.
      CGRAPH_ZE_CHECK("zeCommandListAppendBarrier",
                      ze_->zeCommandListAppendBarrier(list, nullptr, 0, nullptr));
    }
    for (uint32_t n : plan.nodes) {
      // The predecessors' events, once each, in edge order (deterministic lists).
      std::vector<ze_event_handle_t> deps;
      for (uint32_t p : partPreds_[n])
        for (ze_event_handle_t e : done[p])
          if (std::find(deps.begin(), deps.end(), e) == deps.end()) deps.push_back(e);
      if (graph_.nodes[n].kind == NodeKind::Barrier || !nodeEnabled(n)) {
        done[n] = std::move(deps); // successors wait for what it waited for
        continue;
      }
      ze_event_handle_t signal = nullptr;
      if (needsEvent(n)) {
        ze_event_desc_t ed{};
        ed.stype = ZE_STRUCTURE_TYPE_EVENT_DESC;
        ed.index = uint32_t(rec.events.size());
        // Results visible to the waiting command; to the host too when profiled.
        ed.signal = profile ? ZE_EVENT_SCOPE_FLAG_HOST : ZE_EVENT_SCOPE_FLAG_DEVICE;
        ed.wait = ed.signal;
        CGRAPH_ZE_CHECK("zeEventCreate", ze_->zeEventCreate(rec.pool, &ed, &signal));
        rec.events.push_back(signal);
        if (!profile) signalled.push_back(signal); // profiled: reset by the host
        if (profile && graph_.nodes[n].kind == NodeKind::Kernel) rec.timed.push_back({n, signal});
        if (hasPartSucc_[n]) done[n].assign(1, signal);
      }
      CGRAPH_RETURN_IF_ERROR(appendNode(list, n, params, signal, deps));
    }
  }
  return closeList();
}

Expected<std::unique_ptr<Recording>>
LevelZeroExecutable::makeRecording(const std::vector<uint64_t> &params, bool profile) {
  // Eviction needs no wait: no submission is in flight (a submission starts after the
  // previous one ended).
  auto rec = std::make_unique<Recording>(*ze_);
  CGRAPH_RETURN_IF_ERROR(record(*rec, params, profile));
  return rec;
}

} // namespace cgraph::level_zero
