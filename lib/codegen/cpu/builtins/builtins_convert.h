// convert_<dst>[N][_sat][_rte|_rtz|_rtp|_rtn](src) for char..ulong, float, double.
// Float -> integer rounds (default: toward zero), then saturates when asked (NaN -> 0).
// Integer/double -> float rounds to nearest, then steps one ulp toward the requested
// direction when the exact comparison says the result is on the wrong side.
#pragma once
#include "builtins_vec.h"

#define CG_MIN_char ((char)-128)
#define CG_MAX_char ((char)127)
#define CG_MIN_uchar ((uchar)0)
#define CG_MAX_uchar ((uchar)255)
#define CG_MIN_short ((short)-32768)
#define CG_MAX_short ((short)32767)
#define CG_MIN_ushort ((ushort)0)
#define CG_MAX_ushort ((ushort)65535)
#define CG_MIN_int ((int)(-2147483647 - 1))
#define CG_MAX_int ((int)2147483647)
#define CG_MIN_uint ((uint)0)
#define CG_MAX_uint ((uint)0xffffffffu)
#define CG_MIN_long ((long)(-9223372036854775807L - 1))
#define CG_MAX_long ((long)9223372036854775807L)
#define CG_MIN_ulong ((ulong)0)
#define CG_MAX_ulong ((ulong)0xffffffffffffffffUL)

