// CpuOptions and the environment: unset fields are filled from CGRAPH_CPU_* variables,
// explicit fields win, and a variable that does not parse makes the backend unavailable
// with a reason naming it (cgraph/runtime/env_options.h).
#include "cgraph/backends/cpu/cpu_backend.h"

#include "../common/scoped_env.h"

#include <catch2/catch.hpp>

using namespace cgraph;
using cgraph::test::ScopedEnv;

TEST_CASE("cpu options: defaults without the environment", "[cpu][options]") {
  ScopedEnv a("CGRAPH_CPU_SPECIALIZE", nullptr), b("CGRAPH_CPU_TUNE_LAUNCHES", nullptr),
      c("CGRAPH_CPU_DUMP_DIR", nullptr);
  auto o = cpu::resolveOptions({});
  REQUIRE(o);
  CHECK(*o->specializeShapes);
  CHECK(*o->tuneLaunches);
  CHECK_FALSE(o->dumpDir);
}

TEST_CASE("cpu options: the environment fills unset fields, explicit ones win", "[cpu][options]") {
  ScopedEnv a("CGRAPH_CPU_SPECIALIZE", "0"), b("CGRAPH_CPU_TUNE_LAUNCHES", "off"),
      c("CGRAPH_CPU_DUMP_DIR", "/from/env");
  auto filled = cpu::resolveOptions({});
  REQUIRE(filled);
  CHECK_FALSE(*filled->specializeShapes);
  CHECK_FALSE(*filled->tuneLaunches);
  CHECK(*filled->dumpDir == "/from/env");
  cpu::CpuOptions mine;
  mine.specializeShapes = true;
  mine.tuneLaunches = true;
  mine.dumpDir = "/mine";
  auto kept = cpu::resolveOptions(mine);
  REQUIRE(kept);
  CHECK(*kept->specializeShapes);
  CHECK(*kept->tuneLaunches);
  CHECK(*kept->dumpDir == "/mine");
}

TEST_CASE("cpu options: a bad variable makes the backend unavailable, naming it", "[cpu][options]") {
  ScopedEnv a("CGRAPH_CPU_SPECIALIZE", "garbage");
  const std::string want = "CGRAPH_CPU_SPECIALIZE: 'garbage' is not a flag (1/0, on/off, true/false, yes/no)";
  auto backend = cpu::makeCpuBackend();
  rt::BackendProbe p = backend->probe();
  CHECK_FALSE(p.available);
  CHECK(p.reason == want);
  auto d = backend->device(0);
  REQUIRE_FALSE(d);
  CHECK(d.error().message() == want);
  // An explicit value needs no variable: the same environment is no error then.
  cpu::CpuOptions mine;
  mine.specializeShapes = false;
  auto ok = cpu::makeCpuBackend(mine);
  CHECK(ok->probe().available);
  CHECK(ok->device(0));
}
