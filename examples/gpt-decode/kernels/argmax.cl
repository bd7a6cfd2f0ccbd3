// next[r] = argmax_v logits[r, v], the lowest index among equal maxima. One work-group of
// AM_WG work-items per row (global [AM_WG, rows], local [AM_WG, 1]): strided scans, then
// a local-memory tree reduction of (value, index) pairs.
#ifndef AM_WG
#define AM_WG 256
#endif

__kernel __attribute__((reqd_work_group_size(AM_WG, 1, 1)))
void argmax(__global int *next, __global const float *logits, int vocab) {
  __local float best_v[AM_WG];
  __local int best_i[AM_WG];
  const int lid = get_local_id(0);
  const size_t row = get_group_id(1);
  __global const float *lr = logits + row * vocab;
  float bv = -INFINITY;
  int bi = vocab; // past the end: loses every comparison below
  for (int v = lid; v < vocab; v += AM_WG) {
    const float x = lr[v];
    if (x > bv || bi == vocab) { // increasing v: strict > keeps the lowest index
      bv = x;
      bi = v;
    }
  }
  best_v[lid] = bv;
  best_i[lid] = bi;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int s = AM_WG / 2; s > 0; s >>= 1) {
    if (lid < s) {
      const float ov = best_v[lid + s];
      const int oi = best_i[lid + s];
      const float mv = best_v[lid];
      const int mi = best_i[lid];
      // The other pair wins with a larger value, or an equal one at a lower index.
      if (oi < vocab && (mi == vocab || ov > mv || (ov == mv && oi < mi))) {
        best_v[lid] = ov;
        best_i[lid] = oi;
      }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (lid == 0) next[row] = best_i[0];
}
