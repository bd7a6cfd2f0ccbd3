// Building a cgraph::KernelModule from a compile result.
//
// forms[0] is the SPIR-V (target "spirv64", options = CompileResult::buildOptions);
// then, when `source` is given, the OpenCL C source (target "opencl-c"); then, when
// `keepBitcode` and the result has it, the spir64 LLVM bitcode (target "spir64").
//
// Ownership: copies everything it needs; `source` is borrowed for the call.
// Thread-safety: pure function. Failures: none.
#pragma once

#include <string>

#include "cgraph/kernel/opencl_compiler.h"
#include "cgraph/model.h"

namespace cgraph {

KernelModule makeKernelModule(std::string name, const CompileResult &result,
                              const std::string *source /*nullable*/, bool keepBitcode);

} // namespace cgraph
