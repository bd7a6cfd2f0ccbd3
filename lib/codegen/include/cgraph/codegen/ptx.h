// SPIR-V -> PTX lowering for NVIDIA GPUs (LLVM 14 NVPTX + libclc's nvptx64 builtins),
// through the table-ABI lowering shared with the hip backend (table_abi.h).
//
// The lowered module keeps each kernel's name but not its signature: every kernel
// becomes a wrapper with the *table ABI* the CUDA backend launches:
//
//   kernel(u64 *table, {u64 a_i, u32 m_i} for each OpenCL parameter i,
//          u64 offset0, u64 offset1, u64 offset2, u32 workDim)
//
// - global/constant buffer parameter: pointer = table[m_i] + a_i (m_i: slot index,
//   a_i: byte offset). The table is a small device-resident array the backend uploads
//   once per submission, so a new binding table costs one upload, not a node update.
// - scalar parameter: bits = m_i == kLiteral ? a_i : table[m_i] (a graph parameter
//   lives in the table after the slots), truncated/bit-cast to the parameter type.
// - __local buffer parameter: a_i is a byte offset into the launch's dynamic shared
//   memory (`__cgraph_smem`).
// - offsets and workDim feed get_global_offset/get_global_id/get_work_dim.
//
// A kernel that cannot observe which thread runs a work-item (src/coarsen.h:
// no local/group ids or sizes, barriers, atomics or __local memory) also gets a coarse
// entry `__cgraph_x4_NAME` with one more argument, the global size of dimension 0: one
// thread runs 4 consecutive work-items, as 16-byte loads and stores where the buffers
// are aligned (a float per thread falls short of the device's copy bandwidth).
//
// Address spaces: SPIR global (1) stays 1, local (3) stays 3, generic (4) becomes the
// flat space 0, and constant (2) becomes global (1): a __constant buffer argument points
// into ordinary device memory (CUDA's .const bank is 64 KiB and filled by
// cuModuleGetGlobal, not by kernel arguments), so ld.global, not ld.const, is correct.
//
// Ownership: results are values. Thread-safety: concurrent calls are safe (each uses
// its own LLVMContext; the libclc bitcode is read per call). Failure modes: invalid
// SPIR-V, unsupported parameter kinds (by-value structs wider than 8 bytes), a missing
// libclc bitcode file or an LLVM failure are returned as Error naming the module.
#pragma once

#include "cgraph/codegen/table_abi.h"
#include "cgraph/error.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace cgraph::codegen {

// Newest PTX target at or below compute capability major.minor (0 when the device is
// older than sm_35). LLVM 14 emits up to sm_86; sm_90 (cc 9.0 and newer) is its sm_86
// code under a `.version 7.8` / `.target sm_90` header with the grid-dependency
// prologue below.
unsigned ptxTargetFor(unsigned major, unsigned minor);

struct PtxModule {
  std::string ptx;                 // PTX text (.version 7.5, .target sm_XX; 7.8 for sm_90)
  std::vector<std::string> kernels; // kernel (entry) names
  std::vector<std::string> coarse;  // the kernels that also have a coarse entry
  unsigned sm = 0;
};

// Whether PTX lowered for `sm` has the grid-dependency prologue (sm >= 90): every kernel
// runs `griddepcontrol.wait` after reading its table entries and before touching any
// other memory. A graph edge from another kernel into such a kernel may then be
// programmatic (the dependent grid launches as the upstream grid's CTAs exit, reads its
// table, and waits for the upstream grid's completion and memory flush); without one,
// the wait is a no-op.
bool waitsForGridDependencies(unsigned sm);

// Lowers a SPIR-V module. `sm` is one of the targets ptxTargetFor() returns.
Expected<PtxModule> lowerSpirvToPtx(const uint8_t *spirv, size_t size, const std::string &name,
                                    unsigned sm);

// Identity of the lowering code, for cache keys (bumped whenever the ABI or pipeline
// changes) and the libclc file it links.
std::string ptxLoweringVersion();

// Path of libclc's nvptx64--nvidiacl.bc: $CGRAPH_LIBCLC_DIR, else <exe>/../share/clc,
// else /usr/lib/clc. Empty when none exists.
std::string nvptxLibclcPath();

} // namespace cgraph::codegen
