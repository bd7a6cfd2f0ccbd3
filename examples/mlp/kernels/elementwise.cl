// Elementwise parts of an MLP block. `cols` is the row length of the activations.

__kernel void add_bias(__global float *y, __global const float *bias, uint cols, uint count) {
  uint i = get_global_id(0);
  if (i < count) y[i] += bias[i % cols];
}

// y = y + bias + residual (the block's skip connection).
__kernel void add_bias_residual(__global float *y, __global const float *bias,
                                __global const float *residual, uint cols, uint count) {
  uint i = get_global_id(0);
  if (i < count) y[i] = y[i] + bias[i % cols] + residual[i];
}

// GELU, tanh approximation (Hendrycks & Gimpel).
__kernel void gelu(__global float *y, uint count) {
  uint i = get_global_id(0);
  if (i >= count) return;
  float x = y[i];
  const float k = 0.7978845608f; // sqrt(2 / pi)
  y[i] = 0.5f * x * (1.0f + tanh(k * (x + 0.044715f * x * x * x)));
}
