// x[i, :] = wte[tokens[i], :] + wpe[t, :] for the b sequences of one decode step. One
// work-group per sequence (global [b * WG], local [WG], any WG), the shape of
// layernorm.cl's rows, so that cgfuse can put the two in one kernel. A token outside
// [0, vocab) is clamped so that no read leaves wte; the caller gives valid tokens.
// EMB_HALF defined: wte holds float16 (gen_graph.py --weights f16), read with vload_half.
#ifdef EMB_HALF
#define WTE_TYPE half
#define WTE_AT(i) vload_half((i), wte)
#else
#define WTE_TYPE float
#define WTE_AT(i) wte[(i)]
#endif
__kernel void embed(__global float *x, __global const WTE_TYPE *wte, __global const float *wpe,
                    __global const int *tokens, int t, int d_model, int vocab) {
  const size_t i = get_group_id(0);
  const int token = clamp(tokens[i], 0, vocab - 1);
  for (int d = get_local_id(0); d < d_model; d += get_local_size(0))
    x[i * d_model + d] = WTE_AT((size_t)token * d_model + d) + wpe[(size_t)t * d_model + d];
}
