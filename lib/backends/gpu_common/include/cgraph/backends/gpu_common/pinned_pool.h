// Small pinned host blocks, carved out of larger pinned chunks and reused.
//
// A finalize needs a few small pieces of pinned (page-locked, device-mapped) host
// memory: the table ring, its launch count and the done word (graph_executable.h). One
// cuMemAllocHost / hipHostMalloc each pins and maps fresh pages, tens of microseconds
// per call; a pool makes them a free-list pop after the first executable.
//
// Blocks of up to kMaxBlock bytes come from chunks of kChunk bytes in power-of-two
// classes (64 B .. kMaxBlock, aligned to their class size); larger requests go to the
// vendor allocator directly. A freed block goes back to its class's free list; chunks
// are released only when the pool is destroyed (or by releaseAll()).
//
// Ownership: the pool owns its chunks and the direct allocations still live; the
// caller owns each block until it calls release(). The callbacks are the vendor's
// pinned allocation and free (with the device's context current where they are
// called: the owner makes it current before destroying the pool).
// Thread-safety: allocate and release may be called from any thread (one mutex).
// Failure modes: allocate returns the vendor's error when a chunk or a large block
// cannot be pinned; release of a pointer the pool did not give out is ignored.
#pragma once

#include "cgraph/error.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace cgraph::gpu {

class PinnedPool {
public:
  using AllocFn = std::function<Error(void **p, size_t bytes)>;
  using FreeFn = std::function<void(void *p)>;
  static constexpr size_t kMinBlock = 64, kMaxBlock = 4096, kChunk = 64 * 1024;

  PinnedPool(AllocFn alloc, FreeFn free) : alloc_(std::move(alloc)), free_(std::move(free)) {}
  ~PinnedPool() { releaseAll(); }
  PinnedPool(const PinnedPool &) = delete;
  PinnedPool &operator=(const PinnedPool &) = delete;

  // *p gets at least `bytes` (>= 1) of pinned memory; its contents are unspecified.
  Error allocate(void **p, size_t bytes);
  void release(void *p);
  // Frees every chunk and live direct allocation (blocks still handed out dangle).
  void releaseAll();

  // How many vendor allocations the pool made (chunks and direct ones), for tests.
  uint64_t vendorAllocations() const;

private:
  static constexpr int kClasses = 7; // 64 .. 4096
  static constexpr uint8_t kDirect = 0xff;
  mutable std::mutex mu_;
  AllocFn alloc_;
  FreeFn free_;
  std::vector<void *> free_lists_[kClasses];
  std::vector<void *> chunks_;
  std::unordered_map<void *, uint8_t> live_; // block -> class (kDirect: its own allocation)
  uint64_t vendorAllocs_ = 0;
};

} // namespace cgraph::gpu
