// KernelCache (the one cache every backend uses): full-key comparison under forced
// hash collisions in memory and on disk, a binary the backend refuses, the memory
// bound; the shared atomic write under a failing write; the stats lock's bounded
// wait; the process sink.
#include "cgraph/cache/kernel_cache.h"
#include "cgraph/cache/sink.h"
#include "cgraph/format/atomic_file.h"
#include "test_util.h"

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <csignal>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <future>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

using namespace cgraph;
using namespace cgraph::cache;
using namespace cgraph::cache::test;

namespace {

// What a backend would load from a binary: here the binary's text plus a marker of
// where it came from.
struct Loaded {
  std::string text;
  bool fromDisk = false;
};
using Cache = KernelCache<Loaded>;

std::vector<uint8_t> bytesOf(const std::string &s) { return std::vector<uint8_t>(s.begin(), s.end()); }

struct Backend {
  int builds = 0, loads = 0;
  bool refuse = false; // the "driver" refuses every binary from disk
  Cache::LoadFn load() {
    return [this](const std::vector<uint8_t> &b) -> Expected<Cache::Value> {
      ++loads;
      if (refuse) return makeError("driver refused the binary");
      return std::make_shared<const Loaded>(Loaded{std::string(b.begin(), b.end()), true});
    };
  }
  Cache::BuildFn build(const std::string &image) {
    return [this, image]() -> Expected<Cache::Built> {
      ++builds;
      std::string binary = "binary of " + image;
      return Cache::Built{std::make_shared<const Loaded>(Loaded{binary, false}), bytesOf(binary)};
    };
  }
};

Expected<Cache::Value> get(Cache &c, Backend &b, const CacheKey &key, const std::string &image) {
  return c.getOrBuild(key, reinterpret_cast<const uint8_t *>(image.data()), image.size(), "test-binary", b.load(),
                      b.build(image));
}

CacheKey keyFor(const std::string &device = "dev0") {
  CacheKey k = makeKey(0, device);
  k.imageHash.clear(); // filled from the image bytes
  return k;
}

Cache::Options collidingOptions() {
  Cache::Options o;
  o.bucketHash = [](std::string_view) { return size_t(7); };
  return o;
}

} // namespace

TEST_CASE("kernel cache: colliding hashes in memory and on disk still return the right entry",
          "[cache][kernel][collision]") {
  TempDir dir;
  RecordingSink rec;
  auto collidingPath = [](std::string_view) { return std::string("0000000000000000"); };
  const std::vector<std::string> images = {"image A", "image B", "image C"};
  {
    Cache cache(PersistentCache(testConfig(dir.path()), rec.sink(), collidingPath), collidingOptions(), rec.sink());
    Backend backend;
    for (const std::string &image : images) {
      auto v = get(cache, backend, keyFor(), image);
      REQUIRE(v.ok());
      CHECK((*v)->text == "binary of " + image);
    }
    CHECK(backend.builds == 3);
    // Again, from memory: each key finds its own value despite one bucket.
    for (const std::string &image : images) {
      auto v = get(cache, backend, keyFor(), image);
      REQUIRE(v.ok());
      CHECK((*v)->text == "binary of " + image);
      CHECK_FALSE((*v)->fromDisk);
    }
    CHECK(backend.builds == 3);
    CHECK(cache.counters().memory.hits == 3);
  }
  // Every key in one leaf directory on disk: a new process (new memory tier) loads the
  // right binary for each, resolved through the stored full keys.
  Cache fresh(PersistentCache(testConfig(dir.path()), rec.sink(), collidingPath), collidingOptions(), rec.sink());
  Backend backend;
  for (auto it = images.rbegin(); it != images.rend(); ++it) {
    auto v = get(fresh, backend, keyFor(), *it);
    REQUIRE(v.ok());
    CHECK((*v)->text == "binary of " + *it);
    CHECK((*v)->fromDisk);
  }
  CHECK(backend.builds == 0);
  CHECK(fresh.counters().diskHits == 3);
  CHECK(rec.warnings.empty());
}

