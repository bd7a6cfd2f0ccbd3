// Binding tables: caller memory or library buffers per external slot, parameter values.
#include "internal.h"

#include "cgraph/backends/cpu/cpu_backend.h"
#ifdef CGRAPH_CAPI_HAVE_CUDA
#include "cgraph/backends/cuda/cuda_backend.h"
#endif

namespace cgraph::capi {

namespace {

// INVALID unless `slot` is an external slot of the bindings' executable.
cgraph_status checkExternal(cgraph_bindings b, uint32_t slot) {
  const cgraph_executable_s &x = *b->exe;
  if (slot >= x.slots.size())
    return fail(CGRAPH_ERROR_INVALID, "slot index " + std::to_string(slot) +
                                          " is out of range (the graph has " +
                                          std::to_string(x.slots.size()) + " slots)");
  if (!x.slots[slot].external)
    return fail(CGRAPH_ERROR_INVALID,
                slotLabel(x.graph, slot) +
                    " is owned by the graph; read and write it with cgraph_slot_read/write");
  return CGRAPH_OK;
}

cgraph_status checkHostRange(cgraph_bindings b, uint32_t slot, const void *ptr, uint64_t bytes) {
  const cgraph_executable_s &x = *b->exe;
  const SlotMeta &m = x.slots[slot];
  const std::string label = slotLabel(x.graph, slot);
  if (!ptr) return fail(CGRAPH_ERROR_INVALID, label + ": host address is null");
  if (!m.sizeExpr && bytes < m.size)
    return fail(CGRAPH_ERROR_INVALID, label + ": " + std::to_string(bytes) +
                                          " bytes bound, the graph needs " +
                                          std::to_string(m.size));
  if (m.alignment > 1 && reinterpret_cast<uintptr_t>(ptr) % m.alignment)
    return fail(CGRAPH_ERROR_INVALID,
                label + ": host address is not a multiple of the slot's alignment " +
                    std::to_string(m.alignment));
  return CGRAPH_OK;
}

void setBinding(cgraph_bindings b, uint32_t slot, std::shared_ptr<rt::Buffer> buffer,
                uint64_t offset, uint64_t length, void *host) {
  b->table.slots[slot] = rt::Binding{buffer.get(), offset, length};
  b->keep[slot] = std::move(buffer);
  b->hostAddress[slot] = host;
}

cgraph_status setParamBits(cgraph_bindings b, uint32_t index, const Error &e, uint64_t bits) {
  if (e) return fail(e);
  b->params.bits[index] = bits;
  return CGRAPH_OK;
}

cgraph_status checkParamIndex(cgraph_bindings b, uint32_t index) {
  if (index < b->exe->graph.params.size()) return CGRAPH_OK;
  return fail(CGRAPH_ERROR_INVALID, "param index " + std::to_string(index) +
                                        " is out of range (the graph has " +
                                        std::to_string(b->exe->graph.params.size()) + " params)");
}

// The caller's memory at `address` as a buffer of `device`: host memory on cpu, device
// memory on cuda; Unsupported elsewhere.
Expected<std::unique_ptr<rt::Buffer>> wrapMemory(rt::Device &device, uint64_t address, uint64_t bytes) {
  const std::string backend = device.info().backend;
  if (backend == "cpu") return cpu::wrapHostMemory(device, reinterpret_cast<void *>(uintptr_t(address)), bytes);
#ifdef CGRAPH_CAPI_HAVE_CUDA
  if (backend == "cuda") return cuda::wrapDeviceMemory(device, address, bytes);
#endif
  return makeError(ErrorCode::Unsupported, "the " + backend + " backend cannot bind memory it did not allocate; "
                                           "copy into a cgraph_buffer instead");
}

cgraph_status findParam(cgraph_bindings b, const char *name, uint32_t *index) {
  if (!name) return nullArgument("name");
  *index = b->exe->graph.findParam(name);
  if (*index != kNone) return CGRAPH_OK;
  std::string known;
  for (const Param &p : b->exe->graph.params)
    known += (known.empty() ? "" : ", ") + p.name;
  return fail(CGRAPH_ERROR_INVALID, "graph has no param '" + std::string(name) + "' (" +
                                        (known.empty() ? std::string("it has none") : known) + ")");
}

} // namespace

} // namespace cgraph::capi

using namespace cgraph;
using capi::fail;
using capi::guard;
using capi::nullArgument;

