// Internal interface between the graph side of fusion (graph_internal.h: legality,
// arguments, rewriting the Graph) and the LLVM side (ir_internal.h: building the fused
// kernel). Not installed. No LLVM types cross it. Thread-safety: buildFusedKernel,
// chainCuts and workGroupUse each use their own LLVMContext.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "cgraph/error.h"
#include "cgraph/fusion/fusion.h"
#include "cgraph/model.h"

namespace cgraph {
namespace fusion {
namespace detail {

// One parameter of the fused entry point before constants and internalization.
// A literal nd-range (every dimension a number; 0 local = the runtime chooses).
struct Range {
  uint32_t dims = 1;
  uint64_t global[3] = {1, 1, 1};
  uint64_t local[3] = {0, 0, 0};
  uint64_t offset[3] = {0, 0, 0};
  bool hasLocal() const { return local[0] != 0; }
  uint64_t total() const { return global[0] * global[1] * global[2]; }
};

// How an instance's work-items are placed in the fused range (ranges.cpp decides,
// naming the rule when it refuses; remap.cpp rewrites the builtins):
//   Same:   the instance's range is the fused one.
//   Guard:  same dimensions, local size and offset, each global size at most the fused
//           one: the instance runs where get_global_id(d) < offset + its size in every
//           dimension that differs and sees its own get_global_size/get_num_groups;
//           work-item and work-group ids are unchanged.
//   Linear: no local size, offsets 0: the instance's work-item i is the fused range's
//           work-item with global linear id i (guarded by i < its work-item count);
//           get_global_id is recomputed from that linear id in the instance's own
//           shape, get_global_size/get_work_dim answer its range, and it sees one
//           work-group spanning its range (get_local_size = global size, local id =
//           global id, group id 0, one group), which is why it must not use barriers.
enum class Remap : uint8_t { Same, Guard, Linear };

// "64x16": the range's sizes of one kind (`v`: global, local or offset), for remarks.
std::string shapeText(const Range &r, const uint64_t *v);

struct FusedParam {
  uint32_t inst = 0;              // representative kernel instance (index into IrRequest::insts)
  uint32_t param = 0;             // its parameter index
  std::string name;               // parameter name in the fused kernel
  bool constCandidate = false;    // a literal: bake it in when the IR type allows
  uint64_t bits = 0;              // the literal's bits
  bool internalCandidate = false; // a slot the graph side found private to the group
  Memory memory = Memory::Any;    // with internalCandidate: where the plan asks for it
  int32_t slotKey = -1;           // slot index (for access analysis), -1 = not a slot
};

struct Instance {
  std::string node; // node name (remarks)
  uint32_t module = 0;
  std::string kernel;         // kernel function name in the module
  std::vector<uint32_t> bind; // per kernel parameter: fused param index
  Range range;                // this node's nd-range (literal; see IrRequest::literal)
  Remap remap = Remap::Same;  // how its work-items map into IrRequest::fused
};

struct IrRequest {
  std::string fusedName; // fused kernel name
  // The graph's modules (indexed by Instance::module) and slots (by slotKey); not owned,
  // they outlive the request.
  const std::vector<KernelModule> *modules = nullptr;
  const std::vector<Slot> *slots = nullptr;
  std::vector<Instance> insts;
  std::vector<FusedParam> params;
  bool hasLocalMem = false; // some kernel gets a __local argument: keep barriers
  bool noBarriers = false;  // the plan asserts no work-item reads another's results
  bool noAlias = true;      // mark single-parameter slots noalias (see signature.cpp)
  // The fused node's nd-range. `literal` false: some size is a graph parameter, every
  // instance has the same range and nothing is remapped (the ranges then hold only the
  // dimension count).
  Range fused;
  bool literal = true;
  bool internalize = true;
  bool constants = true;
  bool keepIR = false;
};

struct IrResult {
  std::vector<uint8_t> spirv;
  std::vector<bool> kept;             // per FusedParam: still a parameter of the fused kernel
  std::vector<uint32_t> internalized; // FusedParam indices promoted to private memory
  // FusedParam indices promoted to local memory and the bytes of their per-work-group
  // tile: each stays a parameter of the fused kernel, now a __local pointer.
  std::vector<std::pair<uint32_t, uint64_t>> localized;
  uint64_t privateBytes = 0;   // private arrays left in the fused kernel after cleanup
  std::vector<uint32_t> baked; // FusedParam indices baked in as constants
  bool barriers = true;
  std::vector<std::string> remarks; // notes (internalization refusals, hazards)
  std::string hazard;               // non-empty: a kernel accesses a slot another kernel of the
                                    // group writes at another work-item's index
  uint32_t hazardSplit = 0;         // with `hazard`: the instances before this one do not share
                                    // the slot, so that prefix may still be fused
  std::string ir;
};

Expected<IrResult> buildFusedKernel(const IrRequest &req);

// For each kernel of `module`: whether what it computes may depend on its work-groups
// (it asks for local ids or sizes, group ids or counts, uses barriers, group functions,
// __local memory or an indirect call). A kernel that does not may be given any local
// size, so the nd-range rules ignore the local size its node gives.
Expected<std::map<std::string, bool>> workGroupUse(const KernelModule &module);

// Where an automatic chain must be cut so that no part has a kernel accessing a slot
// another kernel of the part writes at another work-item's index (or at another
// offset): the instance each new part starts at, and why. Runs only the analysis.
struct Cut {
  uint32_t at = 0;
  std::string reason;
};
Expected<std::vector<Cut>> chainCuts(const IrRequest &req);

} // namespace detail
} // namespace fusion
} // namespace cgraph
