// Persistent cache against hostile directory contents: FIFOs, huge sparse files and
// symbolic links in place of entry files and directories, a directory in place of a
// .src, a file size limit while storing. Operations that used to block or exhaust
// memory run in a forked child with an alarm and an address space limit, so a
// regression fails the test instead of hanging or swapping the machine.
#include "cgraph/cache/binary_cache.h"
#include "cgraph/cache/config.h"
#include "cgraph/cache/persistent_cache.h"
#include "test_util.h"

#include <catch2/catch.hpp>

#include <csignal>
#include <fcntl.h>
#include <functional>
#include <fstream>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace cgraph;
using namespace cgraph::cache;
using namespace cgraph::cache::test;

namespace {

namespace fs = std::filesystem;

// Runs `body` in a child process whose address space is capped at `addressSpace`
// bytes and which is killed by SIGALRM after `seconds` (a guard against a hang, not
// a timing check). Returns the child's exit code, or 128 + the signal that ended it.
int inChild(const std::function<int()> &body, rlim_t addressSpace = 1ull << 30, unsigned seconds = 120) {
  std::fflush(nullptr);
  pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::alarm(seconds);
    struct rlimit rl{addressSpace, addressSpace};
    if (!kSanitizedBuild && ::setrlimit(RLIMIT_AS, &rl) != 0) ::_exit(100);
    int code = 101;
    try {
      code = body();
    } catch (...) {
      code = 102; // an exception escaped the cache
    }
    ::_exit(code);
  }
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

std::string leafOf(const PersistentCache &c, const CacheKey &k) { return c.config().root + "/" + c.leafDirectory(k); }

void makeFifo(const std::string &path) {
  fs::remove(path);
  REQUIRE(::mkfifo(path.c_str(), 0644) == 0);
}

void makeSparse(const std::string &path, uint64_t size) {
  fs::remove(path);
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  REQUIRE(fd >= 0);
  REQUIRE(::ftruncate(fd, static_cast<off_t>(size)) == 0);
  ::close(fd);
}

void writeText(const std::string &path, const std::string &text) {
  std::ofstream f(path, std::ios::binary);
  f << text;
  REQUIRE(f.good());
}

// Files a scratch directory outside the cache holds; the cache must never touch them.
std::vector<std::string> scratchFiles(const std::string &dir) {
  writeText(dir + "/0.bin", "not the cache's binary");
  writeText(dir + "/0.src", "not the cache's key");
  writeText(dir + "/5.bin.tmp.1.2", "not the cache's temp file");
  return {dir + "/0.bin", dir + "/0.src", dir + "/5.bin.tmp.1.2"};
}

bool anyTempFile(const std::string &dir) {
  for (const auto &e : fs::recursive_directory_iterator(dir))
    if (e.path().filename().string().find(".tmp.") != std::string::npos) return true;
  return false;
}

} // namespace

TEST_CASE("persistent cache: a FIFO in place of .bin or .src is a corrupt entry, never a hang",
          "[cache][persistent][hostile]") {
  TempDir dir;
  CacheKey key = makeKey(1);
  std::vector<uint8_t> bin = makePayload(1, 2000);
  {
    PersistentCache cache(testConfig(dir.path()), silentSink());
    cache.store(key, bin.data(), bin.size(), "x");
  }
  const std::string ext = GENERATE(std::string(".bin"), std::string(".src"));
  INFO("FIFO as 0" << ext);
  PersistentCache probe(testConfig(dir.path()), silentSink());
  const std::string fifo = leafOf(probe, key) + "/0" + ext;
  makeFifo(fifo);

  // load: a miss with a warning, then the rebuild replaces the entry.
  CHECK(inChild([&] {
          RecordingSink rec;
          PersistentCache cache(testConfig(dir.path()), rec.sink());
          auto r = cache.load(key);
          if (!r || r->has_value()) return 1;
          if (!rec.warned("not a regular file")) return 2;
          return 0;
        }) == 0);
  CHECK(inChild([&] {
          RecordingSink rec;
          BinaryCache cache(PersistentCache(testConfig(dir.path()), rec.sink()));
          int builds = 0;
          auto r = cache.getOrBuild(key, "x", [&]() -> Expected<std::vector<uint8_t>> {
            ++builds;
            return bin;
          });
          return r && **r == bin && builds == 1 ? 0 : 1;
        }) == 0);
  // The store replaced the entry: it loads again (in a child too: a FIFO left in
  // place would block this load).
  CHECK(inChild([&] {
          auto again = probe.load(key);
          return again && again->has_value() && **again == bin ? 0 : 1;
        }) == 0);

  // verify reports a FIFO and --fix removes it.
  makeFifo(fifo);
  CHECK(inChild([&] {
          PersistentCache cache(testConfig(dir.path()), silentSink());
          auto r = cache.verify(false, false);
          if (!r || r->bad.size() + r->orphans.size() != 1) return 1;
          auto fixed = cache.verify(true, false);
          if (!fixed || fixed->removed != 1 || !fixed->notRemoved.empty()) return 2;
          return 0;
        }) == 0);
  CHECK_FALSE(fs::exists(fs::symlink_status(fifo)));
}

