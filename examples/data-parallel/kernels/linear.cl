// A linear model y = X w trained by SGD on a mean squared error, data-parallel: each
// rank makes its own shard of the data set, computes the gradient of its rows, and an
// all_reduce(sum) over the ranks gives every rank the gradient of the global batch.

#define D 16

// The data set, row by row from its global index: x[j] in [-0.5, 0.5), t = x . w_true
// with w_true[j] = (j % 5) - 2. Rows [row0, row0 + get_global_size(0)) of it.
__kernel void make_shard(__global float *x, __global float *t, int row0) {
  const int r = get_global_id(0);
  const int g = row0 + r;
  float dot = 0.0f;
  for (int j = 0; j < D; ++j) {
    const float v = (float)((g * 7 + j * 3) % 11) / 11.0f - 0.5f;
    x[r * D + j] = v;
    dot += v * (float)((j % 5) - 2);
  }
  t[r] = dot;
}

// y[r] = x[r] . w
__kernel void forward(__global const float *x, __global const float *w, __global float *y) {
  const int r = get_global_id(0);
  float acc = 0.0f;
  for (int j = 0; j < D; ++j) acc += x[r * D + j] * w[j];
  y[r] = acc;
}

// The hand-written gradient of mean((y - t)^2) over the global batch of rows * world
// rows, this rank's part: g[j] = 2 / (rows * world) * sum_r (y[r] - t[r]) x[r][j].
__kernel void gradient(__global const float *x, __global const float *y, __global const float *t,
                       __global float *g, int rows, int world) {
  const int j = get_global_id(0);
  float acc = 0.0f;
  for (int r = 0; r < rows; ++r) acc += (y[r] - t[r]) * x[r * D + j];
  g[j] = acc * 2.0f / (float)(rows * world);
}

// w -= lr * g
__kernel void sgd(__global float *w, __global const float *g, float lr) {
  const int j = get_global_id(0);
  w[j] -= lr * g[j];
}
