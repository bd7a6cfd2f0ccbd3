// Integer builtins for char..ulong, scalar and vectors 2/3/4/8/16.
#pragma once
#include "builtins_vec.h"

#define CG_INT_TYPES(M) \
  M(char, uchar, 8) M(uchar, uchar, 8) M(short, ushort, 16) M(ushort, ushort, 16) \
  M(int, uint, 32) M(uint, uint, 32) M(long, ulong, 64) M(ulong, ulong, 64)

#define CG_IS_SIGNED(T) ((T)(-1) < (T)0)

#define CG_INT_SCALAR(T, U, B)                                                           \
  U OVL abs(T x) { return CG_IS_SIGNED(T) && x < 0 ? (U)(-(U)x) : (U)x; }                \
  U OVL abs_diff(T x, T y) { return x > y ? (U)((U)x - (U)y) : (U)((U)y - (U)x); }       \
  T OVL add_sat(T x, T y) { T r; if (__builtin_add_overflow(x, y, &r))                   \
      return CG_IS_SIGNED(T) ? (y > 0 ? (T)((U)-1 >> 1) : (T)~((U)-1 >> 1)) : (T)-1; return r; } \
  T OVL sub_sat(T x, T y) { T r; if (__builtin_sub_overflow(x, y, &r))                   \
      return CG_IS_SIGNED(T) ? (y < 0 ? (T)((U)-1 >> 1) : (T)~((U)-1 >> 1)) : (T)0; return r; } \
  T OVL hadd(T x, T y) { return (x >> 1) + (y >> 1) + (x & y & 1); }                      \
  T OVL rhadd(T x, T y) { return (x >> 1) + (y >> 1) + ((x | y) & 1); }                   \
  T OVL min(T x, T y) { return y < x ? y : x; }                                           \
  T OVL max(T x, T y) { return x < y ? y : x; }                                           \
  T OVL clamp(T x, T lo, T hi) { return min(max(x, lo), hi); }                            \
  T OVL clz(T x) { U u = (U)x; T n = 0; for (int i = B - 1; i >= 0 && !((u >> i) & 1); --i) ++n; return n; } \
  T OVL ctz(T x) { U u = (U)x; T n = 0; for (int i = 0; i < B && !((u >> i) & 1); ++i) ++n; return n; } \
  T OVL popcount(T x) { return (T)__builtin_popcountl((ulong)(U)x); }                     \
  T OVL rotate(T v, T i) { U u = (U)v; uint s = (uint)((U)i & (B - 1));                  \
      return (T)(s ? (U)((u << s) | (u >> (B - s))) : u); }                               \
  T OVL mad_hi(T a, T b, T c) { return mul_hi(a, b) + c; }                                \
  CG_VEC_SIZES(CG_V1, abs, U, T) CG_VEC_SIZES(CG_V2, abs_diff, U, T)                      \
  CG_VEC_SIZES(CG_V2, add_sat, T, T) CG_VEC_SIZES(CG_V2, sub_sat, T, T)                   \
  CG_VEC_SIZES(CG_V2, hadd, T, T) CG_VEC_SIZES(CG_V2, rhadd, T, T)                        \
  CG_VEC_SIZES(CG_V2, min, T, T) CG_VEC_SIZES(CG_V2, max, T, T)                           \
  CG_VEC_SIZES(CG_V3, clamp, T, T) CG_VEC_SIZES(CG_V2S, min, T, T)                        \
  CG_VEC_SIZES(CG_V2S, max, T, T) CG_VEC_SIZES(CG_V3S, clamp, T, T)                       \
  CG_VEC_SIZES(CG_V1, clz, T, T) CG_VEC_SIZES(CG_V1, ctz, T, T)                           \
  CG_VEC_SIZES(CG_V1, popcount, T, T) CG_VEC_SIZES(CG_V2, rotate, T, T)                   \
  CG_VEC_SIZES(CG_V2, mul_hi, T, T) CG_VEC_SIZES(CG_V3, mad_hi, T, T)

#define CG_MULHI_SMALL(T, W, B) T OVL mul_hi(T x, T y) { return (T)(((W)x * (W)y) >> B); }
CG_MULHI_SMALL(char, short, 8) CG_MULHI_SMALL(uchar, ushort, 8)
CG_MULHI_SMALL(short, int, 16) CG_MULHI_SMALL(ushort, uint, 16)
CG_MULHI_SMALL(int, long, 32) CG_MULHI_SMALL(uint, ulong, 32)
ulong OVL mul_hi(ulong x, ulong y) {
  ulong xl = x & 0xffffffffUL, xh = x >> 32, yl = y & 0xffffffffUL, yh = y >> 32;
  ulong ll = xl * yl, lh = xl * yh, hl = xh * yl, hh = xh * yh;
  ulong mid = (ll >> 32) + (lh & 0xffffffffUL) + (hl & 0xffffffffUL);
  return hh + (lh >> 32) + (hl >> 32) + (mid >> 32);
}
long OVL mul_hi(long x, long y) {
  ulong r = mul_hi((ulong)x, (ulong)y);
  if (x < 0) r -= (ulong)y;
  if (y < 0) r -= (ulong)x;
  return (long)r;
}
CG_INT_TYPES(CG_INT_SCALAR)

int OVL mul24(int x, int y) { return ((x << 8) >> 8) * ((y << 8) >> 8); }
uint OVL mul24(uint x, uint y) { return (x & 0xffffffu) * (y & 0xffffffu); }
int OVL mad24(int x, int y, int z) { return mul24(x, y) + z; }
uint OVL mad24(uint x, uint y, uint z) { return mul24(x, y) + z; }
CG_VEC_SIZES(CG_V2, mul24, int, int) CG_VEC_SIZES(CG_V2, mul24, uint, uint)
CG_VEC_SIZES(CG_V3, mad24, int, int) CG_VEC_SIZES(CG_V3, mad24, uint, uint)
