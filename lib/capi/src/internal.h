// The C API's handle types and the boundary helpers every entry point uses.
//
// Each extern "C" function runs its body through guard(), which turns a failed
// cgraph::Error into a status plus the thread's last-error message and catches every
// C++ exception (std::bad_alloc -> CGRAPH_ERROR_OUT_OF_MEMORY), so none crosses the C
// boundary.
#pragma once

#include "cgraph.h"

#include "cgraph/error.h"
#include "cgraph/graph/labels.h"
#include "cgraph/model.h"
#include "cgraph/runtime/communicator.h"
#include "cgraph/runtime/runtime.h"

#include <memory>
#include <string>
#include <vector>

namespace cgraph::capi {

// What the C API tells about one slot of the graph as loaded (unflattened indices).
struct SlotMeta {
  uint64_t size = 0; // max(declared size, what the nodes reach)
  uint32_t alignment = 1;
  cgraph_type element = CGRAPH_TYPE_UNKNOWN;
  bool external = true;
  bool read = false, written = false;
  bool sizeExpr = false; // its size is a stored parameter expression
};

std::vector<SlotMeta> describeSlots(const Graph &graph);

// A parameter's default as an integer (integer types) or a double (floating types).
void paramDefault(const Param &p, int64_t *asInt, double *asFloat);
// Value bits (Param::defaultBits layout) of `value` for parameter `p`, range-checked;
// errors name the parameter.
Error paramBitsFromInt(const Param &p, int64_t value, uint64_t *bits);
Error paramBitsFromFloat(const Param &p, double value, uint64_t *bits);

// Records `e` as the thread's last error; returns its status.
cgraph_status fail(const Error &e);
cgraph_status fail(cgraph_status status, const std::string &message);
// INVALID naming the null argument `what`.
cgraph_status nullArgument(const char *what);

template <class F> cgraph_status guard(F &&body) noexcept {
  try {
    return body();
  } catch (const std::bad_alloc &) {
    return fail(CGRAPH_ERROR_OUT_OF_MEMORY, "out of memory");
  } catch (const std::exception &e) {
    return fail(CGRAPH_ERROR_INTERNAL, std::string("internal error: ") + e.what());
  } catch (...) {
    return fail(CGRAPH_ERROR_INTERNAL, "internal error: unknown exception");
  }
}

// The process-wide registry of compiled-in backends (created on first use, never
// destroyed: drivers and LLVM are torn down by the process exit, not by us).
rt::Registry &registry();

} // namespace cgraph::capi

struct cgraph_graph_s {
  cgraph::Graph graph;
  std::vector<cgraph::capi::SlotMeta> slots;
};

struct cgraph_device_s {
  cgraph::rt::Device *device = nullptr; // owned by the registry
  std::string spec;
};

struct cgraph_communicator_s {
  std::shared_ptr<cgraph::rt::Communicator> comm;
};

struct cgraph_executable_s {
  std::shared_ptr<cgraph::rt::Communicator> comm; // outlives exe (declared first)
  std::unique_ptr<cgraph::rt::Executable> exe;
  cgraph::rt::Device *device = nullptr;
  cgraph::Graph graph; // as loaded (slot and param indices of the caller), without kernels
  std::vector<cgraph::capi::SlotMeta> slots;
  // Per slot: the storage of a graph-owned slot, bound with overrideInternal so that
  // cgraph_slot_read/write reach it; null for external and expression-sized slots.
  std::vector<std::shared_ptr<cgraph::rt::Buffer>> owned;
};

struct cgraph_buffer_s {
  std::shared_ptr<cgraph::rt::Buffer> buffer;
  cgraph::rt::Device *device = nullptr;
};

struct cgraph_bindings_s {
  cgraph_executable_s *exe = nullptr;
  cgraph::rt::BindingTable table;
  std::vector<std::shared_ptr<cgraph::rt::Buffer>> keep; // per slot: what table points at
  std::vector<void *> hostAddress;                       // per slot: cgraph_bind_host's ptr
  cgraph::rt::ParamValues params;
};

struct cgraph_event_s {
  cgraph::rt::EventPtr event;
  const cgraph::rt::Executable *exe = nullptr; // node names of its timings; not owned
  std::vector<std::shared_ptr<cgraph::rt::Buffer>> keep; // buffers the submission binds
};
