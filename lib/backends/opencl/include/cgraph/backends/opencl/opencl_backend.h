// The OpenCL backend: replays cgraph graphs on any OpenCL device (PoCL in CI).
//
// The vendor runtime is loaded at run time with dlopen("libOpenCL.so.1") (docs/architecture.md
// decision 4): programs linking this backend run on machines without OpenCL, and
// probe() reports why no device was found (library missing, no platform, no device).
//
// Kernel forms, best first: SPIR-V IL (CL_DEVICE_IL_VERSION / cl_khr_il_program), SPIR
// (LLVM 14 spir64 bitcode converted from the SPIR-V, `-x spir -spir-std=1.2`,
// cl_khr_spir), the OpenCL C source carried by the module (FormKind::OpenCLC).
//
// Replay (ExecMode::Replay) has two strategies, chosen per device when it is described
// (probe, device) and reported in rt::DeviceInfo::replay:
// - "command-buffer": cl_khr_command_buffer recordings, one or more per device
//   partition, sync points from the graph's edges.
// - "pre-resolved": per node a cl_kernel with its arguments already set, launch sizes,
//   copy/fill operands and cl_mem handles resolved, kept in one flat list; a submission
//   is one loop of clEnqueueNDRangeKernel / clEnqueueCopyBuffer[Rect] /
//   clEnqueueFillBuffer calls on the in-order queue with no events between them (the
//   stored order is topological, and partitions run in index order); host partitions
//   drain the queue first. Per-node profiling works in this strategy (one event per
//   node, only when asked).
// The rule: OpenCLBackendOptions::replay when not Auto; else the environment variable
// CGRAPH_OPENCL_REPLAY=command-buffer|pre-resolved (any other value makes the backend
// unavailable, with a probe reason naming it); else "command-buffer" where the device
// has cl_khr_command_buffer and is not PoCL's CPU device, "pre-resolved" otherwise.
// PoCL's CPU device runs its own command buffers slower per node than its eager
// enqueue (benchmarks/opencl/bench_pocl), so replaying through them cannot be fast
// there. A device without cl_khr_command_buffer always gets "pre-resolved".
// Without mutable dispatch both strategies are specific to a binding set: they are
// kept per (buffers, offsets, parameter values) set, a few at a time
// (docs/architecture.md decision 5). In ExecMode::Eager nodes are enqueued one by one
// with their arguments set at each submission.
//
// Ownership: the returned Backend owns its Devices; a Device owns its cl_context and
// queue and must outlive every Buffer and Executable made from it.
// Thread-safety: as documented in cgraph/runtime/runtime.h (Device methods are
// thread-safe; one thread at a time per Executable).
// Failure modes: every OpenCL failure is returned as an Error naming the call and the
// OpenCL error code (`clBuildProgram: CL_BUILD_PROGRAM_FAILURE: <build log>`).
#pragma once

#include "cgraph/runtime/env_options.h"
#include "cgraph/runtime/runtime.h"

#include <cstddef>
#include <memory>
#include <string>

namespace cgraph::opencl {

struct OpenCLBackendOptions {
  // Build kernels only through this path: "il", "spir" or "source" (tests and
  // benchmarks use it to exercise each path); empty = the best the device has.
  std::string forcePath;
  // Never replay through cl_khr_command_buffer: the "pre-resolved" strategy even where
  // `replay` asks for command buffers.
  bool disableCommandBuffers = false;
  // The replay strategy (see above); Auto (unset) = CGRAPH_OPENCL_REPLAY
  // (`command-buffer` or `pre-resolved`, parsed by cgraph/runtime/env_options.h), else
  // the rule. An explicit value wins over the variable; a variable that does not parse
  // makes the backend unavailable, with a reason naming it and its value.
  enum class Replay { Auto, CommandBuffer, PreResolved };
  Replay replay = Replay::Auto;
  // Recordings (command buffers or pre-resolved node lists) kept per executable, one
  // per binding set (oldest dropped first).
  size_t maxRecordings = 8;
  // The kernel cache's directory and disk tier; unset fields follow the environment
  // (CGRAPH_CACHE_DIR, CGRAPH_CACHE_PERSISTENT: cgraph/runtime/env_options.h).
  rt::KernelCacheOptions cache;
};

std::unique_ptr<rt::Backend> makeOpenCLBackend();
std::unique_ptr<rt::Backend> makeOpenCLBackend(const OpenCLBackendOptions &opts);

// Recordings made so far by `exe` (one per new binding set: a set of command buffers,
// or a pre-resolved node list); 0 for an executable of another backend or one that
// never replayed.
uint64_t recordingsMade(const rt::Executable &exe);

} // namespace cgraph::opencl