TEST_CASE("kernel cache: the memory key holds the whole image, not just its hash", "[cache][kernel][collision]") {
  TempDir dir;
  CacheConfig config = testConfig(dir.path());
  config.persistent = false;
  Cache cache(PersistentCache(config, silentSink()), collidingOptions(), silentSink());
  Backend backend;
  // Same key fields and the same (deliberately wrong) image hash: only the image
  // bytes tell these apart.
  CacheKey k = keyFor();
  k.imageHash = "same-hash";
  auto a = get(cache, backend, k, "first image");
  auto b = get(cache, backend, k, "second image");
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  CHECK((*a)->text == "binary of first image");
  CHECK((*b)->text == "binary of second image");
  CHECK(backend.builds == 2);
  CHECK(memoryKeyBytes(k, reinterpret_cast<const uint8_t *>("ab"), 2) !=
        memoryKeyBytes(k, reinterpret_cast<const uint8_t *>("a"), 1));
}

TEST_CASE("kernel cache: a binary the backend refuses is a miss, a warning and a rebuild", "[cache][kernel]") {
  TempDir dir;
  RecordingSink rec;
  {
    Cache cache(PersistentCache(testConfig(dir.path()), rec.sink()), Cache::Options(), rec.sink());
    Backend backend;
    REQUIRE(get(cache, backend, keyFor(), "img").ok());
    CHECK(backend.builds == 1);
  }
  Cache cache(PersistentCache(testConfig(dir.path()), rec.sink()), Cache::Options(), rec.sink());
  Backend backend;
  backend.refuse = true;
  auto v = get(cache, backend, keyFor(), "img");
  REQUIRE(v.ok());
  CHECK((*v)->text == "binary of img");
  CHECK_FALSE((*v)->fromDisk);
  CHECK(backend.loads == 1);
  CHECK(backend.builds == 1);
  CHECK(cache.counters().diskRejects == 1);
  CHECK(rec.warned("driver refused the binary"));
}

TEST_CASE("kernel cache: the memory tier is bounded", "[cache][kernel][lru]") {
  TempDir dir;
  CacheConfig config = testConfig(dir.path());
  config.persistent = false;
  Cache::Options o;
  o.maxBytes = 4 * kMinEntryBytes;
  Cache cache(PersistentCache(config, silentSink()), o, silentSink());
  Backend backend;
  for (int i = 0; i < 20; ++i) REQUIRE(get(cache, backend, keyFor(), "image " + std::to_string(i)).ok());
  KernelCacheCounters c = cache.counters();
  CHECK(c.memory.entries == 4);
  CHECK(c.memory.evictions == 16);
  CHECK(c.memory.bytes <= o.maxBytes);
  // An evicted entry is built again (no disk here); a kept one is a hit.
  REQUIRE(get(cache, backend, keyFor(), "image 19").ok());
  CHECK(backend.builds == 20);
  REQUIRE(get(cache, backend, keyFor(), "image 0").ok());
  CHECK(backend.builds == 21);
}

TEST_CASE("kernel cache: threads asking for the same keys build each once", "[cache][kernel][threads]") {
  TempDir dir;
  Cache cache(PersistentCache(testConfig(dir.path()), silentSink()), Cache::Options(), silentSink());
  std::atomic<int> builds{0};
  std::atomic<int> wrong{0};
  auto worker = [&](int t) {
    for (int i = 0; i < 40; ++i) {
      const std::string image = "image " + std::to_string((i + t) % 8);
      auto v = cache.getOrBuild(
          keyFor(), reinterpret_cast<const uint8_t *>(image.data()), image.size(), "test-binary",
          [](const std::vector<uint8_t> &b) -> Expected<Cache::Value> {
            return std::make_shared<const Loaded>(Loaded{std::string(b.begin(), b.end()), true});
          },
          [&, image]() -> Expected<Cache::Built> {
            ++builds;
            std::string binary = "binary of " + image;
            return Cache::Built{std::make_shared<const Loaded>(Loaded{binary, false}), bytesOf(binary)};
          });
      if (!v || (*v)->text != "binary of " + image) ++wrong;
    }
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < 6; ++t) threads.emplace_back(worker, t);
  for (std::thread &t : threads) t.join();
  CHECK(wrong == 0);
  CHECK(builds == 8);
  CHECK(cache.counters().memory.builds == 8);
}