TEST_CASE("persistent cache: oversized entries are checked by size before anything is read",
          "[cache][persistent][hostile]") {
  TempDir dir;
  CacheKey key = makeKey(1);
  std::vector<uint8_t> bin = makePayload(1, 2000);
  PersistentCache probe(testConfig(dir.path()), silentSink());
  probe.store(key, bin.data(), bin.size(), "x");
  const std::string leaf = leafOf(probe, key);

  SECTION("a 4 GiB sparse .bin: load and verify under a 1 GiB address space") {
    makeSparse(leaf + "/0.bin", 4ull << 30);
    CHECK(inChild([&] {
            RecordingSink rec;
            PersistentCache cache(testConfig(dir.path()), rec.sink());
            auto r = cache.load(key);
            if (!r || r->has_value()) return 1;
            if (!rec.warned("more than the limit")) return 2;
            auto v = cache.verify(false, false);
            if (!v || v->bad.size() != 1) return 3;
            if (v->bad[0].reason.find("more than the limit") == std::string::npos) return 4;
            auto listed = cache.list();
            if (!listed || listed->size() != 1) return 5;
            return 0;
          }) == 0);
  }
  SECTION("a .bin whose valid header claims more than the maximum item size") {
    // A well-formed entry written with a large limit, read back under a small one:
    // refused from its header, without reading (or allocating) the payload.
    std::vector<uint8_t> big = makePayload(2, 3 << 20);
    probe.store(key, big.data(), big.size(), "x");
    CacheConfig small = testConfig(dir.path());
    small.maxItemSize = 1 << 20;
    RecordingSink rec;
    PersistentCache cache(small, rec.sink());
    auto r = cache.load(key);
    REQUIRE(r.ok());
    CHECK_FALSE(r->has_value());
    CHECK(rec.warned("more than the limit"));
    auto v = cache.verify(false, false);
    REQUIRE(v.ok());
    REQUIRE(v->bad.size() == 1);
    CHECK_THAT(v->bad[0].reason, Catch::Contains("more than the limit"));
  }
  SECTION("a 6 GiB sparse .src: load misses and the rebuild stores, under a 1 GiB address space") {
    makeSparse(leaf + "/0.src", 6ull << 30);
    CHECK(inChild([&] {
            RecordingSink rec;
            BinaryCache cache(PersistentCache(testConfig(dir.path()), rec.sink()));
            int builds = 0;
            auto r = cache.getOrBuild(key, "x", [&]() -> Expected<std::vector<uint8_t>> {
              ++builds;
              return bin;
            });
            if (!r || **r != bin || builds != 1) return 1;
            if (!rec.warned("corrupt .src")) return 2;
            return 0;
          }) == 0);
    // The store removed the oversized .src and wrote the entry again.
    CHECK(fs::file_size(leaf + "/0.src") < 4096);
    auto again = probe.load(key);
    REQUIRE(again.ok());
    CHECK(again->has_value());
  }
  SECTION(".bin is a symbolic link to /dev/zero") {
    fs::remove(leaf + "/0.bin");
    fs::create_symlink("/dev/zero", leaf + "/0.bin");
    CHECK(inChild([&] {
            RecordingSink rec;
            PersistentCache cache(testConfig(dir.path()), rec.sink());
            auto r = cache.load(key);
            if (!r || r->has_value() || !rec.warned("symbolic link")) return 1;
            auto v = cache.verify(false, false);
            if (!v || v->bad.size() != 1) return 2;
            auto fixed = cache.verify(true, false);
            if (!fixed || fixed->removed != 1) return 3;
            return 0;
          }) == 0);
    CHECK_FALSE(fs::exists(fs::symlink_status(leaf + "/0.bin")));
    CHECK(fs::exists("/dev/zero"));
  }
}

