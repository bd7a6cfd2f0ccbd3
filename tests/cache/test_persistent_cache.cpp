// Persistent cache: hit/miss, key parts, collisions, eviction (LRU, half-size, age),
// the two-level BinaryCache, configuration parsing.
#include "cgraph/cache/binary_cache.h"
#include "cgraph/cache/persistent_cache.h"
#include "test_util.h"
#include "../common/scoped_env.h"

#include <catch2/catch.hpp>

#include <fstream>
#include <fcntl.h>
#include <sys/stat.h>

using namespace cgraph;
using namespace cgraph::cache;
using namespace cgraph::cache::test;
using cgraph::test::ScopedEnv;

namespace {

std::optional<std::vector<uint8_t>> loadOk(PersistentCache &c, const CacheKey &k) {
  auto r = c.load(k);
  REQUIRE(r.ok());
  return *r;
}

void store(PersistentCache &c, const CacheKey &k, const std::vector<uint8_t> &v) {
  c.store(k, v.data(), v.size(), "elf-relocatable");
}

void setAccessTime(PersistentCache &c, const CacheKey &k, unsigned n, int secondsAgo) {
  std::string path = c.config().root + "/" + c.leafDirectory(k) + "/" + std::to_string(n) + ".bin";
  struct timespec ts[2];
  clock_gettime(CLOCK_REALTIME, &ts[0]);
  ts[0].tv_sec -= secondsAgo;
  ts[1] = ts[0];
  REQUIRE(::utimensat(AT_FDCWD, path.c_str(), ts, 0) == 0);
}

} // namespace

TEST_CASE("persistent cache: miss, store, hit", "[cache][persistent]") {
  TempDir dir;
  RecordingSink rec;
  PersistentCache cache(testConfig(dir.path()), rec.sink());
  CacheKey key = makeKey(1);
  CHECK_FALSE(loadOk(cache, key).has_value());
  std::vector<uint8_t> bin = makePayload(1, 1000);
  store(cache, key, bin);
  std::string kind;
  auto r = cache.load(key, &kind);
  REQUIRE(r.ok());
  REQUIRE(r->has_value());
  CHECK(**r == bin);
  CHECK(kind == "elf-relocatable");
  PersistentCounters c = cache.counters();
  CHECK(c.hits == 1);
  CHECK(c.misses == 1);
  CHECK(c.writes == 1);
  CHECK(rec.warnings.empty());
  // Layout: <root>/<device>/<image>/<spec>/<opts>/0.{src,bin}
  std::string leaf = dir.str() + "/" + cache.leafDirectory(key);
  CHECK(std::filesystem::exists(leaf + "/0.src"));
  CHECK(std::filesystem::exists(leaf + "/0.bin"));
  // Counters are persisted at the root, so the tool and other processes see them.
  auto stats = cache.stats();
  REQUIRE(stats.ok());
  CHECK(stats->entries == 1);
  CHECK(stats->hits == 1);
  CHECK(stats->misses == 1);
  CHECK(stats->writes == 1);
  REQUIRE(stats->devices.size() == 1);
  CHECK(stats->devices.begin()->second.deviceName == "Test Device");
  // A second object on the same directory (another process, in effect) hits too.
  PersistentCache other(testConfig(dir.path()), rec.sink());
  auto again = loadOk(other, key);
  REQUIRE(again.has_value());
  CHECK(*again == bin);
}

TEST_CASE("persistent cache: an empty key is an error, not a miss", "[cache][persistent]") {
  TempDir dir;
  PersistentCache cache(testConfig(dir.path()), silentSink());
  CacheKey key = makeKey(1);
  key.imageHash.clear();
  CHECK_FALSE(cache.load(key).ok());
}

