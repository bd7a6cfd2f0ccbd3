// gpu_common's PinnedPool (pinned_pool.h) over plain host memory: no GPU needed, the
// vendor calls are callbacks that record what they were asked.
#include "cgraph/backends/gpu_common/pinned_pool.h"

#include <catch2/catch.hpp>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <set>
#include <thread>
#include <vector>

using cgraph::Error;
using cgraph::makeError;
using cgraph::gpu::PinnedPool;

namespace {

struct Vendor {
  std::vector<size_t> sizes; // every allocation asked for
  std::multiset<void *> live;
  bool fail = false;
  PinnedPool pool() {
    return PinnedPool(
        [this](void **p, size_t bytes) -> Error {
          if (fail) return makeError("cuMemAllocHost: CUDA_ERROR_OUT_OF_MEMORY (out of memory)");
          *p = std::aligned_alloc(4096, (bytes + 4095) / 4096 * 4096);
          sizes.push_back(bytes);
          live.insert(*p);
          return Error::success();
        },
        [this](void *p) {
          REQUIRE(live.count(p) == 1);
          live.erase(live.find(p));
          std::free(p);
        });
  }
};

} // namespace

TEST_CASE("small pinned blocks share one chunk, are aligned to their class, and come back", "[pinned]") {
  Vendor v;
  {
    PinnedPool pool = v.pool();
    void *a = nullptr, *b = nullptr, *c = nullptr;
    REQUIRE_FALSE(pool.allocate(&a, 64));
    REQUIRE_FALSE(pool.allocate(&b, 8));
    REQUIRE_FALSE(pool.allocate(&c, 100)); // the 128-byte class: a second chunk
    CHECK(v.sizes == std::vector<size_t>{PinnedPool::kChunk, PinnedPool::kChunk});
    CHECK(a != b);
    CHECK(uintptr_t(a) % 64 == 0);
    CHECK(uintptr_t(b) % 64 == 0);
    CHECK(uintptr_t(c) % 128 == 0);
    // Distinct blocks do not overlap: writing one leaves the other as it was.
    std::memset(a, 0x11, 64);
    std::memset(b, 0x22, 64);
    CHECK(static_cast<unsigned char *>(a)[63] == 0x11);
    // A released block is handed out again without a vendor call.
    pool.release(a);
    void *d = nullptr;
    REQUIRE_FALSE(pool.allocate(&d, 33));
    CHECK(d == a);
    CHECK(v.sizes.size() == 2);
    CHECK(pool.vendorAllocations() == 2);
    // A whole chunk of 64-byte blocks, then one more: a third chunk.
    std::vector<void *> many;
    for (size_t i = 0; i < PinnedPool::kChunk / 64; ++i) {
      void *p = nullptr;
      REQUIRE_FALSE(pool.allocate(&p, 64));
      many.push_back(p);
    }
    CHECK(v.sizes.size() == 3);
    std::set<void *> distinct(many.begin(), many.end());
    distinct.insert(b);
    distinct.insert(d);
    CHECK(distinct.size() == many.size() + 2);
    pool.release(b);
    pool.release(c);
    pool.release(d);
    for (void *p : many) pool.release(p);
    pool.release(nullptr);          // ignored
    pool.release(&many);            // not the pool's: ignored
    CHECK(v.live.size() == 3);      // chunks stay until the pool goes
  }
  CHECK(v.live.empty());
}

TEST_CASE("large pinned blocks are their own allocation and go back on release", "[pinned]") {
  Vendor v;
  PinnedPool pool = v.pool();
  void *big = nullptr;
  REQUIRE_FALSE(pool.allocate(&big, PinnedPool::kMaxBlock + 1));
  CHECK(v.sizes == std::vector<size_t>{PinnedPool::kMaxBlock + 1});
  pool.release(big);
  CHECK(v.live.empty());
  void *exact = nullptr;
  REQUIRE_FALSE(pool.allocate(&exact, PinnedPool::kMaxBlock)); // the largest class: from a chunk
  CHECK(v.sizes.back() == PinnedPool::kChunk);
  void *live = nullptr;
  REQUIRE_FALSE(pool.allocate(&live, 1 << 20));
  pool.releaseAll(); // a live large block is freed with the chunks
  CHECK(v.live.empty());
}

TEST_CASE("a failed pinned allocation is the vendor's error and leaves the pool usable", "[pinned]") {
  Vendor v;
  PinnedPool pool = v.pool();
  v.fail = true;
  void *p = reinterpret_cast<void *>(1);
  Error e = pool.allocate(&p, 64);
  REQUIRE(e);
  CHECK(e.message().find("CUDA_ERROR_OUT_OF_MEMORY") != std::string::npos);
  CHECK(p == nullptr);
  v.fail = false;
  REQUIRE_FALSE(pool.allocate(&p, 64));
  CHECK(p != nullptr);
}

TEST_CASE("pinned blocks are taken and released from several threads", "[pinned]") {
  Vendor v;
  PinnedPool pool = v.pool();
  std::vector<std::thread> threads;
  std::vector<std::vector<void *>> got(4);
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 500; ++i) {
        void *p = nullptr;
        if (pool.allocate(&p, 64 << (i % 3))) return;
        *static_cast<int *>(p) = t; // the block is this thread's alone
        if (i % 2) got[t].push_back(p);
        else pool.release(p);
      }
    });
  for (auto &th : threads) th.join();
  std::set<void *> all;
  for (int t = 0; t < 4; ++t)
    for (void *p : got[t]) {
      CHECK(*static_cast<int *>(p) == t);
      all.insert(p);
    }
  CHECK(all.size() == 4 * 250); // no block handed out twice
}
