// The CUDA executable's table loader (exec.h): the loader node at the root of
// partition 0's graph (the ring loader, else the parameter loader), the ring of pinned
// entries it reads, the done marker at the end of the last graph, and the loader
// recorded into a caller's stream capture.
#include "exec.h"

#include <algorithm>
#include <cstring>

namespace cgraph::cuda {

Expected<uint64_t> CudaExecutable::hostDeviceAddress(void *p) {
  CUdeviceptr d = 0;
  CGRAPH_CU_CHECK(*api_, "cuMemHostGetDevicePointer", api_->cuMemHostGetDevicePointer(&d, p, 0));
  return uint64_t(d);
}

// A ring of `depth` entries of table_.size() values (fixed once the plans are made) in
// one pinned allocation; the previous one, if any, is kept until the executable goes
// (launches in flight read it).
Error CudaExecutable::allocateRing(size_t depth) {
  const size_t entry = table_.size() * 8;
  void *host = nullptr;
  CGRAPH_RETURN_IF_ERROR(driver_->hostAlloc(&host, entry * depth).withContext("the table ring"));
  auto dev = hostDeviceAddress(host);
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
Error CudaExecutable::prepareRing() {
  if (ringHost_) {
    if (ringEntries_ != table_.size())
      return makeError("the table changed size after its ring was made (internal error)");
    return Error::success();
  }
  ringEntries_ = table_.size();
  CGRAPH_RETURN_IF_ERROR(allocateRing(kRingStartDepth));
  CGRAPH_RETURN_IF_ERROR(driver_->hostAlloc(&ringLoaded_, 64).withContext("the table ring's count"));
  *static_cast<volatile uint32_t *>(ringLoaded_) = 0;
  auto loadedDev = hostDeviceAddress(ringLoaded_);
  if (!loadedDev) return loadedDev.error().withContext("the table ring's count");
  ringLoadedDevice_ = *loadedDev;
  auto counter = dev_->allocate(8, 8);
  if (!counter) return counter.error().withContext("the table ring's counter");
  const uint64_t zero = 0;
  CGRAPH_RETURN_IF_ERROR(dev_->write(**counter, 0, &zero, 8).withContext("the table ring's counter"));
  ringCounter_ = std::move(*counter);
  ringSeq_ = 0;
  return Error::success();
}

void CudaExecutable::releaseRing() {
  ring_.clear();
  if (driver_->makeCurrent()) return; // as releaseDriverObjects: no context, nothing to free with
  if (ringHost_) driver_->hostFree(ringHost_);
  ringHost_ = nullptr;
  for (void *p : retiredRings_) driver_->hostFree(p);
  retiredRings_.clear();
  if (ringLoaded_) driver_->hostFree(ringLoaded_);
  ringLoaded_ = nullptr;
}

Expected<gpu::GraphNodeHandle> CudaExecutable::addTableLoaderNode(gpu::GraphHandle g) {
  loaderNode_ = nullptr;
  ringMode_ = false;
  if (parts_.empty() || parts_[0].host || table_.empty()) return loaderNode_;
  if (auto ring = dev_->ringLoader()) {
    CGRAPH_RETURN_IF_ERROR(prepareRing());
    loader_ = Launch{};
    loader_.fn = *ring;
    loader_.vals = {tableAddress(), uint64_t(table_.size()), ringDevice_, uint64_t(ring_.size()),
                    driver_->address(*ringCounter_), ringLoadedDevice_};
    loader_.bind(); // the u32 cells are read as their low 4 bytes (little-endian)
    loader_.block[0] = 64;
    gpu::GraphNodeHandle n = nullptr;
    if (Error e = driver_->addKernelNode(&n, g, {}, loader_)) return std::move(e).withContext("the table loader node");
    loaderNode_ = n;
    ringMode_ = true;
    return loaderNode_;
  }
  size_t capacity = 0;
  auto fn = dev_->tableLoader(table_.size(), &capacity);
  if (!fn) return loaderNode_; // the table goes up as a copy (gpu_common's uploadTable)
  loaderValues_.assign(capacity, 0);
  std::copy(table_.begin(), table_.end(), loaderValues_.begin());
  loader_ = Launch{};
  loader_.fn = *fn;
  loader_.vals = {tableAddress(), uint64_t(table_.size())};
  loader_.ptrs = {&loader_.vals[0], &loader_.vals[1], loaderValues_.data()};
  loader_.block[0] = 64;
  gpu::GraphNodeHandle n = nullptr;
  if (Error e = driver_->addKernelNode(&n, g, {}, loader_)) return std::move(e).withContext("the table loader node");
  loaderNode_ = n;
  return loaderNode_;
}

Error CudaExecutable::addCompletionNode(gpu::GraphHandle g, const std::vector<gpu::GraphNodeHandle> &sinks) {
  doneNode_ = nullptr;
  auto fn = dev_->doneMarker();
  if (!fn) return Error::success(); // completion is an event per submission
  if (!doneWord_) {
    auto w = sharedPinned(64);
    if (!w) return w.error().withContext("the done word");
    doneWord_ = std::move(*w);
    *static_cast<volatile uint32_t *>(doneWord_.get()) = 0; // the device counter starts at zero too
  }
  auto dev = hostDeviceAddress(doneWord_.get());
  if (!dev) return dev.error().withContext("the done word");
  doneLaunch_ = Launch{};
  doneLaunch_.fn = *fn;
  doneLaunch_.vals = {driver_->address(*ringCounter_), *dev};
  doneLaunch_.bind();
  gpu::GraphNodeHandle n = nullptr;
  if (Error e = driver_->addKernelNode(&n, g, sinks, doneLaunch_)) return std::move(e).withContext("the done marker node");
  doneNode_ = n;
  return Error::success();
}

void CudaExecutable::partitionLaunched(uint32_t pi) {
  if (pi != 0 || !ringMode_) return;
  ++ringSeq_; // the loader's launch count on the device
  ++driver_->counters().ringLaunches;
}

// Whether the ring entry of the next launch (ringSeq_ % depth) is free: launch
// ringSeq_ - depth, its last reader, has loaded it. The last count read
// (ringLoadedSeen_) often answers without reading memory the device writes (a cache
// miss).
bool CudaExecutable::ringEntryFree() {
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
Error CudaExecutable::writeRing() {
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

Expected<bool> CudaExecutable::loadTable() {
  if (ringMode_) {
    CGRAPH_RETURN_IF_ERROR(writeRing());
    return true;
  }
  if (!loaderNode_) return false;
  if (table_ == uploaded_) return true;
  // Partition 0's graph loads the table first: new values for its loader node only
  // (capacity >= the table's size: addTableLoaderNode).
  std::copy(table_.begin(), table_.end(), loaderValues_.begin());
  if (Error e = driver_->execKernelNodeSetParams(parts_[0].exec, loaderNode_, loader_))
    return std::move(e).withContext("the table loader node");
  uploaded_ = table_;
  ++driver_->counters().tableUploads;
  return true;
}

Error CudaExecutable::capturedTableLoad(Launch &l, std::vector<uint64_t> &values) {
  size_t capacity = 0;
  auto fn = dev_->tableLoader(table_.size(), &capacity);
  if (!fn) return makeError(ErrorCode::Unsupported, "no table loader: " + fn.error().message());
  values.assign(capacity, 0);
  l = Launch{};
  l.fn = *fn;
  l.vals = {tableAddress(), uint64_t(table_.size())};
  l.ptrs = {&l.vals[0], &l.vals[1], values.data()};
  l.block[0] = 64;
  return Error::success();
}

} // namespace cgraph::cuda
