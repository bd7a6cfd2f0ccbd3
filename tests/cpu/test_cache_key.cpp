// The key of a compiled CPU object follows the backend's code: it carries the hash that
// lib/backends/cpu/CMakeLists.txt computes over the lowering, launcher and builtin
// sources, so an object built by other code is a miss, never a stale hit.
#include "cpu_test_util.h"

#include "cgraph/cache/persistent_cache.h"

using namespace cgtest;

TEST_CASE("cpu object cache key contains the hash of the backend's code", "[cpu][cache]") {
  const std::string hash = CGRAPH_CPU_CODE_HASH;
  REQUIRE(hash.size() == 16);
  REQUIRE(hash.find_first_not_of("0123456789abcdef") == std::string::npos);

  GraphBuilder b("key");
  auto k = addKernels(b, "basic.cl");
  uint32_t v = addSlot(b, "v", 64 * 4);
  b.addKernelNode("scale", k["scale_int"], range1D(64),
                  {Arg::slot(v), Arg::scalar(ScalarType::I32, 5)});
  Graph g = b.take();
  auto exe = finalizeOrFail(g);
  Buffers bufs(g);
  std::vector<int> init(64);
  for (int i = 0; i < 64; ++i)
    init[i] = i - 7;
  bufs.set(v, init);
  runOrFail(*exe, bufs.table);
  auto out = bufs.get<int>(v);
  for (int i = 0; i < 64; ++i)
    REQUIRE(out[i] == 5 * (i - 7));

  // The object went through the persistent cache of this test (CGRAPH_CACHE_DIR).
  cache::PersistentCache p = cache::PersistentCache::fromEnvironment();
  REQUIRE(p.enabled());
  auto entries = p.list();
  REQUIRE(entries.ok());
  // The test's cache directory outlives a rebuild: entries written by an earlier build
  // carry that build's hash (they are misses now). This run's object carries this one.
  size_t current = 0;
  for (const cache::EntryInfo &e : *entries) {
    if (e.key.backend != "cpu") continue;
    INFO("compiler identity: " << e.key.compilerVersion);
    CHECK(e.key.compilerVersion.find(" code=") != std::string::npos);
    if (e.key.compilerVersion.find(" code=" + hash) != std::string::npos) ++current;
  }
  REQUIRE(current >= 1);
}
