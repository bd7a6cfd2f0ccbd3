// One time step of a two-kernel loop, b = f(a); a = g(b): each kernel reads one slot
// and writes the other at the work-item's own index.
__kernel void step_f(__global const float *a, __global float *b) {
  size_t i = get_global_id(0);
  b[i] = a[i] * 0.5f + 1.0f;
}
__kernel void step_g(__global const float *b, __global float *a) {
  size_t i = get_global_id(0);
  a[i] = b[i] - 0.25f;
}
