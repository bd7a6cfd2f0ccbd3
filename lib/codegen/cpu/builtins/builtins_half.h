// vload_half[N], vloada_half[N], vstore_half[N][_rte|_rtz|_rtp|_rtn] and
// vstorea_half[N][...]: IEEE binary16 in memory, float/double in registers.
//
// The conversions are straight-line integer code on the input's bits: every branch is a
// select, and there are no calls, so after inlining into the work-group loop they
// vectorize across work-items like any other arithmetic. They replace an earlier version
// that went through double with ilogb/ldexp/rint/ceil/trunc: those are libcalls on the
// JIT's target, so each conversion cost several calls and a division, and a loop around
// a kernel that converts could not be vectorized (extras.cl ext_half took 29 us a node
// against PoCL's 4.5). F16C's vcvtps2ph would cover floats only; this one path covers
// float and double in all four modes, with the same bits on every host.
//
// Semantics (OpenCL C 1.2, 6.12.7): every float and double input is rounded once,
// directly to half, in the requested mode (default: to nearest even). Finite values
// beyond the half range become inf where the mode rounds away from zero for their sign
// (rte; rtp for positive, rtn for negative values) and +-65504 otherwise; inf stays inf;
// NaN stays NaN with its sign, the quiet bit set and the 9 payload bits below the input's
// quiet bit. Half subnormals are produced and read exactly. vload_half keeps a half
// NaN's payload as it is (a signaling NaN is not quieted).
#pragma once
#include "builtins_vec.h"

// Half bits -> float, exact. Subnormal halves are m * 2^-24 (an exact float product).
static float OVL cg_h2f(ushort h) {
  uint sign = (uint)(h & 0x8000) << 16, e = (h >> 10) & 0x1f, m = h & 0x3ff;
  uint normal = ((e + 112) << 23) | (m << 13);
  uint special = 0x7f800000u | (m << 13);
  uint subnormal = as_uint((float)m * 0x1p-24f);
  return as_float(sign | (e == 0x1f ? special : e == 0 ? subnormal : normal));
}

// CG_TO_HALF defines the overload `ushort NAME(FT x, int mode)`, x rounded to half in `mode` (0 to
// nearest even, 1 toward zero, 2 toward +inf, 3 toward -inf; a constant at every call,
// so the selects on it fold away). FT's bits are UT; MB mantissa bits, exponent bias B.
// With a = |x| = m * 2^(e - B - MB) (m with the implicit bit, e the biased exponent), a
// in units of half's smallest subnormal 2^-24 is m >> s with s = B + MB - 24 - e, and the
// bits shifted out are the rounding remainder. Where a is a normal half (e >= B - 14)
// the shift stays MB - 10 and (e - (B - 14)) << 10 adds the exponent above the implicit
// bit, so one integer add of the rounding increment carries correctly into the exponent
// (up to 0x7c00, inf, for a < 2^16). Shifts are capped at MB + 2, where m is below half a
// unit: a nonzero remainder under half, which rounds to 0 or the smallest subnormal.
#define CG_TO_HALF(NAME, FT, UT, MB, B)                                                       \
  static ushort OVL NAME(FT x, int mode) {                                                    \
    UT u = as_##UT(x), a = u & ~((UT)1 << (sizeof(UT) * 8 - 1));                              \
    bool neg = u != a;                                                                        \
    UT e = a >> MB, frac = a & (((UT)1 << MB) - 1), m = e ? frac | ((UT)1 << MB) : frac;     \
    UT normalMin = B - 14, subShift = (UT)(B + MB - 24) - e;                                 \
    UT shift = e >= normalMin ? MB - 10 : subShift < MB + 2 ? subShift : MB + 2;               \
    UT base = ((e > normalMin ? e - normalMin : 0) << 10) + (m >> shift);                    \
    UT rem = m & (((UT)1 << shift) - 1), halfway = (UT)1 << (shift - 1);                      \
    bool away = mode == 0 || (mode == 2 && !neg) || (mode == 3 && neg);                       \
    bool inc = mode == 0 ? rem > halfway || (rem == halfway && (base & 1)) : away && rem != 0; \
    ushort h = (ushort)(base + inc);                                                          \
    UT infBits = (((UT)1 << (sizeof(UT) * 8 - 1 - MB)) - 1) << MB;                            \
    if (a >= ((UT)(B + 16) << MB)) h = away ? 0x7c00 : 0x7bff; /* |x| >= 2^16 */              \
    if (a >= infBits) h = 0x7c00 | (a > infBits ? 0x200 | (ushort)((u >> (MB - 10)) & 0x1ff) : 0); \
    return (neg ? 0x8000 : 0) | h;                                                            \
  }
CG_TO_HALF(cg_2h, float, uint, 23, 127)
CG_TO_HALF(cg_2h, double, ulong, 52, 1023)

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
  void OVL vstore_half##SUF(T v, size_t off, AS half *p) { ((AS ushort *)p)[off] = cg_2h(v, MODE); }
#define CG_VSH_V(N, T, AS, SUF, MODE)                                                          \
  void OVL vstore_half##N##SUF(T##N v, size_t off, AS half *p) {                               \
    for (int i = 0; i < N; ++i) ((AS ushort *)p)[off * N + i] = cg_2h(v[i], MODE); }           \
  void OVL vstorea_half##N##SUF(T##N v, size_t off, AS half *p) {                              \
    for (int i = 0; i < N; ++i) ((AS ushort *)p)[off * (N == 3 ? 4 : N) + i] = cg_2h(v[i], MODE); }
#define CG_VSH(T, AS, SUF, MODE) CG_VSH_1(T, AS, SUF, MODE) CG_VEC_SIZES(CG_VSH_V, T, AS, SUF, MODE)
#define CG_VSH_MODES(T, AS)                                                                    \
  CG_VSH(T, AS, , 0) CG_VSH(T, AS, _rte, 0) CG_VSH(T, AS, _rtz, 1) CG_VSH(T, AS, _rtp, 2) CG_VSH(T, AS, _rtn, 3)
#define CG_VSH_AS(AS) CG_VSH_MODES(float, AS) CG_VSH_MODES(double, AS)
CG_VSH_AS(__global) CG_VSH_AS(__local) CG_VSH_AS(__private)
