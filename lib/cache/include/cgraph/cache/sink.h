// Where the cache library reports warnings and trace events.
//
// The library never writes to stdout/stderr itself: every message goes through a
// CacheSink. defaultSink() (what backends use) forwards to the process sink, which
// is silent until a program installs one with setProcessSink(); the tools (cgrun,
// cgc, cgcache) install one that prints. Trace events reach a sink only when
// CGRAPH_CACHE_TRACE is set (read at each call); warnings always do.
//
// Thread-safety: a sink may be called from several threads at once and must be
// thread-safe. setProcessSink() may be called from any thread, also while caches are
// in use; a call already running on the previous sink finishes on it. Failure modes:
// none.
#pragma once

#include <functional>
#include <string>

namespace cgraph::cache {

enum class CacheEvent { Warning, Trace };

using CacheSink = std::function<void(CacheEvent, const std::string &message)>;

// A sink that forwards to the process sink (see above).
CacheSink defaultSink();

// Replaces the process sink; an empty sink means silent. Returns the previous one.
CacheSink setProcessSink(CacheSink sink);

// A sink that drops everything.
CacheSink silentSink();

} // namespace cgraph::cache
