// Persistent on-disk cache of device binaries, shared by many processes.
//
// Layout (lib/cache/README.md has the byte formats):
//   <root>/cgcache.conf                     max_size / max_age written by `cgcache -M`
//   <root>/stats                            hit/miss/write/eviction counters (flock'ed)
//   <root>/<device>/<image>/<spec>/<opts>/  one leaf directory per hashed key
//       .lock                               flock'ed while an entry is added or removed
//       <n>.src                             the full key values (resolves collisions)
//       <n>.bin                             header (checksums, kind) + binary; its mtime
//                                           is the entry's last access
//
// Ownership: a PersistentCache holds only its configuration and counters; the files
// belong to the directory, which any number of processes may share.
//
// Thread-safety: every member function may be called from several threads and
// processes at once. Entries appear atomically (temp file + rename, .bin before .src),
// so a reader never sees a partial entry. Locks are flock(2) locks: the kernel drops
// them when a process dies, and a waiter gives up after a bounded time (an entry's
// lock: 2 s, then the store is skipped; the stats counters' lock: 1 s, then that
// counter update is skipped with a trace event).
//
// Failure modes: load() and store() never fail a run. A truncated, corrupt or
// mismatched entry is a miss plus a warning (and is replaced by the next store), and
// so is an entry that is not made of regular files (a FIFO, a device, a directory or
// a symbolic link in place of a .src/.bin or of a directory of the layout) or whose
// size is beyond the limits: sizes are checked before anything is read, so no entry
// can make a load block or allocate more than the limits allow. A read-only or full
// disk turns writing off for this object with one warning; a file size limit
// (RLIMIT_FSIZE, EFBIG) skips the entries it refuses. load() returns an Error only for
// a malformed key. The admin functions (stats, list, evict, verify, clear) return
// Errors for an unreadable root; they never follow a symbolic link below the root,
// so they never read or remove anything outside it.
#pragma once

#include "cgraph/cache/config.h"
#include "cgraph/cache/key.h"
#include "cgraph/cache/sink.h"
#include "cgraph/error.h"

#include <atomic>
#include <functional>
#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace cgraph::cache {

struct PersistentCounters {
  uint64_t hits = 0, misses = 0, writes = 0, evictions = 0, badEntries = 0, skippedWrites = 0;
};

struct EntryInfo {
  std::string id;         // "<device>/<image>/<spec>/<opts>/<n>", relative to the root
  CacheKey key;
  std::string binaryKind; // e.g. "elf-relocatable", "cubin"
  uint64_t binarySize = 0; // payload bytes
  uint64_t diskSize = 0;   // .src + .bin bytes
  std::chrono::system_clock::time_point lastAccess;
};

struct DeviceStats {
  std::string backend, deviceName, driverVersion, compilerVersion;
  uint64_t entries = 0, bytes = 0, hits = 0, misses = 0;
};

struct CacheStats {
  std::string root;
  uint64_t entries = 0, bytes = 0;
  uint64_t hits = 0, misses = 0, writes = 0, evictions = 0;
  uint64_t maxSize = 0, maxAgeSeconds = 0;
  std::map<std::string, DeviceStats> devices; // by device directory name
};

struct BadEntry {
  std::string id;
  std::string reason;
};

struct VerifyReport {
  uint64_t checked = 0;
  std::vector<BadEntry> bad;
  // .bin files without a .src (a writer killed between its two renames) and temp
  // files of killed writers: not entries, never loaded; --fix removes them.
  std::vector<std::string> orphans;
  uint64_t removed = 0; // files and links actually removed by `fix`
  // What `fix` found bad but could not remove (a directory in place of a file, a
  // failed unlink), with the reason.
  std::vector<BadEntry> notRemoved;
};

struct EvictionReport {
  uint64_t removedEntries = 0, removedBytes = 0;
  uint64_t remainingEntries = 0, remainingBytes = 0;
  std::vector<std::string> removedIds;
};

class PersistentCache {
public:
  // Configuration from the environment; cgcache.conf at the root fills max size/age
  // that the environment leaves unset.
  static PersistentCache fromEnvironment(CacheSink sink = defaultSink());
  explicit PersistentCache(CacheConfig config, CacheSink sink = defaultSink(), PathHashFn pathHash = {});

  PersistentCache(PersistentCache &&other) noexcept;
  PersistentCache(const PersistentCache &) = delete;
  PersistentCache &operator=(const PersistentCache &) = delete;

  bool enabled() const { return config_.persistent && !config_.root.empty(); }
  bool writable() const { return enabled() && writable_.load(); }
  const CacheConfig &config() const { return config_; }

  // The payload of the entry for `key`, or nullopt on a miss (absent, disabled,
  // corrupt: the last two with a warning). `binaryKind`, when given, receives the kind.
  Expected<std::optional<std::vector<uint8_t>>> load(const CacheKey &key, std::string *binaryKind = nullptr);

  // Writes an entry (replacing the one for an equal key). Never fails the caller:
  // problems become warnings, and a read-only or full disk turns writing off.
  void store(const CacheKey &key, const uint8_t *data, size_t size, const std::string &binaryKind);

  PersistentCounters counters() const;

  // Directory names for a key (what the layout above calls <device>/.../<opts>).
  std::string leafDirectory(const CacheKey &key) const;

  // ---- administration (cgcache) ----
  Expected<CacheStats> stats() const;
  Expected<std::vector<EntryInfo>> list() const;
  // `id` as printed by list(), or a unique prefix of one.
  Expected<EntryInfo> show(const std::string &id) const;
  // LRU by last access until the total is at most `targetBytes`.
  Expected<EvictionReport> evictToSize(uint64_t targetBytes, bool dryRun);
  Expected<EvictionReport> evictOlderThan(uint64_t ageSeconds, bool dryRun);
  Expected<EvictionReport> clear(bool dryRun);
  // Checks every entry: regular files (not links, FIFOs, devices, directories),
  // sizes within the limits, header, checksums and key; a symbolic link in place of
  // a directory of the layout is a bad entry too. `fix` removes bad entries, orphans,
  // temp files and links (the link, never its target); a directory in place of a
  // file is never removed, only reported in `notRemoved`.
  Expected<VerifyReport> verify(bool fix, bool dryRun);
  // Persists max_size in <root>/cgcache.conf.
  Error setMaxSize(uint64_t bytes);

private:
  struct Scan;
  void warn(const std::string &message) const;
  void trace(const std::string &message) const;
  void disableWriting(const std::string &why);
  void updateStats(const std::map<std::string, int64_t> &deltas, std::map<std::string, uint64_t> *result = nullptr) const;
  void maybeEvictAfterStore(uint64_t totalBytes);
  Expected<EvictionReport> evictOldest(uint64_t targetBytes, uint64_t olderThanSeconds, bool dryRun, bool wait);

  CacheConfig config_;
  CacheSink sink_;
  PathHashFn pathHash_;
  std::atomic<bool> writable_{true};
  std::atomic<bool> warnedDisabled_{false};
  // Smallest entry a file size limit (EFBIG) refused; entries this large or larger
  // are not tried again by this object.
  std::atomic<uint64_t> refusedSize_{UINT64_MAX};
  mutable std::atomic<uint64_t> hits_{0}, misses_{0}, writes_{0}, evictions_{0}, bad_{0}, skipped_{0};
};

// Reads `<root>/cgcache.conf` into `config` for the fields the caller left unset.
void applyRootConfigFile(CacheConfig &config, const CacheSink &sink);

} // namespace cgraph::cache
