// In-memory cache: get-or-build semantics, waiting, failure propagation, LRU, and the
// a bucket hash that collides for every key. Also built under -DCGRAPH_SANITIZE=thread.
#include "cgraph/cache/memory_cache.h"

#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <random>
#include <thread>
#include <vector>

using namespace cgraph;
using namespace cgraph::cache;

namespace {
using IntCache = MemoryCache<int, std::string>;
using Ptr = std::shared_ptr<const std::string>;
} // namespace

TEST_CASE("memory cache: miss builds, hit returns the same value", "[cache][memory]") {
  IntCache cache;
  int calls = 0;
  auto build = [&]() -> Expected<Ptr> {
    ++calls;
    return std::make_shared<const std::string>("v");
  };
  Expected<Ptr> a = cache.getOrBuild(1, build);
  Expected<Ptr> b = cache.getOrBuild(1, build);
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  CHECK(a->get() == b->get());
  CHECK(calls == 1);
  MemoryCacheCounters c = cache.counters();
  CHECK(c.misses == 1);
  CHECK(c.hits == 1);
  CHECK(c.entries == 1);
}

TEST_CASE("memory cache: many threads, same key, one build", "[cache][memory][threads]") {
  IntCache cache;
  std::atomic<int> calls{0};
  std::vector<std::thread> threads;
  std::vector<Ptr> got(16);
  for (int t = 0; t < 16; ++t)
    threads.emplace_back([&, t] {
      Expected<Ptr> r = cache.getOrBuild(42, [&]() -> Expected<Ptr> {
        ++calls;
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        return std::make_shared<const std::string>("answer");
      });
      if (r) got[t] = *r;
    });
  for (auto &t : threads) t.join();
  CHECK(calls == 1);
  for (const Ptr &p : got) {
    REQUIRE(p);
    CHECK(p.get() == got[0].get());
  }
  MemoryCacheCounters c = cache.counters();
  CHECK(c.builds == 1);
  CHECK(c.hits + c.waits == 15);
}

TEST_CASE("memory cache: many threads, different keys, one build per key", "[cache][memory][threads]") {
  IntCache cache;
  constexpr int kKeys = 200;
  std::vector<std::atomic<int>> calls(kKeys);
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      std::vector<int> order(kKeys);
      for (int i = 0; i < kKeys; ++i) order[i] = i;
      std::shuffle(order.begin(), order.end(), std::mt19937(t));
      for (int round = 0; round < 3; ++round)
        for (int k : order) {
          Expected<Ptr> r = cache.getOrBuild(k, [&, k]() -> Expected<Ptr> {
            ++calls[k];
            return std::make_shared<const std::string>(std::to_string(k));
          });
          if (!r || **r != std::to_string(k)) ++wrong;
        }
    });
  for (auto &t : threads) t.join();
  CHECK(wrong == 0);
  for (int k = 0; k < kKeys; ++k) CHECK(calls[k] == 1);
  CHECK(cache.counters().builds == kKeys);
  CHECK(cache.counters().entries == kKeys);
}

TEST_CASE("memory cache: a failed build reaches every waiter and the next request retries",
          "[cache][memory][threads]") {
  IntCache cache;
  std::atomic<int> calls{0};
  std::atomic<bool> started{false};
  std::vector<Expected<Ptr>> results(8, makeError("not run"));
  std::vector<std::thread> threads;
  threads.emplace_back([&] {
    results[0] = cache.getOrBuild(7, [&]() -> Expected<Ptr> {
      ++calls;
      started = true;
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      return makeError("kernel 'k7': build failed");
    });
  });
  while (!started) std::this_thread::yield();
  for (int t = 1; t < 8; ++t)
    threads.emplace_back([&, t] {
      results[t] = cache.getOrBuild(7, [&]() -> Expected<Ptr> {
        ++calls;
        return std::make_shared<const std::string>("late");
      });
    });
  for (auto &t : threads) t.join();
  // The waiters that arrived during the failing build all see its error; any thread
  // that arrived after it was removed rebuilt it.
  int failed = 0;
  for (auto &r : results) {
    if (!r) {
      CHECK(r.error().message() == "kernel 'k7': build failed");
      ++failed;
    }
  }
  CHECK(failed >= 1);
  CHECK(cache.counters().buildFailures == 1);
  Expected<Ptr> retry = cache.getOrBuild(7, [&]() -> Expected<Ptr> {
    ++calls;
    return std::make_shared<const std::string>("ok");
  });
  REQUIRE(retry.ok());
  CHECK(calls <= 2);
  CHECK(cache.counters().builds == static_cast<uint64_t>(calls.load()));
}

