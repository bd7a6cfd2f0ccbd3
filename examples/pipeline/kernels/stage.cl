// One stage of a pipeline-parallel MLP: rank r applies layer r to a microbatch of `rows`
// rows of `d` features, y = leaky_relu(W_r x + b_r). Rank 0 reads microbatch `m` of the
// input; every other rank reads what it received from the rank before it. The weights
// are a formula of (rank, j, k), so no file is needed and reference.py computes the same.

float weight(int rank, int j, int k, int d) {
  return (float)((rank * 31 + j * 7 + k * 3) % 17 - 8) / (8.0f * (float)d);
}

float bias(int rank, int j) { return (float)((rank * 5 + j) % 7 - 3) / 16.0f; }

__kernel void make_input(__global float *input) {
  const int i = (int)get_global_id(0);
  input[i] = (float)((i * 13) % 29 - 14) / 14.0f;
}

__kernel void stage(__global const float *input, __global const float *received, __global float *out,
                    int rank, int m, int rows, int d) {
  const int j = (int)get_global_id(0), row = (int)get_global_id(1);
  const __global float *x = rank == 0 ? input + (size_t)m * rows * d : received;
  float acc = bias(rank, j);
  for (int k = 0; k < d; ++k) acc += weight(rank, j, k, d) * x[row * d + k];
  out[row * d + j] = acc > 0.0f ? acc : 0.125f * acc;
}
