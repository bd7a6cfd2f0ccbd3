// Where the cache library reports warnings and trace events.
//
// The library never writes to stdout/stderr itself: every message goes through a
// CacheSink given by the caller. defaultSink() (what backends use) writes
// `cgraph: cache: warning: ...` to stderr for warnings, and `cgraph: cache: ...`
// for trace events only when CGRAPH_CACHE_TRACE is set (read once, at the call).
//
// Thread-safety: a sink may be called from several threads at once and must be
// thread-safe; defaultSink() is. Failure modes: none.
#pragma once

#include <functional>
#include <string>

namespace cgraph::cache {

enum class CacheEvent { Warning, Trace };

using CacheSink = std::function<void(CacheEvent, const std::string &message)>;

CacheSink defaultSink();

// A sink that drops everything.
CacheSink silentSink();

} // namespace cgraph::cache
