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
// file) is reported by Event::wait(); an LLVM code-generation error fails the lowering
// with its diagnostic. Nothing throws or prints.
#pragma once

#include "cgraph/runtime/env_options.h"
#include "cgraph/runtime/runtime.h"

#include <memory>
#include <optional>
#include <string>

namespace cgraph::cpu {

// Fields that are std::optional are filled, where the program left them unset, from the
// environment variable named beside them when the backend is made (parsed by
// cgraph/runtime/env_options.h), else take the default named there. An explicit value
// always wins. A variable that does not parse makes the backend unavailable: probe()
// gives the error (naming the variable and the value) as its reason and device()
// returns it.
struct CpuOptions {
  // Bounds-checked kernels, for graphs from untrusted .cgf files: every kernel access to
  // memory is checked against the byte ranges of the objects it may reach (buffer
  // arguments' bindings, __local allocations, private variables). A failed access is not
  // made (a load gives 0), the launch runs no further work-groups, and Event::wait()
  // fails naming the node, the kernel, the argument and the byte offset. Kernels compile
  // separately (the mode is part of their cache key) and run slower.
  bool checkBounds = false;
  // Kernels with barriers run as work-item fibers (Boost.Context) even where the cut at
  // their barriers into loops applies; that cut is faster, and fibers are otherwise
  // only its fallback: this exercises the fallback on every barrier kernel (tests).
  // Compiled apart (part of the cache key). Unset: CGRAPH_CPU_FIBERS (a flag), else off.
  std::optional<bool> barrierFibers;
  // A directory: the optimized IR of every module compiled (not found in the cache) is
  // written there as `<module>.ll` (debugging). Unset: CGRAPH_CPU_DUMP_DIR, else none.
  std::optional<std::string> dumpDir;
  // The kernel cache's directory and disk tier; unset fields follow the environment
  // (CGRAPH_CACHE_DIR, CGRAPH_CACHE_PERSISTENT).
  rt::KernelCacheOptions cache;
};

// `options` with every optional field filled: the environment where unset, then the
// defaults above (dumpDir stays unset when neither gives one). Errors: a variable that
// does not parse (Invalid, naming it).
Expected<CpuOptions> resolveOptions(const CpuOptions &options);

std::unique_ptr<rt::Backend> makeCpuBackend();
std::unique_ptr<rt::Backend> makeCpuBackend(const CpuOptions &options);

// A Buffer over `bytes` bytes of the caller's host memory at `ptr`, bound without a copy
// (the C API binds its callers' arrays this way). The buffer does not own the memory:
// the caller keeps it valid and unmoved until the buffer is destroyed and every
// submission that binds it has completed. Kernels see exactly `bytes` bytes.
// Failures: `device` not a cpu device (Unsupported); a null `ptr` with `bytes` > 0
// (Invalid). Thread-safe; allocates only the small buffer object.
Expected<std::unique_ptr<rt::Buffer>> wrapHostMemory(rt::Device &device, void *ptr, uint64_t bytes);

} // namespace cgraph::cpu
