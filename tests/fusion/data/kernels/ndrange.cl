// Kernels over 1-, 2- and 3-dimensional ranges that touch element
// `global linear id` of their buffers, so that chains of them with different shapes
// fuse by work-item remapping and still compute the same values.
__kernel void fill2(__global float *t, __global const float *x) {
  size_t w = get_global_size(0);
  size_t i = get_global_id(1) * w + get_global_id(0);
  t[i] = x[i] * 2.0f + (float)get_global_id(1);
}
__kernel void use2(__global float *y, __global const float *t) {
  size_t w = get_global_size(0);
  size_t i = get_global_id(1) * w + get_global_id(0);
  y[i] = t[i] + (float)get_global_id(0);
}
// The same with its own work-group count (remapped where its range shrinks).
__kernel void use2g(__global float *y, __global const float *t) {
  size_t w = get_global_size(0);
  size_t i = get_global_id(1) * w + get_global_id(0);
  y[i] = t[i] + (float)get_global_id(0) + 0.25f * (float)get_num_groups(1);
}
__kernel void fill3(__global float *t, __global const float *x) {
  size_t i = (get_global_id(2) * get_global_size(1) + get_global_id(1)) * get_global_size(0) +
             get_global_id(0);
  t[i] = x[i] + (float)get_global_id(2) + (float)get_work_dim();
}
__kernel void use1(__global float *y, __global const float *t) {
  size_t i = get_global_id(0);
  y[i] = t[i] * 0.5f + (float)get_global_size(0);
}
// Depends on its work-group (local id): its local size counts.
__kernel void use1l(__global float *y, __global const float *t) {
  size_t i = get_global_id(0);
  y[i] = t[i] * 0.5f + (float)get_local_id(0);
}
// A work-group reduction (barrier): must not be remapped.
__kernel void gsum2(__global float *y, __global const float *t, __local float *s) {
  size_t l = get_local_id(1) * get_local_size(0) + get_local_id(0);
  size_t w = get_global_size(0);
  size_t i = get_global_id(1) * w + get_global_id(0);
  s[l] = t[i];
  barrier(CLK_LOCAL_MEM_FENCE);
  y[i] = s[0];
}
