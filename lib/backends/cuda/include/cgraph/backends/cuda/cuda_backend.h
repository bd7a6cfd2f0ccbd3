// The CUDA backend: replays cgraph graphs as CUDA graphs on NVIDIA GPUs.
//
// The driver is loaded at run time with dlopen("libcuda.so.1") (docs/architecture.md decision
// 4); programs linking this backend run anywhere, and probe() says why no device was
// found (library not found, driver too old, no device).
//
// Kernels: a matching cubin form (`nvptx64-sm_XY` equal to the device's compute
// capability), else the newest PTX form the device can JIT, else SPIR-V lowered here
// (ptx.h). PTX becomes a cubin through cuLink*, stored in lib/cache's persistent cache
// under (compute capability, driver version, lowering version, PTX hash): a warm start
// does no PTX JIT.
//
// Replay: one CUDA graph per partition of the flattened graph, instantiated and uploaded
// at finalize; host-task partitions run between them on the host. Kernel buffer
// arguments and graph parameters are read from a small device-resident table (ptx.h),
// so a new binding table or new parameter values cost one table upload plus the graph
// launches, with no per-node driver call (decision 5): the parameters of the graph's
// table-loader node (one cuGraphExecKernelNodeSetParams), or a copy from pinned memory
// where there is no loader (eager mode, tables over 496 values). On sm_90 and newer,
// kernel-to-kernel edges are programmatic (ptx.h waitsForGridDependencies). Copies and fills of
// runtime-owned slots are memcpy/memset nodes; those that touch a binding-table slot are
// table-reading kernels, so they rebind for free too. Eager: the same launches, one by
// one on the device's stream (cuLaunchKernel, cuMemcpy3DAsync, cuMemset*Async).
// Large 1-D ranges of kernels that cannot tell which thread runs a work-item launch
// one thread per 4 work-items (CudaBackendOptions::coarsenMinItems).
//
// Ownership: the Backend owns its Devices; a Device owns its primary-context reference
// and stream and must outlive every Buffer and Executable made from it.
// Thread-safety: as cgraph/runtime/runtime.h (Device methods thread-safe; one thread at
// a time per Executable). Failure modes: every driver failure is an Error naming the
// call, the node where there is one, and the CUDA error name
// (`node 'k3': cuLaunchKernel: CUDA_ERROR_LAUNCH_FAILED (unspecified launch failure)`).
#pragma once

#include "cgraph/runtime/env_options.h"
#include "cgraph/runtime/runtime.h"

#include <cstdint>
#include <memory>
#include <optional>

