// Kernels for the --auto cost model: an elementwise step, and one keeping a private
// array of 1100 floats (4400 bytes per work-item) that no cleanup removes.
__kernel void step(__global float *out, __global const float *in) {
  size_t i = get_global_id(0);
  out[i] = in[i] * 1.5f + 2.0f;
}
__kernel void table(__global float *out, __global const float *in) {
  size_t i = get_global_id(0);
  float buf[1100];
  for (int k = 0; k < 1100; ++k) buf[k] = in[i] * (float)k;
  out[i] = buf[(i * 7) % 1100];
}
