// Helpers shared by the cgraph_kernel sources; not installed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "cgraph/error.h"

namespace llvm {
class LLVMContext;
class Module;
} // namespace llvm

namespace cgraph::kernel_detail {

// clang's resource directory (the one holding include/opencl-c.h), found once.
// Empty when none was found.
const std::string &clangResourceDir();

// Reads already validated SPIR-V into `ctx` with the translator (OpenCL 1.2 builtin
// spelling). `name` prefixes error messages.
Expected<std::unique_ptr<llvm::Module>> readValidSpirv(llvm::LLVMContext &ctx, const uint8_t *data,
                                                       size_t size, const std::string &name);

} // namespace cgraph::kernel_detail
