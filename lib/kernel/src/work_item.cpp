// The work-item function table (work_item.h).
#include "cgraph/kernel/work_item.h"

namespace cgraph {
namespace kernel {
namespace {

struct Entry {
  const char *name;
  WorkItemFn fn;
};

// Queries first; mangledName returns the first name listed for a function.
constexpr Entry kTable[] = {
    {"_Z13get_global_idj", WorkItemFn::GlobalId},
    {"_Z15get_global_sizej", WorkItemFn::GlobalSize},
    {"_Z12get_local_idj", WorkItemFn::LocalId},
    {"_Z14get_local_sizej", WorkItemFn::LocalSize},
    {"_Z23get_enqueued_local_sizej", WorkItemFn::EnqueuedLocalSize},
    {"_Z12get_group_idj", WorkItemFn::GroupId},
    {"_Z14get_num_groupsj", WorkItemFn::NumGroups},
    {"_Z17get_global_offsetj", WorkItemFn::GlobalOffset},
    {"_Z12get_work_dimv", WorkItemFn::WorkDim},
    {"_Z20get_global_linear_idv", WorkItemFn::GlobalLinearId},
    {"_Z19get_local_linear_idv", WorkItemFn::LocalLinearId},
    {"_Z7barrierj", WorkItemFn::Barrier},
    {"_Z18work_group_barrierj", WorkItemFn::Barrier},
    {"_Z18work_group_barrierj12memory_scope", WorkItemFn::Barrier},
};

} // namespace

WorkItemFn workItemFn(std::string_view mangled) {
  // Every name is mangled: most functions a pass asks about (intrinsics) are not.
  if (mangled.substr(0, 2) != "_Z") return WorkItemFn::None;
  for (const Entry &e : kTable)
    if (mangled == e.name) return e.fn;
  return WorkItemFn::None;
}

WorkItemFn workItemQuery(std::string_view mangled) {
  WorkItemFn f = workItemFn(mangled);
  return f == WorkItemFn::Barrier ? WorkItemFn::None : f;
}

const char *mangledName(WorkItemFn f) {
  for (const Entry &e : kTable)
    if (e.fn == f) return e.name;
  return "";
}

bool observesGroupShape(WorkItemFn f) {
  switch (f) {
  case WorkItemFn::LocalId:
  case WorkItemFn::LocalSize:
  case WorkItemFn::EnqueuedLocalSize:
  case WorkItemFn::GroupId:
  case WorkItemFn::NumGroups:
  case WorkItemFn::LocalLinearId:
    return true;
  default:
    return false;
  }
}

bool takesDimension(WorkItemFn f) {
  switch (f) {
  case WorkItemFn::WorkDim:
  case WorkItemFn::GlobalLinearId:
  case WorkItemFn::LocalLinearId:
  case WorkItemFn::None:
    return false;
  default:
    return true;
  }
}

} // namespace kernel
} // namespace cgraph
