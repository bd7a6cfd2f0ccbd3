// The OpenCL work-item functions as the SPIR-V reader declares them in LLVM IR: one
// table of their Itanium-mangled OpenCL C names (`_Z13get_global_idj`), shared by the
// fusion passes, the cpu lowering and the GPU lowerings, so a new work-item function
// is added in one place.
//
// Ownership: the names are static strings. Thread-safety: pure functions.
// Failures: none (an unknown name is WorkItemFn::None).
#pragma once

#include <cstdint>
#include <string_view>

namespace cgraph {
namespace kernel {

// A work-item query, or a work-group barrier.
enum class WorkItemFn : uint8_t {
  None,
  GlobalId,
  GlobalSize,
  LocalId,
  LocalSize,
  EnqueuedLocalSize,
  GroupId,
  NumGroups,
  GlobalOffset,
  WorkDim,
  GlobalLinearId,
  LocalLinearId,
  Barrier, // barrier(flags), work_group_barrier(flags[, scope])
};

// The work-item query a function of this mangled name is; None for any other name,
// barriers included.
WorkItemFn workItemQuery(std::string_view mangled);

// workItemQuery, and Barrier for the work-group barrier functions.
WorkItemFn workItemFn(std::string_view mangled);

// The mangled name of a query (WorkItemFn::Barrier: `_Z7barrierj`); "" for None.
const char *mangledName(WorkItemFn f);

// Whether the query observes the work-group's shape (local ids and sizes, group ids and
// counts): a kernel that calls one depends on how its range is cut into groups.
bool observesGroupShape(WorkItemFn f);

// Whether the query takes a dimension argument (uint); the linear ids and
// get_work_dim take none.
bool takesDimension(WorkItemFn f);

} // namespace kernel
} // namespace cgraph
