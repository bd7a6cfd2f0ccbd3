// half_ math functions (precision: 8192 ulp, about 2^-10 relative). Apart from math.cl
// because PoCL 3.1's kernel library lacks some of them (_Z8half_cosf, _Z8half_expf), so a
// module calling them fails to build there (skip table in
// tests/conformance/skips.cpp); cpu_backend_tests checks them against C++.
// cgtest: kernel=math_half global=128 ulp=8192 args=x:f32[128]:rand(0.1..3), out:f32[1024]:w
__kernel void math_half(__global const float *x, __global float *out) {
  size_t i = get_global_id(0);
  float a = x[i];
  __global float *o = out + 8 * i;
  o[0] = half_exp(a); o[1] = half_cos(a); o[2] = half_sin(a); o[3] = half_sqrt(a);
  o[4] = half_log(a); o[5] = half_recip(a); o[6] = half_divide(1.0f, a); o[7] = half_rsqrt(a);
}
