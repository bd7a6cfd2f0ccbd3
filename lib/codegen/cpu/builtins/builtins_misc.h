// Integer extras (upsample, mad_sat), shuffle/shuffle2, async work-group copies,
// prefetch, and the math functions with pointer outputs or special forms (fract, frexp,
// modf, remquo, sincos, lgamma_r, ilogb, nan, *pi, fast_*).
#pragma once
#include "builtins_vec.h"

// ---- upsample: (hi << bits) | lo
#define CG_UPS(R, H, L, B)                                                                  \
  R OVL upsample(H hi, L lo) { return (R)(((R)hi << B) | (R)lo); }                         \
  CG_VEC_SIZES(CG_UPS_V, R, H, L)
#define CG_UPS_V(N, R, H, L)                                                                \
  R##N OVL upsample(H##N hi, L##N lo) { R##N r; for (int i = 0; i < N; ++i) r[i] = upsample(hi[i], lo[i]); return r; }
CG_UPS(short, char, uchar, 8) CG_UPS(ushort, uchar, uchar, 8)
CG_UPS(int, short, ushort, 16) CG_UPS(uint, ushort, ushort, 16)
CG_UPS(long, int, uint, 32) CG_UPS(ulong, uint, uint, 32)

// ---- mad_sat: the exact a * b + c, saturated to the type
#define CG_MADSAT_SMALL(T, W)                                                               \
  T OVL mad_sat(T a, T b, T c) { W r = (W)a * (W)b + (W)c;                                  \
    T lo = CG_IS_SIGNED(T) ? (T)((T)1 << (sizeof(T) * 8 - 1)) : (T)0; T hi = (T)~lo;        \
    return r < (W)lo ? lo : r > (W)hi ? hi : (T)r; }                                        \
  CG_VEC_SIZES(CG_V3, mad_sat, T, T)
CG_MADSAT_SMALL(char, int) CG_MADSAT_SMALL(uchar, int) CG_MADSAT_SMALL(short, int)
CG_MADSAT_SMALL(ushort, int) CG_MADSAT_SMALL(int, long) CG_MADSAT_SMALL(uint, long)
ulong OVL mad_sat(ulong a, ulong b, ulong c) {
  ulong p;
  if (__builtin_mul_overflow(a, b, &p)) return ~0UL;
  return add_sat(p, c);
}
long OVL mad_sat(long a, long b, long c) {
  // 128-bit a * b + c as (hi, lo), then check that it sign-extends from 64 bits.
  ulong lo = (ulong)a * (ulong)b;
  long hi = mul_hi(a, b);
  ulong lo2 = lo + (ulong)c;
  hi += (c < 0 ? -1L : 0L) + (lo2 < lo ? 1L : 0L);
  if (hi != ((long)lo2 >> 63)) return hi < 0 ? (long)(1UL << 63) : (long)~(1UL << 63);
  return (long)lo2;
}
CG_VEC_SIZES(CG_V3, mad_sat, long, long) CG_VEC_SIZES(CG_V3, mad_sat, ulong, ulong)

// ---- shuffle / shuffle2: mask components select by their low log2(N) (2N) bits.
#define CG_SHUF(M, N, T, U)                                                                  \
  T##M OVL shuffle(T##N x, U##M mask) { T##M r;                                              \
    for (int i = 0; i < M; ++i) r[i] = x[mask[i] & (N - 1)]; return r; }                     \
  T##M OVL shuffle2(T##N x, T##N y, U##M mask) { T##M r;                                     \
    for (int i = 0; i < M; ++i) { U k = mask[i] & (2 * N - 1); r[i] = k < N ? x[k] : y[k - N]; } return r; }
#define CG_SHUF_N(N, T, U) CG_SHUF(2, N, T, U) CG_SHUF(4, N, T, U) CG_SHUF(8, N, T, U) CG_SHUF(16, N, T, U)
#define CG_SHUF_T(T, U) CG_SHUF_N(2, T, U) CG_SHUF_N(4, T, U) CG_SHUF_N(8, T, U) CG_SHUF_N(16, T, U)
CG_SHUF_T(char, uchar) CG_SHUF_T(uchar, uchar) CG_SHUF_T(short, ushort) CG_SHUF_T(ushort, ushort)
CG_SHUF_T(int, uint) CG_SHUF_T(uint, uint) CG_SHUF_T(long, ulong) CG_SHUF_T(ulong, ulong)
CG_SHUF_T(float, uint) CG_SHUF_T(double, ulong)

