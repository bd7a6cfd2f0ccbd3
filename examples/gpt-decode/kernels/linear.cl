// y[r, o] (op)= epilogue(sum_k x[r, k] * w[o, k] + bias[o]): the projections of a decode
// step, w in [out, in] row-major (torch nn.Linear) layout, x [rows, k_dim], y [rows, o_dim].
// One kernel with two ways of splitting the work, chosen by `rows` against the `tiled_min`
// argument (uniform per launch):
//
// rows <= tiled_min (matrix-vector products, memory-bound): the weights must stream
// at close to memory bandwidth. A work-group of LIN_WG work-items computes LIN_OR output
// columns for a block of LIN_NB rows: the work-items split K (float4 loads along the
// weight rows, consecutive work-items on consecutive float4s), each keeps LIN_OR x LIN_NB
// partial sums, and a local-memory tree reduction combines them (its additions spread
// over all work-items). Each x row read serves LIN_OR weight rows; each weight is read
// once per block of LIN_NB rows, so once per step for rows <= LIN_NB.
// nd-range: global [ceil_div(o_dim, LIN_OR) * LIN_WG, ceil_div(rows, LIN_NB)],
//           local [LIN_WG, 1].
//
// rows > tiled_min (compute-bound): tiles of LT_O output columns x LT_R rows, K in
// steps of LT_K staged in local memory k-major (a k's 32 columns, then its 32 rows, each
// contiguous), each work-item a 4 x 4 register block of 4 consecutive columns and 4
// consecutive rows: one float4 of weights and one of x per k for its 16 sums.
// nd-range: global [ceil_div(o_dim, LT_O) * LIN_WG, ceil_div(rows, LT_R)], local [LIN_WG, 1].
//
// Split K (tiled way only): a third nd-range dimension of S > 1 work-groups per tile,
// group s summing the LT_K-wide steps s, s + S, s + 2S, ... of K; each writes its raw
// sums to part[s, r, o] ([S, rows, o_dim]) and linear_sum adds them up and applies the
// epilogue (a projection with few output columns and a long K has tiles too few to
// fill the GPU otherwise). Without it the third dimension is 1.
//
// k_dim must be a multiple of LT_K (so of 4). epilogue: bit 0 adds bias, bit 1 applies
// gelu (tanh form), bit 2 accumulates into y (y += ..., the residual connection) instead
// of storing. bias is not read without bit 0.
//
// LIN_HALF defined: w holds float16 (half the bytes to stream), read with vload_half4
// (core OpenCL C: half as a storage type) and computed with in float32.
#ifndef LIN_WG
#define LIN_WG 64
#endif
#ifndef LIN_NB
#define LIN_NB 8
#endif
#ifndef LIN_OR
#define LIN_OR 4
#endif

// float4 i of p: one 16-byte load (vload4 may only assume the float's alignment, and
// becomes four loads on GPUs). Every row read starts at a multiple of k_dim floats, k_dim
// is a multiple of 4, and w and x are 16-byte aligned (slots are, by default: the runtime
// refuses a binding that is not, and the graph's offsets into them are multiples of 16).
#define LOADF4(i, p) (((__global const float4 *)(p))[i])

#ifdef LIN_HALF
#define WTYPE half
#define WLOAD4(i, p) vload_half4((i), (p))
#else
#define WTYPE float
#define WLOAD4(i, p) LOADF4((i), (p))
#endif

#if LIN_WG != 64
#error "LIN_WG must be 64 (the tiled path is 8 x 8 work-items)"
#endif
#define LIN_WG_LOG2 6
#define LT_O 32
#define LT_R 32
#define LT_K 32

#define EPI_BIAS 1
#define EPI_GELU 2
#define EPI_ACCUMULATE 4
#define LIN_ACC (LIN_OR * LIN_NB)
#define LT_PITCH (LT_O + 4) // floats per k in a staged tile: float4-aligned, 2-way store conflicts at most
#define LT_TILE (LT_K * LT_PITCH) // floats per staged tile (LT_O == LT_R)
#define LIN_LOCAL (LIN_ACC * LIN_WG > 2 * LT_TILE ? LIN_ACC * LIN_WG : 2 * LT_TILE)

static float gelu_tanh(float x) {
  const float c = 0.7978845608028654f; // sqrt(2 / pi)
  return 0.5f * x * (1.0f + tanh(c * (x + 0.044715f * x * x * x)));
}

static void store(__global float *y, __global const float *bias, int r, int o, int o_dim,
                  int epilogue, float v) {
  if (epilogue & EPI_BIAS) v += bias[o];
  if (epilogue & EPI_GELU) v = gelu_tanh(v);
  __global float *dst = y + (size_t)r * o_dim + o;
  *dst = (epilogue & EPI_ACCUMULATE) ? *dst + v : v;
}