#define CG_SATFN(D)                                                                      \
  static D OVL cg_satl_##D(long v) {                                                     \
    if (v < (long)CG_MIN_##D) return CG_MIN_##D;                                         \
    if (v > 0 && (ulong)v > (ulong)CG_MAX_##D) return CG_MAX_##D; return (D)v; }         \
  static D OVL cg_satul_##D(ulong v) { return v > (ulong)CG_MAX_##D ? CG_MAX_##D : (D)v; }
CG_SATFN(char) CG_SATFN(uchar) CG_SATFN(short) CG_SATFN(ushort) CG_SATFN(int) CG_SATFN(uint)
CG_SATFN(long) CG_SATFN(ulong)

#define CG_CMP_EXACT(F, S) static int OVL cg_cmp(F f, S x) { double a = (double)f, b = (double)x; return a < b ? -1 : a > b ? 1 : 0; }
#define CG_CMP_EXACT_F(S) CG_CMP_EXACT(float, S) CG_CMP_EXACT(double, S)
CG_CMP_EXACT_F(char) CG_CMP_EXACT_F(uchar) CG_CMP_EXACT_F(short) CG_CMP_EXACT_F(ushort)
CG_CMP_EXACT_F(int) CG_CMP_EXACT_F(uint) CG_CMP_EXACT_F(float) CG_CMP_EXACT_F(double)
#define CG_CMP_LONG(F)                                                                      \
  static int OVL cg_cmp(F f, long x) { if (f >= 0x1p63) return 1; if (f < -0x1p63) return -1; \
    long g = (long)f; return g < x ? -1 : g > x ? 1 : 0; }                                   \
  static int OVL cg_cmp(F f, ulong x) { if (f >= 0x1p64) return 1; if (f < 0) return -1;     \
    ulong g = (ulong)f; return g < x ? -1 : g > x ? 1 : 0; }
CG_CMP_LONG(float) CG_CMP_LONG(double)

#define CG_RNDF_(x) __builtin_trunc(x)
#define CG_RNDF__rte(x) __builtin_rint(x)
#define CG_RNDF__rtz(x) __builtin_trunc(x)
#define CG_RNDF__rtp(x) __builtin_ceil(x)
#define CG_RNDF__rtn(x) __builtin_floor(x)
#define CG_FIN_(D, r) ((D)(r))
#define CG_FIN__sat(D, r)                                                                  \
  (__builtin_isnan(r) ? (D)0 : (r) <= (double)CG_MIN_##D ? CG_MIN_##D                      \
   : (r) >= (double)CG_MAX_##D ? CG_MAX_##D : (D)(r))
#define CG_IFIN_(D, S, x) ((D)(x))
#define CG_IFIN__sat(D, S, x) (((S)(-1) < (S)0) ? cg_satl_##D((long)(x)) : cg_satul_##D((ulong)(x)))
#define CG_FADJ_(D, f, x) (f)
#define CG_FADJ__rte(D, f, x) (f)
#define CG_FADJ__rtp(D, f, x) (cg_cmp(f, x) < 0 ? nextafter(f, (D)INFINITY) : f)
#define CG_FADJ__rtn(D, f, x) (cg_cmp(f, x) > 0 ? nextafter(f, -(D)INFINITY) : f)
#define CG_FADJ__rtz(D, f, x) (cg_cmp((D)0, x) <= 0 ? CG_FADJ__rtn(D, f, x) : CG_FADJ__rtp(D, f, x))

#define CG_CONV_VEC(N, D, S, SAT, RND)                                                       \
  D##N OVL convert_##D##N##SAT##RND(S##N x) {                                                \
    D##N r; for (int i = 0; i < N; ++i) r[i] = convert_##D##SAT##RND(x[i]); return r; }
#define CG_CONV_I_I(D, S, SAT, RND)                                                          \
  D OVL convert_##D##SAT##RND(S x) { return CG_IFIN_##SAT(D, S, x); }                        \
  CG_VEC_SIZES(CG_CONV_VEC, D, S, SAT, RND)
#define CG_CONV_I_F(D, S, SAT, RND)                                                          \
  D OVL convert_##D##SAT##RND(S x) { double r = CG_RNDF_##RND((double)x); return CG_FIN_##SAT(D, r); } \
  CG_VEC_SIZES(CG_CONV_VEC, D, S, SAT, RND)
#define CG_CONV_F(D, S, SAT, RND)                                                            \
  D OVL convert_##D##RND(S x) { D f = (D)x; return CG_FADJ_##RND(D, f, x); }                 \
  CG_VEC_SIZES(CG_CONV_VEC, D, S, , RND)

#define CG_MODES(M, D, S, SAT) M(D, S, SAT, ) M(D, S, SAT, _rte) M(D, S, SAT, _rtz) M(D, S, SAT, _rtp) M(D, S, SAT, _rtn)
#define CG_TO_INT_FROM(D, S, M) CG_MODES(M, D, S, ) CG_MODES(M, D, S, _sat)
#define CG_TO_INT(D)                                                                         \
  CG_TO_INT_FROM(D, char, CG_CONV_I_I) CG_TO_INT_FROM(D, uchar, CG_CONV_I_I)                 \
  CG_TO_INT_FROM(D, short, CG_CONV_I_I) CG_TO_INT_FROM(D, ushort, CG_CONV_I_I)               \
  CG_TO_INT_FROM(D, int, CG_CONV_I_I) CG_TO_INT_FROM(D, uint, CG_CONV_I_I)                   \
  CG_TO_INT_FROM(D, long, CG_CONV_I_I) CG_TO_INT_FROM(D, ulong, CG_CONV_I_I)                 \
  CG_TO_INT_FROM(D, float, CG_CONV_I_F) CG_TO_INT_FROM(D, double, CG_CONV_I_F)
#define CG_TO_FP(D)                                                                          \
  CG_MODES(CG_CONV_F, D, char, ) CG_MODES(CG_CONV_F, D, uchar, ) CG_MODES(CG_CONV_F, D, short, ) \
  CG_MODES(CG_CONV_F, D, ushort, ) CG_MODES(CG_CONV_F, D, int, ) CG_MODES(CG_CONV_F, D, uint, ) \
  CG_MODES(CG_CONV_F, D, long, ) CG_MODES(CG_CONV_F, D, ulong, ) CG_MODES(CG_CONV_F, D, float, ) \
  CG_MODES(CG_CONV_F, D, double, )

CG_TO_INT(char) CG_TO_INT(uchar) CG_TO_INT(short) CG_TO_INT(ushort) CG_TO_INT(int)
CG_TO_INT(uint) CG_TO_INT(long) CG_TO_INT(ulong)
CG_TO_FP(float) CG_TO_FP(double)
