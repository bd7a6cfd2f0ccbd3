// Administration of the persistent cache: scanning, stats, list, eviction, verify.
// Every removal takes the entry's leaf lock and unlinks .src before .bin, the reverse
// of a store, so a concurrent reader sees either a whole entry or none.
#include "cgraph/cache/persistent_cache.h"

#include "entry_format.h"
#include "fs.h"

#include <algorithm>
#include <cerrno>
#include <sys/stat.h>
#include <unistd.h>

namespace cgraph::cache {

using namespace detail;

namespace {

constexpr std::chrono::milliseconds kLeafLockTimeout(2000);
constexpr std::chrono::milliseconds kEvictLockTimeout(10000);

struct ScannedEntry {
  std::string rel; // leaf directory relative to the root
  unsigned n = 0;
  uint64_t diskSize = 0;
  std::chrono::system_clock::time_point lastAccess;
  std::string id() const { return rel + "/" + std::to_string(n); }
};

struct ScannedLeaf {
  std::string rel;
  std::vector<std::string> names;
};

// Walks <root>/<device>/<image>/<spec>/<opts>/; a missing root is an empty cache.
Error scanLeaves(const std::string &root, std::vector<ScannedLeaf> &leaves) {
  std::vector<std::string> level0;
  if (IoError e = listDir(root, level0)) {
    if (e.code == ENOENT) return Error();
    return makeError(e.message);
  }
  std::sort(level0.begin(), level0.end());
  std::vector<std::string> dirs;
  for (const std::string &d : level0) {
    struct stat st;
    if (d[0] != '.' && ::stat((root + "/" + d).c_str(), &st) == 0 && S_ISDIR(st.st_mode)) dirs.push_back(d);
  }
  for (int depth = 1; depth < 4; ++depth) {
    std::vector<std::string> next;
    for (const std::string &d : dirs) {
      std::vector<std::string> names;
      if (listDir(root + "/" + d, names)) continue;
      std::sort(names.begin(), names.end());
      for (const std::string &n : names)
        if (n[0] != '.') next.push_back(d + "/" + n);
    }
    dirs.swap(next);
  }
  for (const std::string &d : dirs) {
    ScannedLeaf leaf{d, {}};
    if (listDir(root + "/" + d, leaf.names)) continue;
    leaves.push_back(std::move(leaf));
  }
  return Error();
}

std::vector<ScannedEntry> entriesOf(const std::string &root, const ScannedLeaf &leaf) {
  std::vector<ScannedEntry> out;
  for (const std::string &name : leaf.names) {
    unsigned n;
    std::string ext;
    if (!parseEntryName(name, n, ext) || ext != "src") continue;
    std::string base = root + "/" + leaf.rel + "/" + std::to_string(n);
    ScannedEntry e{leaf.rel, n, 0, {}};
    uint64_t srcSize = 0, binSize = 0;
    std::chrono::system_clock::time_point srcTime;
    if (!modificationTime(base + ".src", srcTime, &srcSize)) continue;
    if (!modificationTime(base + ".bin", e.lastAccess, &binSize)) e.lastAccess = srcTime;
    e.diskSize = srcSize + binSize;
    out.push_back(std::move(e));
  }
  return out;
}

bool removeEntry(const std::string &root, const ScannedEntry &e) {
  std::string leaf = root + "/" + e.rel;
  FileLock lock;
  if (FileLock::acquire(leaf + "/.lock", kLeafLockTimeout, lock)) return false;
  std::string base = leaf + "/" + std::to_string(e.n);
  bool removed = ::unlink((base + ".src").c_str()) == 0;
  ::unlink((base + ".bin").c_str());
  return removed;
}

// Reads and checks one entry completely; empty string when it is good.
std::string checkEntry(const std::string &base, CacheKey *keyOut, std::string *kindOut, uint64_t *payloadSize) {
  std::string src, bin;
  if (IoError e = readFile(base + ".src", src)) return e.message;
  CacheKey key;
  std::string err = parseSrc(src, key);
  if (!err.empty()) return "corrupt .src: " + err;
  if (keyOut) *keyOut = key;
  if (IoError e = readFile(base + ".bin", bin)) return e.code == ENOENT ? "missing .bin" : e.message;
  BinHeader h;
  const uint8_t *b = reinterpret_cast<const uint8_t *>(bin.data());
  err = parseBinHeader(b, bin.size(), h);
  if (!err.empty()) return err;
  if (kindOut) kindOut->assign(bin.data() + kBinHeaderSize, h.kindLength);
  if (payloadSize) *payloadSize = h.payloadSize;
  if (h.keyChecksum != identityChecksum(key)) return ".bin does not belong to the key in .src";
  if (checksum64(b + kBinHeaderSize + h.kindLength, h.payloadSize) != h.payloadChecksum)
    return "payload checksum mismatch";
  return {};
}

} // namespace

Expected<CacheStats> PersistentCache::stats() const {
  CacheStats s;
  s.root = config_.root;
  s.maxSize = config_.maxSize;
  s.maxAgeSeconds = config_.maxAgeSeconds;
  std::vector<ScannedLeaf> leaves;
  CGRAPH_RETURN_IF_ERROR(scanLeaves(config_.root, leaves));
  for (const ScannedLeaf &leaf : leaves) {
    std::string device = leaf.rel.substr(0, leaf.rel.find('/'));
    for (const ScannedEntry &e : entriesOf(config_.root, leaf)) {
      DeviceStats &d = s.devices[device];
      if (d.backend.empty()) {
        std::string text;
        CacheKey key;
        if (!readFile(config_.root + "/" + e.rel + "/" + std::to_string(e.n) + ".src", text) &&
            parseSrc(text, key).empty()) {
          d.backend = key.backend;
          d.deviceName = key.deviceName;
          d.driverVersion = key.driverVersion;
          d.compilerVersion = key.compilerVersion;
        }
      }
      ++d.entries;
      d.bytes += e.diskSize;
      ++s.entries;
      s.bytes += e.diskSize;
    }
  }
  std::map<std::string, uint64_t> counters = readCounterFile(config_.root + "/stats");
  s.hits = counters["hits"];
  s.misses = counters["misses"];
  s.writes = counters["writes"];
  s.evictions = counters["evictions"];
  for (auto &[device, d] : s.devices) {
    d.hits = counters["hits." + device];
    d.misses = counters["misses." + device];
  }
  return s;
}

Expected<std::vector<EntryInfo>> PersistentCache::list() const {
  std::vector<ScannedLeaf> leaves;
  CGRAPH_RETURN_IF_ERROR(scanLeaves(config_.root, leaves));
  std::vector<EntryInfo> out;
  for (const ScannedLeaf &leaf : leaves) {
    for (const ScannedEntry &e : entriesOf(config_.root, leaf)) {
      EntryInfo info;
      info.id = e.id();
      info.diskSize = e.diskSize;
      info.lastAccess = e.lastAccess;
      std::string base = config_.root + "/" + info.id;
      std::string text;
      if (!readFile(base + ".src", text)) parseSrc(text, info.key);
      std::string bin;
      if (!readFile(base + ".bin", bin)) {
        BinHeader h;
        if (parseBinHeader(reinterpret_cast<const uint8_t *>(bin.data()), bin.size(), h).empty()) {
          info.binaryKind.assign(bin.data() + kBinHeaderSize, h.kindLength);
          info.binarySize = h.payloadSize;
        }
      }
      out.push_back(std::move(info));
    }
  }
  return out;
}

Expected<EntryInfo> PersistentCache::show(const std::string &id) const {
  Expected<std::vector<EntryInfo>> all = list();
  if (!all) return all.error();
  const EntryInfo *found = nullptr;
  for (const EntryInfo &e : *all) {
    if (e.id == id) return e;
    if (e.id.compare(0, id.size(), id) == 0) {
      if (found) return makeError("'" + id + "' matches more than one entry");
      found = &e;
    }
  }
  if (!found) return makeError("no cache entry '" + id + "' in " + config_.root);
  return *found;
}

Expected<EvictionReport> PersistentCache::evictOldest(uint64_t targetBytes, uint64_t olderThanSeconds, bool dryRun,
                                                      bool wait) {
  EvictionReport report;
  FileLock evictLock;
  if (IoError e = FileLock::acquire(config_.root + "/.evict.lock", wait ? kEvictLockTimeout : std::chrono::milliseconds(0),
                                    evictLock)) {
    if (e.code == ETIMEDOUT && !wait) return report; // another process is evicting right now
    if (e.code == ENOENT) return report;             // no cache yet
    if (!dryRun) return makeError(e.message);
  }
  std::vector<ScannedLeaf> leaves;
  CGRAPH_RETURN_IF_ERROR(scanLeaves(config_.root, leaves));
  std::vector<ScannedEntry> entries;
  uint64_t total = 0;
  for (const ScannedLeaf &leaf : leaves)
    for (ScannedEntry &e : entriesOf(config_.root, leaf)) {
      total += e.diskSize;
      entries.push_back(std::move(e));
    }
  std::sort(entries.begin(), entries.end(),
            [](const ScannedEntry &a, const ScannedEntry &b) { return a.lastAccess < b.lastAccess; });
  auto cutoff = std::chrono::system_clock::now() - std::chrono::seconds(olderThanSeconds);
  for (const ScannedEntry &e : entries) {
    bool tooOld = olderThanSeconds > 0 && e.lastAccess < cutoff;
    bool overSize = targetBytes != UINT64_MAX && total > targetBytes;
    if (!tooOld && !overSize) {
      // Sorted oldest first: once an entry is neither too old nor needed for size,
      // every later one is newer.
      if (olderThanSeconds == 0 || e.lastAccess >= cutoff) break;
      continue;
    }
    if (!dryRun && !removeEntry(config_.root, e)) continue;
    total -= e.diskSize;
    ++report.removedEntries;
    report.removedBytes += e.diskSize;
    report.removedIds.push_back(e.id());
    if (!dryRun) trace("evict " + e.id() + " (" + std::to_string(e.diskSize) + " bytes)");
  }
  report.remainingBytes = total;
  report.remainingEntries = entries.size() - report.removedEntries;
  if (!dryRun && writable_.load()) {
    evictions_ += report.removedEntries;
    // The scan is the exact size: resynchronize the running total with it.
    if (IoError e = updateCounterFile(config_.root + "/stats",
                                      {{"evictions", static_cast<int64_t>(report.removedEntries)}},
                                      {{"bytes", total}}, nullptr))
      trace("counters not updated: " + e.message);
  }
  return report;
}

Expected<EvictionReport> PersistentCache::evictToSize(uint64_t targetBytes, bool dryRun) {
  return evictOldest(targetBytes, 0, dryRun, true);
}

Expected<EvictionReport> PersistentCache::evictOlderThan(uint64_t ageSeconds, bool dryRun) {
  if (ageSeconds == 0) return makeError("age must be greater than zero");
  return evictOldest(UINT64_MAX, ageSeconds, dryRun, true);
}

Expected<EvictionReport> PersistentCache::clear(bool dryRun) {
  Expected<EvictionReport> r = evictOldest(0, 0, dryRun, true);
  if (r && !dryRun) {
    // Also drops orphans and temp files; a failure there is the clear's failure.
    Expected<VerifyReport> tidy = verify(true, false);
    if (!tidy) return tidy.error().withContext("clear");
  }
  return r;
}

Expected<VerifyReport> PersistentCache::verify(bool fix, bool dryRun) {
  VerifyReport report;
  std::vector<ScannedLeaf> leaves;
  CGRAPH_RETURN_IF_ERROR(scanLeaves(config_.root, leaves));
  for (ScannedLeaf &leaf : leaves) {
    const std::string dir = config_.root + "/" + leaf.rel;
    // Under the leaf lock no store or removal is half done, so what looks broken is.
    FileLock lock;
    IoError le = FileLock::acquire(dir + "/.lock", kLeafLockTimeout, lock);
    if (le && !isDiskUnusable(le.code)) return makeError(le.message);
    if (listDir(dir, leaf.names)) continue;
    std::vector<unsigned> srcs, bins;
    for (const std::string &name : leaf.names) {
      unsigned n;
      std::string ext;
      if (parseEntryName(name, n, ext)) (ext == "src" ? srcs : bins).push_back(n);
      else if (isTempName(name)) {
        report.orphans.push_back(leaf.rel + "/" + name);
        if (fix && !dryRun && lock.held() && ::unlink((dir + "/" + name).c_str()) == 0) ++report.removed;
      }
    }
    std::sort(srcs.begin(), srcs.end());
    for (unsigned n : bins)
      if (!std::binary_search(srcs.begin(), srcs.end(), n)) {
        report.orphans.push_back(leaf.rel + "/" + std::to_string(n) + ".bin");
        if (fix && !dryRun && lock.held() && ::unlink((dir + "/" + std::to_string(n) + ".bin").c_str()) == 0)
          ++report.removed;
      }
    for (unsigned n : srcs) {
      ++report.checked;
      std::string base = dir + "/" + std::to_string(n);
      std::string err = checkEntry(base, nullptr, nullptr, nullptr);
      if (err.empty()) continue;
      report.bad.push_back({leaf.rel + "/" + std::to_string(n), err});
      if (fix && !dryRun && lock.held()) {
        ::unlink((base + ".src").c_str());
        ::unlink((base + ".bin").c_str());
        ++report.removed;
      }
    }
  }
  return report;
}

} // namespace cgraph::cache
