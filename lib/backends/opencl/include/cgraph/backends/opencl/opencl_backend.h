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
// Replay uses cl_khr_command_buffer where the device has it. Without mutable dispatch a
// recording is specific to its binding set, so recordings are kept per (buffers,
// offsets, parameter values) set, a few at a time (docs/architecture.md decision 5); host
// task nodes split the recording. Without the extension, or in ExecMode::Eager, nodes
// are enqueued one by one on an in-order queue.
//
// Ownership: the returned Backend owns its Devices; a Device owns its cl_context and
// queue and must outlive every Buffer and Executable made from it.
// Thread-safety: as documented in cgraph/runtime/runtime.h (Device methods are
// thread-safe; one thread at a time per Executable).
// Failure modes: every OpenCL failure is returned as an Error naming the call and the
// OpenCL error code (`clBuildProgram: CL_BUILD_PROGRAM_FAILURE: <build log>`).
#pragma once

#include "cgraph/runtime/runtime.h"

#include <cstddef>
#include <memory>
#include <string>

namespace cgraph::opencl {

struct OpenCLBackendOptions {
  // Build kernels only through this path: "il", "spir" or "source" (tests and
  // benchmarks use it to exercise each path); empty = the best the device has.
  std::string forcePath;
  // Replay node by node even where cl_khr_command_buffer exists.
  bool disableCommandBuffers = false;
  // Recordings kept per executable, one per binding set (oldest dropped first).
  size_t maxRecordings = 8;
};

std::unique_ptr<rt::Backend> makeOpenCLBackend();
std::unique_ptr<rt::Backend> makeOpenCLBackend(const OpenCLBackendOptions &opts);

// Command-buffer recordings made so far by `exe` (one per new binding set); 0 for an
// executable of another backend or one that never replayed through command buffers.
uint64_t recordingsMade(const rt::Executable &exe);

} // namespace cgraph::opencl
