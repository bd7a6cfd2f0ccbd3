#include "cgraph/cache/binary_cache.h"

namespace cgraph::cache {

namespace {
KernelCache<std::vector<uint8_t>>::Options memoryOptions(uint64_t maxBytes) {
  KernelCache<std::vector<uint8_t>>::Options o;
  o.maxBytes = maxBytes;
  return o;
}
} // namespace

BinaryCache::BinaryCache(PersistentCache persistent, uint64_t memoryMaxBytes, CacheSink sink)
    : cache_(std::move(persistent), memoryOptions(memoryMaxBytes), std::move(sink)) {}

std::unique_ptr<BinaryCache> BinaryCache::fromEnvironment(CacheSink sink) {
  PersistentCache p = PersistentCache::fromEnvironment(sink);
  uint64_t memoryMax = p.config().memoryMaxSize;
  return std::make_unique<BinaryCache>(std::move(p), memoryMax, std::move(sink));
}

Expected<BinaryCache::BinaryPtr> BinaryCache::getOrBuild(const CacheKey &key, const std::string &binaryKind,
                                                         const Builder &build) {
  using KC = KernelCache<Binary>;
  return cache_.getOrBuild(
      key, nullptr, 0, binaryKind,
      [](const Binary &b) -> Expected<KC::Value> { return std::make_shared<const Binary>(b); },
      [&]() -> Expected<KC::Built> {
        Expected<Binary> built = build();
        if (!built) return built.error();
        auto value = std::make_shared<const Binary>(*built);
        return KC::Built{std::move(value), std::move(*built)};
      });
}

} // namespace cgraph::cache
