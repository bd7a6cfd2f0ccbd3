// SPIR-V -> LLVM 14 IR (SPIRV-LLVM-Translator readSpirv).
//
// The returned module uses the spir64 triple, OpenCL-mangled builtin calls
// (`_Z13get_global_idj`) and address spaces 1 (global), 2 (constant), 3 (local).
//
// Ownership: the module belongs to the caller and lives in `ctx`; the input bytes
// are borrowed for the call only.
// Thread-safety: concurrent calls are safe when each uses its own LLVMContext.
// Failures: the input is validated first (see spirv.h); invalid input or a
// translator failure is returned as Error, never thrown or printed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "cgraph/error.h"

namespace llvm {
class LLVMContext;
class Module;
} // namespace llvm

namespace cgraph {

Expected<std::unique_ptr<llvm::Module>> spirvToLLVM(llvm::LLVMContext &ctx, const uint8_t *spirv,
                                                    size_t size);

// SPIR-V -> spir64 LLVM 14 bitcode, for OpenCL devices that take SPIR through
// cl_khr_spir (`-x spir -spir-std=1.2`, e.g. PoCL). Calls to the float mad() builtin
// (what SPIR-V makes of clang's contractable a * b + c) become llvm.fmuladd, so the
// driver fuses them as it would when it builds the OpenCL C source itself.
Expected<std::vector<uint8_t>> spirvToSpirBitcode(const uint8_t *spirv, size_t size);

} // namespace cgraph
