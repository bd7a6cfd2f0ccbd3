// The set-condition kernel of native conditional nodes (lib/backends/cuda, exec.h).
// Built at build time by nvcc (relocatable device code, device-linked with cudadevrt,
// which provides cudaGraphSetConditional) into a fatbin of cubins that the library
// embeds; it is the only CUDA C++ in the backend. One thread: reads the u32 condition
// from `table[slot] + offset` (the slot table of exec.h) and sets the conditional
// node's handle.
//   mode 0 (if, before the node):     handle = cond != 0
//   mode 1 (while, before the node):  trips = 0; handle = cond != 0
//   mode 2 (while, end of the body):  ++trips; if cond != 0 and trips >= maxTrips, the
//                                     loop stops and `exceeded` is set (the host turns
//                                     it into the submission's error); else handle = cond != 0
#include <cuda_runtime.h>

extern "C" __global__ void cgraph_set_condition(const unsigned long long *table, unsigned long long slot,
                                                unsigned long long offset, cudaGraphConditionalHandle handle,
                                                unsigned *state, unsigned mode, unsigned maxTrips) {
  const unsigned char *base = reinterpret_cast<const unsigned char *>(table[slot]);
  const unsigned cond = *reinterpret_cast<const volatile unsigned *>(base + offset);
  unsigned value = cond != 0 ? 1u : 0u;
  if (mode == 1) {
    state[0] = 0;
  } else if (mode == 2) {
    const unsigned trips = state[0] + 1;
    state[0] = trips;
    if (value && trips >= maxTrips) {
      state[1] = 1;
      value = 0;
    }
  }
  cudaGraphSetConditional(handle, value);
}