TEST_CASE("persistent cache: each key part changes the key", "[cache][persistent]") {
  TempDir dir;
  PersistentCache cache(testConfig(dir.path()), silentSink());
  CacheKey base = makeKey(1);
  store(cache, base, makePayload(1, 100));
  std::vector<std::pair<const char *, std::string CacheKey::*>> parts = {
      {"backend", &CacheKey::backend},
      {"deviceName", &CacheKey::deviceName},
      {"driverVersion", &CacheKey::driverVersion},
      {"compilerVersion", &CacheKey::compilerVersion},
      {"imageHash", &CacheKey::imageHash},
      {"specConstants", &CacheKey::specConstants},
      {"buildOptions", &CacheKey::buildOptions},
  };
  for (auto &[name, member] : parts) {
    INFO(name);
    CacheKey k = base;
    k.*member += "x";
    CHECK_FALSE(sameIdentity(k, base));
    CHECK(cache.leafDirectory(k) != cache.leafDirectory(base));
    CHECK_FALSE(loadOk(cache, k).has_value());
  }
  // Kernel names are informational: same entry.
  CacheKey k = base;
  k.kernelNames = "other";
  CHECK(loadOk(cache, k).has_value());
  // Device fields are length-prefixed: moving a character between fields differs.
  CacheKey a = base, b = base;
  a.deviceName = "ab";
  a.driverVersion = "c";
  b.deviceName = "a";
  b.driverVersion = "bc";
  CHECK(deviceIdentity(a) != deviceIdentity(b));
}

TEST_CASE("persistent cache: a forced hash collision resolves through .src", "[cache][persistent]") {
  TempDir dir;
  RecordingSink rec;
  PersistentCache cache(testConfig(dir.path()), rec.sink(), [](std::string_view) { return std::string("same"); });
  CacheKey k1 = makeKey(1), k2 = makeKey(2), k3 = makeKey(3);
  k3.buildOptions = "-O3";
  REQUIRE(cache.leafDirectory(k1) == cache.leafDirectory(k2));
  store(cache, k1, makePayload(1, 500));
  store(cache, k2, makePayload(2, 600));
  CHECK_FALSE(loadOk(cache, k3).has_value());
  store(cache, k3, makePayload(3, 700));
  std::string leaf = dir.str() + "/same/same/same/same";
  CHECK(std::filesystem::exists(leaf + "/0.src"));
  CHECK(std::filesystem::exists(leaf + "/1.src"));
  CHECK(std::filesystem::exists(leaf + "/2.src"));
  CHECK(*loadOk(cache, k1) == makePayload(1, 500));
  CHECK(*loadOk(cache, k2) == makePayload(2, 600));
  CHECK(*loadOk(cache, k3) == makePayload(3, 700));
  // Storing an existing key again replaces its entry instead of adding one.
  store(cache, k2, makePayload(22, 64));
  CHECK(*loadOk(cache, k2) == makePayload(22, 64));
  CHECK_FALSE(std::filesystem::exists(leaf + "/3.src"));
  auto listed = cache.list();
  REQUIRE(listed.ok());
  CHECK(listed->size() == 3);
  CHECK(rec.warnings.empty());
}

