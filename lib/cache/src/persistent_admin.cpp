// Administration of the persistent cache: scanning, stats, list, eviction, verify.
// Every removal takes the entry's leaf lock and unlinks .src before .bin, the reverse
// of a store, so a concurrent reader sees either a whole entry or none.
#include "cgraph/cache/persistent_cache.h"

#include "entry_format.h"
#include "fs.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <new>
#include <sys/stat.h>
#include <unistd.h>

namespace cgraph::cache {

using namespace detail;

namespace {

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

std::string joinRel(const std::string &dir, const std::string &name) { return dir.empty() ? name : dir + "/" + name; }

// Files of the root itself that a user may keep as links.
bool isRootFile(const std::string &name) { return name == "cgcache.conf" || name == "stats" || name == "age-scan"; }

std::chrono::system_clock::time_point mtimeOf(const struct stat &st) {
  return std::chrono::system_clock::time_point(std::chrono::duration_cast<std::chrono::system_clock::duration>(
      std::chrono::seconds(st.st_mtim.tv_sec) + std::chrono::nanoseconds(st.st_mtim.tv_nsec)));
}

// Walks <root>/<device>/<image>/<spec>/<opts>/; a missing root is an empty cache.
// Every directory is opened without following links (openDirBelow), and a symbolic
// link where the layout has directories goes to `links` (when given) instead of
// being followed, so nothing outside the root is ever listed, read or removed.
Error scanLeaves(const std::string &root, std::vector<ScannedLeaf> &leaves, std::vector<BadEntry> *links = nullptr) {
  std::vector<std::string> dirs{""};
  for (int depth = 0; depth < 4; ++depth) {
    std::vector<std::string> next;
    for (const std::string &d : dirs) {
      Fd fd;
      std::vector<std::string> names;
      IoError e = openDirBelow(root, d, fd);
      if (!e) e = listDirAt(fd.get(), root + "/" + d, names);
      if (e) {
        if (depth > 0) continue; // replaced or removed meanwhile
        if (e.code == ENOENT) return Error();
        return makeError(e.message);
      }
      std::sort(names.begin(), names.end());
      for (const std::string &n : names) {
        struct stat st;
        if (n[0] == '.' || ::fstatat(fd.get(), n.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
        if (S_ISDIR(st.st_mode)) next.push_back(joinRel(d, n));
        else if (S_ISLNK(st.st_mode) && links && !(depth == 0 && isRootFile(n)))
          links->push_back({joinRel(d, n), "a symbolic link in place of a cache directory (not followed)"});
      }
    }
    dirs.swap(next);
  }
  for (const std::string &d : dirs) {
    ScannedLeaf leaf{d, {}};
    Fd fd;
    if (openDirBelow(root, d, fd) || listDirAt(fd.get(), root + "/" + d, leaf.names)) continue;
    leaves.push_back(std::move(leaf));
  }
  return Error();
}

// Entries of a leaf whose .src is a regular file; anything else is not an entry (verify
// reports it).
std::vector<ScannedEntry> entriesOf(const std::string &root, const ScannedLeaf &leaf) {
  std::vector<ScannedEntry> out;
  Fd dir;
  if (openDirBelow(root, leaf.rel, dir)) return out;
  for (const std::string &name : leaf.names) {
    unsigned n;
    std::string ext;
    if (!parseEntryName(name, n, ext) || ext != "src") continue;
    ScannedEntry e{leaf.rel, n, 0, {}};
    struct stat src, bin;
    if (::fstatat(dir.get(), name.c_str(), &src, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(src.st_mode)) continue;
    e.diskSize = static_cast<uint64_t>(src.st_size);
    e.lastAccess = mtimeOf(src);
    const std::string binName = std::to_string(n) + ".bin";
    if (::fstatat(dir.get(), binName.c_str(), &bin, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(bin.st_mode)) {
      e.diskSize += static_cast<uint64_t>(bin.st_size);
      e.lastAccess = mtimeOf(bin);
    }
    out.push_back(std::move(e));
  }
  return out;
}

bool removeEntry(const std::string &root, const ScannedEntry &e) {
  Fd dir;
  if (openDirBelow(root, e.rel, dir)) return false;
  FileLock lock;
  if (FileLock::acquireAt(dir.get(), ".lock", root + "/" + e.rel + "/.lock", kLeafLockTimeout, lock)) return false;
  const std::string base = std::to_string(e.n);
  bool removed = ::unlinkat(dir.get(), (base + ".src").c_str(), 0) == 0;
  ::unlinkat(dir.get(), (base + ".bin").c_str(), 0);
  return removed;
}

// Reads and checks one entry of the leaf `dir`. Only regular files are opened, sizes
// are checked (fstat, then the header) against `limit` before anything is read, and
// the payload is checksummed in small chunks: no entry can block this or make it
// allocate much. Empty string when the entry is good.
std::string checkEntry(int dir, unsigned n, uint64_t limit) {
  const std::string srcName = std::to_string(n) + ".src", binName = std::to_string(n) + ".bin";
  std::string src;
  if (IoError e = readFileAt(dir, srcName, srcName, kMaxSrcSize, src))
    return e.code == ENOENT ? "missing .src" : "corrupt .src: " + e.message;
  CacheKey key;
  std::string err = parseSrc(src, key);
  if (!err.empty()) return "corrupt .src: " + err;
  Fd fd;
  struct stat st;
  if (IoError e = openRegular(dir, binName, binName, fd, st)) return e.code == ENOENT ? "missing .bin" : e.message;
  const uint64_t fileSize = static_cast<uint64_t>(st.st_size);
  if (err = checkBinFileSize(fileSize, limit); !err.empty()) return binName + ": " + err;
  uint8_t head[kBinHeaderSize];
  bool gotHead = fileSize >= kBinHeaderSize && preadAll(fd.get(), head, kBinHeaderSize, 0);
  BinHeader h;
  if (err = parseBinHeader(head, gotHead ? fileSize : 0, h); !err.empty()) return err;
  if (err = checkPayloadSize(h, limit); !err.empty()) return binName + ": " + err;
  char kind[kMaxKindLength];
  if (!preadAll(fd.get(), kind, h.kindLength, kBinHeaderSize)) return "short read";
  if (h.keyChecksum != identityChecksum(key)) return ".bin does not belong to the key in .src";
  uint64_t sum = 0;
  if (!checksumRange(fd.get(), kBinHeaderSize + h.kindLength, h.payloadSize, sum)) return "short read";
  if (sum != h.payloadChecksum) return "payload checksum mismatch";
  return {};
}

// The key and the binary kind/size of an entry for list(): the .src (bounded) and the
// .bin's header only.
void describeEntry(int dir, unsigned n, EntryInfo &info) {
  std::string text;
  const std::string srcName = std::to_string(n) + ".src", binName = std::to_string(n) + ".bin";
  if (!readFileAt(dir, srcName, srcName, kMaxSrcSize, text)) parseSrc(text, info.key);
  Fd fd;
  struct stat st;
  if (openRegular(dir, binName, binName, fd, st)) return;
  uint8_t head[kBinHeaderSize];
  const uint64_t fileSize = static_cast<uint64_t>(st.st_size);
  BinHeader h;
  if (fileSize < kBinHeaderSize || !preadAll(fd.get(), head, kBinHeaderSize, 0) ||
      !parseBinHeader(head, fileSize, h).empty())
    return;
  char kind[kMaxKindLength];
  if (!preadAll(fd.get(), kind, h.kindLength, kBinHeaderSize)) return;
  info.binaryKind.assign(kind, h.kindLength);
  info.binarySize = h.payloadSize;
}

// Removes `name` from the directory `dir` for verify --fix: 1 removed, 0 already
// gone, -1 not removable (recorded in `report.notRemoved` with the reason). unlinkat
// removes a link or a FIFO itself; a directory is never removed (it may hold what is
// not the cache's), only reported.
int removeForFix(int dir, const std::string &name, const std::string &id, VerifyReport &report) {
  if (::unlinkat(dir, name.c_str(), 0) == 0) return 1;
  int err = errno;
  if (err == ENOENT) return 0;
  struct stat st;
  if (err == EISDIR || (::fstatat(dir, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode)))
    report.notRemoved.push_back({id, "a directory in place of a file; remove it by hand"});
  else
    report.notRemoved.push_back({id, std::string("cannot remove: ") + std::strerror(err)});
  return -1;
}

// verify --fix of a link found where the layout has a directory: removes the link
// (only while it still is one), never what it points to.
void removeLinkForFix(const std::string &root, const std::string &rel, VerifyReport &report) {
  size_t slash = rel.rfind('/');
  const std::string parent = slash == std::string::npos ? "" : rel.substr(0, slash);
  const std::string name = slash == std::string::npos ? rel : rel.substr(slash + 1);
  Fd dir;
  struct stat st;
  if (IoError e = openDirBelow(root, parent, dir)) {
    report.notRemoved.push_back({rel, e.message});
    return;
  }
  if (::fstatat(dir.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISLNK(st.st_mode)) return;
  if (removeForFix(dir.get(), name, rel, report) == 1) ++report.removed;
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
        Fd dir;
        const std::string srcName = std::to_string(e.n) + ".src";
        if (!openDirBelow(config_.root, e.rel, dir) && !readFileAt(dir.get(), srcName, srcName, kMaxSrcSize, text) &&
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
    Fd dir;
    if (openDirBelow(config_.root, leaf.rel, dir)) continue;
    for (const ScannedEntry &e : entriesOf(config_.root, leaf)) {
      EntryInfo info;
      info.id = e.id();
      info.diskSize = e.diskSize;
      info.lastAccess = e.lastAccess;
      describeEntry(dir.get(), e.n, info);
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
  // An age beyond the time since the epoch would overflow the clock: nothing is that
  // old, so the cutoff is the earliest time there is.
  const auto now = std::chrono::system_clock::now();
  const auto sinceEpoch = std::chrono::duration_cast<std::chrono::seconds>(now.time_since_epoch()).count();
  const auto cutoff = sinceEpoch < 0 || olderThanSeconds > static_cast<uint64_t>(sinceEpoch)
                          ? std::chrono::system_clock::time_point::min()
                          : now - std::chrono::seconds(static_cast<int64_t>(olderThanSeconds));
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
  std::vector<BadEntry> links;
  CGRAPH_RETURN_IF_ERROR(scanLeaves(config_.root, leaves, &links));
  const bool removing = fix && !dryRun;
  for (const BadEntry &link : links) {
    report.bad.push_back(link);
    if (removing) removeLinkForFix(config_.root, link.id, report);
  }
  const uint64_t limit = payloadLimit(config_.maxItemSize, config_.maxSize);
  for (ScannedLeaf &leaf : leaves) {
    const std::string display = config_.root + "/" + leaf.rel;
    Fd dir;
    if (openDirBelow(config_.root, leaf.rel, dir)) continue; // replaced meanwhile; a link is reported next time
    // Under the leaf lock no store or removal is half done, so what looks broken is.
    FileLock lock;
    IoError le = FileLock::acquireAt(dir.get(), ".lock", display + "/.lock", kLeafLockTimeout, lock);
    if (le && le.code != ETIMEDOUT && !isDiskUnusable(le.code)) {
      // The lock file itself is damage (a link, a directory): reported, removed
      // with --fix, and the lock taken again.
      report.bad.push_back({leaf.rel + "/.lock", le.message});
      if (removing && removeForFix(dir.get(), ".lock", leaf.rel + "/.lock", report) == 1) {
        ++report.removed;
        le = FileLock::acquireAt(dir.get(), ".lock", display + "/.lock", kLeafLockTimeout, lock);
      }
    } else if (le && !isDiskUnusable(le.code)) {
      return makeError(le.message);
    }
    if (listDirAt(dir.get(), display, leaf.names)) continue;
    // Removes one file for --fix: 1 removed, 0 gone, -1 left (and reported).
    auto remove = [&](const std::string &name) {
      if (!lock.held()) {
        report.notRemoved.push_back({leaf.rel + "/" + name, "not removed: the entry directory cannot be locked"});
        return -1;
      }
      return removeForFix(dir.get(), name, leaf.rel + "/" + name, report);
    };
    std::vector<unsigned> srcs, bins;
    for (const std::string &name : leaf.names) {
      unsigned n;
      std::string ext;
      if (parseEntryName(name, n, ext)) (ext == "src" ? srcs : bins).push_back(n);
      else if (isTempName(name)) {
        report.orphans.push_back(leaf.rel + "/" + name);
        if (removing && remove(name) == 1) ++report.removed;
      }
    }
    std::sort(srcs.begin(), srcs.end());
    for (unsigned n : bins)
      if (!std::binary_search(srcs.begin(), srcs.end(), n)) {
        report.orphans.push_back(leaf.rel + "/" + std::to_string(n) + ".bin");
        if (removing && remove(std::to_string(n) + ".bin") == 1) ++report.removed;
      }
    for (unsigned n : srcs) {
      ++report.checked;
      std::string err;
      try {
        err = checkEntry(dir.get(), n, limit);
      } catch (const std::bad_alloc &) {
        err = "cannot allocate memory to check it";
      }
      if (err.empty()) continue;
      report.bad.push_back({leaf.rel + "/" + std::to_string(n), err});
      if (!removing) continue;
      // .src first, as every removal: the .bin only goes once the entry is unreachable.
      int src = remove(std::to_string(n) + ".src");
      if (src < 0) continue;
      int bin = remove(std::to_string(n) + ".bin");
      if (src == 1 && bin >= 0) ++report.removed;
    }
  }
  return report;
}

} // namespace cgraph::cache