extern "C" {

cgraph_status cgraph_bindings_create(cgraph_executable exe, cgraph_bindings *out) {
  return guard([&] {
    if (!out) return nullArgument("out");
    *out = nullptr;
    if (!exe) return nullArgument("exe");
    auto b = std::make_unique<cgraph_bindings_s>();
    b->exe = exe;
    const size_t n = exe->slots.size();
    b->table.slots.resize(n);
    b->table.overrideInternal = true; // owned slots: the executable's buffers below
    b->keep.resize(n);
    b->hostAddress.resize(n);
    for (size_t s = 0; s < n; ++s)
      if (s < exe->owned.size() && exe->owned[s])
        capi::setBinding(b.get(), uint32_t(s), exe->owned[s], 0, 0, nullptr);
    for (const Param &p : exe->graph.params)
      b->params.bits.push_back(p.defaultBits);
    *out = b.release();
    return CGRAPH_OK;
  });
}

void cgraph_bindings_release(cgraph_bindings bindings) {
  delete bindings;
}

cgraph_status cgraph_bind_host(cgraph_bindings bindings, uint32_t slot, void *ptr, uint64_t bytes) {
  return guard([&] {
    if (!bindings) return nullArgument("bindings");
    if (cgraph_status st = capi::checkExternal(bindings, slot)) return st;
    if (cgraph_status st = capi::checkHostRange(bindings, slot, ptr, bytes)) return st;
    const rt::Buffer *cur = bindings->keep[slot].get();
    if (cur && bindings->hostAddress[slot] == ptr && cur->size() == bytes) return CGRAPH_OK;
    auto wrapped = cpu::wrapHostMemory(*bindings->exe->device, ptr, bytes);
    if (!wrapped)
      return fail(wrapped.error().withContext(slotLabel(bindings->exe->graph, slot)));
    capi::setBinding(bindings, slot, std::shared_ptr<rt::Buffer>(std::move(*wrapped)), 0, 0, ptr);
    return CGRAPH_OK;
  });
}

cgraph_status cgraph_bind_device(cgraph_bindings bindings, uint32_t slot, uint64_t address, uint64_t bytes) {
  return guard([&] {
    if (!bindings) return nullArgument("bindings");
    if (cgraph_status st = capi::checkExternal(bindings, slot)) return st;
    void *ptr = reinterpret_cast<void *>(uintptr_t(address));
    if (cgraph_status st = capi::checkHostRange(bindings, slot, ptr, bytes)) return st;
    const rt::Buffer *cur = bindings->keep[slot].get();
    if (cur && bindings->hostAddress[slot] == ptr && cur->size() == bytes) return CGRAPH_OK;
    auto wrapped = capi::wrapMemory(*bindings->exe->device, address, bytes);
    if (!wrapped)
      return fail(wrapped.error().withContext(slotLabel(bindings->exe->graph, slot)));
    capi::setBinding(bindings, slot, std::shared_ptr<rt::Buffer>(std::move(*wrapped)), 0, 0, ptr);
    return CGRAPH_OK;
  });
}

cgraph_status cgraph_bind_buffer(cgraph_bindings bindings, uint32_t slot, cgraph_buffer buffer,
                                 uint64_t offset, uint64_t length) {
  return guard([&] {
    if (!bindings) return nullArgument("bindings");
    if (!buffer) return nullArgument("buffer");
    if (cgraph_status st = capi::checkExternal(bindings, slot)) return st;
    capi::setBinding(bindings, slot, buffer->buffer, offset, length, nullptr);
    return CGRAPH_OK;
  });
}

cgraph_status cgraph_unbind(cgraph_bindings bindings, uint32_t slot) {
  return guard([&] {
    if (!bindings) return nullArgument("bindings");
    if (cgraph_status st = capi::checkExternal(bindings, slot)) return st;
    capi::setBinding(bindings, slot, nullptr, 0, 0, nullptr);
    return CGRAPH_OK;
  });
}

void *cgraph_bound_address(cgraph_bindings bindings, uint32_t slot) {
  if (!bindings || slot >= bindings->hostAddress.size()) return nullptr;
  return bindings->hostAddress[slot];
}

cgraph_status cgraph_set_param_int(cgraph_bindings bindings, uint32_t index, int64_t value) {
  return guard([&] {
    if (!bindings) return nullArgument("bindings");
    if (cgraph_status st = capi::checkParamIndex(bindings, index)) return st;
    uint64_t bits = 0;
    Error e = capi::paramBitsFromInt(bindings->exe->graph.params[index], value, &bits);
    return capi::setParamBits(bindings, index, e, bits);
  });
}

cgraph_status cgraph_set_param_float(cgraph_bindings bindings, uint32_t index, double value) {
  return guard([&] {
    if (!bindings) return nullArgument("bindings");
    if (cgraph_status st = capi::checkParamIndex(bindings, index)) return st;
    uint64_t bits = 0;
    Error e = capi::paramBitsFromFloat(bindings->exe->graph.params[index], value, &bits);
    return capi::setParamBits(bindings, index, e, bits);
  });
}

cgraph_status cgraph_set_param_int_by_name(cgraph_bindings bindings, const char *name,
                                           int64_t value) {
  return guard([&] {
    if (!bindings) return nullArgument("bindings");
    uint32_t index = 0;
    if (cgraph_status st = capi::findParam(bindings, name, &index)) return st;
    return cgraph_set_param_int(bindings, index, value);
  });
}

cgraph_status cgraph_set_param_float_by_name(cgraph_bindings bindings, const char *name,
                                             double value) {
  return guard([&] {
    if (!bindings) return nullArgument("bindings");
    uint32_t index = 0;
    if (cgraph_status st = capi::findParam(bindings, name, &index)) return st;
    return cgraph_set_param_float(bindings, index, value);
  });
}

} // extern "C"
