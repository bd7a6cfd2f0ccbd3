// A recording fake of the Level Zero driver table, for tests only (the one permitted
// stand-in: no Level Zero device exists where this project is built and tested).
//
// It implements every entry point of cgraph::level_zero::ZeDriverTable with the real
// header's signatures and types, and
// - checks every argument the way the specification states it: handles must be live
//   objects of the right kind, descriptors must carry the right `stype`, a module must
//   be valid SPIR-V (SPIRV-Tools, through lib/kernel) and a kernel name must exist in
//   it, kernel argument indices and sizes must match the kernel's signature (reflected
//   from that SPIR-V), pointer arguments and copy/fill ranges must lie inside live
//   device allocations, group sizes must respect the device limits, command queues and
//   lists must use a compute group ordinal, a closed list takes no appends and an open
//   one is never executed;
// - records one line per call (calls()), in order, naming handles by kind and creation
//   number (`list#2`, `ev#0`, `mem#1+64`);
// - executes command lists in order on host memory when they are executed (copies and
//   fills really move bytes, so transfers can be checked; kernel launches are counted
//   and logged, not run), checking event use on the way: a command that waits for an
//   event nothing signalled before it (it would hang), an event signalled twice without
//   a reset, a fence waited for that was never submitted, a timestamp queried from a
//   pool without ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP.
// Every misuse is recorded in violations() (and the call fails with the result the
// specification names, where it names one).
//
// Ownership: one process-wide fake; install() resets it. Thread-safety: every entry
// point takes one mutex. Failure modes: none of its own; see FakeConfig for injected
// failures.
#pragma once

#include "cgraph/backends/level_zero/ze_driver_table.h"

#include <cstdint>
#include <string>
#include <vector>

namespace cgraph::level_zero::fake {

struct FakeConfig {
  ze_result_t initResult = ZE_RESULT_SUCCESS; // zeInit's answer (no driver: UNINITIALIZED)
  uint32_t devices = 1;
  bool globalOffsetExtension = true; // reports ZE_experimental_global_offset
  bool mutableCommandListExtension = false;
  size_t maxFillPatternSize = 16; // of the compute queue group
  uint32_t maxGroupSize = 256;    // total and per dimension (z: a quarter)
  std::string failCall;           // this entry point fails once, with failResult
  ze_result_t failResult = ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY;
  std::string buildLog; // non-empty: zeModuleCreate fails with this log
};

// Resets the fake (every object, allocation, log and violation) and returns its table.
const ZeDriverTable &install(const FakeConfig &config = {});

// One line per call since install() or clearCalls().
std::vector<std::string> calls();
// Only the lines starting with one of `prefixes`.
std::vector<std::string> calls(const std::vector<std::string> &prefixes);
void clearCalls();
std::vector<std::string> violations();
// Objects created and not destroyed (handles and device allocations), by kind: "list",
// "ev", "mem", ...; empty when everything was released.
std::vector<std::string> liveObjects();
// Kernel launches executed (by kernel name), and command list executions, so far.
uint64_t kernelRuns(const std::string &kernel);
uint64_t listExecutions();

} // namespace cgraph::level_zero::fake
