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

[[maybe_unused]] static int qualityAll(cudaStream_t s) {
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

// One chain as a stream-captured graph: capture + instantiate + upload (the median of
// 5, each destroyed before the next; bench_cuda's warm finalize is the median of 5
// too), then `reps` launches of the last one: the median host time of a launch and the
// device time per node. kind 0: the empty kernel, 1: axpy over 4096 floats.
struct GraphFigures {
  double buildUs = 0, captureUs = 0, hostUs = 0, perNodeUs = 0;
};
static int graphRun(int kind, int n, int reps, float *x, float *y, cudaStream_t s, GraphFigures &f) {
  auto launch = [&] {
    if (kind) axpy<<<16, 256, 0, s>>>(y, x, 0.5f);
    else empty<<<1, 1, 0, s>>>();
  };
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
  f.buildUs = builds[2];
  f.captureUs = captures[2];
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
  f.hostUs = reps % 2 ? host[reps / 2] : (host[reps / 2 - 1] + host[reps / 2]) / 2;
  f.perNodeUs = (r1 - r0) / reps / n;
  CK(cudaGraphExecDestroy(ge));
  CK(cudaGraphDestroy(g));
  return 0;
}

#ifdef CGRAPH_HW_LIBRARY
// Built with -shared -DCGRAPH_HW_LIBRARY, bench_cuda loads this and calls it between
// its own rows, in its own process (the same primary context): the two sides then
// alternate on one host state instead of running minutes apart in two processes.
// Returns 0, or 1 after printing the CUDA error.
extern "C" int cgraph_hw_graph(int kind, int n, int reps, double *buildUs, double *hostUs, double *perNodeUs) {
  static float *x = nullptr, *y = nullptr;
  static cudaStream_t s = nullptr;
  if (!s) {
    CK(cudaMalloc(&x, 4096 * 4));
    CK(cudaMalloc(&y, 4096 * 4));
    CK(cudaMemset(x, 0, 4096 * 4));
    CK(cudaMemset(y, 0, 4096 * 4));
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  }
  GraphFigures f;
  if (graphRun(kind, n, reps, x, y, s, f)) return 1;
  *buildUs = f.buildUs;
  *hostUs = f.hostUs;
  *perNodeUs = f.perNodeUs;
  return 0;
}
#else
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
      GraphFigures f;
      if (graphRun(kind, n, n >= 10000 ? 20 : 50, x, y, s, f)) return 1; // reps as bench_cuda's replay rows
      std::printf("handwritten_capture_instantiate_%s_%d %.4f %.2f\n", kname, n, f.buildUs / n, f.buildUs);
      // The capture alone (the rest is instantiate + upload), for finalize's phases.
      std::printf("handwritten_capture_only_%s_%d %.4f %.2f\n", kname, n, f.captureUs / n, f.captureUs);
      std::printf("handwritten_graph_%s_%d %.4f %.2f\n", kname, n, f.perNodeUs, f.hostUs);
    }
  return qualityAll(s);
}
#endif
