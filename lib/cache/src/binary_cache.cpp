#include "cgraph/cache/binary_cache.h"

namespace cgraph::cache {

BinaryCache::BinaryCache(PersistentCache persistent, size_t memoryMaxBytes)
    : persistent_(std::move(persistent)),
      memory_(MemoryCache<std::string, Binary>::Options{memoryMaxBytes, [](const Binary &b) { return b.size(); }, {}}) {}

std::unique_ptr<BinaryCache> BinaryCache::fromEnvironment(CacheSink sink) {
  PersistentCache p = PersistentCache::fromEnvironment(std::move(sink));
  size_t memoryMax = p.config().memoryMaxSize;
  return std::make_unique<BinaryCache>(std::move(p), memoryMax);
}

Expected<BinaryCache::BinaryPtr> BinaryCache::getOrBuild(const CacheKey &key, const std::string &binaryKind,
                                                         const Builder &build) {
  return memory_.getOrBuild(identityString(key), [&]() -> Expected<BinaryPtr> {
    Expected<std::optional<Binary>> loaded = persistent_.load(key);
    if (!loaded) return loaded.error();
    if (*loaded) return std::make_shared<const Binary>(std::move(**loaded));
    Expected<Binary> built = build();
    if (!built) return built.error();
    persistent_.store(key, built->data(), built->size(), binaryKind);
    return std::make_shared<const Binary>(std::move(*built));
  });
}

} // namespace cgraph::cache
