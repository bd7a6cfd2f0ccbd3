// The CPU backend: OpenCL kernels (SPIR-V) JIT-compiled for the host with LLVM 14 ORC,
// work-groups run in parallel on a oneTBB pool.
//
// Ownership: makeCpuBackend() returns a Backend owned by the caller (usually moved into
// an rt::Registry). The backend owns its single Device ("cpu:0"), created on first
// use; the Device owns the JIT and the in-memory cache of compiled kernel modules,
// which live as long as the Device. Buffers and Executables must be destroyed before
// the Backend.
// Thread-safety: as rt::Device / rt::Backend (all Device methods are thread-safe;
// kernels are compiled under a per-device lock, one module at a time).
// Failure modes: every error is a value (rt::Expected / rt::Error): a SPIR-V module
// that fails to translate or uses an unsupported builtin is reported at finalize
// naming the module and the symbol; a failure while running (host task, missing
// file) is reported by Event::wait(). Nothing throws or prints.
#pragma once

#include "cgraph/runtime/runtime.h"

#include <memory>

namespace cgraph::cpu {

std::unique_ptr<rt::Backend> makeCpuBackend();

} // namespace cgraph::cpu
