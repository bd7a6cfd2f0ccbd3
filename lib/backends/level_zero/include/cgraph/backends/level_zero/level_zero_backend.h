// The Level Zero backend: replays cgraph graphs on Level Zero devices (Intel GPUs).
//
// NOT PROVEN ON HARDWARE: no Level Zero device exists on any machine this project is
// built and tested on. What CI checks is the command-list construction logic, through
// a recording fake of the driver table (tests/level_zero) that checks every call's
// arguments against the API header's types and the call order; the conformance suite
// against the cpu backend is registered and reports SKIPPED without a device.
//
// The loader is opened at run time with dlopen("libze_loader.so.1") (docs/architecture.md
// decision 4): programs linking this backend run on machines without it, and probe()
// says why no device was found ("libze_loader.so.1 not found", "no Level Zero device").
//
// Kernels: the SPIR-V form only, the native input of zeModuleCreate (no lowering);
// every module is validated with lib/kernel's validateSpirv before it is handed to the
// driver, and a build failure returns the driver's build log. The device's native
// binaries are kept in lib/cache's kernel cache (FinalizeOptions::useCache).
//
// Replay (ExecMode::Replay, DeviceInfo::replay = "command-list"): regular command lists
// recorded once per binding set (buffers, offsets, parameter values) and closed, then
// executed on the device's one compute queue per submission. Inside a list, the graph's
// edges become events (a command signals its event, its successors wait for it), device
// partitions are separated by barriers and every event is reset at the end, so the list
// can run again. As in the SYCL graph design, the submission's wait list and its
// completion are handled outside the recorded list: events of earlier submissions are
// waited for on the host before the list is executed, and completion is a fence given to
// zeCommandQueueExecuteCommandLists. Host tasks split the lists (runtime-driven: the
// queue is synchronized, the task's slots are copied to the host and back).
// Why not the mutable command list extension: loader 1.8's headers (API 1.4) do not
// declare it, so a new binding set or parameter value is a new recording; up to
// `maxRecordings` are kept per executable (oldest dropped first), like the opencl backend.
// Eager mode appends node by node to a synchronous immediate command list. Per-node
// profiling (kernel timestamps, zeEventQueryKernelTimestamp) works in both modes: a
// profiled replay runs its own recording per binding set, whose events come from a
// kernel-timestamp pool (one per kernel node) and are read, then reset, on the host when
// the submission completes (its event's first wait()).
//
// Ownership: the returned Backend owns its Devices; a Device owns its context, queue
// and immediate list and must outlive every Buffer, Executable and Event made from it.
// Thread-safety: as documented in cgraph/runtime/runtime.h (Device methods are
// thread-safe; one thread at a time per Executable).
// Failure modes: every Level Zero call is checked; errors name the call, the node and
// the ze_result_t (`node 'k2': zeCommandListAppendLaunchKernel:
// ZE_RESULT_ERROR_INVALID_ARGUMENT`).
#pragma once

#include "cgraph/runtime/env_options.h"
#include "cgraph/runtime/runtime.h"

#include <cstddef>
#include <cstdint>
#include <memory>

namespace cgraph::level_zero {

struct ZeDriverTable; // ze_driver_table.h

struct LevelZeroBackendOptions {
  // The driver table to use instead of libze_loader.so.1 (tests: the recording fake).
  // Not owned; must outlive the backend.
  const ZeDriverTable *driverTable = nullptr;
  // Recordings (command lists for one binding set) kept per executable.
  size_t maxRecordings = 8;
  // The kernel cache's directory and disk tier; unset fields follow the environment
  // (CGRAPH_CACHE_DIR, CGRAPH_CACHE_PERSISTENT: cgraph/runtime/env_options.h). The
  // backend reads no variable of its own.
  rt::KernelCacheOptions cache;
};

std::unique_ptr<rt::Backend> makeLevelZeroBackend();
std::unique_ptr<rt::Backend> makeLevelZeroBackend(const LevelZeroBackendOptions &opts);

// Recordings made so far by `exe` (one per new binding set or parameter values); 0 for
// an executable of another backend.
uint64_t recordingsMade(const rt::Executable &exe);

} // namespace cgraph::level_zero
