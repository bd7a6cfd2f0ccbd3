// Kernels for the stored-expression tests (test_exprs.cpp): their nd-ranges and some
// scalar arguments are expressions over graph parameters, evaluated per submission.
// No `cgtest:` cases (the cross-backend suite has nothing to run here).

// One LU elimination step without pivoting on an n x n row-major matrix (leading
// dimension n): work-item g updates row k + 1 + g. `rows` = n - k - 1 (an expression).
__kernel void lu_step(__global float *a, int k, int n, int rows) {
  int g = (int)get_global_id(0);
  if (g >= rows) return;
  int i = k + 1 + g;
  float l = a[i * n + k] / a[k * n + k];
  a[i * n + k] = l;
  for (int j = k + 1; j < n; ++j) a[i * n + j] -= l * a[k * n + j];
}

// Records the launch shape: out[0..5] = global size, local size, offset (dim 0), and
// the scalar argument; every work-item adds 1 to out[6 + global id].
__kernel void shape(__global int *out, int s) {
  size_t g = get_global_id(0);
  if (g == get_global_offset(0)) {
    out[0] = (int)get_global_size(0);
    out[1] = (int)get_local_size(0);
    out[2] = (int)get_global_offset(0);
    out[3] = s / 1000;
  }
  atomic_add(&out[6 + g], 1);
}
