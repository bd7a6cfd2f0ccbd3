// main() of the tests that need a CUDA device (SKIPPED without one, with the reason).
#include "../common/device_main.h"
#include "cgraph/backends/cuda/cuda_backend.h"

int main(int argc, char **argv) {
  auto backend = cgraph::cuda::makeCudaBackend();
  return cgraph::test::runWithDevice(argc, argv, *backend);
}
