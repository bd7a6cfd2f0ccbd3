// Modified Gram-Schmidt QR of an m x n row-major matrix a (m >= n), one column k per
// step, three kernels per step: a = q * r with q orthonormal columns, r upper triangular.
// Every kernel reads k, m and n as int scalars; a is overwritten (its columns right of
// k lose their projection on q's column k).

// r[k][k] = || a[:, k] ||_2, computed by work-item 0 alone.
__kernel void gs_norm(__global const float *a, __global float *r, int k, int m, int n) {
  if (get_global_id(0) != 0) return;
  float sum = 0.0f;
  for (int i = 0; i < m; ++i) {
    const float v = a[i * n + k];
    sum += v * v;
  }
  r[k * n + k] = sqrt(sum);
}

// q[:, k] = a[:, k] / r[k][k], one row per work-item.
__kernel void gs_scale(__global const float *a, __global const float *r, __global float *q,
                       int k, int m, int n) {
  const int i = (int)get_global_id(0);
  if (i < m) q[i * n + k] = a[i * n + k] / r[k * n + k];
}

// For every column j > k: r[k][j] = q[:, k] . a[:, j]; a[:, j] -= q[:, k] * r[k][j].
// Work-item g handles column j = g + k + 1; the range is n wide, so the last k + 1
// work-items have nothing to do.
__kernel void gs_update(__global float *a, __global float *r, __global const float *q, int k,
                        int m, int n) {
  const int j = (int)get_global_id(0) + k + 1;
  if (j >= n) return;
  float dot = 0.0f;
  for (int i = 0; i < m; ++i) dot += q[i * n + k] * a[i * n + j];
  r[k * n + j] = dot;
  for (int i = 0; i < m; ++i) a[i * n + j] -= q[i * n + k] * dot;
}
