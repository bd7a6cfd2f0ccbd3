// Math builtins, float (scalar and float4) and double. 32 results per work-item.
// native_ results (o[20], o[21], o[28], o[29]; native_exp in math_f32x4) are
// implementation-defined in precision: the float cases allow 8192 ulp (~2^-10 relative) for the whole buffer; the other results are checked tighter in
// cpu_backend_tests against C++ references. math_f64 has no native_ call: 4 ulp.
// (half_ functions are in half_math.cl: PoCL 3.1 lacks some of them.)
// cgtest: kernel=math_f32 global=256 ulp=8192 args=x:f32[256]:rand(-3..3), y:f32[256]:rand(0.5..2), out:f32[8192]:w
// cgtest: kernel=math_f32x4 global=64 ulp=8192 args=x:f32[256]:rand(-3..3), y:f32[256]:rand(0.5..2), out:f32[2048]:w
// cgtest: kernel=math_f64 global=128 ulp=4 args=x:f64[128]:rand(-3..3), y:f64[128]:rand(0.5..2), out:f64[1024]:w
__kernel void math_f32(__global const float *x, __global const float *y, __global float *out) {
  size_t i = get_global_id(0);
  float a = x[i], b = y[i];
  __global float *o = out + i * 32;
  o[0] = sqrt(fabs(a)); o[1] = rsqrt(fabs(a) + 1.0f); o[2] = exp(a); o[3] = log(fabs(a) + 1.0f);
  o[4] = pow(fabs(a), b); o[5] = sin(a); o[6] = cos(a); o[7] = tan(a);
  o[8] = fabs(a); o[9] = floor(a); o[10] = ceil(a); o[11] = fma(a, b, 1.0f);
  o[12] = mad(a, b, 1.0f); o[13] = fmin(a, b); o[14] = fmax(a, b); o[15] = clamp(a, -1.0f, 1.0f);
  o[16] = mix(a, b, 0.25f); o[17] = hypot(a, b); o[18] = tanh(a); o[19] = erf(a);
  o[20] = native_sqrt(fabs(a)); o[21] = native_exp(a * 0.5f); o[22] = exp2(a); o[23] = log2(fabs(a) + 1.0f);
  o[24] = atan2(a, b); o[25] = cbrt(a); o[26] = trunc(a); o[27] = round(a);
  o[28] = native_sin(a); o[29] = native_cos(a); o[30] = fmod(a, b); o[31] = copysign(b, a);
}

__kernel void math_f32x4(__global const float *x, __global const float *y, __global float *out) {
  size_t i = get_global_id(0);
  float4 a = vload4(i, x), b = vload4(i, y);
  vstore4(sqrt(fabs(a)), 8 * i + 0, out);
  vstore4(exp(a), 8 * i + 1, out);
  vstore4(fmin(a, b), 8 * i + 2, out);
  vstore4(clamp(a, -1.0f, 1.0f), 8 * i + 3, out);
  vstore4(mix(a, b, (float4)(0.25f)), 8 * i + 4, out);
  vstore4(fma(a, b, (float4)(1.0f)), 8 * i + 5, out);
  vstore4(sin(a), 8 * i + 6, out);
  vstore4(native_exp(a), 8 * i + 7, out);
}

#pragma OPENCL EXTENSION cl_khr_fp64 : enable
__kernel void math_f64(__global const double *x, __global const double *y, __global double *out) {
  size_t i = get_global_id(0);
  double a = x[i], b = y[i];
  __global double *o = out + i * 8;
  o[0] = sqrt(fabs(a)); o[1] = exp(a); o[2] = log(fabs(a) + 1.0); o[3] = pow(fabs(a), b);
  o[4] = sin(a); o[5] = fma(a, b, 1.0); o[6] = fmax(a, b); o[7] = tanh(a);
}

// tanh over given inputs (test_builtins.cpp: a sweep of floats against std::tanh).
__kernel void tanh_f32(__global const float *x, __global float *out) {
  size_t i = get_global_id(0);
  out[i] = tanh(x[i]);
}
