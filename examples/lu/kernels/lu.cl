// LU decomposition without pivoting of an n x n row-major matrix a, in place: after
// the last step the strictly lower part of a holds L (unit diagonal implied) and the
// upper part U, with a = L * U. Meant for diagonally dominant inputs (no pivoting).
// One step k per pair of launches, each over a range that shrinks with k.

// Column k below the diagonal: a[i][k] /= a[k][k] for i = first .. n-1 (first = k + 1,
// passed as the expression "$k + 1"). The range is n - k - 1 rounded up to the
// work-group size; the extra work-items do nothing.
__kernel void lu_scale(__global float *a, int k, int first, int n) {
  const int i = (int)get_global_id(0) + first;
  if (i < n) a[i * n + k] /= a[k * n + k];
}

// Trailing submatrix: a[i][j] -= a[i][k] * a[k][j] for i, j = k+1 .. n-1. The nd-range
// starts at the global offset (k + 1, k + 1), so global ids are matrix indices
// (dimension 0: column j, dimension 1: row i).
__kernel void lu_update(__global float *a, int k, int n) {
  const int j = (int)get_global_id(0);
  const int i = (int)get_global_id(1);
  if (i < n && j < n) a[i * n + j] -= a[i * n + k] * a[k * n + j];
}
