// A compute-heavy element update (64 dependent multiply-adds), so a kernel over 16M
// floats takes long enough that two GPUs running two of them at once is visible.
__kernel void churn(__global float *x) {
  size_t i = get_global_id(0);
  float v = x[i];
  for (int k = 0; k < 64; ++k) v = v * 0.999f + 0.001f;
  x[i] = v;
}
