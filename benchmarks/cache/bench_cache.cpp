// Prints the cost of: one warm in-memory lookup, one warm persistent lookup (load
// from disk with checksum) of a ~100 KB binary, and one cold store.
// Usage: bench_cache [cache-dir]   (default: a fresh directory under /tmp)
#include "cgraph/cache/memory_cache.h"
#include "cgraph/cache/persistent_cache.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <unistd.h>
#include <vector>

using namespace cgraph;
using namespace cgraph::cache;
using Clock = std::chrono::steady_clock;

namespace {

double usSince(Clock::time_point t0, int n) {
  return std::chrono::duration<double, std::micro>(Clock::now() - t0).count() / n;
}

CacheKey keyFor(int i) {
  std::string image = "bench-image-" + std::to_string(i);
  CacheKey k;
  k.backend = "cpu";
  k.deviceName = "bench";
  k.driverVersion = "1";
  k.compilerVersion = "cgraph bench";
  k.imageHash = hashImage(reinterpret_cast<const uint8_t *>(image.data()), image.size());
  k.buildOptions = "-O2";
  return k;
}

} // namespace

int main(int argc, char **argv) {
  std::string root;
  bool ownDir = argc < 2;
  if (ownDir) {
    char tmpl[] = "/tmp/cgraph-bench-cache-XXXXXX";
    if (!::mkdtemp(tmpl)) return 1;
    root = tmpl;
  } else {
    root = argv[1];
  }
  constexpr size_t kBinarySize = 100 * 1024;
  std::vector<uint8_t> binary(kBinarySize);
  for (size_t i = 0; i < binary.size(); ++i) binary[i] = static_cast<uint8_t>(i * 131 + 7);

  // Warm in-memory lookup.
  MemoryCache<std::string, std::vector<uint8_t>> memory;
  const std::string memKey = identityString(keyFor(0));
  if (!memory.getOrBuild(memKey, [&] { return std::make_shared<const std::vector<uint8_t>>(binary); })) return 1;
  constexpr int kMemIters = 1000000;
  size_t sink = 0;
  auto t0 = Clock::now();
  for (int i = 0; i < kMemIters; ++i) {
    auto r = memory.getOrBuild(memKey, [&] { return std::make_shared<const std::vector<uint8_t>>(binary); });
    sink += (*r)->size();
  }
  double memUs = usSince(t0, kMemIters);

  CacheConfig config;
  config.root = root;
  config.maxSizeSet = config.maxAgeSet = true;
  config.maxAgeSeconds = 0;
  PersistentCache disk(config, defaultSink());

  // Cold stores: each a new key (new directories, lock, two atomic files, counters).
  constexpr int kStores = 200;
  t0 = Clock::now();
  for (int i = 1; i <= kStores; ++i) disk.store(keyFor(i), binary.data(), binary.size(), "bench");
  double storeUs = usSince(t0, kStores);

  // Warm persistent lookups of one entry (page cache warm): read + checksum + counters.
  constexpr int kLoads = 2000;
  (void)disk.load(keyFor(1)); // warms the page cache; checked in the loop below
  t0 = Clock::now();
  for (int i = 0; i < kLoads; ++i) {
    auto r = disk.load(keyFor(1));
    if (!r || !r->has_value()) {
      std::fprintf(stderr, "bench_cache: unexpected miss\n");
      return 1;
    }
    sink += (*r)->size();
  }
  double loadUs = usSince(t0, kLoads);

  std::printf("cache directory                          %s\n", root.c_str());
  std::printf("warm in-memory lookup                    %.3f us\n", memUs);
  std::printf("warm persistent lookup (100 KiB, xxh3)   %.1f us\n", loadUs);
  std::printf("cold persistent store (100 KiB)          %.1f us\n", storeUs);
  std::printf("(checksum %zu)\n", sink % 7);
  if (ownDir) std::filesystem::remove_all(root);
  return 0;
}
