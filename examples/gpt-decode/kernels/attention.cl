// Attention of one decode step for one layer: one work-group of ATT_WG work-items per
// (head, sequence) (global [ATT_WG * heads, rows], local [ATT_WG, 1]).
//
// qkv [rows, 3 * d_model] holds q, k, v of this step; k_cache and v_cache point at this
// layer's [B_MAX, T_MAX, d_model] part. The work-group stores its head's k and v of
// position t into the caches and uses them straight from qkv, so the caches are read
// once (positions 0..t-1) and never read where this kernel writes. Scores of positions
// 0..t live in local memory (T_MAX floats); softmax with the maximum subtracted.
// The weighted sum splits positions over ATT_WG / HD groups of HD work-items (one per
// dimension, consecutive work-items on consecutive floats), then a tree over the groups.
#ifndef ATT_WG
#define ATT_WG 128
#endif
// HD (head dimension, a multiple of 4 dividing ATT_WG) and T_MAX come from the graph.

#define ATT_GROUPS (ATT_WG / HD)

// Tree reduction over the work-group; is_max selects max instead of sum.
static float group_reduce(float v, __local float *red, int is_max) {
  const int lid = get_local_id(0);
  red[lid] = v;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int s = ATT_WG / 2; s > 0; s >>= 1) {
    if (lid < s) red[lid] = is_max ? fmax(red[lid], red[lid + s]) : red[lid] + red[lid + s];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  const float total = red[0];
  barrier(CLK_LOCAL_MEM_FENCE);
  return total;
}

__kernel __attribute__((reqd_work_group_size(ATT_WG, 1, 1)))
void attention(__global float *out, __global const float *qkv, __global float *k_cache,
               __global float *v_cache, int t, int d_model) {
  __local float q[HD];
  __local float scores[T_MAX];
  __local float red[ATT_WG];
  const int lid = get_local_id(0);
  const int head = get_group_id(0);
  const size_t i = get_group_id(1);
  __global const float *qrow = qkv + i * 3 * d_model + head * HD;
  __global const float *k_new = qrow + d_model;
  __global const float *v_new = qrow + 2 * d_model;
  const size_t base = i * T_MAX * d_model + head * HD; // position 0 of this head
  const float scale = 1.0f / sqrt((float)HD);

  for (int d = lid; d < HD; d += ATT_WG) {
    q[d] = qrow[d];
    k_cache[base + (size_t)t * d_model + d] = k_new[d];
    v_cache[base + (size_t)t * d_model + d] = v_new[d];
  }
  barrier(CLK_LOCAL_MEM_FENCE);

  float m = -INFINITY;
  for (int p = lid; p <= t; p += ATT_WG) {
    __global const float *kp = p == t ? k_new : k_cache + base + (size_t)p * d_model;
    float s = 0.0f;
    for (int d = 0; d < HD / 4; ++d) s += dot(vload4(d, q), vload4(d, kp));
    s *= scale;
    scores[p] = s;
    m = fmax(m, s);
  }
  m = group_reduce(m, red, 1);
  float sum = 0.0f;
  for (int p = lid; p <= t; p += ATT_WG) {
    const float e = exp(scores[p] - m);
    scores[p] = e;
    sum += e;
  }
  sum = group_reduce(sum, red, 0); // its barriers also publish scores[]

  const int d = lid % HD, g = lid / HD;
  float acc = 0.0f;
  for (int p = g; p <= t; p += ATT_GROUPS) {
    __global const float *vp = p == t ? v_new : v_cache + base + (size_t)p * d_model;
    acc += scores[p] * vp[d];
  }
  red[lid] = acc;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int s = ATT_GROUPS / 2; s > 0; s >>= 1) {
    if (g < s) red[lid] += red[lid + s * HD];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (lid < HD) out[i * d_model + head * HD + lid] = red[lid] / sum;
}
