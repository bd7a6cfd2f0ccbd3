// Row-wise reductions: one work-group per row, local size a power of two, a __local
// scratch array of local-size floats given by the graph description.

static float reduceSum(__local float *scratch, float v) {
  uint lid = get_local_id(0);
  scratch[lid] = v;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint s = get_local_size(0) / 2; s > 0; s >>= 1) {
    if (lid < s) scratch[lid] += scratch[lid + s];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  float r = scratch[0];
  barrier(CLK_LOCAL_MEM_FENCE);
  return r;
}

static float reduceMax(__local float *scratch, float v) {
  uint lid = get_local_id(0);
  scratch[lid] = v;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint s = get_local_size(0) / 2; s > 0; s >>= 1) {
    if (lid < s) scratch[lid] = fmax(scratch[lid], scratch[lid + s]);
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  float r = scratch[0];
  barrier(CLK_LOCAL_MEM_FENCE);
  return r;
}

__kernel void layernorm(__global float *restrict out, __global const float *restrict in,
                        __global const float *restrict gamma, __global const float *restrict beta,
                        uint cols, float eps, __local float *scratch) {
  uint row = get_group_id(0);
  uint lid = get_local_id(0);
  uint lsz = get_local_size(0);
  __global const float *x = in + (size_t)row * cols;
  float s = 0.0f;
  for (uint c = lid; c < cols; c += lsz) s += x[c];
  float mean = reduceSum(scratch, s) / cols;
  float v = 0.0f;
  for (uint c = lid; c < cols; c += lsz) {
    float d = x[c] - mean;
    v = mad(d, d, v);
  }
  float rstd = rsqrt(reduceSum(scratch, v) / cols + eps);
  for (uint c = lid; c < cols; c += lsz)
    out[(size_t)row * cols + c] = mad((x[c] - mean) * rstd, gamma[c], beta[c]);
}

__kernel void softmax(__global float *restrict out, __global const float *restrict in, uint cols,
                      __local float *scratch) {
  uint row = get_group_id(0);
  uint lid = get_local_id(0);
  uint lsz = get_local_size(0);
  __global const float *x = in + (size_t)row * cols;
  float m = -INFINITY;
  for (uint c = lid; c < cols; c += lsz) m = fmax(m, x[c]);
  m = reduceMax(scratch, m);
  float s = 0.0f;
  for (uint c = lid; c < cols; c += lsz) s += exp(x[c] - m);
  float inv = 1.0f / reduceSum(scratch, s);
  for (uint c = lid; c < cols; c += lsz) out[(size_t)row * cols + c] = exp(x[c] - m) * inv;
}
