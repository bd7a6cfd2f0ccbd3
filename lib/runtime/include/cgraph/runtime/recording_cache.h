// Recordings kept per binding set: what backends without mutable commands (opencl on
// PoCL, level_zero without the mutable command-list extension) record once per distinct
// set of slot storages and parameter values, and replay while that set comes again.
//
// Ownership: the cache owns its recordings (R, any type); pointers returned by
// findOrMake() stay valid until that recording is evicted (by a later findOrMake()
// that records a new one) or clear() is called.
// Thread-safety: none; it belongs to one executable, whose submissions are serialized.
// Failure modes: findOrMake() returns the maker's error and then keeps what it had.
// Eviction drops the least recently used recording; the caller guarantees that no
// submission using it is still in flight (or that the driver keeps it alive).
#pragma once

#include "cgraph/error.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace cgraph::rt {

// Appends the 8 bytes of v to a binding key.
inline void appendKeyBits(std::string &key, uint64_t v) {
  char b[sizeof v];
  std::memcpy(b, &v, sizeof v);
  key.append(b, sizeof v);
}

// The key of one binding set: per slot its storage's identity, offset and length
// (any type with members id, offset and length), then every parameter value.
template <class SlotMems>
std::string bindingSetKey(const SlotMems &mems, const std::vector<uint64_t> &params) {
  std::string key;
  key.reserve(mems.size() * 24 + params.size() * 8);
  for (const auto &m : mems) {
    appendKeyBits(key, m.id);
    appendKeyBits(key, m.offset);
    appendKeyBits(key, m.length);
  }
  for (uint64_t p : params) appendKeyBits(key, p);
  return key;
}

template <class R>
class RecordingCache {
public:
  // The recording made for `key`, or a new one from make() (returning
  // Expected<std::unique_ptr<R>>), kept with at most max(1, limit) recordings.
  template <class Make>
  Expected<R *> findOrMake(std::string key, size_t limit, Make &&make) {
    ++tick_;
    for (Entry &e : entries_)
      if (e.key == key) {
        e.lastTick = tick_;
        return e.rec.get();
      }
    Expected<std::unique_ptr<R>> rec = make();
    if (!rec) return rec.error();
    ++made_;
    if (entries_.size() >= std::max<size_t>(1, limit)) {
      auto oldest = std::min_element(entries_.begin(), entries_.end(),
                                     [](const Entry &a, const Entry &b) { return a.lastTick < b.lastTick; });
      entries_.erase(oldest);
    }
    entries_.push_back({std::move(key), tick_, std::move(*rec)});
    return entries_.back().rec.get();
  }
  void clear() { entries_.clear(); }
  size_t size() const { return entries_.size(); }
  // Recordings made so far (evicted ones included).
  uint64_t made() const { return made_; }

private:
  struct Entry {
    std::string key;
    uint64_t lastTick = 0;
    std::unique_ptr<R> rec;
  };
  std::vector<Entry> entries_;
  uint64_t tick_ = 0;
  uint64_t made_ = 0;
};

} // namespace cgraph::rt
