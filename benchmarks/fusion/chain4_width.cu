// chain4_width.cu: why torch.compile's kernel for the 4-kernel chain y = (2x + 0.5)^2 + x
// beat cgfuse's fused kernel on the H100 (0.717 vs 0.916 ms over 256M floats) although
// both move the same bytes (read x, write y: 8 bytes per element). Hand-written CUDA,
// one run, CUDA events, 20 repetitions after 3 warm-ups, on one device:
//   copy1 / chain1: one float per thread, 4-byte loads and stores: what the cuda backend
//                   launches for the fused kernel (its PTX: one ld.global.f32 of x, one
//                   st.global.f32 of y per work-item; nothing else touches memory but
//                   two broadcast loads of the binding table)
//   copy4 / chain4: four consecutive floats per thread as one float4 (16-byte ld/st.v4),
//                   what Triton's kernel does ("16 bytes per thread")
//   chain4x4:       four float4 per thread (more bytes in flight per thread)
// H100 80GB HBM3, 2026-11-25, one run, block 256: copy1 0.890 ms (2412 GB/s), chain1
// 0.894 ms (2403), copy4 0.710 ms (3024), chain4 0.710 ms (3024); in the same session
// cgraph's fused chain with private intermediates 0.919 ms, torch.compile 0.721 ms.
// The bytes are the same; the access width per thread is the difference (README).
// Not built by CMake (no nvcc in CI): build and run it on the GPU machine.
// Build: nvcc -O3 -arch=sm_90 -o chain4_width chain4_width.cu
// Run:   ./chain4_width [N floats, default 256M]
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define CK(x)                                                                                      \
  do {                                                                                             \
    cudaError_t e_ = (x);                                                                          \
    if (e_ != cudaSuccess) {                                                                       \
      std::printf("cuda error %s at line %d\n", cudaGetErrorString(e_), __LINE__);                 \
      std::exit(1);                                                                                \
    }                                                                                              \
  } while (0)

__device__ __forceinline__ float f(float x) {
  float t = x * 2.0f + 0.5f;
  return t * t + x;
}

__global__ void copy1(float *__restrict__ y, const float *__restrict__ x, size_t n) {
  size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i];
}
__global__ void chain1(float *__restrict__ y, const float *__restrict__ x, size_t n) {
  size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) y[i] = f(x[i]);
}
__global__ void copy4(float4 *__restrict__ y, const float4 *__restrict__ x, size_t n4) {
  size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n4) y[i] = x[i];
}
__global__ void chain4(float4 *__restrict__ y, const float4 *__restrict__ x, size_t n4) {
  size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n4) {
    float4 v = x[i];
    y[i] = make_float4(f(v.x), f(v.y), f(v.z), f(v.w));
  }
}
__global__ void chain4x4(float4 *__restrict__ y, const float4 *__restrict__ x, size_t n4) {
  size_t base = (size_t(blockIdx.x) * blockDim.x) * 4 + threadIdx.x;
  float4 v[4];
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    size_t i = base + size_t(k) * blockDim.x;
    if (i < n4) v[k] = x[i];
  }
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    size_t i = base + size_t(k) * blockDim.x;
    if (i < n4) y[i] = make_float4(f(v[k].x), f(v[k].y), f(v[k].z), f(v[k].w));
  }
}

template <typename L> double timeit(L launch) {
  for (int r = 0; r < 3; ++r)
    launch();
  CK(cudaDeviceSynchronize());
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  const int reps = 20;
  CK(cudaEventRecord(a));
  for (int r = 0; r < reps; ++r)
    launch();
  CK(cudaEventRecord(b));
  CK(cudaEventSynchronize(b));
  float ms = 0;
  CK(cudaEventElapsedTime(&ms, a, b));
  return ms / reps;
}

int main(int argc, char **argv) {
  size_t n = argc > 1 ? std::strtoull(argv[1], nullptr, 0) : (size_t(256) << 20);
  float *x, *y;
  CK(cudaMalloc(&x, n * 4));
  CK(cudaMalloc(&y, n * 4));
  CK(cudaMemset(x, 0, n * 4));
  cudaDeviceProp p;
  CK(cudaGetDeviceProperties(&p, 0));
  std::printf("device: %s, %zu floats, 8 bytes of traffic per element\n", p.name, n);
  auto report = [&](const char *name, double ms) {
    std::printf("%-34s %8.3f ms %8.1f GB/s\n", name, ms, 8.0 * n / (ms * 1e-3) / 1e9);
  };
  for (unsigned block : {256u, 1024u}) {
    char name[64];
    size_t g1 = (n + block - 1) / block, g4 = (n / 4 + block - 1) / block;
    std::snprintf(name, sizeof name, "copy1 (4 B/thread, block %u)", block);
    report(name, timeit([&] { copy1<<<g1, block>>>(y, x, n); }));
    std::snprintf(name, sizeof name, "chain1 (4 B/thread, block %u)", block);
    report(name, timeit([&] { chain1<<<g1, block>>>(y, x, n); }));
    std::snprintf(name, sizeof name, "copy4 (16 B/thread, block %u)", block);
    report(name, timeit([&] { copy4<<<g4, block>>>((float4 *)y, (const float4 *)x, n / 4); }));
    std::snprintf(name, sizeof name, "chain4 (16 B/thread, block %u)", block);
    report(name, timeit([&] { chain4<<<g4, block>>>((float4 *)y, (const float4 *)x, n / 4); }));
    std::snprintf(name, sizeof name, "chain4x4 (64 B/thread, block %u)", block);
    size_t g44 = (n / 4 + 4 * block - 1) / (4 * block);
    report(name, timeit([&] { chain4x4<<<g44, block>>>((float4 *)y, (const float4 *)x, n / 4); }));
  }
  return 0;
}
