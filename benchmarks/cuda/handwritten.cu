// The hand-written reference bench_cuda compares against: the same chains (empty
// kernel, axpy over 4096 floats) as stream-captured, instantiated CUDA graphs, and the
// same chain launched eagerly. Built with nvcc by bench_cuda at run time; prints one
// line per figure: `name per_node_device_us host_submit_us`.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

__global__ void empty() {}
__global__ void axpy(float *y, const float *x, float a) {
  size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  y[i] = fmaf(a, x[i], y[i]);
}

// Benchmark 4 (kernel quality): the same kernels as bench_cuda's, written in CUDA C++.
__global__ void copy_f32(float *__restrict__ y, const float *__restrict__ x) {
  size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  y[i] = x[i];
}
__global__ void jacobi_step(float *__restrict__ out, const float *__restrict__ in, const float *__restrict__ f,
                            unsigned n, float h2) {
  size_t x = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  size_t y = blockIdx.y * size_t(blockDim.y) + threadIdx.y;
  if (x >= n || y >= n) return;
  size_t i = y * n + x;
  if (x == 0 || y == 0 || x == n - 1 || y == n - 1) {
    out[i] = in[i];
    return;
  }
  out[i] = 0.25f * (in[i - 1] + in[i + 1] + in[i - n] + in[i + n] + h2 * f[i]);
}

#define CK(x)                                                                            \
  do {                                                                                   \
    cudaError_t e_ = (x);                                                                \
    if (e_ != cudaSuccess) {                                                             \
      std::printf("error %s: %s\n", #x, cudaGetErrorString(e_));                         \
      return 1;                                                                          \
    }                                                                                    \
  } while (0)

static double now() {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// us per launch and effective GB/s of `launch`, 20 launches timed with events.
template <class F> static int quality(const char *name, double bytes, cudaStream_t s, F launch) {
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  launch();
  CK(cudaStreamSynchronize(s));
  CK(cudaEventRecord(a, s));
  for (int r = 0; r < 20; ++r) launch();
  CK(cudaEventRecord(b, s));
  CK(cudaEventSynchronize(b));
  float ms = 0;
  CK(cudaEventElapsedTime(&ms, a, b));
  const double us = ms * 1e3 / 20;
  std::printf("handwritten_quality_%s %.2f %.1f\n", name, us, bytes / us / 1e3);
  return 0;
}

static int qualityAll(cudaStream_t s) {
  const size_t n = size_t(64) << 20;
  const unsigned grid = 4096;
  float *x, *y, *f;
  CK(cudaMalloc(&x, n * 4));
  CK(cudaMalloc(&y, n * 4));
  CK(cudaMalloc(&f, n * 4));
  CK(cudaMemset(x, 0, n * 4));
  CK(cudaMemset(y, 0, n * 4));
  CK(cudaMemset(f, 0, n * 4));
  if (quality("axpy_64M", 12.0 * n, s, [&] { axpy<<<unsigned(n / 256), 256, 0, s>>>(y, x, 0.5f); })) return 1;
  if (quality("copy_64M", 8.0 * n, s, [&] { copy_f32<<<unsigned(n / 256), 256, 0, s>>>(y, x); })) return 1;
  if (quality("jacobi_4096x4096", 12.0 * grid * grid, s,
              [&] { jacobi_step<<<dim3(grid / 32, grid / 8), dim3(32, 8), 0, s>>>(y, x, f, grid, 1e-4f); }))
    return 1;
  CK(cudaFree(x));
  CK(cudaFree(y));
  CK(cudaFree(f));
  return 0;
}

int main() {
  float *x, *y;
  CK(cudaMalloc(&x, 4096 * 4));
  CK(cudaMalloc(&y, 4096 * 4));
  CK(cudaMemset(x, 0, 4096 * 4));
  CK(cudaMemset(y, 0, 4096 * 4));
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  for (int kind = 0; kind < 2; ++kind)
    for (int n : {1000, 10000}) {
      const char *kname = kind ? "axpy4096" : "empty";
      auto launch = [&] {
        if (kind) axpy<<<16, 256, 0, s>>>(y, x, 0.5f);
        else empty<<<1, 1, 0, s>>>();
      };
      // eager
      for (int i = 0; i < n; ++i) launch();
      CK(cudaStreamSynchronize(s));
      double t0 = now();
      for (int i = 0; i < n; ++i) launch();
      double t1 = now();
      CK(cudaStreamSynchronize(s));
      double t2 = now();
      std::printf("handwritten_eager_%s_%d %.4f %.2f\n", kname, n, (t2 - t0) / n, t1 - t0);
      // graph
      // Capture + instantiate + upload, the median of 5 (bench_cuda's warm finalize is
      // the median of 5 too); the last graph is the one launched below.
      cudaGraph_t g = nullptr;
      cudaGraphExec_t ge = nullptr;
      std::vector<double> builds, captures;
      for (int b = 0; b < 5; ++b) {
        if (ge) {
          CK(cudaGraphExecDestroy(ge));
          CK(cudaGraphDestroy(g));
        }
        double c0 = now();
        CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
        for (int i = 0; i < n; ++i) launch();
        CK(cudaStreamEndCapture(s, &g));
        captures.push_back(now() - c0);
        CK(cudaGraphInstantiate(&ge, g, 0));
        CK(cudaGraphUpload(ge, s));
        CK(cudaStreamSynchronize(s));
        builds.push_back(now() - c0);
      }
      std::sort(builds.begin(), builds.end());
      std::sort(captures.begin(), captures.end());
      const double build = builds[2];
      std::printf("handwritten_capture_instantiate_%s_%d %.4f %.2f\n", kname, n, build / n, build);
      // The capture alone (the rest is instantiate + upload), for finalize's phases.
      std::printf("handwritten_capture_only_%s_%d %.4f %.2f\n", kname, n, captures[2] / n, captures[2]);
      const int reps = n >= 10000 ? 20 : 50; // as bench_cuda's replay rows
      CK(cudaGraphLaunch(ge, s));
      CK(cudaStreamSynchronize(s));
      std::vector<double> host;
      double r0 = now();
      for (int r = 0; r < reps; ++r) {
        double h0 = now();
        CK(cudaGraphLaunch(ge, s));
        host.push_back(now() - h0);
      }
      CK(cudaStreamSynchronize(s));
      double r1 = now();
      std::sort(host.begin(), host.end()); // the median, as bench_cuda reports
      const double med = reps % 2 ? host[reps / 2] : (host[reps / 2 - 1] + host[reps / 2]) / 2;
      std::printf("handwritten_graph_%s_%d %.4f %.2f\n", kname, n, (r1 - r0) / reps / n, med);
      CK(cudaGraphExecDestroy(ge));
      CK(cudaGraphDestroy(g));
    }
  return qualityAll(s);
}