TEST_CASE("persistent cache: maintenance never follows a symbolic link out of the root",
          "[cache][persistent][hostile]") {
  TempDir dir, outside;
  const std::string root = dir.sub("cache");
  std::vector<std::string> keep = scratchFiles(outside.path());
  PersistentCache cache(testConfig(root), silentSink());
  CacheKey key = makeKey(1), other = makeKey(2, "Other Device");
  std::vector<uint8_t> bin = makePayload(1, 1500);
  cache.store(key, bin.data(), bin.size(), "x");
  cache.store(other, bin.data(), bin.size(), "x");
  const std::string rel = cache.leafDirectory(key);
  // The link replaces the leaf directory, one of the middle levels or a device level.
  const int depth = GENERATE(4, 2, 1);
  std::string linkRel = rel;
  for (int i = 4; i > depth; --i) linkRel = linkRel.substr(0, linkRel.rfind('/'));
  const std::string link = root + "/" + linkRel;
  INFO("link at " << linkRel);
  fs::remove_all(link);
  fs::create_symlink(outside.path(), link);

  auto checkOutsideIntact = [&] {
    for (const std::string &f : keep) CHECK(fs::exists(f));
  };
  SECTION("load and store do not read, write or remove through the link") {
    RecordingSink rec;
    PersistentCache c(testConfig(root), rec.sink());
    auto r = c.load(key);
    REQUIRE(r.ok());
    CHECK_FALSE(r->has_value());
    c.store(key, bin.data(), bin.size(), "x");
    CHECK(rec.warned("symbolic link"));
    checkOutsideIntact();
    CHECK(fs::directory_iterator(outside.path()) != fs::directory_iterator());
    CHECK(std::distance(fs::directory_iterator(outside.path()), fs::directory_iterator()) == 3);
  }
  SECTION("verify reports the link; --fix removes the link, never its target") {
    auto v = cache.verify(false, false);
    REQUIRE(v.ok());
    REQUIRE(v->bad.size() == 1);
    CHECK(v->bad[0].id == linkRel);
    CHECK_THAT(v->bad[0].reason, Catch::Contains("symbolic link"));
    auto fixed = cache.verify(true, false);
    REQUIRE(fixed.ok());
    CHECK(fixed->removed == 1);
    CHECK_FALSE(fs::exists(fs::symlink_status(link)));
    checkOutsideIntact();
    // The other device's entry is untouched.
    auto r = cache.load(other);
    REQUIRE(r.ok());
    CHECK(r->has_value());
  }
  SECTION("clear and eviction leave the link's target alone") {
    auto evicted = cache.evictToSize(0, false);
    REQUIRE(evicted.ok());
    checkOutsideIntact();
    auto cleared = cache.clear(false);
    REQUIRE(cleared.ok());
    checkOutsideIntact();
    CHECK_FALSE(fs::exists(fs::symlink_status(link)));
    auto r = cache.list();
    REQUIRE(r.ok());
    CHECK(r->empty());
  }
}

