// x[i, :] = wte[tokens[i], :] + wpe[t, :] for the b sequences of one decode step. One
// work-group per sequence (global [b * WG], local [WG], any WG), the shape of
// layernorm.cl's rows, so that cgfuse can put the two in one kernel. A token outside
// [0, vocab) is clamped so that no read leaves wte; the caller gives valid tokens.
__kernel void embed(__global float *x, __global const float *wte, __global const float *wpe,
                    __global const int *tokens, int t, int d_model, int vocab) {
  const size_t i = get_group_id(0);
  const int token = clamp(tokens[i], 0, vocab - 1);
  for (int d = get_local_id(0); d < d_model; d += get_local_size(0))
    x[i * d_model + d] = wte[(size_t)token * d_model + d] + wpe[(size_t)t * d_model + d];
}
