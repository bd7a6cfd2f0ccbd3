__kernel void axpy(__global float *y, __global const float *x, float a) {
  size_t i = get_global_id(0);
  y[i] = a * x[i] + y[i];
}

// Alternatives of axpy: the same signature (axpy_ref), a different one (axpy_int).
__kernel void axpy_ref(__global float *y, __global const float *x, float a) {
  size_t i = get_global_id(0);
  y[i] = y[i] + x[i] * a;
}
__kernel void axpy_int(__global int *y, __global const int *x, int a) {
  size_t i = get_global_id(0);
  y[i] = a * x[i] + y[i];
}