TEST_CASE("persistent cache: verify --fix counts only what it removed", "[cache][persistent][hostile]") {
  TempDir dir;
  PersistentCache cache(testConfig(dir.path()), silentSink());
  CacheKey key = makeKey(1);
  std::vector<uint8_t> bin = makePayload(1, 1500);
  cache.store(key, bin.data(), bin.size(), "x");
  const std::string src = leafOf(cache, key) + "/0.src";
  fs::remove(src);
  fs::create_directory(src);
  writeText(src + "/inside", "a file in the directory");

  auto v = cache.verify(false, false);
  REQUIRE(v.ok());
  REQUIRE(v->bad.size() == 1);
  CHECK_THAT(v->bad[0].reason, Catch::Contains("directory"));
  auto fixed = cache.verify(true, false);
  REQUIRE(fixed.ok());
  CHECK(fixed->removed == 0);
  REQUIRE(fixed->notRemoved.size() == 1);
  CHECK(fixed->notRemoved[0].id == cache.leafDirectory(key) + "/0.src");
  CHECK_THAT(fixed->notRemoved[0].reason, Catch::Contains("directory"));
  // A directory in place of a file is left for a person to look at.
  CHECK(fs::exists(src + "/inside"));
  // load ignores it, and a store goes to another slot.
  RecordingSink rec;
  BinaryCache bc(PersistentCache(testConfig(dir.path()), rec.sink()));
  int builds = 0;
  auto build = [&]() -> Expected<std::vector<uint8_t>> {
    ++builds;
    return bin;
  };
  REQUIRE(bc.getOrBuild(key, "x", build).ok());
  CHECK(builds == 1);
  auto r = cache.load(key);
  REQUIRE(r.ok());
  CHECK(r->has_value());
}

TEST_CASE("persistent cache: ages and sizes out of range are errors, huge ages do not overflow",
          "[cache][config][hostile]") {
  auto age = parseAgeSeconds("999999999999999w");
  REQUIRE_FALSE(age.ok());
  CHECK_THAT(age.error().message(), Catch::Contains("too large"));
  CHECK_FALSE(parseAgeSeconds(std::string(400, '9')).ok());
  CHECK_FALSE(parseSize("99999999999999999999T").ok());
  REQUIRE(parseAgeSeconds("1000000w").ok());

  TempDir dir;
  PersistentCache cache(testConfig(dir.path()), silentSink());
  std::vector<uint8_t> bin = makePayload(1, 1500);
  cache.store(makeKey(1), bin.data(), bin.size(), "x");
  // Older than the epoch: nothing is, so nothing is removed.
  for (uint64_t seconds : {*parseAgeSeconds("1000000w"), uint64_t(1) << 62, UINT64_MAX}) {
    auto r = cache.evictOlderThan(seconds, false);
    REQUIRE(r.ok());
    CHECK(r->removedEntries == 0);
  }
  CHECK(cache.load(makeKey(1))->has_value());
}

TEST_CASE("persistent cache: a file size limit skips the entry, removes the temp file and never fails",
          "[cache][persistent][hostile]") {
  TempDir dir;
  std::vector<uint8_t> big = makePayload(1, 1 << 20), small = makePayload(2, 1000);
  std::fflush(nullptr);
  pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::signal(SIGXFSZ, SIG_IGN);
    struct rlimit rl{256 * 1024, 256 * 1024};
    if (::setrlimit(RLIMIT_FSIZE, &rl) != 0) ::_exit(10);
    RecordingSink rec;
    BinaryCache cache(PersistentCache(testConfig(dir.path()), rec.sink()));
    for (int k : {1, 3}) {
      auto r = cache.getOrBuild(makeKey(k), "x", [&]() -> Expected<std::vector<uint8_t>> { return big; });
      if (!r || **r != big) ::_exit(11);
    }
    if (!rec.warned("File too large")) ::_exit(12);
    if (rec.warnings.size() != 1) ::_exit(13); // one warning, not one per refused store
    auto r = cache.getOrBuild(makeKey(2), "x", [&]() -> Expected<std::vector<uint8_t>> { return small; });
    if (!r || **r != small) ::_exit(14);
    if (!cache.persistent().writable()) ::_exit(15); // smaller entries are still stored
    ::_exit(0);
  }
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  CHECK_FALSE(anyTempFile(dir.path()));
  PersistentCache cache(testConfig(dir.path()), silentSink());
  CHECK_FALSE(cache.load(makeKey(1))->has_value());
  CHECK_FALSE(cache.load(makeKey(3))->has_value());
  auto r = cache.load(makeKey(2));
  REQUIRE(r.ok());
  REQUIRE(r->has_value());
  CHECK(**r == small);
}
