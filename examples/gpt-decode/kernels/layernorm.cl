// y[r, :] = (x[r, :] - mean) / sqrt(var + eps) * g + b, one work-group of LN_WG work-items
// per row (global [LN_WG * rows], local [LN_WG]). Mean and variance are two passes, each a
// strided partial sum per work-item and a local-memory tree reduction, as numpy computes
// the variance (of the deviations, not E[x^2] - mean^2).
#ifndef LN_WG
#define LN_WG 128
#endif

// The sum of `v` over the work-group; `red` holds LN_WG floats. Every work-item returns it.
static float group_sum(float v, __local float *red) {
  const int lid = get_local_id(0);
  red[lid] = v;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int s = LN_WG / 2; s > 0; s >>= 1) {
    if (lid < s) red[lid] += red[lid + s];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  const float total = red[0];
  barrier(CLK_LOCAL_MEM_FENCE); // red is reused by the next call
  return total;
}

__kernel __attribute__((reqd_work_group_size(LN_WG, 1, 1)))
void layernorm(__global float *y, __global const float *x, __global const float *g,
               __global const float *b, int n, float eps) {
  __local float red[LN_WG];
  const int lid = get_local_id(0);
  const size_t row = get_group_id(0);
  __global const float *xr = x + row * n;
  float s = 0.0f;
  for (int k = lid; k < n; k += LN_WG) s += xr[k];
  const float mean = group_sum(s, red) / (float)n;
  float q = 0.0f;
  for (int k = lid; k < n; k += LN_WG) {
    const float dev = xr[k] - mean;
    q += dev * dev;
  }
  const float inv = 1.0f / sqrt(group_sum(q, red) / (float)n + eps);
  for (int k = lid; k < n; k += LN_WG) y[row * n + k] = (xr[k] - mean) * inv * g[k] + b[k];
}
