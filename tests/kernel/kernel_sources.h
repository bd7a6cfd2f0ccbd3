// OpenCL C sources shared by the kernel tests.
#pragma once

namespace cgraph::test {

inline const char *kSaxpy = R"(
__kernel void saxpy(__global float *y, __global const float *x, float a, uint n) {
  size_t i = get_global_id(0);
  if (i < n) y[i] = a * x[i] + y[i];
}
)";

inline const char *kLocalReduce = R"(
__kernel __attribute__((reqd_work_group_size(64, 1, 1)))
void reduce(__global const int *restrict in, __global int *out, __local int *scratch,
            __constant float *coef, int i32, float f32, uint u32, long i64, double f64,
            float4 v4, uchar u8) {
  __local float tile[64];
  size_t l = get_local_id(0);
  scratch[l] = in[get_global_id(0)];
  tile[l] = coef[0] * f32 + (float)f64 + v4.x + (float)i64 + (float)u32 + (float)i32 + (float)u8;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (size_t s = get_local_size(0) / 2; s > 0; s >>= 1) {
    if (l < s) scratch[l] += scratch[l + s];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (l == 0) out[get_group_id(0)] = scratch[0] + (int)tile[0];
}
)";

} // namespace cgraph::test
