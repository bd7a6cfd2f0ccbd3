// C[M x N] = A[M x K] * B[K x N], row-major, tiled through local memory.
// The two TILE x TILE tiles are __local arguments sized by the graph description.
#ifndef TILE
#define TILE 16
#endif

__kernel void matmul(__global float *restrict C, __global const float *restrict A,
                     __global const float *restrict B, uint M, uint N, uint K,
                     __local float *As, __local float *Bs) {
  uint col = get_global_id(0);
  uint row = get_global_id(1);
  uint lx = get_local_id(0);
  uint ly = get_local_id(1);
  float acc = 0.0f;
  for (uint t = 0; t < K; t += TILE) {
    As[ly * TILE + lx] = (row < M && t + lx < K) ? A[row * K + t + lx] : 0.0f;
    Bs[ly * TILE + lx] = (t + ly < K && col < N) ? B[(t + ly) * N + col] : 0.0f;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint k = 0; k < TILE; ++k) acc = mad(As[ly * TILE + k], Bs[k * TILE + lx], acc);
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (row < M && col < N) C[row * N + col] = acc;
}
