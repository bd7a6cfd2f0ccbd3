// The one kernel cache every backend uses: what a backend built from a device image
// (CPU: a loaded JIT module from an ELF object; OpenCL: a cl_program from a program
// binary; CUDA, later: a CUmodule from a cubin), in memory per device, with the
// binary on disk across processes.
//
// Why this shape: the project had three caches (an unbounded map in the CPU backend,
// an OpenCL program map keyed by std::hash alone, and an unused DeviceCodeCache). A
// backend needs one call that (1) finds a ready object in memory, (2) else loads one
// from a binary on disk, (3) else builds it and keeps the binary. KernelCache<T> is
// that call, over the two existing layers: MemoryCache (per-key build-once, LRU) and
// PersistentCache (the on-disk store cgcache manages).
//
// The key (CacheKey, key.h) holds what identifies a binary on every backend:
//   backend          "cpu", "opencl", "cuda"
//   deviceName       the device id: CPU name, OpenCL device name, "sm_90" for CUDA
//   driverVersion    driver / runtime version string
//   compilerVersion  the lowering: cgraph + LLVM version and a hash of the lowering
//                    code and options, so a changed compiler never reuses old binaries
//   imageHash        filled from the image bytes when left empty
//   specConstants, buildOptions
// plus the image bytes themselves, given to getOrBuild. In memory the full key bytes
// (every identity field and the whole image) are compared; a hash only picks the
// bucket, so two keys whose hashes collide still get their own entries (a test forces
// that). On disk the directory name is a hash too and the full identity stored in
// `.src` is compared on every load (persistent_cache.h); there the image is named by
// its 128-bit xxh3 hash, as in the seed design and ccache, to keep `.src` small.
//
// How the CUDA backend uses it, for example:
//   CacheKey k{"cuda", "sm_90", driverVersionString, loweringHash, "", "", ptxasOpts};
//   cache->getOrBuild(k, spirv, spirvSize, "cubin",
//       [&](const Binary &cubin) { return loadModule(cubin); },      // cuModuleLoadData
//       [&]() -> Expected<Built> { ... return Built{module, cubin}; });
//
// Ownership: values are shared_ptr<const T>; an evicted value stays alive while a
// caller (an executable) holds it. The cache must outlive the calls running on it.
// Bounded: the memory tier keeps at most Options::maxBytes (binary bytes, at least
// kMinEntryBytes per entry) and drops least recently used entries beyond it;
// 0 = unbounded. The disk tier is bounded by its own max size (config.h).
//
// Thread-safety: every member from any thread. One build per key at a time in this
// process (other threads asking for the key wait for it); the load/build callbacks
// run without any cache lock held.
//
// Failure modes: getOrBuild returns the builder's Error (and a malformed key's).
// Nothing on disk fails a run: a missing, corrupt or mismatched entry is a miss, and
// a binary that `load` refuses (e.g. a driver that no longer takes an old program
// binary) is a miss with a warning through the sink, then a rebuild that replaces it.
// Warnings go to the CacheSink; the library never prints (sink.h).
#pragma once

#include "cgraph/cache/key.h"
#include "cgraph/cache/memory_cache.h"
#include "cgraph/cache/persistent_cache.h"
#include "cgraph/cache/sink.h"
#include "cgraph/error.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cgraph::cache {

// Every memory entry counts at least this much, so entries without a binary are
// bounded too.
inline constexpr size_t kMinEntryBytes = 1024;

// The in-memory key: every identity field of `key` and the whole image, each
// length-prefixed (equal strings iff equal keys and equal images).
std::string memoryKeyBytes(const CacheKey &key, const uint8_t *image, size_t imageSize);

// Bucket hash for the memory tier. Injectable so tests can force collisions; empty
// means std::hash over the key bytes.
using BucketHashFn = std::function<size_t(std::string_view)>;

struct KernelCacheCounters {
  MemoryCacheCounters memory; // hits, waits, builds (= memory misses), evictions, ...
  uint64_t diskHits = 0;      // memory misses answered by a loaded disk binary
  uint64_t diskRejects = 0;   // disk binaries `load` refused (rebuilt)
  uint64_t builds = 0;        // build callbacks run
};

// Sums over every KernelCache of the process (every backend and device), since it
// started: what the C API reports as cgraph_cache_stats. memoryHits: lookups answered
// from memory (a finished entry, or another thread's build waited for); memoryMisses:
// lookups that went on to the disk tier (each then a diskHit or a build); builds counts
// build callbacks run (buildFailures those that failed). Lookups of callers that bypass
// the cache (FinalizeOptions::useCache off) are not seen. Thread-safe; never fails.
struct ProcessCacheCounters {
  uint64_t memoryHits = 0;
  uint64_t memoryMisses = 0;
  uint64_t diskHits = 0;
  uint64_t diskRejects = 0;
  uint64_t builds = 0;
  uint64_t buildFailures = 0;
};
ProcessCacheCounters processCacheCounters();

namespace detail {
enum class ProcessCount { MemoryHit, MemoryMiss, DiskHit, DiskReject, Build, BuildFailure };
void countInProcess(ProcessCount what) noexcept;
} // namespace detail

