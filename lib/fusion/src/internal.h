// Internal interface between the graph side (fuse_graph.cpp: legality, arguments,
// rewriting the Graph) and the LLVM side (fuse_ir.cpp: building the fused kernel).
// Not installed. Thread-safety: buildFusedKernel uses its own LLVMContext.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cgraph/error.h"
#include "cgraph/model.h"

namespace cgraph {
namespace fusion {
namespace detail {

// One parameter of the fused entry point before constants and internalization.
struct FusedParam {
  uint32_t inst = 0;              // representative kernel instance (index into IrRequest::insts)
  uint32_t param = 0;             // its parameter index
  std::string name;               // parameter name in the fused kernel
  bool constCandidate = false;    // a literal: bake it in when the IR type allows
  uint64_t bits = 0;              // the literal's bits
  bool internalCandidate = false; // a slot the graph side found private to the group
  int32_t slotKey = -1;           // slot index (for access analysis), -1 = not a slot
};

struct Instance {
  std::string node; // node name (remarks)
  uint32_t module = 0;
  std::string kernel;         // kernel function name in the module
  std::vector<uint32_t> bind; // per kernel parameter: fused param index
  uint64_t globalSize = 0;    // 1-D global size of this node (remapping)
};

struct IrRequest {
  std::string fusedName;                     // fused kernel name
  std::vector<const KernelModule *> modules; // indexed by Instance::module
  std::vector<Instance> insts;
  std::vector<FusedParam> params;
  std::vector<std::string> slotNames; // by slotKey
  bool oneDim = true;                 // nd-range has one dimension: get_global_id(0) is unique
  bool hasLocalMem = false;           // some kernel gets a __local argument: keep barriers
  bool noBarriers = false;            // the plan asserts no work-item reads another's results
  bool noAlias = true;
  // Work-item remapping (1-D): the fused range's global size and the common local size
  // (0 = runtime chooses). Instances with a smaller global size run guarded by
  // get_global_id(0) < their size, with get_global_size(0) (and get_num_groups(0))
  // answering their own range.
  uint64_t fusedGlobal = 0;
  uint64_t localSize = 0; // mark single-parameter slots noalias (see fuse_ir.cpp)
  bool internalize = true;
  bool constants = true;
  bool keepIR = false;
};

struct IrResult {
  std::vector<uint8_t> spirv;
  std::vector<bool> kept;             // per FusedParam: still a parameter of the fused kernel
  std::vector<uint32_t> internalized; // FusedParam indices promoted to private memory
  std::vector<uint32_t> baked;        // FusedParam indices baked in as constants
  bool barriers = true;
  std::vector<std::string> remarks; // notes (internalization refusals, hazards)
  std::string hazard;               // non-empty: a kernel accesses a slot another kernel of the
                                    // group writes at another work-item's index
  uint32_t hazardSplit = 0;         // with `hazard`: the instances before this one do not share
                                    // the slot, so that prefix may still be fused
  std::string ir;
};

Expected<IrResult> buildFusedKernel(const IrRequest &req);

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
