// Basic kernels: elementwise, 2D/3D indexing, offsets, scalar args of every width.
__kernel void axpy(float a, __global const float *x, __global float *y) {
  size_t i = get_global_id(0);
  y[i] = a * x[i] + y[i];
}

__kernel void scale_int(__global int *v, int k) {
  size_t i = get_global_id(0);
  v[i] = v[i] * k;
}

// Writes, for every work-item, its ids and sizes (8 ints per item), row-major over
// the global range (offset removed).
__kernel void ids(__global int *out) {
  size_t gx = get_global_id(0) - get_global_offset(0);
  size_t gy = get_global_id(1) - get_global_offset(1);
  size_t gz = get_global_id(2) - get_global_offset(2);
  size_t i = (gz * get_global_size(1) + gy) * get_global_size(0) + gx;
  __global int *o = out + 8 * i;
  o[0] = (int)get_global_id(0);
  o[1] = (int)get_global_id(1);
  o[2] = (int)get_global_id(2);
  o[3] = (int)(get_local_id(0) + 100 * get_local_id(1) + 10000 * get_local_id(2));
  o[4] = (int)(get_group_id(0) + 100 * get_group_id(1) + 10000 * get_group_id(2));
  o[5] = (int)(get_local_size(0) * get_local_size(1) * get_local_size(2));
  o[6] = (int)(get_num_groups(0) * get_num_groups(1) * get_num_groups(2));
  o[7] = (int)get_work_dim();
}

__kernel void scalars(__global long *out, char c, uchar uc, short s, ushort us, int i, uint ui,
                      long l, ulong ul, float f, double d) {
  out[0] = c; out[1] = uc; out[2] = s; out[3] = us; out[4] = i; out[5] = ui;
  out[6] = l; out[7] = (long)ul; out[8] = (long)(f * 1000.0f); out[9] = (long)(d * 1000.0);
}

__kernel void matmul(__global const float *restrict a, __global const float *restrict b,
                     __global float *restrict c, int n) {
  int col = get_global_id(0);
  int row = get_global_id(1);
  float acc = 0.0f;
  for (int k = 0; k < n; ++k) acc += a[row * n + k] * b[k * n + col];
  c[row * n + col] = acc;
}
