// Math builtins (float and double, scalar and vectors 2/3/4/8/16). Scalars map to LLVM
// intrinsics or libm (resolved in the JIT from the process).
#pragma once
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#include "builtins_vec.h"

#define CG_M1(F, EF, ED)                                                    \
  float OVL F(float x) { return EF; }                                       \
  double OVL F(double x) { return ED; }                                     \
  CG_VEC_SIZES(CG_V1, F, float, float) CG_VEC_SIZES(CG_V1, F, double, double)
#define CG_M2(F, EF, ED)                                                    \
  float OVL F(float x, float y) { return EF; }                              \
  double OVL F(double x, double y) { return ED; }                           \
  CG_VEC_SIZES(CG_V2, F, float, float) CG_VEC_SIZES(CG_V2, F, double, double)
#define CG_M3(F, EF, ED)                                                    \
  float OVL F(float x, float y, float z) { return EF; }                     \
  double OVL F(double x, double y, double z) { return ED; }                 \
  CG_VEC_SIZES(CG_V3, F, float, float) CG_VEC_SIZES(CG_V3, F, double, double)
#define CG_LIBM1(F) CG_M1(F, __builtin_##F##f(x), __builtin_##F(x))
#define CG_LIBM2(F) CG_M2(F, __builtin_##F##f(x, y), __builtin_##F(x, y))

CG_LIBM1(sqrt) CG_LIBM1(cbrt) CG_LIBM1(exp) CG_LIBM1(exp2) CG_LIBM1(expm1)
CG_LIBM1(log) CG_LIBM1(log2) CG_LIBM1(log10) CG_LIBM1(log1p) CG_LIBM1(logb)
CG_LIBM1(sin) CG_LIBM1(cos) CG_LIBM1(tan) CG_LIBM1(asin) CG_LIBM1(acos) CG_LIBM1(atan)
CG_LIBM1(sinh) CG_LIBM1(cosh) CG_LIBM1(asinh) CG_LIBM1(acosh) CG_LIBM1(atanh)
CG_LIBM1(erf) CG_LIBM1(erfc) CG_LIBM1(tgamma) CG_LIBM1(lgamma)
CG_LIBM1(fabs) CG_LIBM1(floor) CG_LIBM1(ceil) CG_LIBM1(trunc) CG_LIBM1(round) CG_LIBM1(rint)
CG_LIBM2(pow) CG_LIBM2(atan2) CG_LIBM2(fmod) CG_LIBM2(hypot) CG_LIBM2(fdim)
CG_LIBM2(copysign) CG_LIBM2(nextafter) CG_LIBM2(remainder) CG_LIBM2(fmin) CG_LIBM2(fmax)
CG_M1(exp10, __builtin_powf(10.0f, x), __builtin_pow(10.0, x))
// float tanh without a libm call, so the loop over work-items vectorizes it (gelu: a
// scalar tanhf per work-item was most of the kernel's time). Cephes' tanhf: an odd
// polynomial below 0.625, else 1 - 2 / (exp(2|x|) + 1) with an exp valid on [-87, 88];
// |x| >= 10 gives +-1. Within 1.3 ulp of tanh over every float (OpenCL asks 5).
static float cg_expf_core(float x) {
  float k = __builtin_rintf(x * 1.44269504088896341f);
  float r = __builtin_fmaf(k, -0.693359375f, x);
  r = __builtin_fmaf(k, 2.12194440e-4f, r);
  float p = 1.9875691500E-4f;
  p = __builtin_fmaf(p, r, 1.3981999507E-3f);
  p = __builtin_fmaf(p, r, 8.3334519073E-3f);
  p = __builtin_fmaf(p, r, 4.1665795894E-2f);
  p = __builtin_fmaf(p, r, 1.6666665459E-1f);
  p = __builtin_fmaf(p, r, 5.0000001201E-1f);
  p = __builtin_fmaf(p, r * r, r) + 1.0f;
  return p * as_float(((int)k + 127) << 23);
}
static float cg_tanhf(float x) {
  float ax = __builtin_fabsf(x);
  float z = x * x;
  float p = -5.70498872745E-3f;
  p = __builtin_fmaf(p, z, 2.06390887954E-2f);
  p = __builtin_fmaf(p, z, -5.37397155531E-2f);
  p = __builtin_fmaf(p, z, 1.33314422036E-1f);
  p = __builtin_fmaf(p, z, -3.33332819422E-1f);
  float small = __builtin_copysignf(__builtin_fmaf(p * z, x, x), x); // tanh(-0) = -0
  float e = cg_expf_core(2.0f * (ax < 10.0f ? ax : 10.0f));
  float big = __builtin_copysignf(1.0f - 2.0f / (e + 1.0f), x);
  return x != x ? x : ax < 0.625f ? small : big;
}
CG_M1(tanh, cg_tanhf(x), __builtin_tanh(x))
CG_M2(powr, __builtin_powf(x, y), __builtin_pow(x, y))
CG_M3(fma, __builtin_fmaf(x, y, z), __builtin_fma(x, y, z))
CG_M3(mad, x * y + z, x * y + z)
CG_M1(rsqrt, 1.0f / __builtin_sqrtf(x), 1.0 / __builtin_sqrt(x))
CG_M1(sinpi, __builtin_sinf((float)M_PI * x), __builtin_sin(M_PI * x))
CG_M1(cospi, __builtin_cosf((float)M_PI * x), __builtin_cos(M_PI * x))
CG_M1(tanpi, __builtin_tanf((float)M_PI * x), __builtin_tan(M_PI * x))
CG_M1(degrees, x * (float)(180.0 / M_PI), x * (180.0 / M_PI))
CG_M1(radians, x * (float)(M_PI / 180.0), x * (M_PI / 180.0))
CG_M1(sign, __builtin_isnan(x) ? 0.0f : x > 0.0f ? 1.0f : x < 0.0f ? -1.0f : x,
      __builtin_isnan(x) ? 0.0 : x > 0.0 ? 1.0 : x < 0.0 ? -1.0 : x)
