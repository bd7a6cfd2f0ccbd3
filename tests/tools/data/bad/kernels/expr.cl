// Integer scalar parameters of several types, for the expression tests.
__kernel void shift(__global float *x, uint first, int n) {
  const int i = (int)get_global_id(0) + (int)first;
  if (i < n) x[i] += 1.0f;
}
