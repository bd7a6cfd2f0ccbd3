// A work-group reduction through __local memory between two elementwise kernels:
// fusing it keeps barriers (local memory is shared by the work-group) and still
// promotes the transient t, which every kernel accesses at its own index.
__kernel void gsum(__global float *out, __global const float *in, __local float *tmp) {
  size_t l = get_local_id(0), i = get_global_id(0);
  tmp[l] = in[i];
  barrier(CLK_LOCAL_MEM_FENCE);
  float s = 0;
  for (size_t k = 0; k < get_local_size(0); ++k) s += tmp[k];
  out[i] = s;
}
__kernel void twice(__global float *out, __global const float *in) {
  size_t i = get_global_id(0);
  out[i] = 2.0f * in[i];
}
