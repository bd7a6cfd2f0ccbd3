// vload_half[N], vloada_half[N], vstore_half[N][_rte|_rtz|_rtp|_rtn] and
// vstorea_half[N][...]: IEEE binary16 in memory, float/double in registers. Done in
// integer/double arithmetic (no F16C or libcalls needed); every float and double input
// is rounded once, directly to half, in the requested mode (default: to nearest even).
#pragma once
#include "builtins_vec.h"

static float OVL cg_h2f(ushort h) {
  uint sign = (uint)(h & 0x8000) << 16, e = (h >> 10) & 0x1f, m = h & 0x3ff;
  if (e == 0x1f) return as_float(sign | 0x7f800000u | (m << 13));
  float v = e == 0 ? (float)m * 0x1p-24f : __builtin_ldexpf((float)(m | 0x400), (int)e - 25);
  return as_float(as_uint(v) | sign);
}

// mode: 0 to nearest even, 1 toward zero, 2 toward +inf, 3 toward -inf
static ushort OVL cg_d2h(double x, int mode) {
  ushort sign = (as_ulong(x) >> 63) ? 0x8000 : 0;
  if (__builtin_isnan(x)) return sign | 0x7e00 | (ushort)((as_ulong(x) >> 42) & 0x1ff);
  if (__builtin_isinf(x)) return sign | 0x7c00;
  double a = __builtin_fabs(x);
  int e = a >= 0x1p-14 ? __builtin_ilogb(a) : -14;
  double q = __builtin_ldexp(1.0, e - 10); // the quantum of a's binade
  double m = a / q;                         // exact
  bool up = mode == 2 ? !sign : mode == 3 ? (bool)sign : false;
  double r = mode == 0 ? __builtin_rint(m) : up ? __builtin_ceil(m) : __builtin_trunc(m);
  double v = r * q;
  if (v > 65504.0) return sign | (mode == 0 || up ? 0x7c00 : 0x7bff);
  if (v < 0x1p-14) return sign | (ushort)(v * 0x1p24);
  int ve = __builtin_ilogb(v);
  return sign | (ushort)((ve + 15) << 10) | (ushort)(__builtin_ldexp(v, 10 - ve) - 1024.0);
}

#define CG_VLH_AS(AS)                                                                          \
  float OVL vload_half(size_t off, const AS half *p) { return cg_h2f(((const AS ushort *)p)[off]); } \
  CG_VEC_SIZES(CG_VLH_N, AS)
#define CG_VLH_N(N, AS)                                                                        \
  float##N OVL vload_half##N(size_t off, const AS half *p) { float##N r;                       \
    for (int i = 0; i < N; ++i) r[i] = cg_h2f(((const AS ushort *)p)[off * N + i]); return r; } \
  float##N OVL vloada_half##N(size_t off, const AS half *p) { float##N r;                      \
    for (int i = 0; i < N; ++i) r[i] = cg_h2f(((const AS ushort *)p)[off * (N == 3 ? 4 : N) + i]); return r; }
CG_VLH_AS(__global) CG_VLH_AS(__local) CG_VLH_AS(__constant) CG_VLH_AS(__private)

#define CG_VSH_1(T, AS, SUF, MODE)                                                             \
  void OVL vstore_half##SUF(T v, size_t off, AS half *p) { ((AS ushort *)p)[off] = cg_d2h(v, MODE); }
#define CG_VSH_V(N, T, AS, SUF, MODE)                                                          \
  void OVL vstore_half##N##SUF(T##N v, size_t off, AS half *p) {                               \
    for (int i = 0; i < N; ++i) ((AS ushort *)p)[off * N + i] = cg_d2h(v[i], MODE); }          \
  void OVL vstorea_half##N##SUF(T##N v, size_t off, AS half *p) {                              \
    for (int i = 0; i < N; ++i) ((AS ushort *)p)[off * (N == 3 ? 4 : N) + i] = cg_d2h(v[i], MODE); }
#define CG_VSH(T, AS, SUF, MODE) CG_VSH_1(T, AS, SUF, MODE) CG_VEC_SIZES(CG_VSH_V, T, AS, SUF, MODE)
#define CG_VSH_MODES(T, AS)                                                                    \
  CG_VSH(T, AS, , 0) CG_VSH(T, AS, _rte, 0) CG_VSH(T, AS, _rtz, 1) CG_VSH(T, AS, _rtp, 2) CG_VSH(T, AS, _rtn, 3)
#define CG_VSH_AS(AS) CG_VSH_MODES(float, AS) CG_VSH_MODES(double, AS)
CG_VSH_AS(__global) CG_VSH_AS(__local) CG_VSH_AS(__private)
