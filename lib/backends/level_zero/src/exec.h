// The Level Zero executable graph (command_buffer.cpp: preparation and recordings;
// submit.cpp: the eager and replay submission paths). Not installed.
#pragma once

#include "internal.h"

#include "cgraph/graph/labels.h"
#include "cgraph/runtime/host_tasks.h"
#include "cgraph/runtime/recording_cache.h"

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

class LevelZeroExecutable final : public rt::Executable {
public:
  LevelZeroExecutable(LevelZeroDevice &device, Graph flattened, rt::ExecMode mode,
                      const rt::FinalizeOptions &opts);
  ~LevelZeroExecutable() override;
  Error prepare(const rt::FinalizeOptions &opts);

  uint64_t recordingsMade() const { return recordings_.made(); }

protected:
  Expected<rt::EventPtr> submit(const std::vector<ResolvedSlot> &slots,
                                const std::vector<uint64_t> &params,
                                const rt::SubmitOptions &opts) override;
  Error applyUpdate(const std::vector<uint32_t> &nodes) override;

private:
  struct SlotMem {
    char *ptr = nullptr; // binding offset applied
    uint64_t offset = 0;
    uint64_t length = 0;
    uint64_t id = 0;
  };
  struct PartPlan {
    std::vector<uint32_t> nodes;
    bool host = false;
  };

  void resolve(const std::vector<ResolvedSlot> &slots);
  // Sets node `n`'s arguments, group size and global offset on its kernel handle
  // (Level Zero captures them when the launch is appended) and computes its groups.
  Error setKernel(uint32_t n, const std::vector<uint64_t> &params, ze_group_count_t &groups);
  // Appends node `n` (enabled, not a barrier) to `list`: it waits for `waits` and
  // signals `signal` (either may be empty/null).
  Error appendNode(ze_command_list_handle_t list, uint32_t n, const std::vector<uint64_t> &params,
                   ze_event_handle_t signal, const std::vector<ze_event_handle_t> &waits);
  Error record(Recording &rec, const std::vector<uint64_t> &params, bool profile);
  Expected<Recording *> findOrRecord(const std::vector<uint64_t> &params, bool profile);
  // Per-node times from signalled kernel-timestamp events (node, event), relative to
  // the earliest start; the counter wraps at the device's kernelTimestampValidBits.
  Expected<std::vector<rt::NodeTiming>>
  readTimestamps(const std::vector<std::pair<uint32_t, ze_event_handle_t>> &timed) const;
  // Host task `n`: its slots copied to host memory, the task run, the slots copied back.
  Error runHost(uint32_t n, const std::vector<uint64_t> &params);
  Expected<rt::EventPtr> submitEager(const std::vector<uint64_t> &params, bool profile,
                                     const std::function<Error(uint32_t)> &afterNode);
  Expected<rt::EventPtr> submitReplay(const std::vector<uint64_t> &params, bool profile);

  LevelZeroDevice *dev_;
  const ZeDriverTable *ze_;
  rt::HostPolicy host_;
  bool planMemory_ = true; // FinalizeOptions::planMemory
  std::vector<PartPlan> parts_;
  std::vector<std::vector<uint32_t>> partPreds_; // predecessors inside the same partition
  std::vector<uint8_t> hasPartSucc_;             // a successor inside the same partition
  std::vector<std::shared_ptr<const Module>> modules_;
  std::vector<ze_kernel_handle_t> kernels_; // per graph kernel; null when no node uses it
  std::vector<uint8_t> offsetSet_;          // per graph kernel: a non-zero global offset is set
  std::vector<std::unique_ptr<LevelZeroBuffer>> owned_; // runtime-initialized slots
  // Per Fill node whose pattern the device cannot fill natively (not a power of two or
  // over the queue group's maximum): the whole filled range, uploaded at finalize and
  // copied from instead.
  std::vector<std::unique_ptr<rt::Buffer>> fillSources_;
  std::unique_ptr<rt::HostTasks> hostTasks_;
  std::vector<SlotMem> mems_; // the current submission's slots
  rt::RecordingCache<Recording> recordings_;
  rt::EventPtr previous_; // the latest submission: the next one starts after it
};

} // namespace cgraph::level_zero
