#include "cgraph/cache/kernel_cache.h"

#include <atomic>

namespace cgraph::cache {

namespace {
// One counter per detail::ProcessCount, in that order.
std::atomic<uint64_t> processCounts[6];
} // namespace

void detail::countInProcess(ProcessCount what) noexcept {
  processCounts[static_cast<size_t>(what)].fetch_add(1, std::memory_order_relaxed);
}

ProcessCacheCounters processCacheCounters() {
  auto get = [](detail::ProcessCount c) { return processCounts[static_cast<size_t>(c)].load(std::memory_order_relaxed); };
  ProcessCacheCounters c;
  c.memoryHits = get(detail::ProcessCount::MemoryHit);
  c.memoryMisses = get(detail::ProcessCount::MemoryMiss);
  c.diskHits = get(detail::ProcessCount::DiskHit);
  c.diskRejects = get(detail::ProcessCount::DiskReject);
  c.builds = get(detail::ProcessCount::Build);
  c.buildFailures = get(detail::ProcessCount::BuildFailure);
  return c;
}

std::string memoryKeyBytes(const CacheKey &key, const uint8_t *image, size_t imageSize) {
  std::string s = identityString(key); // length-prefixed identity fields
  s += std::to_string(image ? imageSize : 0);
  s.push_back(':');
  if (image) s.append(reinterpret_cast<const char *>(image), imageSize);
  return s;
}

} // namespace cgraph::cache