TEST_CASE("atomic write: a failed write keeps the old file and returns an error", "[cache][atomic]") {
  TempDir dir;
  const std::string path = dir.sub("file.bin");
  const std::string old = "old contents";
  REQUIRE_FALSE(writeFileAtomic(path, reinterpret_cast<const uint8_t *>(old.data()), old.size()));
  // A child with a 4 KiB file size limit stands in for a full disk: write(2) fails
  // with EFBIG part-way through the temporary file.
  pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    std::signal(SIGXFSZ, SIG_IGN);
    struct rlimit lim = {4096, 4096};
    ::setrlimit(RLIMIT_FSIZE, &lim);
    std::vector<uint8_t> big(1 << 20, 0xab);
    int code = 0;
    Error e = writeFileAtomic(path, big.data(), big.size(), &code);
    bool ok = e && code == EFBIG && e.message().find(path) != std::string::npos;
    ::_exit(ok ? 0 : 1);
  }
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  std::ifstream in(path, std::ios::binary);
  std::string now((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(now == old);
  // No temporary left behind.
  size_t files = 0;
  for (auto &e : std::filesystem::directory_iterator(dir.path())) {
    (void)e;
    ++files;
  }
  CHECK(files == 1);
  // A missing directory: an Error with the OS reason.
  int code = 0;
  Error e = writeFileAtomic(dir.sub("missing/file.bin"), {ByteSpan{old.data(), old.size()}}, &code);
  CHECK(e);
  CHECK(code == ENOENT);
}

TEST_CASE("persistent cache: a held stats lock costs a bounded wait, not a hang", "[cache][persistent][lock]") {
  TempDir dir;
  RecordingSink rec;
  CacheConfig config = testConfig(dir.path());
  config.trace = true;
  PersistentCache cache(config, rec.sink());
  CacheKey key = makeKey(3);
  std::vector<uint8_t> bin = makePayload(3, 256);
  cache.store(key, bin.data(), bin.size(), "test");
  // Another "process" holds the counters' lock and never lets go.
  int fd = ::open((dir.str() + "/stats").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
  REQUIRE(fd >= 0);
  REQUIRE(::flock(fd, LOCK_EX) == 0);
  auto loaded = std::async(std::launch::async, [&] { return cache.load(key); });
  // Generous: the promised wait is 1 s; this only tells "bounded" from "hangs".
  REQUIRE(loaded.wait_for(std::chrono::seconds(30)) == std::future_status::ready);
  Expected<std::optional<std::vector<uint8_t>>> r = loaded.get();
  REQUIRE(r.ok());
  REQUIRE(r->has_value());
  CHECK(**r == bin);
  CHECK(cache.counters().hits == 1); // the in-process counter still counts
  bool traced = false;
  for (const std::string &t : rec.traces) traced = traced || t.find("counters not updated") != std::string::npos;
  CHECK(traced);
  ::close(fd);
}

TEST_CASE("cache sink: silent by default, the process sink when installed", "[cache][sink]") {
  std::vector<std::string> got;
  CacheSink sink = defaultSink();
  sink(CacheEvent::Warning, "before");
  CacheSink previous = setProcessSink([&](CacheEvent e, const std::string &m) {
    if (e == CacheEvent::Warning) got.push_back(m);
  });
  sink(CacheEvent::Warning, "after");
  setProcessSink(previous);
  sink(CacheEvent::Warning, "restored");
  REQUIRE(got.size() == 1);
  CHECK(got[0] == "after");
}
