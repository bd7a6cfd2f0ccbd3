// vloadN / vstoreN for every scalar type, N = 2, 3, 4, 8, 16, from/to global, local,
// constant (loads only) and private memory.
#pragma once
#include "builtins_vec.h"

#define CG_VLOAD_AS(N, T, AS)                                                         \
  T##N OVL vload##N(size_t off, const AS T *p) { T##N r; for (int i = 0; i < N; ++i) r[i] = p[off * N + i]; return r; }
#define CG_VSTORE_AS(N, T, AS)                                                        \
  void OVL vstore##N(T##N v, size_t off, AS T *p) { for (int i = 0; i < N; ++i) p[off * N + i] = v[i]; }
#define CG_VLS(N, T)                                                                  \
  CG_VLOAD_AS(N, T, __global) CG_VLOAD_AS(N, T, __local) CG_VLOAD_AS(N, T, __constant) \
  CG_VLOAD_AS(N, T, __private) CG_VSTORE_AS(N, T, __global) CG_VSTORE_AS(N, T, __local) \
  CG_VSTORE_AS(N, T, __private)
#define CG_VLS_T(T) CG_VEC_SIZES(CG_VLS, T)
CG_VLS_T(char) CG_VLS_T(uchar) CG_VLS_T(short) CG_VLS_T(ushort) CG_VLS_T(int) CG_VLS_T(uint)
CG_VLS_T(long) CG_VLS_T(ulong) CG_VLS_T(float) CG_VLS_T(double)