// Sums red[a * LIN_WG + 0 .. LIN_WG) into red[a * LIN_WG] for accumulators a < active: a
// tree (halving per level), each level's additions spread over all work-items.
static void reduce_partials(__local float *red, int lid, int active) {
  for (int s = LIN_WG / 2, shift = LIN_WG_LOG2 - 1; s > 0; s >>= 1, --shift) {
    for (int idx = lid; idx < (active << shift); idx += LIN_WG) {
      const int a = idx >> shift, e = idx & (s - 1);
      red[a * LIN_WG + e] += red[a * LIN_WG + e + s];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
}

// The matrix-vector way: this work-item's partial sums of LIN_OR columns for the `rows`
// (<= LIN_NB) rows of its block (x points at the first), over its share of K, into
// red[a * LIN_WG + lid] for a = r * LIN_OR + j.
static void gemv_partials(__global const float *x, __global const WTYPE *w, int rows, int k_dim,
                          int o_dim, __local float *red) {
  const int lid = get_local_id(0);
  const int o0 = get_group_id(0) * LIN_OR;
  const int k4 = k_dim / 4;
  // Every loop over acc, wrow and wv is unrolled: with constant indices they are
  // registers (an index the compiler cannot resolve puts an array in memory).
  float acc[LIN_ACC];
#pragma unroll
  for (int a = 0; a < LIN_ACC; ++a) acc[a] = 0.0f;
  __global const WTYPE *wrow[LIN_OR];
#pragma unroll
  for (int j = 0; j < LIN_OR; ++j) // columns past o_dim read the last row, never stored
    wrow[j] = w + (size_t)min(o0 + j, o_dim - 1) * k_dim;
  for (int k = lid; k < k4; k += LIN_WG) {
    float4 wv[LIN_OR];
#pragma unroll
    for (int j = 0; j < LIN_OR; ++j) wv[j] = WLOAD4(k, wrow[j]);
#pragma unroll
    for (int r = 0; r < LIN_NB; ++r) {
      if (r < rows) {
        const float4 xv = LOADF4(k, x + (size_t)r * k_dim);
#pragma unroll
        for (int j = 0; j < LIN_OR; ++j) acc[r * LIN_OR + j] += dot(wv[j], xv);
      }
    }
  }
#pragma unroll
  for (int a = 0; a < LIN_ACC; ++a)
    if (a < rows * LIN_OR) red[a * LIN_WG + lid] = acc[a];
}

// A [LT_O rows, LT_K] block of `src` (row pitch k_dim) from row `row0`, column k0, moves
// to local memory k-major (tile[k * LT_PITCH + row]) in two halves: fetch_* reads this
// work-item's LT_PER float4s into registers (rows at or past `nrows` read as zeros)
// before the barrier that frees the tile, so the loads are in flight while the group
// waits there, and stage() writes them to the tile. Consecutive work-items read
// consecutive float4s of a row (whole sectors).
#define LT_PER (LT_O * LT_K / 4 / LIN_WG) // float4s of a tile per work-item
#define LIN_FETCH(NAME, T, LOAD4)                                                              \
  static void NAME(float4 *v, __global const T *src, int row0, int nrows, int k0, int k_dim,   \
                   int lid) {                                                                  \
    _Pragma("unroll") for (int i = 0; i < LT_PER; ++i) {                                       \
      const int idx = lid + i * LIN_WG, row = idx / (LT_K / 4), c4 = idx % (LT_K / 4);         \
      v[i] = (float4)(0.0f);                                                                   \
      if (row0 + row < nrows) v[i] = LOAD4(0, src + (size_t)(row0 + row) * k_dim + k0 + 4 * c4); \
    }                                                                                          \
  }
LIN_FETCH(fetch_x, float, LOADF4)
LIN_FETCH(fetch_w, WTYPE, WLOAD4)

static void stage(__local float *tile, const float4 *v, int lid) {
#pragma unroll
  for (int i = 0; i < LT_PER; ++i) {
    const int idx = lid + i * LIN_WG, row = idx / (LT_K / 4), c4 = idx % (LT_K / 4);
    __local float *t = tile + 4 * c4 * LT_PITCH + row;
    t[0] = v[i].x;
    t[LT_PITCH] = v[i].y;
    t[2 * LT_PITCH] = v[i].z;
    t[3 * LT_PITCH] = v[i].w;
  }
}

// Every barrier is at the kernel's top level, in loops whose trip counts are the same for
// the whole work-group, and the two ways differ only in those counts and in branches
// without barriers: a form every OpenCL implementation compiles alike (barriers inside
// one branch of an if/else are legal when uniform, but not every compiler copes).
__kernel __attribute__((reqd_work_group_size(LIN_WG, 1, 1)))
void linear(__global float *y, __global const float *x, __global const WTYPE *w,
            __global const float *bias, int rows, int k_dim, int o_dim, int epilogue, int tiled_min,
            __global float *part) {
  __local float4 scratch4[LIN_LOCAL / 4]; // float4-aligned: the tiles are read as float4s
  __local float *scratch = (__local float *)scratch4;
  const int lid = get_local_id(0);
  const int tiled = rows > tiled_min;

  // Matrix-vector way: partial sums of this block's rows, then a tree over the work-items.
  const int rb = get_group_id(1) * LIN_NB, nr = tiled ? 0 : min(LIN_NB, rows - rb);
  if (nr > 0) gemv_partials(x + (size_t)rb * k_dim, w, nr, k_dim, o_dim, scratch);
  barrier(CLK_LOCAL_MEM_FENCE);
  reduce_partials(scratch, lid, nr * LIN_OR);
  for (int a = lid; a < nr * LIN_OR; a += LIN_WG) { // LIN_NB * LIN_OR may exceed LIN_WG
    const int o = get_group_id(0) * LIN_OR + a % LIN_OR;
    if (o < o_dim) store(y, bias, rb + a / LIN_OR, o, o_dim, epilogue, scratch[a * LIN_WG]);
  }

  // Tiled way: a tile of LT_O columns x LT_R rows, each work-item a 4 x 4 block (columns
  // 4 tx .. 4 tx + 3, rows 4 ty .. 4 ty + 3 of the tile) in four float4s, one per row; no
  // trips when not tiled.
  __local float *wt = scratch, *xt = scratch + LT_TILE;
  const int tx = lid % 8, ty = lid / 8;
  const int o0 = get_group_id(0) * LT_O, r0 = get_group_id(1) * LT_R;
  const int split = get_group_id(2), splits = get_num_groups(2);
  float4 acc0 = (float4)(0.0f), acc1 = (float4)(0.0f), acc2 = (float4)(0.0f), acc3 = (float4)(0.0f);
  const int k_end = tiled ? k_dim : 0, k_step = splits * LT_K;
  float4 wreg[LT_PER], xreg[LT_PER];
  for (int k0 = split * LT_K; k0 < k_end; k0 += k_step) {
    fetch_w(wreg, w, o0, o_dim, k0, k_dim, lid);
    fetch_x(xreg, x, r0, rows, k0, k_dim, lid);
    barrier(CLK_LOCAL_MEM_FENCE); // the previous step (or the reduction) is done with scratch
    stage(wt, wreg, lid);
    stage(xt, xreg, lid);
    barrier(CLK_LOCAL_MEM_FENCE);
#pragma unroll
    for (int k = 0; k < LT_K; ++k) {
      const float4 wv = *(__local const float4 *)(wt + k * LT_PITCH + 4 * tx);
      const float4 xv = *(__local const float4 *)(xt + k * LT_PITCH + 4 * ty);
      acc0 = fma((float4)(xv.x), wv, acc0);
      acc1 = fma((float4)(xv.y), wv, acc1);
      acc2 = fma((float4)(xv.z), wv, acc2);
      acc3 = fma((float4)(xv.w), wv, acc3);
    }
  }
  if (tiled) {
    const float4 accs[4] = {acc0, acc1, acc2, acc3};
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const int r = r0 + 4 * ty + i;
      const float v[4] = {accs[i].x, accs[i].y, accs[i].z, accs[i].w};
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        const int o = o0 + 4 * tx + j;
        if (r >= rows || o >= o_dim) continue;
        if (splits > 1)
          part[((size_t)split * rows + r) * o_dim + o] = v[j];
        else
          store(y, bias, r, o, o_dim, epilogue, v[j]);
      }
    }
  }
}

// The second pass of a split K: y[r, o] (op)= epilogue(sum_s part[s, r, o] + bias[o]), one
// work-item per output; nothing when the launch took the matrix-vector way (rows <=
// tiled_min) or K was not split. nd-range: global [rows * o_dim rounded up], any local.
__kernel void linear_sum(__global float *y, __global const float *part, __global const float *bias,
                         int rows, int o_dim, int epilogue, int tiled_min, int k_splits) {
  const size_t i = get_global_id(0), n = (size_t)rows * o_dim;
  if (rows <= tiled_min || k_splits < 2 || i >= n) return;
  float v = 0.0f;
  for (int s = 0; s < k_splits; ++s) v += part[s * n + i];
  store(y, bias, (int)(i / o_dim), (int)(i % o_dim), o_dim, epilogue, v);
}
