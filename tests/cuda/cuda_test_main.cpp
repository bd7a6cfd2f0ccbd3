// Catch2 runner for the GPU tests: exit 77 (ctest SKIPPED, never passed) when the cuda
// backend finds no device, after saying why.
#define CATCH_CONFIG_RUNNER
#include "cgraph/backends/cuda/cuda_backend.h"

#include <catch2/catch.hpp>

#include <cstdio>

int main(int argc, char **argv) {
  auto backend = cgraph::cuda::makeCudaBackend();
  cgraph::rt::BackendProbe p = backend->probe();
  if (!p.available) {
    std::printf("SKIPPED: no CUDA device: %s\n", p.reason.c_str());
    return 77;
  }
  std::printf("cuda device: %s (%s)\n", p.devices[0].name.c_str(), p.devices[0].driverVersion.c_str());
  return Catch::Session().run(argc, argv);
}
