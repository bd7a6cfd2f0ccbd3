// OpenCL C -> SPIR-V, in-process (clang 14 + SPIRV-LLVM-Translator 14).
//
// Pipeline: clang -cc1 (spir64, -O0 without optnone/noinline, opencl-c.h default
// header) -> LLVM bitcode -> translator writeSpirv -> SPIRV-Tools validation. The
// IR is translated unoptimized because the LLVM 14 translator can emit invalid
// SPIR-V from optimized IR; every target optimizes after its own lowering.
//
// Ownership: results are plain values owned by the caller.
// Thread-safety: compileOpenCL may be called from several threads at once; each call
// uses its own LLVMContext and CompilerInstance.
// Failures: returned as Error, never thrown or printed. A compile error carries
// clang's diagnostics verbatim, one per line (`saxpy.cl:3:5: error: ...`); a
// translator failure or invalid translator output is reported with the file name.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cgraph/error.h"

namespace cgraph {

struct CompileOptions {
  std::vector<std::string> includeDirs;
  std::vector<std::string> defines; // "N" or "N=V"
  std::string clStd = "CL1.2";      // CL1.2, CL2.0, CL3.0
  std::vector<std::string> extraArgs; // extra clang -cc1 arguments, passed as given
  // Parse all of opencl-c.h (~110 ms per compile) instead of clang's table-driven
  // builtin declarations (-fdeclare-opencl-builtins, ~3 ms). Both declare the same
  // builtins; this is an escape hatch should the table miss one.
  bool fullHeader = false;
};

struct CompileResult {
  std::vector<uint8_t> spirv;       // validated SPIR-V module
  std::vector<uint8_t> spirBitcode; // unoptimized spir64 LLVM 14 bitcode (cl_khr_spir)
  std::string warnings;             // clang's warning text, empty when none
  std::string buildOptions;         // canonical string of the options used
};

// Canonical option string stored next to the SPIR-V: `-cl-std=CL1.2 -DN=1 -Idir`
// (also valid clBuildProgram options for the OpenCL C source form), then the
// extraArgs as given. fullHeader does not appear: it does not change the output.
std::string canonicalBuildOptions(const CompileOptions &opts);

Expected<CompileResult> compileOpenCL(const std::string &source, const std::string &fileName,
                                      const CompileOptions &opts);

} // namespace cgraph
