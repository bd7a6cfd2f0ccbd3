// BinaryCache: KernelCache (kernel_cache.h) for callers whose value is the binary
// itself (bytes in memory in front of the persistent cache): benchmarks, tests, and
// backends that load a binary themselves. getOrBuild looks in memory, then on disk,
// then calls the builder and writes its result to disk.
//
// Ownership, bounds, thread-safety and failure modes: as KernelCache. The memory key
// is the key's identity (the image named by key.imageHash).
#pragma once

#include "cgraph/cache/kernel_cache.h"

#include <functional>
#include <memory>
#include <vector>

namespace cgraph::cache {

class BinaryCache {
public:
  using Binary = std::vector<uint8_t>;
  using BinaryPtr = std::shared_ptr<const Binary>;
  using Builder = std::function<Expected<Binary>()>;

  // memoryMaxBytes: memory tier bound (0 = unbounded).
  explicit BinaryCache(PersistentCache persistent, uint64_t memoryMaxBytes = kDefaultMemoryMaxSize,
                       CacheSink sink = defaultSink());
  // PersistentCache::fromEnvironment + CGRAPH_CACHE_MEMORY_MAX_SIZE.
  static std::unique_ptr<BinaryCache> fromEnvironment(CacheSink sink = defaultSink());

  Expected<BinaryPtr> getOrBuild(const CacheKey &key, const std::string &binaryKind, const Builder &build);

  PersistentCache &persistent() { return cache_.persistent(); }
  MemoryCacheCounters memoryCounters() const { return cache_.counters().memory; }
  KernelCacheCounters counters() const { return cache_.counters(); }

private:
  KernelCache<Binary> cache_;
};

} // namespace cgraph::cache
