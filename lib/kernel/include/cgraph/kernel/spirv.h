// SPIR-V validation and kernel signature reflection.
//
// Every SPIR-V module from outside (and the translator's own output) goes through
// validateSpirv before anything else reads it (docs/architecture.md decision 2).
//
// Ownership: the input bytes are borrowed for the duration of the call only.
// Thread-safety: all functions may be called concurrently.
// Failures: returned as Error, never thrown or printed; malformed input (size not a
// multiple of 4, wrong magic, garbage words) gives an error, never a crash.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "cgraph/error.h"
#include "cgraph/model.h"

namespace cgraph {

// Checks the header and runs the SPIRV-Tools validator (OpenCL 1.2 environment).
// Messages start with `name: ` (`saxpy.spv: invalid SPIR-V: ...`).
Error validateSpirv(const uint8_t *data, size_t size, const std::string &name);

// Every OpenCL kernel entry point, in module order, with its parameters: name,
// OpenCL type spelling, kind (CrossWorkgroup = GlobalBuffer, UniformConstant =
// ConstantBuffer, Workgroup = LocalBuffer, else Scalar), size (scalar/vector bytes,
// pointee bytes for pointers or 0 when unknown), qualifiers and reqd_work_group_size.
// Kernel::module is left kNone. The module is validated first.
Expected<std::vector<Kernel>> reflectKernels(const uint8_t *spirv, size_t size);

} // namespace cgraph
