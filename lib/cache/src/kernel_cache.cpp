#include "cgraph/cache/kernel_cache.h"

namespace cgraph::cache {

std::string memoryKeyBytes(const CacheKey &key, const uint8_t *image, size_t imageSize) {
  std::string s = identityString(key); // length-prefixed identity fields
  s += std::to_string(image ? imageSize : 0);
  s.push_back(':');
  if (image) s.append(reinterpret_cast<const char *>(image), imageSize);
  return s;
}

} // namespace cgraph::cache
