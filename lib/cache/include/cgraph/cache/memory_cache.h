// In-memory get-or-build cache (seed kernel-program-cache-design, "In-memory cache").
//
// Ownership: the cache owns its entries; values are handed out as
// std::shared_ptr<const T>, so an evicted value stays alive while a caller holds it.
// Lifetime: a cache must outlive every getOrBuild call running on it.
//
// Thread-safety: every member function may be called from any thread. The global
// mutex is held only for the map access, never while a builder runs: the first
// thread to ask for a key builds it, the others wait on that entry's condition
// variable, and a finished value is read with one acquire load.
//
// Failure modes: a builder returning an Error (or a null pointer, or throwing) makes
// getOrBuild return that error to the building thread and to every thread waiting
// for that build; the entry is removed, so the next request builds again. No other
// failures.
//
// Eviction: with Options::maxBytes > 0 and a sizeOf function, finished entries form
// an LRU list; after each insertion the least recently used entries are dropped until
// the total is at most maxBytes (the newest entry is always kept).
#pragma once

#include "cgraph/error.h"

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace cgraph::cache {

struct MemoryCacheCounters {
  uint64_t hits = 0;          // found a finished value
  uint64_t waits = 0;         // waited for another thread's build
  uint64_t misses = 0;        // started a build (== builds)
  uint64_t builds = 0;        // builder calls
  uint64_t buildFailures = 0; // builder calls that failed
  uint64_t evictions = 0;     // entries dropped by the LRU
  uint64_t entries = 0;       // finished entries now held
  uint64_t bytes = 0;         // sum of sizeOf over finished entries
};

template <class Key, class T, class Hash = std::hash<Key>> class MemoryCache {
public:
  using Value = std::shared_ptr<const T>;
  using SizeFn = std::function<size_t(const T &)>;
  using EvictFn = std::function<void(const Key &)>;

  struct Options {
    size_t maxBytes = 0; // 0: no eviction
    SizeFn sizeOf;       // empty: every value counts as 0 bytes
    EvictFn onEvict;     // called after an LRU eviction, without any lock held
  };

  MemoryCache() = default;
  // `hash` only picks buckets: keys are compared with operator==, so colliding
  // hashes cost time, never a wrong value.
  explicit MemoryCache(Options options, Hash hash = Hash())
      : options_(std::move(options)), map_(0, std::move(hash)) {}
  MemoryCache(const MemoryCache &) = delete;
  MemoryCache &operator=(const MemoryCache &) = delete;

  // `build` is callable as `Expected<Value>()` (or returning Value).
  template <class BuildFn> Expected<Value> getOrBuild(const Key &key, BuildFn &&build) {
    std::shared_ptr<Entry> entry;
    bool mustBuild = false;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto [it, inserted] = map_.try_emplace(key);
      if (inserted) {
        it->second = std::make_shared<Entry>();
        mustBuild = true;
      }
      entry = it->second;
      if (!inserted && entry->state.load(std::memory_order_acquire) == kDone) {
        touchLocked(*entry);
        ++hits_;
        return entry->value;
      }
    }
    if (mustBuild) return buildEntry(key, entry, std::forward<BuildFn>(build));

    ++waits_;
    {
      std::unique_lock<std::mutex> lock(entry->mutex);
      entry->cv.wait(lock, [&] { return entry->state.load(std::memory_order_acquire) != kInProgress; });
    }
    if (entry->state.load(std::memory_order_acquire) == kDone) return entry->value;
    return entry->error;
  }

  // The finished value for `key`, or null (absent or still building). Counts a hit.
  Value find(const Key &key) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = map_.find(key);
    if (it == map_.end() || it->second->state.load(std::memory_order_acquire) != kDone) return nullptr;
    touchLocked(*it->second);
    ++hits_;
    return it->second->value;
  }

  // Drops finished entries whose key satisfies `pred`; returns how many. Builds in
  // progress are kept. onEvict is not called.
  template <class Pred> size_t eraseIf(Pred pred) {
    std::lock_guard<std::mutex> lock(mutex_);
    size_t erased = 0;
    for (auto it = map_.begin(); it != map_.end();) {
      Entry &e = *it->second;
      if (e.state.load(std::memory_order_acquire) == kDone && pred(it->first)) {
        unlinkLocked(e);
        it = map_.erase(it);
        ++erased;
      } else {
        ++it;
      }
    }
    return erased;
  }

  // Drops every finished entry (e.g. when the device runs out of memory).
  size_t clear() {
    return eraseIf([](const Key &) { return true; });
  }

  MemoryCacheCounters counters() const {
    MemoryCacheCounters c;
    c.hits = hits_.load();
    c.waits = waits_.load();
    c.misses = c.builds = builds_.load();
    c.buildFailures = buildFailures_.load();
    c.evictions = evictions_.load();
    std::lock_guard<std::mutex> lock(mutex_);
    c.entries = lru_.size();
    c.bytes = bytes_;
    return c;
  }

