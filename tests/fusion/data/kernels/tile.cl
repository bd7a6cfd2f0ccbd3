// Work-group tiles: `rot` and `rev` read other work-items' elements of t, but only
// inside their own work-group's tile (get_local_size(0) elements), so a work-group
// barrier orders them after the producer and t can live in __local memory. `far`
// reads another work-group's element: neither holds.
__kernel void produce(__global float *t, __global const float *x) {
  size_t i = get_global_id(0);
  t[i] = x[i] * 3.0f + 1.0f;
}
__kernel void rot(__global float *y, __global const float *t) {
  size_t l = get_local_id(0), n = get_local_size(0);
  size_t base = get_global_id(0) - l;
  y[get_global_id(0)] = t[base + (l + 1) % n];
}
__kernel void rev(__global float *y, __global const float *t) {
  size_t l = get_local_id(0), n = get_local_size(0);
  y[get_global_id(0)] += t[get_group_id(0) * n + (n - 1 - l)];
}
__kernel void far(__global float *y, __global const float *t, int n) {
  int i = get_global_id(0);
  y[i] = t[(i + 64) % n];
}
// Integer producer/consumer on tiles (bit-exact comparisons).
__kernel void iproduce(__global int *t, __global const int *x) {
  int i = get_global_id(0);
  t[i] = x[i] * 5 + 3;
}
__kernel void irot(__global int *y, __global const int *t) {
  int l = get_local_id(0), n = get_local_size(0);
  y[get_global_id(0)] = t[get_group_id(0) * n + (l + 3) % n] ^ t[get_global_id(0)];
}
