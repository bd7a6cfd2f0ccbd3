// Finalizing a graph for a device, and the storage of the slots the graph owns.
#include "internal.h"

#include "cgraph/runtime/slot_init.h"

#include <filesystem>

namespace cgraph::capi {

namespace {

rt::FinalizeOptions finalizeOptions(const cgraph_finalize_options &o) {
  rt::FinalizeOptions f;
  f.mode = o.mode == CGRAPH_MODE_EAGER ? rt::ExecMode::Eager : rt::ExecMode::Replay;
  f.useCache = o.use_cache != 0;
  f.planMemory = o.plan_memory != 0;
  f.communicator = o.communicator ? o.communicator->comm.get() : nullptr;
  f.collectiveTimeout = std::chrono::milliseconds(int64_t(std::min<uint64_t>(o.collective_timeout_ms, INT64_MAX / 2)));
  std::error_code ec;
  const std::string dir =
      o.base_dir ? std::string(o.base_dir) : std::filesystem::current_path(ec).string();
  f.host.baseDir = dir;
  f.host.allowedDirs = {dir};
  return f;
}

// Allocates and initializes the graph-owned slots the C API binds itself (every owned
// slot but those sized by a parameter expression, which the runtime grows per
// submission, and transient ones, which the runtime keeps and may share between slots
// through its memory plan).
Error allocateOwned(cgraph_executable_s &x, const rt::HostPolicy &policy) {
  Graph slotsOnly;
  slotsOnly.slots = x.graph.slots;
  std::vector<uint64_t> minSizes(x.slots.size());
  for (size_t s = 0; s < x.slots.size(); ++s) {
    minSizes[s] = x.slots[s].size;
    if (x.slots[s].sizeExpr || slotsOnly.slots[s].init == SlotInit::Transient)
      slotsOnly.slots[s].init = SlotInit::External;
  }
  auto owned = rt::allocateOwnedSlots(*x.device, slotsOnly, minSizes, policy);
  if (!owned) return owned.error();
  x.owned.resize(owned->size());
  for (size_t s = 0; s < owned->size(); ++s)
    x.owned[s] = std::move((*owned)[s]);
  for (Slot &s : x.graph.slots)
    s.data.clear(); // initial contents are in the buffers now
  return Error::success();
}

// The owned buffer of `slot` with [offset, offset+bytes) inside it, or an error status.
cgraph_status ownedRange(cgraph_executable exe, uint32_t slot, uint64_t offset, uint64_t bytes,
                         rt::Buffer **out) {
  if (slot >= exe->slots.size())
    return fail(CGRAPH_ERROR_INVALID, "slot index " + std::to_string(slot) +
                                          " is out of range (the graph has " +
                                          std::to_string(exe->slots.size()) + " slots)");
  const std::string label = slotLabel(exe->graph, slot);
  if (exe->slots[slot].external)
    return fail(CGRAPH_ERROR_INVALID, label + " is external: the caller's bound memory holds it");
  rt::Buffer *b = exe->owned[slot].get();
  if (!b && exe->graph.slots[slot].init == SlotInit::Transient)
    return fail(CGRAPH_ERROR_UNSUPPORTED, label + " is transient: its contents are not kept between "
                                                  "submissions; make the slot external to read or write it");
  if (!b)
    return fail(CGRAPH_ERROR_UNSUPPORTED,
                label + ": its size is a parameter expression; it cannot be read");
  if (offset > b->size() || bytes > b->size() - offset)
    return fail(CGRAPH_ERROR_INVALID, label + ": " + std::to_string(bytes) + " bytes at offset " +
                                          std::to_string(offset) + " are past its end (" +
                                          std::to_string(b->size()) + " bytes)");
  *out = b;
  return CGRAPH_OK;
}

} // namespace

} // namespace cgraph::capi

using namespace cgraph;
using capi::fail;
using capi::guard;
using capi::nullArgument;

extern "C" {

cgraph_finalize_options cgraph_finalize_options_default(void) {
  return cgraph_finalize_options{CGRAPH_MODE_REPLAY, 1, nullptr, 1, nullptr, 60000};
}

cgraph_status cgraph_finalize(cgraph_device device, cgraph_graph graph,
                              const cgraph_finalize_options *options, cgraph_executable *out) {
  return cgraph_finalize_progress(device, graph, options, nullptr, nullptr, out);
}

cgraph_status cgraph_finalize_progress(cgraph_device device, cgraph_graph graph,
                                       const cgraph_finalize_options *options, cgraph_progress_fn progress,
                                       void *user, cgraph_executable *out) {
  return guard([&] {
    if (!out) return nullArgument("out");
    *out = nullptr;
    if (!device) return nullArgument("device");
    if (!graph) return nullArgument("graph");
    rt::FinalizeOptions opts = capi::finalizeOptions(options ? *options : cgraph_finalize_options_default());
    if (progress)
      opts.progress = [progress, user](const char *phase, uint64_t done, uint64_t total) {
        progress(phase, done, total, user);
      };
    auto x = std::make_unique<cgraph_executable_s>();
    if (options && options->communicator) x->comm = options->communicator->comm;
    x->device = device->device;
    x->graph.name = graph->graph.name;
    x->graph.slots = graph->graph.slots;
    x->graph.params = graph->graph.params;
    x->slots = graph->slots;
    Expected<std::unique_ptr<rt::Executable>> exe = x->device->finalize(graph->graph, opts);
    if (!exe) return fail(exe.error());
    x->exe = std::move(*exe);
    if (Error e = capi::allocateOwned(*x, opts.host)) return fail(e);
    *out = x.release();
    return CGRAPH_OK;
  });
}

void cgraph_executable_release(cgraph_executable exe) {
  delete exe;
}

cgraph_status cgraph_slot_read(cgraph_executable exe, uint32_t slot, uint64_t offset, void *dst,
                               uint64_t bytes) {
  return guard([&] {
    if (!exe) return nullArgument("exe");
    if (!dst && bytes) return nullArgument("dst");
    rt::Buffer *b = nullptr;
    if (cgraph_status st = capi::ownedRange(exe, slot, offset, bytes, &b)) return st;
    return fail(exe->device->read(*b, offset, dst, bytes));
  });
}

cgraph_status cgraph_slot_write(cgraph_executable exe, uint32_t slot, uint64_t offset,
                                const void *src, uint64_t bytes) {
  return guard([&] {
    if (!exe) return nullArgument("exe");
    if (!src && bytes) return nullArgument("src");
    rt::Buffer *b = nullptr;
    if (cgraph_status st = capi::ownedRange(exe, slot, offset, bytes, &b)) return st;
    return fail(exe->device->write(*b, offset, src, bytes));
  });
}

cgraph_status cgraph_executable_memory(cgraph_executable exe, uint64_t *owned_bytes, uint32_t *plan_slots,
                                       uint64_t *plan_bytes_before, uint64_t *plan_bytes_after) {
  return guard([&] {
    if (!exe) return nullArgument("exe");
    uint64_t own = exe->exe->ownedBytes();
    for (const auto &b : exe->owned)
      if (b) own += b->size();
    const MemoryPlan &p = exe->exe->memoryPlan();
    if (owned_bytes) *owned_bytes = own;
    if (plan_slots) *plan_slots = p.slots;
    if (plan_bytes_before) *plan_bytes_before = p.bytesBefore;
    if (plan_bytes_after) *plan_bytes_after = p.bytesAfter;
    return CGRAPH_OK;
  });
}

} // extern "C"