template <class T> class KernelCache {
public:
  using Binary = std::vector<uint8_t>;
  using Value = std::shared_ptr<const T>;
  struct Built {
    Value value;
    Binary binary; // what to keep on disk; empty: nothing is stored
  };
  // Turns a binary from disk into a value; an Error means "unusable here": a miss.
  using LoadFn = std::function<Expected<Value>(const Binary &)>;
  using BuildFn = std::function<Expected<Built>()>;

  struct Options {
    uint64_t maxBytes = kDefaultMemoryMaxSize; // memory tier; 0 = unbounded
    BucketHashFn bucketHash;                   // tests only
  };

  KernelCache(PersistentCache persistent, Options options, CacheSink sink = defaultSink())
      : persistent_(std::move(persistent)), sink_(std::move(sink)),
        memory_(typename Memory::Options{static_cast<size_t>(options.maxBytes),
                                         [](const Slot &s) { return s.bytes; }, {}},
                BucketHash{std::move(options.bucketHash)}) {}

  // PersistentCache::fromEnvironment; the memory bound from CGRAPH_CACHE_MEMORY_MAX_SIZE.
  static std::unique_ptr<KernelCache> fromEnvironment(CacheSink sink = defaultSink()) {
    PersistentCache p = PersistentCache::fromEnvironment(sink);
    Options o;
    o.maxBytes = p.config().memoryMaxSize;
    return std::make_unique<KernelCache>(std::move(p), std::move(o), std::move(sink));
  }
  // As above, except that a given `root` or `persistent` replaces what the environment
  // says (CGRAPH_CACHE_DIR / XDG_CACHE_HOME / HOME, CGRAPH_CACHE_PERSISTENT): a
  // backend's explicit options win. The root's cgcache.conf is read as usual.
  static std::unique_ptr<KernelCache> fromEnvironment(const std::optional<std::string> &root,
                                                      std::optional<bool> persistent,
                                                      CacheSink sink = defaultSink()) {
    CacheConfig c = CacheConfig::fromEnvironment(sink);
    if (root) c.root = *root;
    if (persistent) c.persistent = *persistent;
    Options o;
    o.maxBytes = c.memoryMaxSize;
    return std::make_unique<KernelCache>(PersistentCache(std::move(c), sink), std::move(o), std::move(sink));
  }

  // Memory, then disk (through `load`), then `build` (its binary is stored on disk).
  // `image` may be null when key.imageHash already names the image.
  Expected<Value> getOrBuild(CacheKey key, const uint8_t *image, size_t imageSize, const std::string &binaryKind,
                             const LoadFn &load, const BuildFn &build) {
    if (key.imageHash.empty() && image) key.imageHash = hashImage(image, imageSize);
    bool filled = false;
    Expected<std::shared_ptr<const Slot>> slot =
        memory_.getOrBuild(memoryKeyBytes(key, image, imageSize), [&]() -> Expected<std::shared_ptr<const Slot>> {
          filled = true;
          return fill(key, binaryKind, load, build);
        });
    if (slot || filled)
      detail::countInProcess(filled ? detail::ProcessCount::MemoryMiss : detail::ProcessCount::MemoryHit);
    if (!slot) return slot.error();
    return (*slot)->value;
  }

  // Drops every finished memory entry (e.g. when the device runs out of memory).
  void clearMemory() { memory_.clear(); }

  PersistentCache &persistent() { return persistent_; }
  KernelCacheCounters counters() const {
    KernelCacheCounters c;
    c.memory = memory_.counters();
    c.diskHits = diskHits_.load();
    c.diskRejects = diskRejects_.load();
    c.builds = builds_.load();
    return c;
  }

private:
  struct Slot {
    Value value;
    size_t bytes = 0;
  };
  struct BucketHash {
    BucketHashFn fn;
    size_t operator()(const std::string &k) const { return fn ? fn(k) : std::hash<std::string>()(k); }
  };
  using Memory = MemoryCache<std::string, Slot, BucketHash>;

  Expected<std::shared_ptr<const Slot>> fill(const CacheKey &key, const std::string &binaryKind, const LoadFn &load,
                                             const BuildFn &build) {
    Expected<std::optional<Binary>> stored = persistent_.load(key);
    if (!stored) return stored.error();
    if (*stored) {
      Expected<Value> v = load(**stored);
      if (v && *v) {
        ++diskHits_;
        detail::countInProcess(detail::ProcessCount::DiskHit);
        return std::make_shared<const Slot>(Slot{*v, std::max((*stored)->size(), kMinEntryBytes)});
      }
      ++diskRejects_;
      detail::countInProcess(detail::ProcessCount::DiskReject);
      if (sink_)
        sink_(CacheEvent::Warning, "cached " + binaryKind + " for " + key.backend + " device '" + key.deviceName +
                                       "' is not usable (" + (v ? std::string("no value") : v.error().message()) +
                                       "); rebuilding it");
    }
    ++builds_;
    detail::countInProcess(detail::ProcessCount::Build);
    Expected<Built> built = build();
    if (!built || !built->value) detail::countInProcess(detail::ProcessCount::BuildFailure);
    if (!built) return built.error();
    if (!built->value) return makeError("kernel cache builder returned no value");
    if (!built->binary.empty()) persistent_.store(key, built->binary.data(), built->binary.size(), binaryKind);
    return std::make_shared<const Slot>(Slot{std::move(built->value), std::max(built->binary.size(), kMinEntryBytes)});
  }

  PersistentCache persistent_;
  CacheSink sink_;
  Memory memory_;
  std::atomic<uint64_t> diskHits_{0}, diskRejects_{0}, builds_{0};
};

} // namespace cgraph::cache
