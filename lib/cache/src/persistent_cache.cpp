// Load and store of the persistent cache; administration is in persistent_admin.cpp.
#include "cgraph/cache/persistent_cache.h"

#include "entry_format.h"
#include "fs.h"

#include <algorithm>
#include <cerrno>
#include <fcntl.h>
#include <map>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

namespace cgraph::cache {

using namespace detail;

namespace {

// Age eviction scans the whole cache, so it runs at most this often per root.
constexpr std::chrono::hours kAgeScanInterval(1);

std::string entryId(const std::string &rel, unsigned n) { return rel + "/" + std::to_string(n); }

bool keyIsUsable(const CacheKey &key, std::string &why) {
  if (key.backend.empty()) why = "empty backend";
  else if (key.imageHash.empty()) why = "empty image hash";
  return why.empty();
}

} // namespace

void applyRootConfigFile(CacheConfig &config, const CacheSink &sink) {
  if (config.root.empty()) return;
  std::string text;
  if (readFile(config.root + "/cgcache.conf", text)) return;
  std::istringstream in(text);
  std::string line;
  int lineNo = 0;
  while (std::getline(in, line)) {
    ++lineNo;
    size_t eq = line.find('=');
    if (line.empty() || line[0] == '#' || eq == std::string::npos) continue;
    auto trim = [](std::string s) {
      s.erase(0, s.find_first_not_of(" \t"));
      s.erase(s.find_last_not_of(" \t\r") + 1);
      return s;
    };
    std::string name = trim(line.substr(0, eq)), value = trim(line.substr(eq + 1));
    std::string where = config.root + "/cgcache.conf:" + std::to_string(lineNo) + ": ";
    if (name == "max_size" && !config.maxSizeSet) {
      Expected<uint64_t> v = parseSize(value);
      if (v) config.maxSize = *v;
      else if (sink) sink(CacheEvent::Warning, where + v.error().message());
    } else if (name == "max_age" && !config.maxAgeSet) {
      Expected<uint64_t> v = parseAgeSeconds(value);
      if (v) config.maxAgeSeconds = *v;
      else if (sink) sink(CacheEvent::Warning, where + v.error().message());
    }
  }
}

PersistentCache PersistentCache::fromEnvironment(CacheSink sink) {
  CacheConfig config = CacheConfig::fromEnvironment(sink);
  if (config.persistent && config.root.empty())
    sink(CacheEvent::Trace, "persistent cache off: neither CGRAPH_CACHE_DIR, XDG_CACHE_HOME nor HOME is set");
  return PersistentCache(std::move(config), std::move(sink));
}

PersistentCache::PersistentCache(CacheConfig config, CacheSink sink, PathHashFn pathHash)
    : config_(std::move(config)), sink_(sink ? std::move(sink) : silentSink()),
      pathHash_(pathHash ? std::move(pathHash) : PathHashFn(hashHex64)) {
  while (config_.root.size() > 1 && config_.root.back() == '/') config_.root.pop_back();
  applyRootConfigFile(config_, sink_);
}

PersistentCache::PersistentCache(PersistentCache &&o) noexcept
    : config_(std::move(o.config_)), sink_(std::move(o.sink_)), pathHash_(std::move(o.pathHash_)),
      writable_(o.writable_.load()), warnedDisabled_(o.warnedDisabled_.load()), hits_(o.hits_.load()),
      misses_(o.misses_.load()), writes_(o.writes_.load()), evictions_(o.evictions_.load()), bad_(o.bad_.load()),
      skipped_(o.skipped_.load()) {}

void PersistentCache::warn(const std::string &m) const { sink_(CacheEvent::Warning, m); }

void PersistentCache::trace(const std::string &m) const {
  if (config_.trace) sink_(CacheEvent::Trace, m);
}

void PersistentCache::disableWriting(const std::string &why) {
  writable_.store(false);
  if (!warnedDisabled_.exchange(true)) warn(why + "; persistent cache writing turned off");
}

PersistentCounters PersistentCache::counters() const {
  PersistentCounters c;
  c.hits = hits_.load();
  c.misses = misses_.load();
  c.writes = writes_.load();
  c.evictions = evictions_.load();
  c.badEntries = bad_.load();
  c.skippedWrites = skipped_.load();
  return c;
}

std::string PersistentCache::leafDirectory(const CacheKey &key) const {
  return pathHash_(deviceIdentity(key)) + "/" + pathHash_(key.imageHash) + "/" + pathHash_(key.specConstants) + "/" +
         pathHash_(key.buildOptions);
}

void PersistentCache::updateStats(const std::map<std::string, int64_t> &deltas,
                                  std::map<std::string, uint64_t> *result) const {
  // Counters are best effort: a read-only root simply keeps none.
  if (!writable_.load()) return;
  if (IoError e = updateCounterFile(config_.root + "/stats", deltas, {}, result))
    trace("counters not updated: " + e.message);
}

Expected<std::optional<std::vector<uint8_t>>> PersistentCache::load(const CacheKey &key, std::string *binaryKind) {
  using Result = std::optional<std::vector<uint8_t>>;
  std::string why;
  if (!keyIsUsable(key, why)) return makeError("cache key: " + why);
  if (!enabled()) return Result();
  const std::string rel = leafDirectory(key);
  const std::string leaf = config_.root + "/" + rel;
  const std::string device = rel.substr(0, rel.find('/'));
  auto miss = [&](const std::string &detail) {
    ++misses_;
    updateStats({{"misses", 1}, {"misses." + device, 1}});
    trace("miss " + rel + (detail.empty() ? "" : " (" + detail + ")"));
    return Result();
  };

  // The leaf is opened without following links: a link or a file in place of one of
  // its directories is damage, never a way out of the root.
  Fd dir;
  if (IoError e = openDirBelow(config_.root, rel, dir)) {
    if (e.code != ELOOP && e.code != ENOTDIR) return miss(""); // absent or unreadable: a plain miss
    ++bad_;
    warn("cache entry directory " + rel + ": " + e.message + "; ignoring it");
    return miss("bad entry directory");
  }
  std::vector<std::string> names;
  if (listDirAt(dir.get(), leaf, names)) return miss("");
  std::vector<unsigned> srcs;
  for (const std::string &name : names) {
    unsigned n;
    std::string ext;
    if (parseEntryName(name, n, ext) && ext == "src") srcs.push_back(n);
  }
  std::sort(srcs.begin(), srcs.end());
  int found = -1;
  for (unsigned n : srcs) {
    std::string text;
    const std::string name = std::to_string(n) + ".src";
    if (IoError e = readFileAt(dir.get(), name, leaf + "/" + name, kMaxSrcSize, text)) {
      if (e.code == ENOENT) continue; // removed meanwhile
      ++bad_;
      warn("cache entry " + entryId(rel, n) + ": corrupt .src: " + e.message + "; ignoring it");
      continue;
    }
    CacheKey stored;
    std::string err = parseSrc(text, stored);
    if (!err.empty()) {
      ++bad_;
      warn("cache entry " + entryId(rel, n) + ": corrupt .src: " + err + "; ignoring it");
      continue;
    }
    if (sameIdentity(stored, key)) {
      found = static_cast<int>(n);
      break;
    }
  }
  if (found < 0) return miss(srcs.empty() ? "" : "no matching key among " + std::to_string(srcs.size()));

  const std::string id = entryId(rel, static_cast<unsigned>(found));
  const std::string binName = std::to_string(found) + ".bin";
  auto bad = [&](const std::string &reason) {
    ++bad_;
    warn("cache entry " + id + ": " + reason + "; rebuilding it");
    return miss("bad entry");
  };
  Fd fd;
  struct stat st;
  if (IoError e = openRegular(dir.get(), binName, leaf + "/" + binName, fd, st)) {
    if (e.code == ENOENT) return miss("entry removed meanwhile");
    return bad(e.message);
  }
  // Sizes first, from fstat and the header: nothing larger than the limits is read.
  const uint64_t limit = payloadLimit(config_.maxItemSize, config_.maxSize);
  uint64_t fileSize = static_cast<uint64_t>(st.st_size);
  if (std::string err = checkBinFileSize(fileSize, limit); !err.empty()) return bad(".bin: " + err);
  uint8_t head[kBinHeaderSize];
  bool gotHead = fileSize >= kBinHeaderSize && preadAll(fd.get(), head, kBinHeaderSize, 0);
  BinHeader h;
  std::string err = parseBinHeader(head, gotHead ? fileSize : 0, h);
  if (!err.empty()) return bad(err);
  if (err = checkPayloadSize(h, limit); !err.empty()) return bad(".bin: " + err);
  if (h.keyChecksum != identityChecksum(key)) return bad(".bin belongs to another key");
  std::string kind;
  std::vector<uint8_t> payload;
  try {
    kind.resize(h.kindLength);
    payload.resize(static_cast<size_t>(h.payloadSize));
  } catch (const std::bad_alloc &) {
    return bad("cannot allocate " + std::to_string(h.payloadSize) + " bytes to load it");
  }
  if (!preadAll(fd.get(), kind.data(), kind.size(), kBinHeaderSize) ||
      !preadAll(fd.get(), payload.data(), payload.size(), kBinHeaderSize + kind.size()))
    return bad("short read");
  if (checksum64(payload.data(), payload.size()) != h.payloadChecksum) return bad("payload checksum mismatch");
  // The .bin's mtime is the entry's last access, which LRU eviction sorts by.
  if (writable_.load()) ::futimens(fd.get(), nullptr);
  fd.reset();
  ++hits_;
  updateStats({{"hits", 1}, {"hits." + device, 1}});
  trace("hit " + id + " (" + std::to_string(payload.size()) + " bytes, " + kind + ")");
  if (binaryKind) *binaryKind = std::move(kind);
  return Result(std::move(payload));
}

void PersistentCache::store(const CacheKey &key, const uint8_t *data, size_t size, const std::string &binaryKind) {
  if (!enabled() || !writable_.load()) return;
  std::string why;
  if (!keyIsUsable(key, why)) {
    warn("cannot store a binary: cache key: " + why);
    return;
  }
  const std::string rel = leafDirectory(key);
  if (size < config_.minItemSize || (config_.maxItemSize > 0 && size > config_.maxItemSize)) {
    ++skipped_;
    trace("not stored " + rel + ": " + std::to_string(size) + " bytes is outside the item size limits");
    return;
  }
  const std::string leaf = config_.root + "/" + rel;
  if (size >= refusedSize_.load()) {
    ++skipped_;
    trace("not stored " + rel + ": " + std::to_string(size) + " bytes is over the file size limit");
    return;
  }
  const std::string src = serializeSrc(key);
  if (src.size() > kMaxSrcSize) {
    ++skipped_;
    warn("cannot store cache entry " + rel + ": its key takes " + std::to_string(src.size()) +
         " bytes, more than the limit of " + std::to_string(kMaxSrcSize));
    return;
  }
  auto failed = [&](const IoError &e) {
    if (isDiskUnusable(e.code)) {
      disableWriting("cannot write to " + config_.root + ": " + e.message);
    } else if (e.code == ETIMEDOUT) {
      trace("not stored " + rel + ": the entry is locked by another process");
    } else if (e.code == EFBIG) {
      // A file size limit (RLIMIT_FSIZE): smaller entries may still fit, so only
      // this size and larger ones are skipped from now on, with one warning.
      uint64_t seen = refusedSize_.load();
      while (size < seen && !refusedSize_.compare_exchange_weak(seen, size)) {
      }
      if (seen == UINT64_MAX)
        warn("cannot store cache entry " + rel + ": " + e.message + "; entries of " + std::to_string(size) +
             " bytes or more are not stored");
    } else {
      warn("cannot store cache entry " + rel + ": " + e.message);
    }
    ++skipped_;
  };

  int64_t delta = 0;
  unsigned slot = 0;
  for (int attempt = 0;; ++attempt) {
    // Created and opened without following links: a store never writes or removes
    // anything outside the root.
    Fd dir;
    IoError e = makeDirsBelow(config_.root, rel, dir);
    FileLock lock;
    if (!e) e = FileLock::acquireAt(dir.get(), ".lock", leaf + "/.lock", kLeafLockTimeout, lock);
    if (e.code == ENOENT && attempt < 2) continue; // a concurrent cleanup removed the directory
    if (e) return failed(e);

    std::vector<std::string> names;
    if ((e = listDirAt(dir.get(), leaf, names))) return failed(e);
    int match = -1;
    std::vector<unsigned> srcs;
    std::map<unsigned, int> used; // slot -> files of it left in the directory
    for (const std::string &name : names) {
      unsigned n;
      std::string ext;
      if (!parseEntryName(name, n, ext)) continue;
      ++used[n];
      if (ext == "src") srcs.push_back(n);
    }
    std::sort(srcs.begin(), srcs.end());
    for (unsigned n : srcs) {
      const std::string base = std::to_string(n);
      std::string text;
      IoError re = readFileAt(dir.get(), base + ".src", leaf + "/" + base + ".src", kMaxSrcSize, text);
      // Gone, or unreadable for a reason that says nothing about the file (EACCES,
      // EMFILE, ENOMEM, EIO): left alone.
      const bool damaged = re.code == ELOOP || re.code == EINVAL || re.code == EFBIG;
      if (re && !damaged) continue;
      CacheKey stored;
      if (damaged || !parseSrc(text, stored).empty()) {
        // Under the lock nobody else writes here: a .src that cannot be read (not a
        // regular file, too large) or does not parse is damage. unlinkat removes a
        // link or a FIFO itself; a directory stays, and keeps its slot.
        if (::unlinkat(dir.get(), (base + ".src").c_str(), 0) == 0) {
          if (::unlinkat(dir.get(), (base + ".bin").c_str(), 0) == 0 || errno == ENOENT) used.erase(n);
          trace("removed corrupt entry " + entryId(rel, n));
        }
        continue;
      }
      if (match < 0 && sameIdentity(stored, key)) match = static_cast<int>(n);
    }
    const unsigned next = used.empty() ? 0 : used.rbegin()->first + 1;
    slot = match >= 0 ? static_cast<unsigned>(match) : next;
    const std::string base = std::to_string(slot);
    const std::string path = leaf + "/" + base;
    uint64_t oldSize = 0;
    struct stat st;
    if (match >= 0) {
      for (const char *ext : {".bin", ".src"})
        if (::fstatat(dir.get(), (base + ext).c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode))
          oldSize += static_cast<uint64_t>(st.st_size);
    }
    // .bin first, then .src: a reader finds entries through their .src, so it never
    // sees one whose binary is not complete. The writer removes its temp file on any
    // failure (EFBIG included) and leaves the old file as it was.
    std::string header = makeBinHeader(binaryKind, data, size, identityChecksum(key));
    if ((e = writeFileAtomic(path + ".bin", header, data, size))) return failed(e);
    if ((e = writeFileAtomic(path + ".src", src, nullptr, 0))) {
      ::unlinkat(dir.get(), (base + ".bin").c_str(), 0);
      return failed(e);
    }
    delta = static_cast<int64_t>(header.size() + size + src.size()) - static_cast<int64_t>(oldSize);
    break;
  }
  ++writes_;
  std::map<std::string, uint64_t> totals;
  updateStats({{"writes", 1}, {"bytes", delta}}, &totals);
  trace("write " + entryId(rel, slot) + " (" + std::to_string(size) + " bytes, " + binaryKind + ")");
  maybeEvictAfterStore(totals["bytes"]);
}

void PersistentCache::maybeEvictAfterStore(uint64_t totalBytes) {
  if (config_.evictionDisabled) return;
  if (config_.maxSize > 0 && totalBytes > config_.maxSize) {
    // Down to half the limit, not just below it: eviction walks every entry of the
    // cache, so trimming only the excess would make nearly every following store
    // pay for another full walk. Half leaves room for many stores per walk
    // (seed kernel-program-cache-design, "Persistent cache eviction").
    // A failed automatic eviction never fails the store that triggered it.
    if (Expected<EvictionReport> r = evictOldest(config_.maxSize / 2, 0, false, false); !r)
      warn("size eviction: " + r.error().message());
  }
  if (config_.maxAgeSeconds > 0) {
    const std::string stamp = config_.root + "/age-scan";
    std::chrono::system_clock::time_point last;
    if (!modificationTime(stamp, last) || std::chrono::system_clock::now() - last > kAgeScanInterval) {
      // O_NONBLOCK|O_NOFOLLOW: a FIFO or a link in its place must not block or redirect.
      int fd = ::open(stamp.c_str(), O_WRONLY | O_CREAT | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC, 0666);
      if (fd >= 0) {
        ::futimens(fd, nullptr);
        ::close(fd);
      }
      if (Expected<EvictionReport> r = evictOldest(UINT64_MAX, config_.maxAgeSeconds, false, false); !r)
        warn("age eviction: " + r.error().message());
    }
  }
}

Error PersistentCache::setMaxSize(uint64_t bytes) {
  if (config_.root.empty()) return makeError("no cache directory");
  if (IoError e = makeDirs(config_.root)) return makeError(e.message);
  const std::string path = config_.root + "/cgcache.conf";
  std::string text, out;
  readFile(path, text);
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line))
    if (line.compare(0, 8, "max_size") != 0) out += line + "\n";
  out += "max_size = " + std::to_string(bytes) + "\n";
  if (IoError e = writeFileAtomic(path, out, nullptr, 0)) return makeError(e.message);
  config_.maxSize = bytes;
  return Error();
}

} // namespace cgraph::cache
