// The projections' epilogues as kernels of their own, one work-item per element of a
// [rows, n] matrix (global [rows * n]): what a framework's recording of the step gives
// before fusion (gen_graph.py --epilogues separate). cgfuse --auto fuses each chain
// (bias then GELU, bias then the residual add) into one kernel; linear.cl's epilogue
// argument does the same work inside the projection.

// y[r, c] += bias[c]
__kernel void add_bias(__global float *y, __global const float *bias, int n) {
  const size_t i = get_global_id(0);
  y[i] += bias[i % n];
}

// y = gelu(y), tanh form (linear.cl's gelu_tanh).
__kernel void gelu(__global float *y) {
  const size_t i = get_global_id(0);
  const float v = y[i];
  const float c = 0.7978845608028654f; // sqrt(2 / pi)
  y[i] = 0.5f * v * (1.0f + tanh(c * (v + 0.044715f * v * v * v)));
}

// x += y: the residual connection.
__kernel void add_into(__global float *x, __global const float *y) {
  const size_t i = get_global_id(0);
  x[i] += y[i];
}
