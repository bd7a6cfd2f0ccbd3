#include "cgraph/cache/sink.h"

#include <cstdlib>
#include <memory>
#include <utility>
#include <mutex>

namespace cgraph::cache {

namespace {

std::mutex gSinkMutex;
std::shared_ptr<const CacheSink> gProcessSink; // null: silent

std::shared_ptr<const CacheSink> processSink() {
  std::lock_guard<std::mutex> lock(gSinkMutex);
  return gProcessSink;
}

} // namespace

CacheSink defaultSink() {
  return [](CacheEvent event, const std::string &message) {
    if (event == CacheEvent::Trace && std::getenv("CGRAPH_CACHE_TRACE") == nullptr) return;
    if (std::shared_ptr<const CacheSink> sink = processSink(); sink && *sink) (*sink)(event, message);
  };
}

CacheSink setProcessSink(CacheSink sink) {
  auto next = std::make_shared<const CacheSink>(std::move(sink));
  std::lock_guard<std::mutex> lock(gSinkMutex);
  std::shared_ptr<const CacheSink> previous = std::exchange(gProcessSink, std::move(next));
  return previous ? *previous : CacheSink();
}

CacheSink silentSink() {
  return [](CacheEvent, const std::string &) {};
}

} // namespace cgraph::cache
