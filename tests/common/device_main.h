// main() of the test executables that need a device of one backend: the run is reported
// as SKIPPED (exit 77, which ctest counts as skipped, never as passed) with the probe's
// reason where the backend finds no device, and otherwise names the device and runs the
// Catch2 session (tests/catch_session.h). Header-only; call once, from main().
#pragma once

#include "../catch_session.h"
#include "cgraph/runtime/runtime.h"

#include <cstdio>

namespace cgraph::test {

inline int runWithDevice(int argc, char **argv, rt::Backend &backend) {
  const rt::BackendProbe p = backend.probe();
  if (!p.available || p.devices.empty()) {
    std::printf("SKIPPED: no %s device: %s\n", backend.name(), p.reason.c_str());
    return 77;
  }
  std::printf("%s device: %s (%s)\n", backend.name(), p.devices[0].name.c_str(),
              p.devices[0].driverVersion.c_str());
  return runCatchSession(argc, argv);
}

} // namespace cgraph::test
