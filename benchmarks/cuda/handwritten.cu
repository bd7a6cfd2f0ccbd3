// The hand-written reference bench_cuda compares against: the same chains (empty
// kernel, axpy over 4096 floats) as stream-captured, instantiated CUDA graphs, and the
// same chain launched eagerly. Built with nvcc by bench_cuda at run time; prints one
// line per figure: `name per_node_device_us host_submit_us`.
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>

__global__ void empty() {}
__global__ void axpy(float *y, const float *x, float a) {
  size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  y[i] = fmaf(a, x[i], y[i]);
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
      cudaGraph_t g;
      cudaGraphExec_t ge;
      double c0 = now();
      CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
      for (int i = 0; i < n; ++i) launch();
      CK(cudaStreamEndCapture(s, &g));
      CK(cudaGraphInstantiate(&ge, g, 0));
      CK(cudaGraphUpload(ge, s));
      CK(cudaStreamSynchronize(s));
      double c1 = now();
      std::printf("handwritten_capture_instantiate_%s_%d %.4f %.2f\n", kname, n, (c1 - c0) / n, c1 - c0);
      const int reps = n >= 10000 ? 5 : 20;
      CK(cudaGraphLaunch(ge, s));
      CK(cudaStreamSynchronize(s));
      double host = 0;
      double r0 = now();
      for (int r = 0; r < reps; ++r) {
        double h0 = now();
        CK(cudaGraphLaunch(ge, s));
        host += now() - h0;
      }
      CK(cudaStreamSynchronize(s));
      double r1 = now();
      std::printf("handwritten_graph_%s_%d %.4f %.2f\n", kname, n, (r1 - r0) / reps / n, host / reps);
      CK(cudaGraphExecDestroy(ge));
      CK(cudaGraphDestroy(g));
    }
  return 0;
}
