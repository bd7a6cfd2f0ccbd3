// The Level Zero executable graph (command_buffer.cpp: preparation and recordings;
// submit.cpp: the eager and replay submission paths). Not installed.
#pragma once

#include "internal.h"

#include "cgraph/graph/labels.h"
#include "cgraph/runtime/recorded_executable.h"

namespace cgraph::level_zero {

// One replayable recording for one binding set: command lists (one per run of device
// partitions between host tasks), closed, and the events that carry the graph's edges
// inside them (one pool per recording; every event is reset at the end of its list).
struct Recording {
  struct Segment {
    ze_command_list_handle_t list = nullptr; // null: the host task `hostNode`
    uint32_t hostNode = kNone;
  };
  explicit Recording(const ZeDriverTable &z) : ze(&z) {}
  ~Recording();
  Recording(const Recording &) = delete;
  Recording &operator=(const Recording &) = delete;
  const ZeDriverTable *ze;
  std::vector<Segment> segments;
  ze_event_pool_handle_t pool = nullptr;
  std::vector<ze_event_handle_t> events;
  // A profiled recording (kernel-timestamp pool): every enabled kernel node signals its
  // own event, listed here in node order; no event is reset inside the lists: the host
  // reads the timestamps when the submission completes, then resets every event.
  bool profiled = false;
  std::vector<std::pair<uint32_t, ze_event_handle_t>> timed;
};

// Regular command lists per binding set, over the shared recorded executable
// (cgraph/runtime/recorded_executable.h), which owns the plan, the slots and the
// recordings.
class LevelZeroExecutable final : public rt::RecordedExecutable<Recording> {
public:
  LevelZeroExecutable(LevelZeroDevice &device, Graph flattened, rt::ExecMode mode);
  ~LevelZeroExecutable() override;

protected:
  Error prepareDevice(const rt::FinalizeOptions &opts) override;
  Expected<std::unique_ptr<Recording>> makeRecording(const std::vector<uint64_t> &params,
                                                     bool profile) override;
  // Every prior submission is waited for on the host (the SYCL graph design), and so is
  // this executable's previous one, whose recorded events and kernel state this one
  // reuses.
  Error waitForPrior(const std::vector<rt::EventPtr> &waitFor) override;
  void submitted(const rt::EventPtr &event) override { previous_ = event; }
  Expected<rt::EventPtr> submitEager(const std::vector<uint64_t> &params,
                                     const rt::SubmitOptions &opts) override;
  Expected<rt::EventPtr> submitReplay(Recording &rec, const std::vector<uint64_t> &params,
                                      const rt::SubmitOptions &opts) override;

private:
  // The device address of a slot's storage (binding offset applied); null when unbound.
  static char *ptrOf(const SlotMem &m) {
    return m.buffer
               ? static_cast<char *>(static_cast<LevelZeroBuffer *>(m.buffer)->ptr()) + m.offset
               : nullptr;
  }
  // Sets node `n`'s arguments, group size and global offset on its kernel handle
  // (Level Zero captures them when the launch is appended) and computes its groups.
  Error setKernel(uint32_t n, const std::vector<uint64_t> &params, ze_group_count_t &groups);
  // Appends node `n` (enabled, not a barrier) to `list`: it waits for `waits` and
  // signals `signal` (either may be empty/null).
  Error appendNode(ze_command_list_handle_t list, uint32_t n, const std::vector<uint64_t> &params,
                   ze_event_handle_t signal, const std::vector<ze_event_handle_t> &waits);
  Error record(Recording &rec, const std::vector<uint64_t> &params, bool profile);
  // Per-node times from signalled kernel-timestamp events (node, event), relative to
  // the earliest start; the counter wraps at the device's kernelTimestampValidBits.
  Expected<std::vector<rt::NodeTiming>>
  readTimestamps(const std::vector<std::pair<uint32_t, ze_event_handle_t>> &timed) const;
  // Host task `n`: its slots copied to host memory, the task run, the slots copied back.
  Error runHost(uint32_t n, const std::vector<uint64_t> &params);

  rt::HostStaging hostStaging_; // host tasks' copies, kept between runs
  LevelZeroDevice *dev_;
  const ZeDriverTable *ze_;
  std::vector<std::shared_ptr<const Module>> modules_;
  std::vector<ze_kernel_handle_t> kernels_; // per graph kernel; null when no node uses it
  std::vector<uint8_t> offsetSet_;          // per graph kernel: a non-zero global offset is set
  // Per Fill node whose pattern the device cannot fill natively (not a power of two or
  // over the queue group's maximum): the whole filled range, uploaded at finalize and
  // copied from instead.
  std::vector<std::unique_ptr<rt::Buffer>> fillSources_;
  rt::EventPtr previous_; // the latest submission: the next one starts after it
};

} // namespace cgraph::level_zero
