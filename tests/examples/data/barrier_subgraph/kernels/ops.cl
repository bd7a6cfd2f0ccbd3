// Kernels of the barrier + subgraph execution test (tests/examples/examples_run_test.cpp).
__kernel void add_one(__global float *v) {
  size_t i = get_global_id(0);
  v[i] = v[i] + 1.0f;
}

// out = 2 * in + out
__kernel void twice_into(__global float *out, __global const float *in) {
  size_t i = get_global_id(0);
  out[i] = 2.0f * in[i] + out[i];
}

// out = out * 10 + in
__kernel void shift_add(__global float *out, __global const float *in) {
  size_t i = get_global_id(0);
  out[i] = out[i] * 10.0f + in[i];
}