// ---- async work-group copies. Every work-item of the group calls them with the same
// arguments: each copies its share (elements l, l + n, ...), so the copy is complete
// once all have passed wait_group_events, which is a group barrier. The event carries
// nothing (events are only ever waited on as a whole group).
static size_t OVL cg_local_linear(void) {
  return (get_local_id(2) * get_local_size(1) + get_local_id(1)) * get_local_size(0) + get_local_id(0);
}
static size_t OVL cg_local_count(void) { return get_local_size(0) * get_local_size(1) * get_local_size(2); }
#define CG_ASYNC(T)                                                                            \
  event_t OVL async_work_group_copy(__local T *dst, const __global T *src, size_t n, event_t e) { \
    for (size_t i = cg_local_linear(), s = cg_local_count(); i < n; i += s) dst[i] = src[i];   \
    return e; }                                                                                \
  event_t OVL async_work_group_copy(__global T *dst, const __local T *src, size_t n, event_t e) { \
    for (size_t i = cg_local_linear(), s = cg_local_count(); i < n; i += s) dst[i] = src[i];   \
    return e; }                                                                                \
  event_t OVL async_work_group_strided_copy(__local T *dst, const __global T *src, size_t n,   \
                                            size_t stride, event_t e) {                        \
    for (size_t i = cg_local_linear(), s = cg_local_count(); i < n; i += s) dst[i] = src[i * stride]; \
    return e; }                                                                                \
  event_t OVL async_work_group_strided_copy(__global T *dst, const __local T *src, size_t n,   \
                                            size_t stride, event_t e) {                        \
    for (size_t i = cg_local_linear(), s = cg_local_count(); i < n; i += s) dst[i * stride] = src[i]; \
    return e; }                                                                                \
  void OVL prefetch(const __global T *p, size_t n) {}
#define CG_ASYNC_V(N, T) CG_ASYNC(T##N)
#define CG_ASYNC_T(T) CG_ASYNC(T) CG_VEC_SIZES(CG_ASYNC_V, T)
CG_ASYNC_T(char) CG_ASYNC_T(uchar) CG_ASYNC_T(short) CG_ASYNC_T(ushort) CG_ASYNC_T(int)
CG_ASYNC_T(uint) CG_ASYNC_T(long) CG_ASYNC_T(ulong) CG_ASYNC_T(float) CG_ASYNC_T(double)
void OVL wait_group_events(int n, event_t *events) { barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE); }

// sign of gamma(x): negative on (-1, 0), (-3, -2), ...
static int OVL cg_gamma_sign(double x) {
  double f = __builtin_floor(x);
  return x < 0 && x != f && __builtin_fmod(f, 2.0) != 0 ? -1 : 1;
}
// ---- math with pointer outputs, for __global, __local and __private pointers
#define CG_PTR_AS(T, AS)                                                                      \
  T OVL fract(T x, AS T *ip) { T f = __builtin_floor(x); *ip = f;                            \
    return __builtin_isnan(x) ? x : __builtin_isinf(x) ? (T)0 * x : __builtin_fmin(x - f, (T)0x1.fffffep-1); } \
  T OVL modf(T x, AS T *ip) { T t = __builtin_trunc(x); *ip = t;                             \
    return __builtin_isinf(x) ? __builtin_copysign((T)0, x) : __builtin_copysign(x - t, x); } \
  T OVL sincos(T x, AS T *c) { *c = cos(x); return sin(x); }                                 \
  T OVL frexp(T x, AS int *e) { int k; T r = __builtin_frexp(x, &k); *e = k; return r; }      \
  T OVL lgamma_r(T x, AS int *s) { *s = cg_gamma_sign(x); return lgamma(x); } \
  T OVL remquo(T x, T y, AS int *q) { int k; T r = __builtin_remquo(x, y, &k); *q = k; return r; }
// float versions through the float libm entry points
#define CG_PTR_AS_F(AS)                                                                       \
  float OVL fract(float x, AS float *ip) { float f = __builtin_floorf(x); *ip = f;            \
    return __builtin_isnan(x) ? x : __builtin_isinf(x) ? 0.0f * x : __builtin_fminf(x - f, 0x1.fffffep-1f); } \
  float OVL modf(float x, AS float *ip) { float t = __builtin_truncf(x); *ip = t;             \
    return __builtin_isinf(x) ? __builtin_copysignf(0.0f, x) : __builtin_copysignf(x - t, x); } \
  float OVL sincos(float x, AS float *c) { *c = cos(x); return sin(x); }                     \
  float OVL frexp(float x, AS int *e) { int k; float r = __builtin_frexpf(x, &k); *e = k; return r; } \
  float OVL lgamma_r(float x, AS int *s) { *s = cg_gamma_sign(x); return lgamma(x); } \
  float OVL remquo(float x, float y, AS int *q) { int k; float r = __builtin_remquof(x, y, &k); *q = k; return r; }
