// Float/double <-> half conversions in every rounding mode, one input per work-item
// (test_builtins.cpp "half conversions" checks them bit for bit against a table of all
// halves). No manifest case line here: the inputs are special values the manifest
// generators do not make.
// half_from_float and half_from_double: item i stores x[i] in every mode at h[5i .. 5i+4].
#define HALF_FROM(NAME, T)                                                                     \
  __kernel void NAME(__global const T *x, __global half *h) {                                  \
    size_t i = get_global_id(0);                                                               \
    T a = x[i];                                                                                \
    vstore_half(a, 5 * i + 0, h);                                                              \
    vstore_half_rte(a, 5 * i + 1, h);                                                          \
    vstore_half_rtz(a, 5 * i + 2, h);                                                          \
    vstore_half_rtp(a, 5 * i + 3, h);                                                          \
    vstore_half_rtn(a, 5 * i + 4, h);                                                          \
  }
HALF_FROM(half_from_float, float)
HALF_FROM(half_from_double, double)

// Vector forms: item i converts x[4i .. 4i+3] through vstore_half4_rtp and
// vstorea_half3_rtn (the aligned 3-vector takes 4 halves) and reads them back.
__kernel void half_vectors(__global const float *x, __global half *h, __global float *back) {
  size_t i = get_global_id(0);
  float4 v = vload4(i, x);
  vstore_half4_rtp(v, 2 * i, h);
  vstorea_half3_rtn(v.xyz, 2 * i + 1, h);
  vstore4(vload_half4(2 * i, h), 2 * i, back);
  float3 w = vloada_half3(2 * i + 1, h);
  vstore4((float4)(w, vload_half(8 * i + 7, h)), 2 * i + 1, back);
}

__kernel void half_to_float(__global const half *h, __global float *x) {
  size_t i = get_global_id(0);
  x[i] = vload_half(i, h);
}
