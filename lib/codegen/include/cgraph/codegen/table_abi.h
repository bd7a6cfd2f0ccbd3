// The table-ABI lowering shared by the nvptx64 (ptx.h) and amdgcn (amdgcn.h) code generators.
//
// Every kernel of a SPIR-V module becomes a wrapper with the *table ABI*:
//
//   kernel(u64 *table, {u64 a_i, u32 m_i} for each OpenCL parameter i,
//          u64 offset0, u64 offset1, u64 offset2, u32 workDim)
//
// - global/constant buffer parameter: pointer = table[m_i] + a_i (m_i: slot index,
//   a_i: byte offset); the table is a device-resident array in the global space (1).
// - scalar parameter: bits = m_i == kLiteral ? a_i : table[m_i], truncated/bit-cast.
// - __local buffer parameter: a_i is a byte offset into the launch's dynamic shared
//   memory (`__cgraph_smem`, address space 3 on both targets).
// - offsets and workDim feed get_global_offset/get_global_id/get_work_dim.
//
// The pipeline (lowerToTableAbi): SPIR-V -> spir64 LLVM 14 IR (lib/kernel); C calling
// convention everywhere; the kernels' allocas promoted, and loads through a restrict
// buffer parameter the kernel only loads from marked invariant (NVPTX: ld.global.nc, as
// nvcc does for `const __restrict__`); wrappers (and coarse entries, `coarsen`);
// everything else inlined; work-item calls that depend
// on the offsets replaced; the address spaces remapped on the IR by the target's
// addressSpaces and builtinName (types of values, globals and functions; intrinsics
// re-declared under their new overloads; casts between spaces that become one
// dropped); the target's afterRemap hook (amdgcn: allocas into the private space 5);
// the builtin supplement and libclc linked (only what is used); everything but the
// wrappers internalized; markKernel; verified; O3 with the target machine. The caller
// emits the result (PTX text, an amdgcn object).
//
// Ownership: the returned module belongs to the caller and lives in the caller's
// LLVMContext. Thread-safety: concurrent calls with distinct contexts and target
// machines are safe. Failure modes: invalid SPIR-V, unsupported parameter kinds
// (by-value structs, scalars wider than 8 bytes), a missing libclc file, builtins that
// libclc lacks, a remap that gives two different functions one name: an Error naming
// the module ("module 'x.cl': ...").
#pragma once

#include "cgraph/error.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace llvm {
class Function;
class LLVMContext;
class Module;
class StringRef;
class TargetMachine;
} // namespace llvm

namespace cgraph::codegen {

constexpr uint32_t kLiteral = 0xFFFFFFFFu; // m_i of a scalar given in the launch itself

// What differs between the targets. Every std::function member is required unless it
// says optional.
struct TableAbiTarget {
  std::string backend;        // "cuda", "hip": named in errors about parameters
  std::string triple;         // e.g. "nvptx64-nvidia-cuda", "amdgcn-amd-amdhsa"
  std::string dataLayout;     // the module's layout until afterRemap or the machine's replaces it
  // Step 4: SPIR address space -> the target's, for the spaces that change.
  std::map<unsigned, unsigned> addressSpaces;
  // Step 4: the name a builtin declaration (Itanium-mangled, `_Z6vload4mPU3AS2Kf`) has in
  // the target's library once its pointer parameters are in the target's spaces.
  // Declarations that get one name become one (the first). Optional: names stay.
  std::function<std::string(const std::string &)> builtinName;
  // Optional: runs right after the remap.
  std::function<Error(llvm::Module &)> afterRemap;
  std::string supplementIR; // builtins libclc lacks, in the target's address spaces
  std::string libclcFile;   // file name searched by findLibclc
  // Optional: declarations that may stay unresolved after linking (intrinsic-like).
  std::function<bool(const std::string &)> allowUnresolved;
  // Makes a wrapper a kernel entry (calling convention, annotations, attributes).
  std::function<void(llvm::Module &, llvm::Function &)> markKernel;
  llvm::TargetMachine *machine = nullptr; // the module gets its data layout; O3 uses it
  // Optional: inline-assembly statements every wrapper runs after it has read its
  // arguments from the table and before the kernel body (with a memory clobber, so no
  // access of the body moves above them). cuda sm_90: griddepcontrol.wait, which makes
  // a programmatic graph edge into the kernel safe (ptx.h).
  std::vector<std::string> entryAsm;
  const char *dumpEnv = nullptr; // optional: env var naming a folder for NAME.pre-opt.ll / NAME.ll
  // Optional: also emit a coarse entry `__cgraph_x4_NAME` for every kernel that allows
  // it: one thread runs 4 consecutive work-items of dimension 0, with 16-byte accesses
  // where the buffers are aligned (src/coarsen.h says which kernels and how). Its
  // arguments are the table ABI's plus the global size of dimension 0 (u64, last).
  bool coarsen = false;
};

struct LoweredModule {
  std::unique_ptr<llvm::Module> module; // optimized, ready to emit
  std::vector<std::string> kernels;     // wrapper (entry) names, in module order
  std::vector<std::string> coarse;      // the kernels that also have a coarse entry
};

constexpr const char *kCoarseEntryPrefix = "__cgraph_x4_"; // + kernel name (`coarsen`)
constexpr unsigned kCoarseItems = 4;                       // work-items per thread there

Expected<LoweredModule> lowerToTableAbi(llvm::LLVMContext &ctx, const uint8_t *spirv, size_t size,
                                        const std::string &name, const TableAbiTarget &target);

// Builtins that both libclc builds lack as IR in the target's address spaces: scalar
// mad_hi, recip and divide (what native_/half_ recip and divide become when a target
// renames native_ builtins to the precise ones); with `atomics64ForSpaces` non-empty
// also 64-bit atom_* for those address spaces (libclc's nvptx build lacks them).
std::string builtinSupplementIR(const std::vector<std::string> &atomics64ForSpaces);

// Path of libclc's FILE: $CGRAPH_LIBCLC_DIR, else <exe>/../share/clc, else /usr/lib/clc.
// Empty when none exists.
std::string findLibclc(const char *file);

} // namespace cgraph::codegen
