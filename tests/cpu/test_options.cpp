// CpuOptions and the environment: unset fields are filled from CGRAPH_CPU_* variables,
// explicit fields win, and a variable that does not parse makes the backend unavailable
// with a reason naming it (cgraph/runtime/env_options.h).
#include "cgraph/backends/cpu/cpu_backend.h"

#include "../common/scoped_env.h"

#include <catch2/catch.hpp>

using namespace cgraph;
using cgraph::test::ScopedEnv;

TEST_CASE("cpu options: defaults without the environment", "[cpu][options]") {
  ScopedEnv a("CGRAPH_CPU_FIBERS", nullptr), c("CGRAPH_CPU_DUMP_DIR", nullptr);
  auto o = cpu::resolveOptions({});
  REQUIRE(o);
  CHECK_FALSE(*o->barrierFibers);
  CHECK_FALSE(o->dumpDir);
}

TEST_CASE("cpu options: the environment fills unset fields, explicit ones win", "[cpu][options]") {
  ScopedEnv a("CGRAPH_CPU_FIBERS", "yes"), c("CGRAPH_CPU_DUMP_DIR", "/from/env");
  auto filled = cpu::resolveOptions({});
  REQUIRE(filled);
  CHECK(*filled->barrierFibers);
  CHECK(*filled->dumpDir == "/from/env");
  cpu::CpuOptions mine;
  mine.barrierFibers = false;
  mine.dumpDir = "/mine";
  auto kept = cpu::resolveOptions(mine);
  REQUIRE(kept);
  CHECK_FALSE(*kept->barrierFibers);
  CHECK(*kept->dumpDir == "/mine");
}

TEST_CASE("cpu options: a bad variable makes the backend unavailable, naming it", "[cpu][options]") {
  ScopedEnv a("CGRAPH_CPU_FIBERS", "garbage");
  const std::string want = "CGRAPH_CPU_FIBERS: 'garbage' is not a flag (1/0, on/off, true/false, yes/no)";
  auto backend = cpu::makeCpuBackend();
  rt::BackendProbe p = backend->probe();
  CHECK_FALSE(p.available);
  CHECK(p.reason == want);
  auto d = backend->device(0);
  REQUIRE_FALSE(d);
  CHECK(d.error().message() == want);
  // An explicit value needs no variable: the same environment is no error then.
  cpu::CpuOptions mine;
  mine.barrierFibers = false;
  auto ok = cpu::makeCpuBackend(mine);
  CHECK(ok->probe().available);
  CHECK(ok->device(0));
}
