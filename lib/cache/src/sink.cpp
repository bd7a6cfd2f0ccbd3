#include "cgraph/cache/sink.h"

#include <cstdio>
#include <cstdlib>

namespace cgraph::cache {

CacheSink defaultSink() {
  return [](CacheEvent event, const std::string &message) {
    if (event == CacheEvent::Warning) {
      std::fprintf(stderr, "cgraph: cache: warning: %s\n", message.c_str());
    } else if (std::getenv("CGRAPH_CACHE_TRACE") != nullptr) {
      std::fprintf(stderr, "cgraph: cache: %s\n", message.c_str());
    }
  };
}

CacheSink silentSink() {
  return [](CacheEvent, const std::string &) {};
}

} // namespace cgraph::cache
