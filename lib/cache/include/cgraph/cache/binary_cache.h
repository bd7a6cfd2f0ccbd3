// Two-level cache of device binaries for backends: an in-memory MemoryCache in front
// of the PersistentCache (e.g. the CPU backend's host object files, CUDA's cubins).
//
// getOrBuild looks in memory, then on disk, then calls the builder and writes its
// result to disk. Ownership: values are shared_ptr<const vector<uint8_t>>, alive while
// any caller holds them. Thread-safety: all members from any thread; one build per key
// at a time in this process (other threads wait), across processes the disk cache may
// see a key built twice, the last write wins. Failure modes: only the builder's Error
// is returned; disk problems are warnings through the sink (see persistent_cache.h).
#pragma once

#include "cgraph/cache/memory_cache.h"
#include "cgraph/cache/persistent_cache.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace cgraph::cache {

class BinaryCache {
public:
  using Binary = std::vector<uint8_t>;
  using BinaryPtr = std::shared_ptr<const Binary>;
  using Builder = std::function<Expected<Binary>()>;

  // memoryMaxBytes: in-memory LRU threshold (0 = unbounded).
  explicit BinaryCache(PersistentCache persistent, size_t memoryMaxBytes = 0);
  // PersistentCache::fromEnvironment + CGRAPH_CACHE_MEMORY_MAX_SIZE.
  static std::unique_ptr<BinaryCache> fromEnvironment(CacheSink sink = defaultSink());

  Expected<BinaryPtr> getOrBuild(const CacheKey &key, const std::string &binaryKind, const Builder &build);

  PersistentCache &persistent() { return persistent_; }
  MemoryCacheCounters memoryCounters() const { return memory_.counters(); }

private:
  PersistentCache persistent_;
  MemoryCache<std::string, Binary> memory_;
};

} // namespace cgraph::cache
