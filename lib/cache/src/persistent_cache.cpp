// Load and store of the persistent cache; administration is in persistent_admin.cpp.
#include "cgraph/cache/persistent_cache.h"

#include "entry_format.h"
#include "fs.h"

#include <algorithm>
#include <cerrno>
#include <fcntl.h>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

namespace cgraph::cache {

using namespace detail;

namespace {

// Long enough for another process to write a large binary, short enough that a
// stuck process cannot stall a run: a store that cannot get the lock is skipped.
constexpr std::chrono::milliseconds kLeafLockTimeout(2000);
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

  std::vector<std::string> names;
  if (listDir(leaf, names)) return miss("");
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
    if (readFile(leaf + "/" + std::to_string(n) + ".src", text)) continue; // removed meanwhile
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
  const std::string binPath = leaf + "/" + std::to_string(found) + ".bin";
  int fd = ::open(binPath.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return miss("entry removed meanwhile");
  auto bad = [&](const std::string &reason) {
    ::close(fd);
    ++bad_;
    warn("cache entry " + id + ": " + reason + "; rebuilding it");
    return miss("bad entry");
  };
  struct stat st;
  if (::fstat(fd, &st) != 0) return bad("cannot stat .bin");
  uint8_t head[kBinHeaderSize];
  uint64_t fileSize = static_cast<uint64_t>(st.st_size);
  ssize_t got = fileSize >= kBinHeaderSize ? ::pread(fd, head, kBinHeaderSize, 0) : 0;
  BinHeader h;
  std::string err = parseBinHeader(head, got == static_cast<ssize_t>(kBinHeaderSize) ? fileSize : 0, h);
  if (!err.empty()) return bad(err);
  if (h.keyChecksum != identityChecksum(key)) return bad(".bin belongs to another key");
  std::string kind(h.kindLength, '\0');
  std::vector<uint8_t> payload(h.payloadSize);
  if (::pread(fd, kind.data(), kind.size(), kBinHeaderSize) != static_cast<ssize_t>(kind.size()) ||
      ::pread(fd, payload.data(), payload.size(), static_cast<off_t>(kBinHeaderSize + kind.size())) !=
          static_cast<ssize_t>(payload.size()))
    return bad("short read");
  if (checksum64(payload.data(), payload.size()) != h.payloadChecksum) return bad("payload checksum mismatch");
  // The .bin's mtime is the entry's last access, which LRU eviction sorts by.
  if (writable_.load()) ::futimens(fd, nullptr);
  ::close(fd);
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
  auto failed = [&](const IoError &e) {
    if (isDiskUnusable(e.code)) {
      disableWriting("cannot write to " + config_.root + ": " + e.message);
    } else if (e.code == ETIMEDOUT) {
      trace("not stored " + rel + ": the entry is locked by another process");
    } else {
      warn("cannot store cache entry " + rel + ": " + e.message);
    }
    ++skipped_;
  };

  int64_t delta = 0;
  unsigned slot = 0;
  for (int attempt = 0;; ++attempt) {
    IoError e = makeDirs(leaf);
    FileLock lock;
    if (!e) e = FileLock::acquire(leaf + "/.lock", kLeafLockTimeout, lock);
    if (e.code == ENOENT && attempt < 2) continue; // a concurrent cleanup removed the directory
    if (e) return failed(e);

    std::vector<std::string> names;
    if ((e = listDir(leaf, names))) return failed(e);
    unsigned next = 0;
    int match = -1;
    std::vector<unsigned> srcs;
    for (const std::string &name : names) {
      unsigned n;
      std::string ext;
      if (!parseEntryName(name, n, ext)) continue;
      next = std::max(next, n + 1);
      if (ext == "src") srcs.push_back(n);
    }
    std::sort(srcs.begin(), srcs.end());
    for (unsigned n : srcs) {
      std::string base = leaf + "/" + std::to_string(n);
      std::string text;
      if (readFile(base + ".src", text)) continue;
      CacheKey stored;
      if (!parseSrc(text, stored).empty()) {
        // Under the lock nobody else writes here: a .src that does not parse is damage.
        ::unlink((base + ".src").c_str());
        ::unlink((base + ".bin").c_str());
        trace("removed corrupt entry " + entryId(rel, n));
        continue;
      }
      if (match < 0 && sameIdentity(stored, key)) match = static_cast<int>(n);
    }
    slot = match >= 0 ? static_cast<unsigned>(match) : next;
    std::string base = leaf + "/" + std::to_string(slot);
    uint64_t oldSize = 0;
    struct stat st;
    if (match >= 0) {
      if (::stat((base + ".bin").c_str(), &st) == 0) oldSize += static_cast<uint64_t>(st.st_size);
      if (::stat((base + ".src").c_str(), &st) == 0) oldSize += static_cast<uint64_t>(st.st_size);
    }
    // .bin first, then .src: a reader finds entries through their .src, so it never
    // sees one whose binary is not complete.
    std::string header = makeBinHeader(binaryKind, data, size, identityChecksum(key));
    if ((e = writeFileAtomic(base + ".bin", header, data, size))) return failed(e);
    std::string src = serializeSrc(key);
    if ((e = writeFileAtomic(base + ".src", src, nullptr, 0))) {
      ::unlink((base + ".bin").c_str());
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
      int fd = ::open(stamp.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0666);
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
