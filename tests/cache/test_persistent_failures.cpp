// Persistent cache under damage: corrupt and truncated entries, a read-only
// directory, and writers killed with SIGKILL in the middle of a store.
#include "cgraph/cache/binary_cache.h"
#include "cgraph/cache/persistent_cache.h"
#include "test_util.h"

#include <catch2/catch.hpp>

#include <chrono>
#include <csignal>
#include <fstream>
#include <sys/stat.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

using namespace cgraph;
using namespace cgraph::cache;
using namespace cgraph::cache::test;

namespace {

std::string binPath(PersistentCache &c, const CacheKey &k) {
  return c.config().root + "/" + c.leafDirectory(k) + "/0.bin";
}

void flipByte(const std::string &path, std::streamoff offsetFromEnd) {
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  REQUIRE(f);
  f.seekg(-offsetFromEnd, std::ios::end);
  char c;
  f.get(c);
  f.seekp(-offsetFromEnd, std::ios::end);
  f.put(static_cast<char>(c ^ 0x5a));
}

// Loads through a BinaryCache so a bad entry is rebuilt and rewritten; returns how
// many times the builder ran.
int rebuildThrough(const std::string &root, const CacheKey &key, const std::vector<uint8_t> &expect,
                   RecordingSink &rec) {
  BinaryCache cache(PersistentCache(testConfig(root), rec.sink()));
  int builds = 0;
  auto r = cache.getOrBuild(key, "elf-relocatable", [&]() -> Expected<std::vector<uint8_t>> {
    ++builds;
    return expect;
  });
  REQUIRE(r.ok());
  CHECK(**r == expect);
  return builds;
}

} // namespace

TEST_CASE("persistent cache: corrupt and truncated entries are misses, warned and rebuilt",
          "[cache][persistent][damage]") {
  TempDir dir;
  RecordingSink rec;
  PersistentCache cache(testConfig(dir.path()), rec.sink());
  CacheKey key = makeKey(1);
  std::vector<uint8_t> bin = makePayload(1, 4096);

  SECTION("flipped payload byte") {
    cache.store(key, bin.data(), bin.size(), "elf-relocatable");
    flipByte(binPath(cache, key), 10);
    auto r = cache.load(key);
    REQUIRE(r.ok());
    CHECK_FALSE(r->has_value());
    CHECK(rec.warned("payload checksum mismatch"));
  }
  SECTION("truncated .bin") {
    cache.store(key, bin.data(), bin.size(), "elf-relocatable");
    std::filesystem::resize_file(binPath(cache, key), 2000);
    auto r = cache.load(key);
    REQUIRE(r.ok());
    CHECK_FALSE(r->has_value());
    CHECK(rec.warned("size mismatch"));
  }
  SECTION(".bin shorter than its header") {
    cache.store(key, bin.data(), bin.size(), "elf-relocatable");
    std::filesystem::resize_file(binPath(cache, key), 10);
    CHECK_FALSE(cache.load(key)->has_value());
    CHECK(rec.warned("truncated header"));
  }
  SECTION("corrupt header") {
    cache.store(key, bin.data(), bin.size(), "elf-relocatable");
    flipByte(binPath(cache, key), static_cast<std::streamoff>(std::filesystem::file_size(binPath(cache, key)) - 20));
    CHECK_FALSE(cache.load(key)->has_value());
    CHECK(rec.warned("header checksum mismatch"));
  }
  SECTION("truncated .src") {
    cache.store(key, bin.data(), bin.size(), "elf-relocatable");
    std::string src = dir.str() + "/" + cache.leafDirectory(key) + "/0.src";
    std::filesystem::resize_file(src, std::filesystem::file_size(src) - 7);
    CHECK_FALSE(cache.load(key)->has_value());
    CHECK(rec.warned("corrupt .src"));
  }
  SECTION(".bin of another key") {
    CacheKey other = makeKey(2);
    std::vector<uint8_t> otherBin = makePayload(2, 4096);
    cache.store(key, bin.data(), bin.size(), "elf-relocatable");
    cache.store(other, otherBin.data(), otherBin.size(), "elf-relocatable");
    std::filesystem::copy_file(binPath(cache, other), binPath(cache, key),
                               std::filesystem::copy_options::overwrite_existing);
    CHECK_FALSE(cache.load(key)->has_value());
    CHECK(rec.warned("belongs to another key"));
  }
  CHECK(cache.counters().badEntries == 1);
  auto bad = cache.verify(false, false);
  REQUIRE(bad.ok());
  CHECK(bad->bad.size() == 1);
  // The next get-or-build rebuilds it and the entry is good again.
  CHECK(rebuildThrough(dir.path(), key, bin, rec) == 1);
  CHECK(rebuildThrough(dir.path(), key, bin, rec) == 0);
  auto good = cache.verify(false, false);
  REQUIRE(good.ok());
  CHECK(good->bad.empty());
}

