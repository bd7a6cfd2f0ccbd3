// A two-kernel matrix-vector step for the fusion tests: p = A x (one row per
// work-item), then q = 2 p + 1 at the work-item's own index. Both outputs are
// transient slots: results that must stay in the graph unless named scratch.
__kernel void matvec(__global float *p, __global const float *A, __global const float *x,
                     int n) {
  int i = get_global_id(0);
  float s = 0.0f;
  for (int k = 0; k < n; ++k)
    s += A[i * n + k] * x[k];
  p[i] = s;
}
__kernel void affine(__global float *q, __global const float *p) {
  int i = get_global_id(0);
  q[i] = 2.0f * p[i] + 1.0f;
}