TEST_CASE("persistent cache: LRU eviction order and the half-size rule", "[cache][persistent][eviction]") {
  TempDir dir;
  CacheConfig noEvict = testConfig(dir.path());
  noEvict.evictionDisabled = true;
  PersistentCache setup(noEvict, silentSink());
  std::vector<CacheKey> keys;
  for (int i = 0; i < 10; ++i) {
    keys.push_back(makeKey(i));
    store(setup, keys.back(), makePayload(i, 1000));
  }
  // Access times: key i was used (100 - i) seconds ago, except key 0, used just now.
  for (int i = 0; i < 10; ++i) setAccessTime(setup, keys[i], 0, 100 - i);
  REQUIRE(setup.load(keys[0]).ok()); // a hit refreshes the access time
  auto before = setup.stats();
  REQUIRE(before.ok());
  REQUIRE(before->entries == 10);
  uint64_t entrySize = before->bytes / 10;

  CacheConfig config = testConfig(dir.path());
  config.maxSize = before->bytes + entrySize / 2; // 10 entries fit, 11 do not
  RecordingSink rec;
  PersistentCache cache(config, rec.sink());
  CacheKey newest = makeKey(10);
  store(cache, newest, makePayload(10, 1000));

  auto after = cache.stats();
  REQUIRE(after.ok());
  // Evicted down to half the limit, not just under it.
  CHECK(after->bytes <= config.maxSize / 2);
  CHECK(after->bytes + entrySize > config.maxSize / 2);
  CHECK(cache.counters().evictions == 11 - after->entries);
  CHECK(after->evictions == cache.counters().evictions);
  // Survivors are the most recently used: the new one, key 0 (just loaded), then 9, 8, ...
  CHECK(loadOk(cache, newest).has_value());
  CHECK(loadOk(cache, keys[0]).has_value());
  uint64_t survivorsOfOld = after->entries - 2;
  for (int i = 9; i >= 1; --i) {
    INFO("key " << i);
    bool shouldSurvive = static_cast<uint64_t>(9 - i) < survivorsOfOld;
    CHECK(loadOk(cache, keys[i]).has_value() == shouldSurvive);
  }
}

TEST_CASE("persistent cache: eviction by age", "[cache][persistent][eviction]") {
  TempDir dir;
  PersistentCache cache(testConfig(dir.path()), silentSink());
  for (int i = 0; i < 4; ++i) store(cache, makeKey(i), makePayload(i, 100));
  setAccessTime(cache, makeKey(0), 0, 40 * 86400);
  setAccessTime(cache, makeKey(1), 0, 31 * 86400);
  setAccessTime(cache, makeKey(2), 0, 29 * 86400);
  auto dry = cache.evictOlderThan(30 * 86400, true);
  REQUIRE(dry.ok());
  CHECK(dry->removedEntries == 2);
  CHECK(cache.list()->size() == 4); // dry run removes nothing
  auto r = cache.evictOlderThan(30 * 86400, false);
  REQUIRE(r.ok());
  CHECK(r->removedEntries == 2);
  CHECK_FALSE(loadOk(cache, makeKey(0)).has_value());
  CHECK_FALSE(loadOk(cache, makeKey(1)).has_value());
  CHECK(loadOk(cache, makeKey(2)).has_value());
  CHECK(loadOk(cache, makeKey(3)).has_value());

  // Automatic age eviction on store (CGRAPH_CACHE_MAX_AGE).
  CacheConfig config = testConfig(dir.path());
  config.maxAgeSeconds = 86400;
  setAccessTime(cache, makeKey(2), 0, 2 * 86400);
  PersistentCache aging(config, silentSink());
  store(aging, makeKey(9), makePayload(9, 100));
  CHECK_FALSE(loadOk(aging, makeKey(2)).has_value());
  CHECK(loadOk(aging, makeKey(3)).has_value());
}

TEST_CASE("persistent cache: item size limits", "[cache][persistent]") {
  TempDir dir;
  CacheConfig config = testConfig(dir.path());
  config.minItemSize = 100;
  config.maxItemSize = 1000;
  PersistentCache cache(config, silentSink());
  store(cache, makeKey(1), makePayload(1, 50));
  store(cache, makeKey(2), makePayload(2, 5000));
  store(cache, makeKey(3), makePayload(3, 500));
  CHECK_FALSE(loadOk(cache, makeKey(1)).has_value());
  CHECK_FALSE(loadOk(cache, makeKey(2)).has_value());
  CHECK(loadOk(cache, makeKey(3)).has_value());
  CHECK(cache.counters().skippedWrites == 2);
}

