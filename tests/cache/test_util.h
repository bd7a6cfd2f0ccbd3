// Helpers shared by the cache tests: keys, a sink that records (and the tests' one
// temporary directory, tests/common/temp_dir.h).
#pragma once

// Sanitizer runtimes reserve terabytes of address space for their shadow memory: the
// sanitized builds run the hostile-entry checks without an address space cap (they
// still check the results; only the "no huge allocation" guard is lost there).
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define CGRAPH_CACHE_TEST_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || __has_feature(memory_sanitizer)
#define CGRAPH_CACHE_TEST_SANITIZED 1
#endif
#endif
#ifdef CGRAPH_CACHE_TEST_SANITIZED
constexpr bool kSanitizedBuild = true;
#else
constexpr bool kSanitizedBuild = false;
#endif

#include "cgraph/cache/key.h"
#include "cgraph/cache/persistent_cache.h"
#include "cgraph/cache/sink.h"

#include "../common/temp_dir.h"

#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <string>
#include <vector>

namespace cgraph::cache::test {

using cgraph::test::TempDir; // tests/common/temp_dir.h

struct RecordingSink {
  std::mutex mutex;
  std::vector<std::string> warnings, traces;
  CacheSink sink() {
    return [this](CacheEvent e, const std::string &m) {
      std::lock_guard<std::mutex> lock(mutex);
      (e == CacheEvent::Warning ? warnings : traces).push_back(m);
    };
  }
  bool warned(const std::string &part) {
    std::lock_guard<std::mutex> lock(mutex);
    for (const std::string &w : warnings)
      if (w.find(part) != std::string::npos) return true;
    return false;
  }
};

inline CacheKey makeKey(int i, const std::string &device = "Test Device") {
  std::string image = "image-" + std::to_string(i);
  CacheKey k;
  k.backend = "cpu";
  k.deviceName = device;
  k.driverVersion = "1.0";
  k.compilerVersion = "cgraph 0.1.0 / LLVM 14";
  k.imageHash = hashImage(reinterpret_cast<const uint8_t *>(image.data()), image.size());
  k.specConstants = std::string("\x01\x00\x02", 3);
  k.buildOptions = "-O2";
  k.kernelNames = "k" + std::to_string(i);
  return k;
}

// Deterministic payload for key i, so any process can check what it loads.
inline std::vector<uint8_t> makePayload(int i, size_t size) {
  std::vector<uint8_t> v(size);
  uint32_t x = 2166136261u ^ static_cast<uint32_t>(i);
  for (size_t j = 0; j < size; ++j) {
    x = x * 16777619u + 0x9e37u;
    v[j] = static_cast<uint8_t>(x >> 24);
  }
  return v;
}

inline CacheConfig testConfig(const std::string &root) {
  CacheConfig c;
  c.root = root;
  c.persistent = true;
  c.maxSizeSet = c.maxAgeSet = true;
  c.maxAgeSeconds = 0;
  c.trace = true;
  return c;
}

} // namespace cgraph::cache::test