namespace cgraph::cuda {

// Fields that are std::optional are filled, where the program left them unset, from
// the environment variable named beside them when the backend is made (parsed by
// cgraph/runtime/env_options.h), else take the default named there. An explicit value
// always wins over the environment. A variable that does not parse makes the backend
// unavailable: probe() gives the error (naming the variable and the value) as its
// reason and device() returns it.
struct CudaBackendOptions {
  bool ignoreEmbeddedForms = false; // always lower the SPIR-V (tests)
  // Kernel -> kernel edges of replay graphs are programmatic where the downstream
  // kernel waits for its grid dependencies (sm_90 and newer; ptx.h): it launches while
  // the upstream one finishes and reads its table entries, then waits. Off: every edge
  // is a full dependency (the benchmark's comparison).
  bool programmaticEdges = true;
  // Kernel nodes with a fixed 1-D range of at least this many work-items run the
  // kernel's coarse entry where the lowering made one (4 work-items per thread, 16-byte
  // accesses: codegen/table_abi.h `coarsen`); 0: never. Below about a
  // million items the 4x smaller grid costs more parallelism than the wider accesses
  // gain. Unset: CGRAPH_CUDA_COARSEN_MIN (a count), else 2^20.
  std::optional<uint64_t> coarsenMinItems;
  // Replay graphs load their table through the ring loader (gpu_common driver.h
  // ringLoader): a submission writes the table into pinned host memory and calls no
  // driver function but cuGraphLaunch, new bindings or not; the device reads that
  // memory once per launch (about a microsecond ahead of the first node). Off: the
  // parameter loader, whose new table is one cuGraphExecKernelNodeSetParams (1-2 us of
  // host time) and costs no device time while the bindings stay. Unset:
  // CGRAPH_CUDA_TABLE_RING (a flag), else on.
  std::optional<bool> tableRing;
  // With the ring loader: a submission's completion is a count the last graph's final
  // node writes to pinned host memory (the done marker, src/exec.h), not a
  // cuEventRecord per submission (0.13-0.2 us of host time). Waiting reads that word
  // (spinning, then yielding, then sleeping in 20 us steps) and asks cuStreamQuery
  // now and then, so a device fault is still an error. Profiled submissions, eager
  // mode and graphs with native conditionals record events as before. Unset: on (off
  // only for the benchmark's comparison).
  std::optional<bool> completionWord;
  // Small pinned host blocks (the table ring, its launch count, the done word, small
  // staging buffers) come from a pool of reused pinned chunks (gpu_common
  // pinned_pool.h) instead of one cuMemAllocHost each per finalize. Unset: on (off
  // only for the benchmark's comparison).
  std::optional<bool> pinnedPool;
  // `if`/`while` nodes become CUDA conditional nodes where the body allows it (native);
  // false: they always run runtime-driven (rt::finalizeStaged), as on other backends.
  // Unset: CGRAPH_CUDA_CONDITIONALS (`native` or `staged`), else native.
  std::optional<bool> nativeConditionals;
  // Where the disk tier of the kernel cache lives, and whether there is one (as
  // lib/cache's CacheConfig::root / persistent). Unset: CGRAPH_CACHE_DIR and
  // CGRAPH_CACHE_PERSISTENT through lib/cache's own rules.
  rt::KernelCacheOptions cache;
};

// `opts` with every optional field filled: the environment where unset, then the
// defaults above. Errors: a variable that does not parse (Invalid, naming it).
Expected<CudaBackendOptions> resolveOptions(const CudaBackendOptions &opts);

std::unique_ptr<rt::Backend> makeCudaBackend(const CudaBackendOptions &opts = {});

// Counters the tests and benchmarks read; zeros for a device of another backend.
struct CudaCounters {
  uint64_t lowerings = 0;      // SPIR-V -> PTX in this process
  uint64_t ptxJits = 0;        // cuLinkComplete runs (PTX -> cubin)
  uint64_t cubinForms = 0;     // modules loaded from an embedded cubin form
  uint64_t graphsInstantiated = 0;
  uint64_t tableUploads = 0;   // binding/parameter table uploads
  uint64_t nodeUpdates = 0;    // cuGraphExecKernelNodeSetParams calls
  uint64_t conditionalNodes = 0; // CUDA conditional nodes built (native if/while)
  uint64_t coarsePlans = 0;    // kernel launches planned on a coarse entry (4 items per thread)
  uint64_t tableCopies = 0;    // table uploads copied from pinned staging (no loader node)
  uint64_t programmaticEdges = 0; // programmatic edges added to replay graphs
  uint64_t ringLaunches = 0;   // replay launches whose table came through the ring loader
  uint64_t ringGrowths = 0;    // table rings doubled because every entry was in flight
  uint64_t wordCompletions = 0; // submissions whose completion is the host-memory count (no event)
  uint64_t pinnedAllocations = 0; // cuMemAllocHost calls (the pinned pool's chunks included)
};
CudaCounters counters(const rt::Device &device);

// The comparison path of the rebinding benchmark: re-sets every kernel node of every
// replay graph of `exe` with cuGraphExecKernelNodeSetParams (what a backend without the
// table would do per new binding table). Error for executables of other backends.
Error updateEveryKernelNode(rt::Executable &exe);
// The other comparison path of the benchmarks: launches the replay graphs of `exe` as
// they are (cuGraphLaunch only: no binding table, validation or completion event), on
// the device's stream, for the driver's share of a submission's host time. The device
// must be current on the calling thread; a graph with host-task partitions is an error.
Error launchGraphsOnly(rt::Executable &exe);

// A Buffer over `bytes` bytes of the caller's device memory at `address` (a CUdeviceptr
// of `device`'s primary context, which is the context CUDA's runtime API, PyTorch and
// CuPy use), bound without a copy. The buffer does not own the memory: the caller keeps
// it allocated until the buffer is destroyed and every submission that binds it has
// completed. Failures: `device` not a cuda device (Unsupported); a null address with
// `bytes` > 0, an address that is not device memory, or a range past the end of its
// allocation (Invalid; checked with cuMemGetAddressRange where the driver has it).
// Thread-safe.
Expected<std::unique_ptr<rt::Buffer>> wrapDeviceMemory(rt::Device &device, uint64_t address, uint64_t bytes);

} // namespace cgraph::cuda