private:
  enum : int { kInProgress, kDone, kFailed };

  struct Entry {
    std::atomic<int> state{kInProgress};
    Value value;       // written once, before state becomes kDone (release)
    Error error;       // written once, before state becomes kFailed (release)
    std::mutex mutex;  // guards the cv handshake
    std::condition_variable cv;
    // Guarded by the cache's mutex_:
    size_t size = 0;
    bool inLru = false;
    typename std::list<std::pair<Key, Entry *>>::iterator lruPos;
  };

  template <class BuildFn>
  Expected<Value> buildEntry(const Key &key, const std::shared_ptr<Entry> &entry, BuildFn &&build) {
    ++builds_;
    Expected<Value> result = runBuilder(std::forward<BuildFn>(build));
    if (result.ok() && !*result) result = makeError("cache builder returned no value");
    if (!result.ok()) {
      ++buildFailures_;
      {
        std::lock_guard<std::mutex> lock(mutex_);
        auto it = map_.find(key);
        if (it != map_.end() && it->second == entry) map_.erase(it);
      }
      publish(*entry, kFailed, nullptr, result.error());
      return result.error();
    }
    size_t size = options_.sizeOf ? options_.sizeOf(**result) : 0;
    publish(*entry, kDone, *result, Error());
    std::vector<Key> evicted;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto it = map_.find(key);
      if (it != map_.end() && it->second == entry) {
        entry->size = size;
        entry->inLru = true;
        entry->lruPos = lru_.insert(lru_.end(), {key, entry.get()});
        bytes_ += size;
        // The newest entry always stays, even when it alone passes the threshold:
        // evicting what the caller is about to use would only rebuild it.
        while (options_.maxBytes > 0 && bytes_ > options_.maxBytes && lru_.size() > 1) {
          auto victim = lru_.begin();
          Key victimKey = victim->first;
          unlinkLocked(*victim->second);
          map_.erase(victimKey);
          evicted.push_back(std::move(victimKey));
          ++evictions_;
        }
      }
    }
    if (options_.onEvict)
      for (const Key &k : evicted) options_.onEvict(k);
    return result;
  }

  template <class BuildFn> static Expected<Value> runBuilder(BuildFn &&build) {
    try {
      return Expected<Value>(build());
    } catch (const std::exception &e) {
      return makeError(std::string("cache builder threw: ") + e.what());
    } catch (...) {
      return makeError("cache builder threw an unknown exception");
    }
  }

  static void publish(Entry &e, int state, Value value, Error error) {
    {
      std::lock_guard<std::mutex> lock(e.mutex);
      e.value = std::move(value);
      e.error = std::move(error);
      e.state.store(state, std::memory_order_release);
    }
    e.cv.notify_all();
  }

  void touchLocked(Entry &e) {
    if (e.inLru) lru_.splice(lru_.end(), lru_, e.lruPos);
  }

  void unlinkLocked(Entry &e) {
    if (!e.inLru) return;
    bytes_ -= e.size;
    lru_.erase(e.lruPos);
    e.inLru = false;
  }

  Options options_;
  mutable std::mutex mutex_;
  std::unordered_map<Key, std::shared_ptr<Entry>, Hash> map_;
  std::list<std::pair<Key, Entry *>> lru_; // front: least recently used
  uint64_t bytes_ = 0;
  std::atomic<uint64_t> hits_{0}, waits_{0}, builds_{0}, buildFailures_{0}, evictions_{0};
};

} // namespace cgraph::cache
