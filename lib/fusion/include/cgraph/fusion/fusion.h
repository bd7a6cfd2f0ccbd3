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
// only accessed at the work-item's own index; an intermediate slot named scratch
// (FuseOptions::scratch: the caller says its contents are not needed; no other slot
// ever leaves the graph) and used only inside the group (transient, not used by any
// other node) with only own-index accesses
// becomes one private variable per work-item and leaves the graph (also across kernels
// of different global sizes: a work-item keeps its global linear id, seed rule 8, when
// every kernel reading the slot runs on no more work-items than one before it writing
// it); one whose accesses all stay inside the work-item's work-group tile (a range of
// 1-3 dimensions with a local size T, offsets 0, whole groups: index = sum_d S_d *
// (T_d * group id(d) + e_d), e_d proven in [0, T_d) by a small linear/range analysis of
// the IR, row strides S_d in mixed radix) becomes a __local tile of T0*T1*T2 elements (a
// new __local parameter, the node passing a LocalMem argument; accesses at their place
// in the tile, per dimension; barriers kept). The fused
// module is lightly optimized only (the LLVM 14 translator can emit invalid SPIR-V from
// optimized IR), translated back to SPIR-V and validated with SPIRV-Tools. Parameters
// of distinct slots are marked noalias (FuseOptions::noAlias), sound only because the
// runtime refuses bindings where a written slot overlaps another.
//
// Own-index accesses are proven at the global linear id in each kernel's own shape
// (gid(0) + G0 * gid(1) + ..., literal arguments baked in for the analysis); barrier-free
// fused kernels are cleaned with alias analysis (EarlyCSE with MemorySSA, GVN, DSE).
//
// nd-ranges (work-item remapping): every local size given is the same (a local size does
// not count where no kernel of the group uses its work-groups), every offset is
// the same, sizes are literal unless all ranges are identical. The fused range is the
// node with the most work-items (with the group's local size). A kernel with the same
// dimensions and no larger global sizes runs guarded (get_global_id(d) < its size) and
// keeps its ids, its get_global_size/get_num_groups answering its own range; any other
// shape (more or fewer dimensions, a larger size in one dimension) is remapped from the
// fused range's global linear id: its global ids are recomputed in its own shape, it
// sees one work-group spanning its range, and it must have no local size (offsets 0). A
// kernel running on part of the fused range must not use barriers or group functions.
// Refusals name the rule ("local sizes differ: 64 vs 128").
//
// --auto (FuseOptions::autoFuse): chains of kernel nodes in execution order, each
// extended while the group stays legal and the cost model agrees (a kernel with fewer
// than 1/16 of the largest kernel's work-items ends the chain, and so does one needing
// linear remapping unless FuseOptions::autoLinear); one analysis pass cuts
// a chain where a kernel would access a slot another kernel of the part writes at
// another work-item's index outside its work-group tile (a work-group barrier cannot
// order work-groups), and each part of two or more is fused unless its kernel keeps
// more than 4096 bytes of private arrays per work-item. Remarks starting "cost:" report
// the model's decisions and, per fused group, the launches and traffic it saves.
//
// Parameters of the fused kernel: one per distinct argument; its type qualifiers
// (const, restrict) and memory attributes hold only where they hold for every kernel
// parameter bound to it, so a slot one member writes is written by the fused kernel (not
// const), and the graph's slot usage and hazards follow.
//
// Chains are at most FuseOptions::maxGroupKernels long (a remark says where one is cut).
// Each legality query costs time in proportion to the group and its neighbourhood, so
// --auto takes time linear in the graph's size.
//
// Stored parameter expressions (.cgf 2.0): nodes whose nd-ranges have them fuse only with
// nodes of the same nd-range (the same expressions, field by field); the fused node
// keeps those expressions and those of the scalar arguments it passes (never baked in
// as constants or shared). FuseOptions::paramValues specializes the graph first.
//
// An explicit group (--fuse, --plan) whose shape breaks a rule (fewer than two nodes, a
// node that is not a kernel, a node of the graph between its nodes, an order against
// the graph's edges, an intermediate node with a successor outside the group) is an
// Error naming the rule. A group that cannot be fused for its nd-ranges or its kernels'
// accesses is left as it was and gets a Remark saying why; the
// output graph is still valid. Order, partitions and slot usage are recomputed
// (finalizeForFile) and the graph metadata records `fused.<node> = a,b,c`.
//
// Ownership: fuseGraph mutates the Graph it is given and keeps nothing.
// Thread-safety: concurrent calls on distinct graphs are safe (each uses its own
// LLVMContext). Failures: an Error for bad requests (unknown or repeated node names, an
// explicit group breaking a rule, an unknown scratch slot or parameter) or a broken
// input graph; a group the nd-range or access rules refuse is a Remark, not an Error; an
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
  // Let automatic chains take kernels that need linear work-item remapping (another
  // shape than the fused range's). Off by default: in the stencil example such a fused
  // kernel runs slower than the two kernels on the cpu backend
  // (benchmarks/cpu/results/NOTES.md).
  bool autoLinear = false;
  // Bake literal scalar arguments into the fused kernel.
  bool constants = true;
  // Promote the slots named scratch (below) to private or local memory where legal;
  // false keeps every slot in global memory.
  bool internalize = true;
  // The slots the caller declares scratch: runtime-owned transient slots whose contents
  // nobody needs after the graph runs. Only a scratch slot (one named here, in the
  // graph's metadata key "scratch" as a comma-separated list, or in a GroupRequest's
  // `internalize` list) may leave the graph, and only when it is transient and used by
  // no node outside the fused group; every other slot keeps its place and its final
  // contents, whether or not a fused group is its only user. A name that is not a slot
  // of the graph is an Error.
  std::vector<std::string> scratch;
  // The most kernels one automatic chain takes (0: no limit): a longer chain is cut
  // there, with a remark, and the rest starts a new chain. Bounds the fused kernel's
  // size and the time to build it; explicit groups are not limited.
  uint32_t maxGroupKernels = 256;
  // Specialization (`cgfuse --param n=256`): each named graph parameter takes this
  // value (text as for GroupRequest::constants) before fusion: every stored expression
  // is folded with it (one left without variables becomes the field's literal value
  // and is dropped), nd-range sizes and scalar arguments that name the parameter
  // become literals. The parameter stays in the graph; the metadata key
  // `specialized.<name>` records the value, which later submissions no longer change.
  std::vector<std::pair<std::string, std::string>> paramValues;
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

// The names of a comma-separated list ("a,b,c": `--fuse a,b,c`, a group of the C API,
// the graph's "scratch" metadata), empty entries dropped, nothing else changed.
std::vector<std::string> splitNames(const std::string &list);
// "fused", "refused" or "note", as tools print a Remark's kind.
const char *remarkKindName(Remark::Kind kind);

} // namespace fusion
} // namespace cgraph
