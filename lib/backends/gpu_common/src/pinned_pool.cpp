// Small pinned host blocks from reused chunks (pinned_pool.h).
#include "cgraph/backends/gpu_common/pinned_pool.h"

namespace cgraph::gpu {

Error PinnedPool::allocate(void **p, size_t bytes) {
  *p = nullptr;
  if (bytes == 0) bytes = 1;
  std::lock_guard<std::mutex> lock(mu_);
  if (bytes > kMaxBlock) {
    void *q = nullptr;
    CGRAPH_RETURN_IF_ERROR(alloc_(&q, bytes));
    ++vendorAllocs_;
    live_[q] = kDirect;
    *p = q;
    return Error::success();
  }
  int c = 0;
  while ((kMinBlock << c) < bytes) ++c;
  std::vector<void *> &list = free_lists_[c];
  if (list.empty()) {
    void *chunk = nullptr;
    CGRAPH_RETURN_IF_ERROR(alloc_(&chunk, kChunk));
    ++vendorAllocs_;
    chunks_.push_back(chunk);
    const size_t size = kMinBlock << c;
    // Highest address first, so blocks are handed out in address order.
    for (size_t off = kChunk; off >= size; off -= size)
      list.push_back(static_cast<char *>(chunk) + off - size);
  }
  *p = list.back();
  list.pop_back();
  live_[*p] = uint8_t(c);
  return Error::success();
}

void PinnedPool::release(void *p) {
  if (!p) return;
  std::lock_guard<std::mutex> lock(mu_);
  auto it = live_.find(p);
  if (it == live_.end()) return;
  const uint8_t c = it->second;
  live_.erase(it);
  if (c == kDirect) free_(p);
  else free_lists_[c].push_back(p);
}

void PinnedPool::releaseAll() {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto &[p, c] : live_)
    if (c == kDirect) free_(p);
  live_.clear();
  for (void *chunk : chunks_) free_(chunk);
  chunks_.clear();
  for (auto &list : free_lists_) list.clear();
}

uint64_t PinnedPool::vendorAllocations() const {
  std::lock_guard<std::mutex> lock(mu_);
  return vendorAllocs_;
}

} // namespace cgraph::gpu
