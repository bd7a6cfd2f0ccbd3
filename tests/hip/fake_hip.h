// A recording fake of the HIP runtime table (lib/backends/hip/src/hip_api.h) for the
// hipGraph construction and submission tests. TEST-ONLY (target cgraph_hip_fake): the
// one permitted stand-in, because no AMD GPU exists where the tests run.
//
// Every entry point has the exact prototype of HIP 5.2's hip_runtime_api.h (the table's
// members are decltype(&::hipX), so a mismatch does not compile). The fake:
//   - records every call, in order (Recorder::calls);
//   - hands out "device memory" from the host heap, so uploads and readbacks move real
//     bytes and a test can read the device-resident slot table;
//   - checks arguments the way the runtime would: code objects must be ELF64 AMDGPU
//     shared objects (hipModuleLoadData), a function must have its `<name>.kd`
//     descriptor in the module, kernel nodes need a known function, a work-group of at
//     most 1024 work-items, kernelParams and no `extra`, dependencies of the same graph;
//     a violation is a failed call (hipErrorInvalidValue / hipErrorNotFound) and a line
//     in Recorder::violations;
//   - runs no kernel: what a launch does is not simulated.
// Thread-safety: none (one test thread). Lifetime: the recorder lives for the process;
// reset() clears the call log (handles of live objects stay valid).
#pragma once

#include "hip_api.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace cgraph::hip::fake {

struct GraphNodeRec {
  enum Kind { Kernel, Memcpy, Memset, Empty, Child } kind = Empty;
  uintptr_t graph = 0;
  std::vector<uintptr_t> deps;  // graph nodes it depends on
  hipKernelNodeParams kernel{}; // Kernel (kernelParams points into the executable)
  std::string function;         // Kernel: the function's name
  hipMemcpy3DParms memcpy{};    // Memcpy
  hipMemsetParams memset{};     // Memset
  uintptr_t child = 0;          // Child: the graph given to hipGraphAddChildGraphNode
};

struct Recorder {
  std::vector<std::string> calls;                         // entry point names, in call order
  std::vector<std::string> violations;                    // argument checks that failed
  std::map<uintptr_t, std::vector<uint8_t>> memory;       // device allocations by base address
  std::map<uintptr_t, GraphNodeRec> nodes;                // by graph node handle
  std::map<uintptr_t, std::vector<uintptr_t>> graphNodes; // graph -> its nodes in add order
  std::map<uintptr_t, uintptr_t> execs;                   // exec -> graph
  std::map<uintptr_t, std::string> functions;             // function handle -> kernel name
  std::vector<std::pair<uintptr_t, hipKernelNodeParams>>
      execUpdates;                      // hipGraphExecKernelNodeSetParams (node, params)
  std::vector<uintptr_t> graphLaunches; // exec per hipGraphLaunch
  std::vector<std::pair<std::string, hipKernelNodeParams>>
      eagerLaunches;                                 // hipModuleLaunchKernel (name, params)
  std::vector<std::pair<uintptr_t, size_t>> uploads; // hipMemcpyHtoDAsync (dst, bytes)
  size_t count(const std::string &call) const;
};

Recorder &recorder();
void reset();
// The table, every member pointing into the fake.
const HipApi &api();
// Bytes of fake device memory at `address` (an address inside an allocation).
const uint8_t *deviceBytes(uint64_t address);

} // namespace cgraph::hip::fake