TEST_CASE("persistent cache: verify --fix removes bad entries", "[cache][persistent][damage]") {
  TempDir dir;
  PersistentCache cache(testConfig(dir.path()), silentSink());
  for (int i = 0; i < 3; ++i) {
    auto v = makePayload(i, 300);
    cache.store(makeKey(i), v.data(), v.size(), "x");
  }
  flipByte(binPath(cache, makeKey(1)), 5);
  auto dry = cache.verify(true, true);
  REQUIRE(dry.ok());
  CHECK(dry->checked == 3);
  CHECK(dry->bad.size() == 1);
  CHECK(dry->removed == 0);
  auto fixed = cache.verify(true, false);
  REQUIRE(fixed.ok());
  CHECK(fixed->removed == 1);
  auto after = cache.verify(false, false);
  REQUIRE(after.ok());
  CHECK(after->checked == 2);
  CHECK(after->bad.empty());
}

TEST_CASE("persistent cache: a read-only directory turns writing off, get-or-build still works",
          "[cache][persistent][damage]") {
  TempDir dir;
  std::string root = dir.sub("ro");
  REQUIRE(::mkdir(root.c_str(), 0555) == 0);
  REQUIRE(::chmod(root.c_str(), 0555) == 0);
  // root ignores permissions: run the check as an unprivileged user in a child.
  pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    if (::geteuid() == 0 && (::setgid(65534) != 0 || ::setuid(65534) != 0)) ::_exit(10);
    RecordingSink rec;
    BinaryCache cache(PersistentCache(testConfig(root), rec.sink()));
    int builds = 0;
    for (int i = 0; i < 3; ++i) {
      auto r = cache.getOrBuild(makeKey(i), "x", [&]() -> Expected<std::vector<uint8_t>> {
        ++builds;
        return makePayload(i, 100);
      });
      if (!r || **r != makePayload(i, 100)) ::_exit(11);
    }
    if (builds != 3) ::_exit(12);
    if (cache.persistent().writable()) ::_exit(13);
    if (!rec.warned("persistent cache writing turned off")) ::_exit(14);
    if (rec.warnings.size() != 1) ::_exit(15); // one warning, not one per store
    ::_exit(0);
  }
  int status = 0;
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  CHECK(std::filesystem::is_empty(root));
}

TEST_CASE("persistent cache: SIGKILL during writes leaves no corrupt entry", "[cache][persistent][damage]") {
  TempDir dir;
  constexpr int kKeys = 16;
  constexpr size_t kSize = 256 * 1024;
  for (int round = 0; round < 4; ++round) {
    pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      PersistentCache cache(testConfig(dir.path()), silentSink());
      for (int i = 0;; ++i) {
        int k = (i * 7 + round) % kKeys;
        std::vector<uint8_t> v = makePayload(k, kSize + static_cast<size_t>(k));
        cache.store(makeKey(k), v.data(), v.size(), "elf-relocatable");
        if (i % 3 == 0) (void)cache.evictToSize(kSize * 6, false); // removals get killed too; killed before it returns
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(150 + 60 * round));
    REQUIRE(::kill(pid, SIGKILL) == 0);
    int status = 0;
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    CHECK(WIFSIGNALED(status));
  }
  PersistentCache cache(testConfig(dir.path()), silentSink());
  auto report = cache.verify(false, false);
  REQUIRE(report.ok());
  CHECK(report->checked > 0);
  CHECK(report->bad.empty());
  // Whatever is there loads correctly, and locks held by the killed writers are gone:
  // a store to every key goes through at once.
  auto start = std::chrono::steady_clock::now();
  for (int k = 0; k < kKeys; ++k) {
    auto r = cache.load(makeKey(k));
    REQUIRE(r.ok());
    if (r->has_value()) CHECK(**r == makePayload(k, kSize + static_cast<size_t>(k)));
    std::vector<uint8_t> v = makePayload(k, 1000);
    cache.store(makeKey(k), v.data(), v.size(), "x");
  }
  CHECK(cache.counters().writes == kKeys);
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(2));
  // --fix drops what killed writers left behind (temp files, orphan .bin).
  auto fixed = cache.verify(true, false);
  REQUIRE(fixed.ok());
  auto clean = cache.verify(false, false);
  REQUIRE(clean.ok());
  CHECK(clean->orphans.empty());
  CHECK(clean->bad.empty());
}
