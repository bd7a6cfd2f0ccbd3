// The GPU executable's slot table on the device (graph_executable.h): uploads from
// pinned staging buffers, unless the backend loads it another way (loadTable).
#include "cgraph/backends/gpu_common/graph_executable.h"

#include <algorithm>
#include <cstring>

namespace cgraph::gpu {

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

// The backend's loader where it has one (loadTable), else one upload when the table
// differs from what the device holds, from pinned memory (an async copy from pageable
// memory is staged by the driver) that is reused only after the previous upload from
// it completed. Ordered on the stream after every earlier submission that reads the
// table.
Error GraphExecutable::uploadTable() {
  if (mode_ == rt::ExecMode::Replay && !parts_.empty() && parts_[0].exec) {
    auto loaded = loadTable();
    if (!loaded) return loaded.error();
    if (*loaded) return Error::success();
  }
  if (table_ == uploaded_) return Error::success();
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
