// main() of the Level Zero device tests (SKIPPED without a device, with the probe's
// reason: "libze_loader.so.1 not found ...", "no Level Zero device (...)").
#include "../common/device_main.h"
#include "cgraph/backends/level_zero/level_zero_backend.h"

int main(int argc, char **argv) {
  auto backend = cgraph::level_zero::makeLevelZeroBackend();
  return cgraph::test::runWithDevice(argc, argv, *backend);
}
