// A slot's element type as the graph's kernels see it. A `.cgf` stores no element type
// per slot (a slot is bytes); the kernels' reflected argument types ("__global const
// float4 *") say how they read it. Tools use this to check .npy inputs, pick comparison
// tolerances and type the C API's slots. Pure functions; thread-safe; no failures.
#pragma once

#include "cgraph/model.h"

#include <string>
#include <vector>

namespace cgraph {

// The scalar type of a kernel argument's type name: "const float4*" or
// "__global float *" -> F32 (vector widths and qualifiers dropped). False for anything
// else (structs, images, unknown names).
bool scalarFromKernelTypeName(std::string typeName, ScalarType *out);

// The distinct element types the kernel arguments bound to `slot` use, in node order
// (empty when no kernel argument types it; two or more when kernels disagree).
std::vector<ScalarType> slotKernelTypes(const Graph &g, uint32_t slot);

} // namespace cgraph
