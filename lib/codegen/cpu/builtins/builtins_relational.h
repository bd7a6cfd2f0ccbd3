// Relational builtins: classification and comparison (scalar: 1/0; vectors: -1/0),
// any/all (most significant bit), select and bitselect.
#pragma once
#include "builtins_vec.h"

#define CG_REL1_N(N, F, E, T, I)                                                  \
  I##N OVL F(T##N v) { I##N r; for (int i = 0; i < N; ++i) { T x = v[i]; r[i] = (E) ? -1 : 0; } return r; }
#define CG_REL1(F, E)                                                             \
  int OVL F(float x) { return (E) ? 1 : 0; } int OVL F(double x) { return (E) ? 1 : 0; } \
  CG_VEC_SIZES(CG_REL1_N, F, E, float, int) CG_VEC_SIZES(CG_REL1_N, F, E, double, long)
#define CG_REL2_N(N, F, E, T, I)                                                  \
  I##N OVL F(T##N a, T##N b) { I##N r; for (int i = 0; i < N; ++i) { T x = a[i], y = b[i]; r[i] = (E) ? -1 : 0; } return r; }
#define CG_REL2(F, E)                                                             \
  int OVL F(float x, float y) { return (E) ? 1 : 0; } int OVL F(double x, double y) { return (E) ? 1 : 0; } \
  CG_VEC_SIZES(CG_REL2_N, F, E, float, int) CG_VEC_SIZES(CG_REL2_N, F, E, double, long)

CG_REL1(isnan, __builtin_isnan(x)) CG_REL1(isinf, __builtin_isinf(x))
CG_REL1(isfinite, __builtin_isfinite(x)) CG_REL1(isnormal, __builtin_isnormal(x))
CG_REL1(signbit, __builtin_signbit(x))
CG_REL2(isequal, x == y) CG_REL2(isnotequal, x != y) CG_REL2(isgreater, x > y)
CG_REL2(isgreaterequal, x >= y) CG_REL2(isless, x < y) CG_REL2(islessequal, x <= y)
CG_REL2(islessgreater, x < y || x > y)
CG_REL2(isordered, x == x && y == y) CG_REL2(isunordered, x != x || y != y)

#define CG_ANYALL_N(N, T, B)                                                      \
  int OVL any(T##N v) { for (int i = 0; i < N; ++i) if (v[i] < 0) return 1; return 0; } \
  int OVL all(T##N v) { for (int i = 0; i < N; ++i) if (v[i] >= 0) return 0; return 1; }
#define CG_ANYALL(T, B)                                                           \
  int OVL any(T v) { return v < 0; } int OVL all(T v) { return v < 0; }           \
  CG_VEC_SIZES(CG_ANYALL_N, T, B)
CG_ANYALL(char, 8) CG_ANYALL(short, 16) CG_ANYALL(int, 32) CG_ANYALL(long, 64)

#define CG_SELECT_N(N, T, C)                                                      \
  T##N OVL select(T##N a, T##N b, C##N c) { T##N r; for (int i = 0; i < N; ++i) r[i] = c[i] & ((C)1 << (sizeof(C) * 8 - 1)) ? b[i] : a[i]; return r; }
#define CG_SELECT(T, S, U)                                                        \
  T OVL select(T a, T b, S c) { return c ? b : a; }                               \
  T OVL select(T a, T b, U c) { return c ? b : a; }                               \
  CG_VEC_SIZES(CG_SELECT_N, T, S) CG_VEC_SIZES(CG_SELECT_N, T, U)
CG_SELECT(char, char, uchar) CG_SELECT(uchar, char, uchar) CG_SELECT(short, short, ushort)
CG_SELECT(ushort, short, ushort) CG_SELECT(int, int, uint) CG_SELECT(uint, int, uint)
CG_SELECT(long, long, ulong) CG_SELECT(ulong, long, ulong) CG_SELECT(float, int, uint)
CG_SELECT(double, long, ulong)

#define CG_BITSEL_N(N, T, U)                                                      \
  T##N OVL bitselect(T##N a, T##N b, T##N c) { T##N r; for (int i = 0; i < N; ++i) r[i] = bitselect(a[i], b[i], c[i]); return r; }
#define CG_BITSEL(T, U)                                                           \
  T OVL bitselect(T a, T b, T c) { return as_##T((U)((as_##U(a) & ~as_##U(c)) | (as_##U(b) & as_##U(c)))); } \
  CG_VEC_SIZES(CG_BITSEL_N, T, U)
CG_BITSEL(char, uchar) CG_BITSEL(uchar, uchar) CG_BITSEL(short, ushort) CG_BITSEL(ushort, ushort)
CG_BITSEL(int, uint) CG_BITSEL(uint, uint) CG_BITSEL(long, ulong) CG_BITSEL(ulong, ulong)
CG_BITSEL(float, uint) CG_BITSEL(double, ulong)
