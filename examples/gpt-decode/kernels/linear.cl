// y[r, o] (op)= epilogue(sum_k x[r, k] * w[o, k] + bias[o]): the projections of a decode
// step, w in [out, in] row-major (torch nn.Linear) layout, x [rows, k_dim], y [rows, o_dim].
//
// At decode batch sizes this is a matrix-vector product and memory-bound: the weights
// must stream once per step at close to memory bandwidth. So one work-group of LIN_WG
// work-items computes LIN_OR output columns for LIN_NB batch rows: the work-items split K
// (float4 loads along the weight rows, consecutive work-items on consecutive float4s),
// each keeps LIN_OR x LIN_NB partial sums, and a local-memory tree reduction combines
// those of the rows present (its additions spread over all work-items). Each weight element is read by one work-group per LIN_NB batch rows, so once per
// step for rows <= LIN_NB; every x row read is shared by LIN_OR weight rows.
//
// nd-range: global [ceil_div(o_dim, LIN_OR) * LIN_WG, ceil_div(rows, LIN_NB)],
//           local [LIN_WG, 1]. k_dim must be a multiple of 4.
// epilogue: bit 0 adds bias, bit 1 applies gelu (tanh form), bit 2 accumulates into y
// (y += ..., the residual connection) instead of storing. bias is not read without bit 0.
#ifndef LIN_WG
#define LIN_WG 64
#endif
#ifndef LIN_NB
#define LIN_NB 8
#endif
#ifndef LIN_OR
#define LIN_OR 4
#endif

#if LIN_WG == 64
#define LIN_WG_LOG2 6
#elif LIN_WG == 128
#define LIN_WG_LOG2 7
#elif LIN_WG == 256
#define LIN_WG_LOG2 8
#else
#error "LIN_WG must be 64, 128 or 256"
#endif

#define EPI_BIAS 1
#define EPI_GELU 2
#define EPI_ACCUMULATE 4
#define LIN_ACC (LIN_OR * LIN_NB)

static float gelu_tanh(float x) {
  const float c = 0.7978845608028654f; // sqrt(2 / pi)
  return 0.5f * x * (1.0f + tanh(c * (x + 0.044715f * x * x * x)));
}

// Sums red[a * LIN_WG + 0 .. LIN_WG) into red[a * LIN_WG] for accumulators a < active: a
// tree (halving per level), each level's additions spread over all work-items so that
// few active accumulators (small batches) or many cost the same number of levels.
static void reduce_partials(__local float *red, int lid, int active) {
  for (int s = LIN_WG / 2, shift = LIN_WG_LOG2 - 1; s > 0; s >>= 1, --shift) {
    for (int idx = lid; idx < (active << shift); idx += LIN_WG) {
      const int a = idx >> shift, e = idx & (s - 1);
      red[a * LIN_WG + e] += red[a * LIN_WG + e + s];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
}

__kernel __attribute__((reqd_work_group_size(LIN_WG, 1, 1)))
void linear(__global float *y, __global const float *x, __global const float *w,
            __global const float *bias, int rows, int k_dim, int o_dim, int epilogue) {
  __local float red[LIN_ACC * LIN_WG];
  const int lid = get_local_id(0);
  const int o0 = get_group_id(0) * LIN_OR;
  const int r0 = get_group_id(1) * LIN_NB;
  const int nr = min(LIN_NB, rows - r0);
  const int k4 = k_dim / 4;

  float acc[LIN_ACC];
  for (int a = 0; a < LIN_ACC; ++a) acc[a] = 0.0f;
  __global const float *wrow[LIN_OR];
  for (int j = 0; j < LIN_OR; ++j) // columns past o_dim read the last row, never stored
    wrow[j] = w + (size_t)min(o0 + j, o_dim - 1) * k_dim;
  __global const float *xs = x + (size_t)r0 * k_dim;

  for (int k = lid; k < k4; k += LIN_WG) {
    float4 wv[LIN_OR];
    for (int j = 0; j < LIN_OR; ++j) wv[j] = vload4(k, wrow[j]);
    for (int r = 0; r < LIN_NB; ++r) {
      if (r < nr) {
        const float4 xv = vload4(k, xs + (size_t)r * k_dim);
        for (int j = 0; j < LIN_OR; ++j) acc[r * LIN_OR + j] += dot(wv[j], xv);
      }
    }
  }

  // Accumulator a = r * LIN_OR + j: the rows present (r < nr) are the first ones.
  const int active = nr * LIN_OR;
  for (int a = 0; a < LIN_ACC; ++a)
    if (a < active) red[a * LIN_WG + lid] = acc[a];
  barrier(CLK_LOCAL_MEM_FENCE);
  reduce_partials(red, lid, active);

  if (lid < active) {
    const int r = lid / LIN_OR, o = o0 + lid % LIN_OR;
    if (o < o_dim) {
      float v = red[lid * LIN_WG];
      if (epilogue & EPI_BIAS) v += bias[o];
      if (epilogue & EPI_GELU) v = gelu_tanh(v);
      __global float *dst = y + (size_t)(r0 + r) * o_dim + o;
      *dst = (epilogue & EPI_ACCUMULATE) ? *dst + v : v;
    }
  }
}
