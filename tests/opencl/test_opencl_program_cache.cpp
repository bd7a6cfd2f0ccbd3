// The OpenCL backend through lib/cache's KernelCache on PoCL: a cold finalize stores
// the program binary (CL_PROGRAM_BINARIES), a warm finalize on a fresh device object
// loads it with clCreateProgramWithBinary (a persistent-cache hit), and a binary the
// driver refuses is a miss, a warning and a rebuild, never a failure.
#include "cl_test_util.h"

#include "../common/temp_dir.h"

#include "cgraph/cache/persistent_cache.h"
#include "cgraph/cache/sink.h"

#include <cstdlib>
#include <filesystem>
#include <mutex>

using namespace cgraph;
using namespace cgraph::cltest;

using cgraph::test::TempDir;

namespace {

const char *kScale = R"(
__kernel void scale_add(__global float *y, __global const float *x, float a) {
  size_t i = get_global_id(0);
  y[i] = a * x[i] + y[i] + 0.5f;
}
)";

constexpr uint32_t kN = 512;

Graph scaleGraph() {
  GraphBuilder b("program-cache");
  uint32_t k = addKernelSource(b, kScale, "scale_add.cl", "scale_add");
  uint32_t y = b.addSlot(externalSlot("y", kN * 4));
  uint32_t x = b.addSlot(externalSlot("x", kN * 4));
  uint32_t a = b.addParam(Param{"a", ScalarType::F32, f32Bits(3.0f)});
  b.addKernelNode("scale", k, range1D(kN, 64), {Arg::slot(y), Arg::slot(x), Arg::param(a)});
  return b.take();
}

// Finalizes and runs the graph on a fresh backend (fresh device, empty memory tier)
// whose kernel cache lives in `cacheDir`; checks y = 3x + y + 0.5.
void finalizeAndRun(const Graph &g, const std::string &cacheDir) {
  opencl::OpenCLBackendOptions o;
  o.cache.dir = cacheDir;
  o.cache.persistent = true;
  auto backend = opencl::makeOpenCLBackend(o);
  rt::Device &d = *openPocl(*backend);
  auto exe = d.finalize(g, rt::FinalizeOptions());
  INFO((exe ? std::string() : exe.error().message()));
  REQUIRE(exe);
  auto x = alloc(d, kN * 4), y = alloc(d, kN * 4);
  std::vector<float> x0(kN), y0(kN);
  for (uint32_t i = 0; i < kN; ++i) {
    x0[i] = float(i) * 0.5f;
    y0[i] = 1.0f - float(i);
  }
  writeAll(d, *x, x0);
  writeAll(d, *y, y0);
  rt::BindingTable t;
  t.slots = {{y.get()}, {x.get()}};
  runAndWait(**exe, t);
  std::vector<float> out = readAll<float>(d, *y);
  for (uint32_t i = 0; i < kN; i += 31) CHECK(out[i] == Approx(3.0f * x0[i] + y0[i] + 0.5f));
}

cache::CacheStats statsOf(const std::string &root) {
  cache::CacheConfig c = cache::CacheConfig::fromEnvironment(cache::silentSink());
  c.root = root;
  cache::PersistentCache p(c, cache::silentSink());
  Expected<cache::CacheStats> s = p.stats();
  INFO((s ? std::string() : s.error().message()));
  REQUIRE(s);
  return *s;
}

} // namespace

TEST_CASE("opencl: a warm finalize loads the program binary from the persistent cache", "[opencl][cache]") {
  TempDir dir("cgraph-opencl-cache");
  std::mutex mutex;
  std::vector<std::string> warnings;
  cache::CacheSink previous = cache::setProcessSink([&](cache::CacheEvent e, const std::string &m) {
    std::lock_guard<std::mutex> lock(mutex);
    if (e == cache::CacheEvent::Warning) warnings.push_back(m);
  });
  Graph g = scaleGraph();

  // Cold: built from the module, its binary stored.
  finalizeAndRun(g, dir.str());
  cache::CacheStats cold = statsOf(dir.str());
  CHECK(cold.entries == 1);
  CHECK(cold.hits == 0);
  CHECK(cold.writes == 1);

  // Warm, on a new device object (empty memory tier): the binary comes from disk.
  finalizeAndRun(g, dir.str());
  cache::CacheStats warm = statsOf(dir.str());
  CHECK(warm.hits == 1);
  CHECK(warm.writes == 1);

  // Replace the stored binary with bytes the driver cannot take (valid entry, wrong
  // contents): a miss, a warning, a rebuild that stores a good binary again.
  cache::CacheConfig c = cache::CacheConfig::fromEnvironment(cache::silentSink());
  c.root = dir.str();
  cache::PersistentCache p(c, cache::silentSink());
  Expected<std::vector<cache::EntryInfo>> entries = p.list();
  REQUIRE(entries);
  REQUIRE(entries->size() == 1);
  const cache::EntryInfo entry = (*entries)[0];
  CHECK(entry.key.backend == "opencl");
  CHECK(entry.binaryKind == "opencl-program-binary");
  const std::string garbage = "this is not a program binary";
  p.store(entry.key, reinterpret_cast<const uint8_t *>(garbage.data()), garbage.size(), entry.binaryKind);
  finalizeAndRun(g, dir.str());
  cache::CacheStats rebuilt = statsOf(dir.str());
  CHECK(rebuilt.hits == 2);   // the entry was read...
  CHECK(rebuilt.writes == 3); // ...refused, rebuilt and stored again
  Expected<std::vector<cache::EntryInfo>> after = p.list();
  REQUIRE(after);
  REQUIRE(after->size() == 1);
  CHECK((*after)[0].binarySize != garbage.size());
  {
    std::lock_guard<std::mutex> lock(mutex);
    bool warned = false;
    for (const std::string &w : warnings) warned = warned || w.find("is not usable") != std::string::npos;
    CHECK(warned);
  }
  cache::setProcessSink(previous);
}
