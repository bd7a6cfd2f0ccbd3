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

namespace cgraph::kernel_detail {

// SPIRV-Tools accepts some modules that the translator's reader (built with
// assertions in Debian) aborts on; this refuses those, naming the word, so the
// reader never sees them. Call it on already validated modules only.
Error checkReaderPreconditions(const uint8_t *data, size_t size, const std::string &name);

} // namespace cgraph::kernel_detail
