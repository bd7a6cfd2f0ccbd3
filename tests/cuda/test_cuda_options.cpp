// CudaBackendOptions and the environment (no GPU needed): unset fields are filled from
// CGRAPH_CUDA_* variables, explicit fields win (the environment never overrides a
// program's choice), and a variable that does not parse makes the backend unavailable
// with a reason naming it, before the driver is even looked for.
#include "cgraph/backends/cuda/cuda_backend.h"

#include "../common/scoped_env.h"

#include <catch2/catch.hpp>

using namespace cgraph;
using cgraph::test::ScopedEnv;

namespace {
struct CleanEnv {
  ScopedEnv a{"CGRAPH_CUDA_COARSEN_MIN", nullptr}, b{"CGRAPH_CUDA_TABLE_RING", nullptr},
      e{"CGRAPH_CUDA_CONDITIONALS", nullptr};
};
} // namespace

TEST_CASE("cuda options: defaults without the environment", "[cuda][options]") {
  CleanEnv clean;
  auto o = cuda::resolveOptions({});
  REQUIRE(o);
  CHECK(*o->coarsenMinItems == uint64_t(1) << 20);
  CHECK(*o->tableRing);
  CHECK(*o->completionWord);
  CHECK(*o->pinnedPool);
  CHECK(*o->nativeConditionals);
}

TEST_CASE("cuda options: the environment fills unset fields, explicit ones win", "[cuda][options]") {
  CleanEnv clean;
  ScopedEnv a("CGRAPH_CUDA_COARSEN_MIN", "0"), b("CGRAPH_CUDA_TABLE_RING", "0"),
      e("CGRAPH_CUDA_CONDITIONALS", "staged");
  auto filled = cuda::resolveOptions({});
  REQUIRE(filled);
  CHECK(*filled->coarsenMinItems == 0);
  CHECK_FALSE(*filled->tableRing);
  CHECK_FALSE(*filled->nativeConditionals);
  cuda::CudaBackendOptions mine;
  mine.coarsenMinItems = 64;
  mine.tableRing = true;
  mine.completionWord = true;
  mine.pinnedPool = true;
  mine.nativeConditionals = true;
  auto kept = cuda::resolveOptions(mine);
  REQUIRE(kept);
  CHECK(*kept->coarsenMinItems == 64);
  CHECK(*kept->tableRing);
  CHECK(*kept->completionWord);
  CHECK(*kept->pinnedPool);
  CHECK(*kept->nativeConditionals);
}

TEST_CASE("cuda options: garbage is an error naming the variable, not 0", "[cuda][options]") {
  CleanEnv clean;
  ScopedEnv a("CGRAPH_CUDA_COARSEN_MIN", "garbage");
  const std::string want = "CGRAPH_CUDA_COARSEN_MIN: 'garbage' is not a count";
  auto o = cuda::resolveOptions({});
  REQUIRE_FALSE(o);
  CHECK(o.error().message() == want);
  auto backend = cuda::makeCudaBackend();
  rt::BackendProbe p = backend->probe();
  CHECK_FALSE(p.available);
  CHECK(p.reason == want);
  auto d = backend->device(0);
  REQUIRE_FALSE(d);
  CHECK(d.error().message() == want);
  // A program that sets the field itself is not affected by the variable.
  cuda::CudaBackendOptions mine;
  mine.coarsenMinItems = 0;
  CHECK(cuda::resolveOptions(mine));
}

TEST_CASE("cuda options: a bad switch value names the accepted words", "[cuda][options]") {
  CleanEnv clean;
  {
    ScopedEnv a("CGRAPH_CUDA_CONDITIONALS", "sometimes");
    auto o = cuda::resolveOptions({});
    REQUIRE_FALSE(o);
    CHECK(o.error().message() == "CGRAPH_CUDA_CONDITIONALS: 'sometimes' is not one of native, staged");
  }
  {
    ScopedEnv a("CGRAPH_CUDA_TABLE_RING", "2");
    auto o = cuda::resolveOptions({});
    REQUIRE_FALSE(o);
    CHECK(o.error().message().rfind("CGRAPH_CUDA_TABLE_RING: '2' is not a flag", 0) == 0);
  }
}