#define CG_PTR_VEC(N, T, AS)                                                                   \
  T##N OVL fract(T##N x, AS T##N *ip) { T##N r, f; for (int i = 0; i < N; ++i) { T g; r[i] = fract(x[i], (__private T *)&g); f[i] = g; } *ip = f; return r; } \
  T##N OVL modf(T##N x, AS T##N *ip) { T##N r, f; for (int i = 0; i < N; ++i) { T g; r[i] = modf(x[i], (__private T *)&g); f[i] = g; } *ip = f; return r; } \
  T##N OVL sincos(T##N x, AS T##N *c) { T##N r, f; for (int i = 0; i < N; ++i) { T g; r[i] = sincos(x[i], (__private T *)&g); f[i] = g; } *c = f; return r; } \
  T##N OVL frexp(T##N x, AS int##N *e) { T##N r; int##N f; for (int i = 0; i < N; ++i) { int g; r[i] = frexp(x[i], (__private int *)&g); f[i] = g; } *e = f; return r; } \
  T##N OVL lgamma_r(T##N x, AS int##N *e) { T##N r; int##N f; for (int i = 0; i < N; ++i) { int g; r[i] = lgamma_r(x[i], (__private int *)&g); f[i] = g; } *e = f; return r; } \
  T##N OVL remquo(T##N x, T##N y, AS int##N *e) { T##N r; int##N f; for (int i = 0; i < N; ++i) { int g; r[i] = remquo(x[i], y[i], (__private int *)&g); f[i] = g; } *e = f; return r; }
#define CG_PTR_ALL(AS) CG_PTR_AS_F(AS) CG_PTR_AS(double, AS)
CG_PTR_ALL(__private) CG_PTR_ALL(__global) CG_PTR_ALL(__local)
#define CG_PTR_VEC_AS(N, AS) CG_PTR_VEC(N, float, AS) CG_PTR_VEC(N, double, AS)
CG_VEC_SIZES(CG_PTR_VEC_AS, __private) CG_VEC_SIZES(CG_PTR_VEC_AS, __global) CG_VEC_SIZES(CG_PTR_VEC_AS, __local)

// ---- ilogb, nan, the *pi inverse trigonometrics, fast_ geometrics
int OVL ilogb(float x) { return __builtin_ilogbf(x); }
int OVL ilogb(double x) { return __builtin_ilogb(x); }
float OVL nan(uint c) { return as_float(0x7fc00000u | (c & 0x3fffffu)); }
double OVL nan(ulong c) { return as_double(0x7ff8000000000000UL | (c & 0x7ffffffffffffUL)); }
#define CG_ILOGB_V(N, T) int##N OVL ilogb(T##N x) { int##N r; for (int i = 0; i < N; ++i) r[i] = ilogb(x[i]); return r; }
CG_VEC_SIZES(CG_ILOGB_V, float) CG_VEC_SIZES(CG_ILOGB_V, double)
#define CG_NAN_V(N, T, U) T##N OVL nan(U##N c) { T##N r; for (int i = 0; i < N; ++i) r[i] = nan(c[i]); return r; }
CG_VEC_SIZES(CG_NAN_V, float, uint) CG_VEC_SIZES(CG_NAN_V, double, ulong)
CG_M1(acospi, __builtin_acosf(x) / (float)M_PI, __builtin_acos(x) / M_PI)
CG_M1(asinpi, __builtin_asinf(x) / (float)M_PI, __builtin_asin(x) / M_PI)
CG_M1(atanpi, __builtin_atanf(x) / (float)M_PI, __builtin_atan(x) / M_PI)
CG_M2(atan2pi, __builtin_atan2f(x, y) / (float)M_PI, __builtin_atan2(x, y) / M_PI)
float OVL distance(float a, float b) { return __builtin_fabsf(a - b); }
double OVL distance(double a, double b) { return __builtin_fabs(a - b); }
float OVL normalize(float a) { return a == 0.0f || __builtin_isnan(a) ? a : __builtin_copysignf(1.0f, a); }
double OVL normalize(double a) { return a == 0.0 || __builtin_isnan(a) ? a : __builtin_copysign(1.0, a); }
float OVL fast_length(float a) { return length(a); }
float OVL fast_distance(float a, float b) { return distance(a, b); }
float OVL fast_normalize(float a) { return normalize(a); }
#define CG_FAST(N)                                                                              \
  float OVL fast_length(float##N a) { return length(a); }                                       \
  float OVL fast_distance(float##N a, float##N b) { return distance(a, b); }                    \
  float##N OVL fast_normalize(float##N a) { return normalize(a); }
CG_FAST(2) CG_FAST(3) CG_FAST(4)