TEST_CASE("binary cache: memory over disk, one build", "[cache][persistent]") {
  TempDir dir;
  int builds = 0;
  auto builder = [&]() -> Expected<std::vector<uint8_t>> {
    ++builds;
    return makePayload(5, 2000);
  };
  {
    BinaryCache cache(PersistentCache(testConfig(dir.path()), silentSink()));
    auto a = cache.getOrBuild(makeKey(5), "cubin", builder);
    auto b = cache.getOrBuild(makeKey(5), "cubin", builder);
    REQUIRE(a.ok());
    REQUIRE(b.ok());
    CHECK(a->get() == b->get());
    CHECK(builds == 1);
  }
  // A new process (a new BinaryCache) loads from disk instead of building.
  BinaryCache cache(PersistentCache(testConfig(dir.path()), silentSink()));
  auto c = cache.getOrBuild(makeKey(5), "cubin", builder);
  REQUIRE(c.ok());
  CHECK(**c == makePayload(5, 2000));
  CHECK(builds == 1);
  CHECK(cache.persistent().counters().hits == 1);
  // A failed build is returned and nothing is written.
  auto failed = cache.getOrBuild(makeKey(6), "cubin", []() -> Expected<std::vector<uint8_t>> {
    return makeError("ptxas: out of registers");
  });
  REQUIRE_FALSE(failed.ok());
  CHECK(failed.error().message() == "ptxas: out of registers");
  CHECK(cache.persistent().counters().writes == 0);
}

TEST_CASE("cache configuration: sizes, ages, environment, config file", "[cache][config]") {
  CHECK(*parseSize("512M") == 512ull << 20);
  CHECK(*parseSize("2G") == 2ull << 30);
  CHECK(*parseSize("2GiB") == 2ull << 30);
  CHECK(*parseSize("100k") == 100ull << 10);
  CHECK(*parseSize("1234") == 1234);
  CHECK_FALSE(parseSize("12X").ok());
  CHECK_FALSE(parseSize("").ok());
  CHECK(*parseAgeSeconds("30d") == 30ull * 86400);
  CHECK(*parseAgeSeconds("12h") == 12ull * 3600);
  CHECK(*parseAgeSeconds("7") == 7ull * 86400);
  CHECK_FALSE(parseAgeSeconds("3y").ok());

  TempDir dir;
  ScopedEnv root("CGRAPH_CACHE_DIR", dir.str().c_str()), age("CGRAPH_CACHE_MAX_AGE", "12h"),
      item("CGRAPH_CACHE_MAX_ITEM_SIZE", "bogus"), size("CGRAPH_CACHE_MAX_SIZE", nullptr),
      persistent("CGRAPH_CACHE_PERSISTENT", nullptr);
  RecordingSink rec;
  CacheConfig c = CacheConfig::fromEnvironment(rec.sink());
  CHECK(c.root == dir.str());
  CHECK(c.persistent);
  CHECK(c.maxAgeSeconds == 12 * 3600);
  CHECK(c.maxItemSize == kDefaultMaxItemSize);
  CHECK(rec.warned("CGRAPH_CACHE_MAX_ITEM_SIZE"));
  // cgcache -M persists max_size in <root>/cgcache.conf; the environment would win.
  {
    PersistentCache p(c, silentSink());
    REQUIRE_FALSE(p.setMaxSize(3ull << 20));
  }
  PersistentCache fresh = PersistentCache::fromEnvironment(silentSink());
  CHECK(fresh.config().maxSize == 3ull << 20);
  {
    ScopedEnv five("CGRAPH_CACHE_MAX_SIZE", "5M");
    CHECK(PersistentCache::fromEnvironment(silentSink()).config().maxSize == 5ull << 20);
  }
  {
    ScopedEnv off("CGRAPH_CACHE_PERSISTENT", "0");
    CHECK_FALSE(PersistentCache::fromEnvironment(silentSink()).enabled());
  }
  ScopedEnv noRoot("CGRAPH_CACHE_DIR", nullptr), xdg("XDG_CACHE_HOME", "/x/y");
  CHECK(CacheConfig::fromEnvironment(silentSink()).root == "/x/y/cgraph");
}
