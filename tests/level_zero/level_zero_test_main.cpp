// Catch2 runner for the Level Zero device tests: exit 77 (ctest SKIPPED, never passed)
// when the level_zero backend finds no device, after saying why
// ("libze_loader.so.1 not found ...", "no Level Zero device (...)").
#define CATCH_CONFIG_RUNNER
#include "cgraph/backends/level_zero/level_zero_backend.h"

#include <catch2/catch.hpp>

#include <cstdio>

int main(int argc, char **argv) {
  auto backend = cgraph::level_zero::makeLevelZeroBackend();
  cgraph::rt::BackendProbe p = backend->probe();
  if (!p.available) {
    std::printf("SKIPPED: %s\n", p.reason.c_str());
    return 77;
  }
  std::printf("level_zero device: %s (%s)\n", p.devices[0].name.c_str(),
              p.devices[0].driverVersion.c_str());
  return Catch::Session().run(argc, argv);
}
