// Cache configuration read from the environment (documented in lib/cache/README.md).
//
//   CGRAPH_CACHE_DIR              root of the persistent cache
//                                 (default $XDG_CACHE_HOME/cgraph, else ~/.cache/cgraph)
//   CGRAPH_CACHE_PERSISTENT       0/off/false/no turns the persistent cache off (default on)
//   CGRAPH_CACHE_MAX_SIZE         size eviction threshold, e.g. 512M, 2G; 0 = none (default 8G)
//   CGRAPH_CACHE_MAX_AGE          age eviction threshold, e.g. 30d, 12h; 0 = none (default 7d)
//   CGRAPH_CACHE_EVICTION_DISABLE set to anything: no automatic eviction
//   CGRAPH_CACHE_MIN_ITEM_SIZE    smaller binaries are not written to disk (default 0)
//   CGRAPH_CACHE_MAX_ITEM_SIZE    larger binaries are not written to disk (default 1G)
//   CGRAPH_CACHE_MEMORY_MAX_SIZE  in-memory LRU bound per kernel cache; 0 = none (default 256M)
//   CGRAPH_CACHE_TRACE            set to anything: trace hits, misses, writes, evictions
//
// Precedence for max size/age: environment, then `<root>/cgcache.conf`
// (written by `cgcache -M`), then the default.
//
// Thread-safety: plain values; fromEnvironment() reads getenv and must not race with
// setenv. Failure modes: an unparsable value is reported as a warning to the sink and
// the default is used.
#pragma once

#include "cgraph/cache/sink.h"
#include "cgraph/error.h"

#include <cstdint>
#include <string>
#include <string_view>

namespace cgraph::cache {

inline constexpr uint64_t kDefaultMaxSize = 8ull << 30;
inline constexpr uint64_t kDefaultMaxAgeSeconds = 7ull * 24 * 3600;
inline constexpr uint64_t kDefaultMaxItemSize = 1ull << 30;
// Default bound of the memory tier of each KernelCache (kernel_cache.h).
inline constexpr uint64_t kDefaultMemoryMaxSize = 256ull << 20;

struct CacheConfig {
  std::string root;                 // empty: no usable directory, persistent cache off
  bool persistent = true;
  uint64_t maxSize = kDefaultMaxSize;            // bytes; 0 = no size eviction
  uint64_t maxAgeSeconds = kDefaultMaxAgeSeconds; // 0 = no age eviction
  bool evictionDisabled = false;
  uint64_t minItemSize = 0;
  uint64_t maxItemSize = kDefaultMaxItemSize;
  uint64_t memoryMaxSize = kDefaultMemoryMaxSize; // in-memory LRU bound; 0 = unbounded
  bool trace = false;
  // True when the value came from the environment (or a caller) and so wins over
  // the root's cgcache.conf.
  bool maxSizeSet = false;
  bool maxAgeSet = false;

  static CacheConfig fromEnvironment(const CacheSink &sink = defaultSink());
};

// "512M", "2G", "100k", "1024" (bytes). K/M/G/T are powers of 1024; a trailing
// "B"/"iB" is accepted.
Expected<uint64_t> parseSize(std::string_view text);
// "30d", "12h", "45m", "10s", "2w"; a bare number means days.
Expected<uint64_t> parseAgeSeconds(std::string_view text);
std::string formatSize(uint64_t bytes);  // "1.5 MiB"
std::string formatAge(uint64_t seconds); // "3d 4h"

} // namespace cgraph::cache
