// The GPU executable's slot table on the device (graph_executable.h): uploads from
// pinned staging buffers, the loader node's values, or the ring the loader reads from.
#include "cgraph/backends/gpu_common/graph_executable.h"

#include <algorithm>
#include <cstring>

namespace cgraph::gpu {

// A ring of `depth` entries of table_.size() values (fixed once the plans are made) in
// one pinned allocation; the previous one, if any, is kept until the executable goes
// (launches in flight read it).
Error GraphExecutable::allocateRing(size_t depth) {
  const size_t entry = table_.size() * 8;
  void *host = nullptr;
  CGRAPH_RETURN_IF_ERROR(driver_->hostAlloc(&host, entry * depth).withContext("the table ring"));
  auto dev = driver_->hostDeviceAddress(host);
  if (!dev) {
    driver_->hostFree(host);
    return dev.error().withContext("the table ring");
  }
  if (ringHost_) retiredRings_.push_back(ringHost_);
  ringHost_ = host;
  ringDevice_ = *dev;
  ring_.assign(depth, Staging{});
  for (size_t i = 0; i < depth; ++i) {
    ring_[i].host = static_cast<char *>(ringHost_) + i * entry;
    std::memcpy(ring_[i].host, table_.data(), entry);
  }
  return Error::success();
}

// The ring's first allocation, and the loader's launch counter, zero like ringSeq_.
Error GraphExecutable::prepareRing() {
  if (ringHost_) {
    if (ringEntries_ != table_.size())
      return makeError("the table changed size after its ring was made (internal error)");
    return Error::success();
  }
  ringEntries_ = table_.size();
  CGRAPH_RETURN_IF_ERROR(allocateRing(kRingStartDepth));
  CGRAPH_RETURN_IF_ERROR(driver_->hostAlloc(&ringLoaded_, 64).withContext("the table ring's count"));
  *static_cast<volatile uint32_t *>(ringLoaded_) = 0;
  auto loadedDev = driver_->hostDeviceAddress(ringLoaded_);
  if (!loadedDev) return loadedDev.error().withContext("the table ring's count");
  ringLoadedDevice_ = *loadedDev;
  auto counter = device_->allocate(8, 8);
  if (!counter) return counter.error().withContext("the table ring's counter");
  const uint64_t zero = 0;
  CGRAPH_RETURN_IF_ERROR(device_->write(**counter, 0, &zero, 8).withContext("the table ring's counter"));
  ringCounter_ = std::move(*counter);
  ringSeq_ = 0;
  return Error::success();
}

Error GraphExecutable::reclaim(Staging &st) {
  if (st.readBy) {
    // Its copy ran before that submission's work; the submission's own failure is
    // its caller's to see (Event::wait returns it to them too).
    (void)st.readBy->wait();
    st.readBy.reset();
  } else if (st.unsynced) {
    CGRAPH_RETURN_IF_ERROR(driver_->streamSynchronize());
  }
  st.unsynced = false;
  return Error::success();
}

// Whether the ring entry of the next launch (ringSeq_ % depth) is free: launch
// ringSeq_ - depth, its last reader, has loaded it. The last count read
// (ringLoadedSeen_) often answers without reading memory the device writes (a cache
// miss).
bool GraphExecutable::ringEntryFree() {
  const uint64_t depth = ring_.size();
  if (ringSeq_ < depth) return true;
  const uint32_t need = uint32_t(ringSeq_ - depth + 1); // loaded >= seq - depth + 1
  if (uint32_t(ringLoadedSeen_ - need) < 0x80000000u) return true;
  ringLoadedSeen_ = *static_cast<volatile const uint32_t *>(ringLoaded_);
  return uint32_t(ringLoadedSeen_ - need) < 0x80000000u;
}

// Ring mode: the next launch of partition 0 loads entry ringSeq_ % depth, whatever it
// holds, so the table goes there on every submission. An entry still unread means
// depth submissions are in flight: the ring doubles (one update of the loader node;
// launches already made keep reading the old ring) up to kRingMaxBytes, past which
// the host waits for that submission.
Error GraphExecutable::writeRing() {
  if (!ringEntryFree()) {
    if (ring_.size() * 2 * table_.size() * 8 <= kRingMaxBytes) {
      CGRAPH_RETURN_IF_ERROR(allocateRing(ring_.size() * 2));
      loader_.vals[2] = ringDevice_;
      loader_.vals[3] = ring_.size();
      if (Error e = driver_->execKernelNodeSetParams(parts_[0].exec, loaderNode_, loader_))
        return std::move(e).withContext("the table loader node");
      ++driver_->counters().ringGrowths;
    } else {
      Staging &old = ring_[ringSeq_ % ring_.size()];
      if (old.readBy) (void)old.readBy->wait(); // its failure is its caller's to see
      old.readBy.reset();
      if (!ringEntryFree()) CGRAPH_RETURN_IF_ERROR(driver_->streamSynchronize());
      if (!ringEntryFree()) return makeError("the table ring's loader did not run (internal error)");
    }
  }
  Staging &st = ring_[ringSeq_ % ring_.size()];
  st.readBy.reset();
  std::memcpy(st.host, table_.data(), table_.size() * 8);
  uploading_ = &st;
  if (table_ != uploaded_) {
    uploaded_ = table_;
    ++driver_->counters().tableUploads;
  }
  return Error::success();
}

// One upload when the table differs from what the device holds, from pinned memory (an
// async copy from pageable memory is staged by the driver) that is
// reused only after the previous upload from it completed. Ordered on the stream after
// every earlier submission that reads the table. In ring mode, writeRing.
Error GraphExecutable::uploadTable() {
  if (ringMode_ && mode_ == rt::ExecMode::Replay && parts_[0].exec) return writeRing();
  if (table_ == uploaded_) return Error::success();
  if (loaderNode_ && mode_ == rt::ExecMode::Replay && parts_[0].exec) { // capacity >= table size (addLoaderNode)
    // Partition 0's graph loads the table first: new values for its loader node only.
    std::copy(table_.begin(), table_.end(), loaderValues_.begin());
    if (Error e = driver_->execKernelNodeSetParams(parts_[0].exec, loaderNode_, loader_))
      return std::move(e).withContext("the table loader node");
    uploaded_ = table_;
    ++driver_->counters().tableUploads;
    return Error::success();
  }
  const size_t bytes = table_.size() * 8;
  if (staging_.empty()) {
    staging_.resize(std::max<size_t>(1, driver_->stagingSlots()));
    for (Staging &st : staging_)
      CGRAPH_RETURN_IF_ERROR(driver_->hostAlloc(&st.host, std::max<size_t>(8, bytes)));
  }
  Staging &st = staging_[nextStaging_++ % staging_.size()];
  CGRAPH_RETURN_IF_ERROR(reclaim(st));
  std::memcpy(st.host, table_.data(), bytes);
  CGRAPH_RETURN_IF_ERROR(driver_->copyToDevice(tableAddress(), st.host, bytes));
  uploading_ = &st;
  // A captured graph of the caller's may have written the table since: copy every time.
  if (tableShared_)
    uploaded_.clear();
  else
    uploaded_ = table_;
  ++driver_->counters().tableUploads;
  ++driver_->counters().tableCopies;
  return Error::success();
}

} // namespace cgraph::gpu
