// y = a * x + y over n floats; one work-item per element.
__kernel void saxpy(__global float *y, __global const float *x, float a, uint n) {
  size_t i = get_global_id(0);
  if (i < n) y[i] = mad(a, x[i], y[i]);
}
