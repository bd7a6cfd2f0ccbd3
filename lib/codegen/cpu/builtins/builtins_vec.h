// Helpers: define vector overloads component-wise from the scalar ones.
#pragma once
#define CG_VEC_SIZES(M, ...) M(2, __VA_ARGS__) M(3, __VA_ARGS__) M(4, __VA_ARGS__) M(8, __VA_ARGS__) M(16, __VA_ARGS__)

#define CG_V1(N, F, R, T)                                                   \
  R##N OVL F(T##N x) { R##N r; for (int i = 0; i < N; ++i) r[i] = F(x[i]); return r; }
#define CG_V2(N, F, R, T)                                                   \
  R##N OVL F(T##N x, T##N y) { R##N r; for (int i = 0; i < N; ++i) r[i] = F(x[i], y[i]); return r; }
#define CG_V3(N, F, R, T)                                                   \
  R##N OVL F(T##N x, T##N y, T##N z) { R##N r; for (int i = 0; i < N; ++i) r[i] = F(x[i], y[i], z[i]); return r; }
// vector op scalar (fmin(float4, float), clamp(float4, float, float), ...)
#define CG_V2S(N, F, R, T)                                                  \
  R##N OVL F(T##N x, T y) { R##N r; for (int i = 0; i < N; ++i) r[i] = F(x[i], y); return r; }
#define CG_V3S(N, F, R, T)                                                  \
  R##N OVL F(T##N x, T y, T z) { R##N r; for (int i = 0; i < N; ++i) r[i] = F(x[i], y, z); return r; }
