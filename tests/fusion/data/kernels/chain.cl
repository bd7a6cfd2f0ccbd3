// Elementwise kernels for the fusion tests and benchmark: each work-item touches only
// its own element, so a chain of them fuses without barriers and its intermediates
// can live in private memory.
__kernel void scale(__global float *out, __global const float *in, float s) {
  size_t i = get_global_id(0);
  out[i] = in[i] * s;
}
__kernel void addc(__global float *out, __global const float *in, float c) {
  int i = get_global_id(0);
  out[i] = in[i] + c;
}
__kernel void square(__global float *out, __global const float *in) {
  size_t i = get_global_id(0);
  float v = in[i];
  out[i] = v * v;
}
__kernel void addv(__global float *out, __global const float *a, __global const float *b) {
  size_t i = get_global_id(0);
  out[i] = a[i] + b[i];
}
// Integer chain (bit-exact comparisons).
__kernel void imul(__global int *out, __global const int *in, int m) {
  size_t i = get_global_id(0);
  out[i] = in[i] * m;
}
__kernel void ixor(__global int *out, __global const int *in, int m) {
  size_t i = get_global_id(0);
  out[i] = in[i] ^ m;
}
// Reads the neighbour: fusing after a kernel that writes `in` needs more than a
// private variable.
__kernel void shift(__global float *out, __global const float *in, int n) {
  int i = get_global_id(0);
  out[i] = i + 1 < n ? in[i + 1] : 0.0f;
}
