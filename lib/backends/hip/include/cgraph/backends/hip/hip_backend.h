// The HIP backend: replays cgraph graphs as hipGraphs on AMD GPUs.
//
// NEVER RUN ON A DEVICE: no AMD GPU exists where this was written or in CI. What is
// checked there: every test kernel's code object (amdgcn.h) with llvm-readobj-14, and
// the hipGraph construction and submission logic through a recording fake of the HIP
// table (tests/hip). The conformance test is registered and reports SKIPPED with the
// probe's reason where there is no device.
//
// The runtime is loaded at run time with dlopen("libamdhip64.so" / ".so.5"); programs
// linking this backend run anywhere, and probe() says why no device was found
// ("libamdhip64.so not found", no device).
//
// Kernels: the SPIR-V form lowered to an amdgcn code object for the device's gfx
// processor (amdgcn.h), kept in lib/cache's persistent cache under (device, runtime
// version, lowering version, SPIR-V): a warm start does not lower or link.
//
// Replay: one hipGraph per partition of the flattened graph, instantiated once at
// finalize; host-task partitions run between them on the host. Kernels take the table
// ABI of the cuda backend (lib/codegen's table_abi.h, launch_plan.h): buffer
// arguments and parameters are read from a device-resident table, so a new binding
// table or new parameter values cost one table upload (only when the table changed)
// plus the graph launches. Nodes whose nd-range reads a parameter are updated with
// hipGraphExecKernelNodeSetParams when their launch changes. Copies and fills of
// runtime-owned slots are memcpy/memset nodes; those touching a binding-table slot are
// table-reading kernels. HIP 5.2 has no conditional nodes: graphs with conditionals
// run runtime-driven (rt::finalizeStaged). Eager: the same launches one by one on the
// device's stream.
//
// Ownership: the Backend owns its Devices; a Device owns its stream and must outlive
// every Buffer and Executable made from it. Thread-safety: as cgraph/runtime/runtime.h.
// Failure modes: every runtime failure is an Error naming the call, the node where
// there is one, and the HIP error name.
#pragma once

#include "cgraph/runtime/env_options.h"
#include "cgraph/runtime/runtime.h"

#include <cstdint>
#include <memory>

namespace cgraph::hip {

struct HipBackendOptions {
  bool useCache = true; // false: never read or write lib/cache for code objects (tests)
  // The kernel cache's directory and disk tier; unset fields follow the environment
  // (CGRAPH_CACHE_DIR, CGRAPH_CACHE_PERSISTENT: cgraph/runtime/env_options.h). The
  // backend's own variables (CGRAPH_LLD, CGRAPH_HIP_DUMP_IR) are tool paths and a
  // debugging aid, read where they are used.
  rt::KernelCacheOptions cache;
};

std::unique_ptr<rt::Backend> makeHipBackend(const HipBackendOptions &opts = {});

// Counters the tests read; zeros for a device of another backend.
struct HipCounters {
  uint64_t lowerings = 0;          // SPIR-V -> code object in this process
  uint64_t graphsInstantiated = 0; // hipGraphInstantiate calls
  uint64_t tableUploads = 0;       // binding/parameter table uploads
  uint64_t nodeUpdates = 0;        // hipGraphExecKernelNodeSetParams calls
};
HipCounters counters(const rt::Device &device);

} // namespace cgraph::hip