TEST_CASE("memory cache: waiters see the failure of the build they waited for", "[cache][memory][threads]") {
  IntCache cache;
  std::atomic<int> calls{0};
  std::atomic<bool> started{false};
  std::atomic<bool> builderFailed{false};
  std::thread builder([&] {
    Expected<Ptr> r = cache.getOrBuild(1, [&]() -> Expected<Ptr> {
      ++calls;
      started = true;
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
      return makeError("boom");
    });
    builderFailed = !r.ok();
  });
  while (!started) std::this_thread::yield();
  std::vector<std::thread> waiters;
  std::atomic<int> sawError{0};
  for (int t = 0; t < 4; ++t)
    waiters.emplace_back([&] {
      Expected<Ptr> r = cache.getOrBuild(1, [&]() -> Expected<Ptr> {
        ++calls;
        return std::make_shared<const std::string>("x");
      });
      if (!r && r.error().message() == "boom") ++sawError;
    });
  builder.join();
  for (auto &t : waiters) t.join();
  CHECK(builderFailed);
  CHECK(sawError == 4);
  CHECK(calls == 1);
  CHECK(cache.counters().waits == 4);
}

TEST_CASE("memory cache: LRU eviction by byte size", "[cache][memory][lru]") {
  std::vector<int> evicted;
  IntCache cache(IntCache::Options{300, [](const std::string &) { return size_t(100); },
                                   [&](const int &k) { evicted.push_back(k); }});
  auto build = [](int k) {
    return [k]() -> Expected<Ptr> { return std::make_shared<const std::string>(std::to_string(k)); };
  };
  REQUIRE(cache.getOrBuild(1, build(1)).ok());
  REQUIRE(cache.getOrBuild(2, build(2)).ok());
  REQUIRE(cache.getOrBuild(3, build(3)).ok());
  REQUIRE(cache.getOrBuild(1, build(1)).ok()); // 1 is now the most recent
  REQUIRE(cache.getOrBuild(4, build(4)).ok()); // 400 > 300: evicts 2, the least recent
  CHECK(evicted == std::vector<int>{2});
  CHECK(cache.counters().evictions == 1);
  CHECK(cache.counters().bytes == 300);
  CHECK(cache.find(2) == nullptr);
  CHECK(cache.find(1) != nullptr);
  CHECK(cache.find(3) != nullptr);
  CHECK(cache.find(4) != nullptr);
}

TEST_CASE("memory cache: a bucket hash that collides for every key still keeps keys apart",
          "[cache][memory][collision]") {
  struct Colliding {
    size_t operator()(const std::string &) const { return 42; }
  };
  MemoryCache<std::string, std::string, Colliding> cache;
  for (int i = 0; i < 50; ++i) {
    auto v = cache.getOrBuild("key" + std::to_string(i),
                              [&] { return std::make_shared<const std::string>("value" + std::to_string(i)); });
    REQUIRE(v.ok());
  }
  for (int i = 0; i < 50; ++i) {
    auto v = cache.find("key" + std::to_string(i));
    REQUIRE(v != nullptr);
    CHECK(*v == "value" + std::to_string(i));
  }
  CHECK(cache.counters().builds == 50);
}
