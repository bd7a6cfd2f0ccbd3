// SPIR-V -> amdgcn code objects for AMD GPUs (LLVM 14 AMDGPU + libclc's amdgcn--amdhsa
// builtins + ld.lld-14), through the table-ABI lowering shared with the cuda backend
// (table_abi.h describes the kernel ABI).
//
// Address spaces: SPIR global (1) stays 1, local (3) stays 3, constant (2) becomes the
// amdgcn constant space 4, generic (4) becomes flat (0), and private (0) allocas move to
// the amdgcn private space 5 (each cast back to flat, which InferAddressSpaces folds).
// Builtins that take a private or generic pointer are called with the variant of the
// space the pointer comes from (libclc's amdgcn build has no flat variants): a pointer
// whose space cannot be inferred is an error naming the builtin.
//
// Each kernel entry is an amdgpu_kernel with "amdgpu-flat-work-group-size"="1,1024";
// the object is code object v4 (LLVM 14's default) with the amdhsa metadata note, linked
// by `ld.lld -shared` into the loadable code object hipModuleLoadData takes.
//
// Targets: what LLVM 14 knows (gfx900, gfx906, gfx908, gfx90a, gfx1030, ...). gfx940 /
// gfx942 (MI300) are not in LLVM 14.
//
// Ownership: results are values. Thread-safety: concurrent calls are safe (own
// LLVMContext and target machine; ld.lld runs in a private temporary folder). Failure
// modes: everything lowerToTableAbi reports; an unknown gfx target; ld.lld not found or
// failing (its output is in the message); returned as Error naming the module.
#pragma once

#include "cgraph/codegen/table_abi.h"
#include "cgraph/error.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace cgraph::codegen {

struct AmdgcnModule {
  std::vector<uint8_t> codeObject;  // ELF64 AMDGPU shared object (hipModuleLoadData)
  std::vector<std::string> kernels; // kernel names; each also has a `<name>.kd` descriptor
  std::string gfx;                  // e.g. "gfx90a"
};

// True when LLVM 14's AMDGPU target knows the processor `gfx` ("gfx90a").
bool amdgcnTargetKnown(const std::string &gfx);

// The processor the lowering uses for a device that reports gcnArchName `arch`
// ("gfx90a:sramecc+:xnack-" -> "gfx90a"); empty when LLVM 14 does not know it.
std::string amdgcnTargetFor(const std::string &arch);

// Lowers a SPIR-V module to a code object for `gfx`.
Expected<AmdgcnModule> lowerSpirvToAmdgcn(const uint8_t *spirv, size_t size,
                                          const std::string &name, const std::string &gfx);

// The relocatable object before linking (for tests and diagnostics).
Expected<std::vector<uint8_t>> lowerSpirvToAmdgcnObject(const uint8_t *spirv, size_t size,
                                                        const std::string &name,
                                                        const std::string &gfx,
                                                        std::vector<std::string> *kernels);

// The linker: $CGRAPH_LLD, else the ld.lld found at configure time, else ld.lld-14 or
// ld.lld on PATH. Empty when none exists.
std::string lldPath();

// Identity of the lowering code and its linker, for cache keys.
std::string amdgcnLoweringVersion();

} // namespace cgraph::codegen