CG_M3(clamp, __builtin_fminf(__builtin_fmaxf(x, y), z), __builtin_fmin(__builtin_fmax(x, y), z))
CG_M3(mix, x + (y - x) * z, x + (y - x) * z)
CG_M2(step, y < x ? 0.0f : 1.0f, y < x ? 0.0 : 1.0)
CG_M2(maxmag, __builtin_fabsf(x) > __builtin_fabsf(y) ? x : __builtin_fabsf(y) > __builtin_fabsf(x) ? y : __builtin_fmaxf(x, y),
      __builtin_fabs(x) > __builtin_fabs(y) ? x : __builtin_fabs(y) > __builtin_fabs(x) ? y : __builtin_fmax(x, y))
CG_M2(minmag, __builtin_fabsf(x) < __builtin_fabsf(y) ? x : __builtin_fabsf(y) < __builtin_fabsf(x) ? y : __builtin_fminf(x, y),
      __builtin_fabs(x) < __builtin_fabs(y) ? x : __builtin_fabs(y) < __builtin_fabs(x) ? y : __builtin_fmin(x, y))

float OVL smoothstep(float e0, float e1, float x) { float t = clamp((x - e0) / (e1 - e0), 0.0f, 1.0f); return t * t * (3.0f - 2.0f * t); }
double OVL smoothstep(double e0, double e1, double x) { double t = clamp((x - e0) / (e1 - e0), 0.0, 1.0); return t * t * (3.0 - 2.0 * t); }
CG_VEC_SIZES(CG_V3, smoothstep, float, float) CG_VEC_SIZES(CG_V3, smoothstep, double, double)

// vector-with-scalar forms
#define CG_MIXED(N, T)                                                        \
  CG_V2S(N, fmin, T, T) CG_V2S(N, fmax, T, T) CG_V3S(N, clamp, T, T)          \
  T##N OVL mix(T##N x, T##N y, T a) { return x + (y - x) * a; }             \
  T##N OVL step(T e, T##N x) { T##N r; for (int i = 0; i < N; ++i) r[i] = step(e, x[i]); return r; } \
  T##N OVL smoothstep(T e0, T e1, T##N x) { T##N r; for (int i = 0; i < N; ++i) r[i] = smoothstep(e0, e1, x[i]); return r; } \
  T##N OVL ldexp(T##N x, int##N n) { T##N r; for (int i = 0; i < N; ++i) r[i] = ldexp(x[i], n[i]); return r; } \
  T##N OVL pown(T##N x, int##N n) { T##N r; for (int i = 0; i < N; ++i) r[i] = pown(x[i], n[i]); return r; } \
  T##N OVL rootn(T##N x, int##N n) { T##N r; for (int i = 0; i < N; ++i) r[i] = rootn(x[i], n[i]); return r; }
float OVL ldexp(float x, int n) { return __builtin_ldexpf(x, n); }
double OVL ldexp(double x, int n) { return __builtin_ldexp(x, n); }
float OVL pown(float x, int n) { return __builtin_powif(x, n); }
double OVL pown(double x, int n) { return __builtin_powi(x, n); }
float OVL rootn(float x, int n) { return __builtin_powf(x, 1.0f / (float)n); }
double OVL rootn(double x, int n) { return __builtin_pow(x, 1.0 / (double)n); }
CG_VEC_SIZES(CG_MIXED, float) CG_VEC_SIZES(CG_MIXED, double)

// native_ and half_ variants: the full-precision functions (allowed by the spec).
#define CG_ALIAS1(P, F) CG_M1(P##F, F(x), F(x))
#define CG_ALIAS2(P, F) CG_M2(P##F, F(x, y), F(x, y))
#define CG_NATIVE(P)                                                            \
  CG_ALIAS1(P, sqrt) CG_ALIAS1(P, rsqrt) CG_ALIAS1(P, exp) CG_ALIAS1(P, exp2)   \
  CG_ALIAS1(P, exp10) CG_ALIAS1(P, log) CG_ALIAS1(P, log2) CG_ALIAS1(P, log10)  \
  CG_ALIAS1(P, sin) CG_ALIAS1(P, cos) CG_ALIAS1(P, tan) CG_ALIAS2(P, powr)      \
  CG_M1(P##recip, 1 / x, 1 / x) CG_M2(P##divide, x / y, x / y)
CG_NATIVE(native_) CG_NATIVE(half_)

// geometric
#define CG_GEO(N, T)                                                                      \
  T OVL dot(T##N a, T##N b) { T s = 0; for (int i = 0; i < N; ++i) s += a[i] * b[i]; return s; } \
  T OVL length(T##N a) { return sqrt(dot(a, a)); }                                        \
  T OVL distance(T##N a, T##N b) { return length(a - b); }                                \
  T##N OVL normalize(T##N a) { return a / length(a); }
float OVL dot(float a, float b) { return a * b; }
double OVL dot(double a, double b) { return a * b; }
float OVL length(float a) { return __builtin_fabsf(a); }
double OVL length(double a) { return __builtin_fabs(a); }
CG_GEO(2, float) CG_GEO(3, float) CG_GEO(4, float) CG_GEO(2, double) CG_GEO(3, double) CG_GEO(4, double)
float4 OVL cross(float4 a, float4 b) { return (float4)(a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x, 0.0f); }
float3 OVL cross(float3 a, float3 b) { return (float3)(a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x); }
