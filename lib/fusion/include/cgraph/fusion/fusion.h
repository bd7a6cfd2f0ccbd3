// Offline kernel fusion of a saved graph (issue 9; the design follows the SYCL kernel
// fusion JIT: fused entry point, argument elision, internalization, constants, work-item
// remapping, cleanup passes): groups of kernel nodes become one node running
// a fused kernel built at LLVM IR level from the kernels' SPIR-V.
//
// The pipeline for one group: every module the group uses is read back as LLVM IR
// (lib/kernel's spirvToLLVM), linked into one module; each kernel becomes an internal
// function, cleaned (SROA, EarlyCSE, SimplifyCFG), analysed (which parameters each
// kernel reads or writes, and whether every access is at the work-item's own index
// `base + get_global_id(0) * elemsize`), then called in order from a new entry point
// and inlined. Identical arguments (same slot and offset, same graph parameter, same
// literal) are passed once; literal scalars are baked in as constants; a work-group
// barrier separates kernels unless every slot shared between kernels of the group is
// only accessed at the work-item's own index; an intermediate slot used only inside
// the group (transient, not used by any other node) with only own-index accesses
// becomes one private variable per work-item and leaves the graph. The fused module is
// lightly optimized only (the LLVM 14 translator can emit invalid SPIR-V from
// optimized IR), translated back to SPIR-V and validated with SPIRV-Tools. Parameters
// of distinct slots are marked noalias (FuseOptions::noAlias), sound only because the
// runtime refuses bindings where a written slot overlaps another.
//
// nd-ranges: the same range fuses as is. Different 1-D literal global sizes (same
// local size and offset) are remapped: the fused range is the largest, a kernel with a
// smaller one runs guarded by `get_global_id(0) < its size` and sees its own
// get_global_size(0)/get_num_groups(0); a kernel with a barrier, a size from a graph
// parameter, differing local sizes or dimensions are refused, naming the rule. Local
// memory internalization is not implemented.
//
// --auto (FuseOptions::autoFuse): chains of kernel nodes in execution order, each
// extended while the group stays legal; one analysis pass cuts a chain where a kernel
// would access a slot another kernel of the part writes at another work-item's index
// (a work-group barrier cannot order work-groups), and each part of two or more is
// fused.
//
// A group that cannot be fused is left as it was and gets a Remark saying why; the
// output graph is still valid. Order, partitions and slot usage are recomputed
// (finalizeForFile) and the graph metadata records `fused.<node> = a,b,c`.
//
// Ownership: fuseGraph mutates the Graph it is given and keeps nothing.
// Thread-safety: concurrent calls on distinct graphs are safe (each uses its own
// LLVMContext). Failures: an Error for bad requests (unknown or repeated node names)
// or a broken input graph; a group the rules refuse is a Remark, not an Error; an
// internal failure to build one group's kernel (translator, validator) is a Remark
// too and that group stays unfused.
#pragma once

#include <string>
#include <vector>

#include "cgraph/error.h"
#include "cgraph/model.h"

namespace cgraph {
namespace fusion {

// Where an intermediate slot is promoted: private memory (one value per work-item; every
// access at the work-item's own index), local memory (one tile per work-group; every
// access inside the work-group's tile), or whichever is legal (private first).
enum class Memory : uint8_t { Any, Private, Local };

// One explicitly requested group (`--fuse a,b,c` or one entry of a `--plan` file).
struct GroupRequest {
  std::vector<std::string> nodes; // node names in execution order (a chain)
  // When set, only the slots in `internalize` may be promoted, and each one that cannot
  // be gets a remark; otherwise every legal one is promoted. `internalizeTo` (parallel
  // to `internalize`, Memory::Any where shorter) says where each may go.
  bool internalizeListed = false;
  std::vector<std::string> internalize;
  std::vector<Memory> internalizeTo;
  // Graph parameters whose value is baked into the fused kernel (name, value text:
  // "2.5", "-3", "0x10"; typed by the parameter). The parameter stays in the graph.
  std::vector<std::pair<std::string, std::string>> constants;
  // The plan asserts that no work-item reads another's results: no barriers.
  bool noBarriers = false;
  GroupRequest() = default;
  GroupRequest(std::vector<std::string> n) : nodes(std::move(n)) {}
};

struct FuseOptions {
  // Explicit groups, fused first, in this order.
  std::vector<GroupRequest> groups;
  // Find chains automatically (after the explicit groups).
  bool autoFuse = false;
  // Bake literal scalar arguments into the fused kernel.
  bool constants = true;
  // Promote intermediate slots to private memory where legal.
  bool internalize = true;
  // Mark the parameters of distinct slots noalias (restrict). Sound because the runtime
  // refuses bindings where a written slot overlaps another slot.
  bool noAlias = true;
  // Keep the fused module's LLVM IR text (before translation) in FuseReport.
  bool keepIR = false;
};

struct Remark {
  enum Kind { Fused, Refused, Note } kind = Note;
  std::string group;   // "a,b,c"
  std::string message; // LLVM style: lower-case, no final period
};

struct FusedGroup {
  std::string node;                      // name of the fused node
  std::string kernel;                    // name of the fused kernel
  std::vector<std::string> from;         // the nodes it replaces, in order
  std::vector<std::string> internalized; // slots promoted to private memory
  std::vector<std::string> localized;    // slots promoted to local memory (a __local tile)
  std::vector<std::string> constants;    // "kernel.param=value" baked in
  unsigned elided = 0;                   // arguments passed once instead of several times
  bool barriers = true;                  // barriers between the kernels kept
  std::string ir;                        // FuseOptions::keepIR: the fused module
};

struct FuseReport {
  std::vector<FusedGroup> fused;
  std::vector<Remark> remarks;
};

// Fuses the requested groups of `graph` (a top-level graph as the reader returns it)
// in place. See the file comment for what is refused.
Expected<FuseReport> fuseGraph(Graph &graph, const FuseOptions &options);

} // namespace fusion
} // namespace cgraph
