// Attention of one decode step for one layer, split over the cache positions
// (split-K, "flash decoding") so that a small batch still fills a GPU:
//
// attention_part: one work-group of ATT_WG work-items per (head, sequence, chunk of
//   ATT_CHUNK positions); global [ATT_WG * heads, rows, ceil_div(t + 1, ATT_CHUNK)],
//   local [ATT_WG, 1, 1]. It writes the chunk's softmax statistics and unnormalized
//   weighted sum of v into part[(i * heads + head) * NCH_MAX + chunk]: a record of
//   HD + 4 floats, [max, sum of exp, -, -, acc[HD]].
// attention_combine: one work-group of HD work-items per (head, sequence); global
//   [HD * heads, rows], local [HD, 1]. It rescales the chunks' records to a common
//   maximum and writes out[i, head * HD ..] = acc / sum.
//
// qkv [rows, 3 * d_model] holds q, k, v of this step; k_cache and v_cache point at this
// layer's [B_MAX, T_MAX, d_model] part. The work-group whose chunk holds position t
// stores that head's k and v into the caches; every work-group takes position t straight
// from qkv, so the caches are read once (positions 0..t-1), never where they are written.
// HD (head dimension, a multiple of 4), T_MAX and NCH_MAX = ceil_div(T_MAX, ATT_CHUNK)
// come from the graph; ATT_CHUNK <= ATT_WG, and ATT_WG / (HD / 4) is a power of two.
// qkv and the caches are 16-byte aligned (slots are, by default; every head's row then is
// too, and so is this layer's offset into the caches): k and v rows are
// read as float4s, one load each (vload4 may only assume a float's alignment).
#ifndef ATT_WG
#define ATT_WG 128
#endif
#ifndef ATT_CHUNK
#define ATT_CHUNK 64
#endif

#define ATT_LANES (HD / 4)             // work-items per position in the weighted sum
#define ATT_GROUPS (ATT_WG / ATT_LANES) // positions summed side by side
#define ATT_REC (HD + 4)               // floats per partial record

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
void attention_part(__global float *part, __global const float *qkv, __global float *k_cache,
                    __global float *v_cache, int t, int d_model) {
  __local float4 q4[HD / 4];
  __local float *q = (__local float *)q4;
  __local float scores[ATT_CHUNK];
  __local float red[ATT_WG];
  __local float4 red4[ATT_WG];
  const int lid = get_local_id(0);
  const int head = get_group_id(0), heads = get_num_groups(0);
  const size_t i = get_group_id(1);
  const int chunk = get_group_id(2);
  const int p0 = chunk * ATT_CHUNK, p1 = min(p0 + ATT_CHUNK, t + 1);
  __global const float *qrow = qkv + i * 3 * d_model + head * HD;
  __global const float *k_new = qrow + d_model;
  __global const float *v_new = qrow + 2 * d_model;
  const size_t base = i * T_MAX * d_model + head * HD; // position 0 of this head
  const float scale = 1.0f / sqrt((float)HD);

  for (int d = lid; d < HD; d += ATT_WG) {
    q[d] = qrow[d];
    if (p1 == t + 1) { // this chunk holds position t
      k_cache[base + (size_t)t * d_model + d] = k_new[d];
      v_cache[base + (size_t)t * d_model + d] = v_new[d];
    }
  }
  barrier(CLK_LOCAL_MEM_FENCE);

  float s = -INFINITY;
  const int p = p0 + lid;
  if (lid < ATT_CHUNK && p < p1) {
    __global const float *kp = p == t ? k_new : k_cache + base + (size_t)p * d_model;
    float dotv = 0.0f;
    for (int d = 0; d < HD / 4; ++d) dotv += dot(q4[d], ((__global const float4 *)kp)[d]);
    s = dotv * scale;
  }
  const float m = group_reduce(s, red, 1);
  const float e = (lid < ATT_CHUNK && p < p1) ? exp(s - m) : 0.0f;
  if (lid < ATT_CHUNK) scores[lid] = e;
  const float sum = group_reduce(e, red, 0); // its barriers also publish scores[]

  const int lane = lid % ATT_LANES, g = lid / ATT_LANES;
  float4 acc = (float4)(0.0f);
  for (int pp = p0 + g; pp < p1; pp += ATT_GROUPS) {
    __global const float *vp = pp == t ? v_new : v_cache + base + (size_t)pp * d_model;
    acc += scores[pp - p0] * ((__global const float4 *)vp)[lane];
  }
  red4[lid] = acc;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int st = ATT_GROUPS / 2; st > 0; st >>= 1) {
    if (g < st) red4[lid] += red4[lid + st * ATT_LANES];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  __global float *rec = part + ((i * heads + head) * NCH_MAX + chunk) * ATT_REC;
  if (lid == 0) {
    rec[0] = m;
    rec[1] = sum;
  }
  if (lid < ATT_LANES) vstore4(red4[lid], lid + 1, rec); // acc starts at float 4
}

__kernel __attribute__((reqd_work_group_size(HD, 1, 1)))
void attention_combine(__global float *out, __global const float *part, int t, int d_model) {
  const int d = get_local_id(0);
  const int head = get_group_id(0), heads = get_num_groups(0);
  const size_t i = get_group_id(1);
  const int chunks = (t + ATT_CHUNK) / ATT_CHUNK; // ceil_div(t + 1, ATT_CHUNK)
  __global const float *recs = part + (i * heads + head) * NCH_MAX * ATT_REC;
  float m = -INFINITY;
  for (int c = 0; c < chunks; ++c) m = fmax(m, recs[c * ATT_REC]);
  float sum = 0.0f, acc = 0.0f;
  for (int c = 0; c < chunks; ++c) {
    const float w = exp(recs[c * ATT_REC] - m);
    sum += recs[c * ATT_REC + 1] * w;
    acc += recs[c * ATT_REC + 4 + d] * w;
  }
  out[i * d_model + head * HD + d] = acc / sum;
}
