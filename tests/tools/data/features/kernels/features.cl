// Kernels of the feature-coverage description. SCALE and USE_BIAS come from the
// description's per-file "defines"; common.h from its "include" directory.
#include "common.h"

#ifndef SCALE
#error "SCALE must be defined by the graph description"
#endif

__kernel void scale(__global float *out, __global const float *in, float alpha, uint n) {
  uint i = get_global_id(0);
  if (i < n) out[i] = SCALE * alpha * in[i];
}

__kernel void block_sum(__global float *out, __global const float *in, __local float *scratch) {
  uint lid = get_local_id(0);
  scratch[lid] = in[get_global_id(0)];
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint s = get_local_size(0) / 2; s > 0; s >>= 1) {
    if (lid < s) scratch[lid] += scratch[lid + s];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (lid == 0) out[get_group_id(0)] = scratch[0];
}

__kernel void add_index(__global float *buf, int i) {
#ifdef USE_BIAS
  buf[0] += (float)i;
#endif
}
