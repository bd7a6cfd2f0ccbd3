// The executable of a backend that records native command lists per binding set and
// replays them (opencl, level_zero). This layer holds what such backends share: the
// partition plan, host tasks, runtime-owned slots, the slot storage of the current
// submission, kernel arguments decoded and checked, the recordings kept per binding
// set, update (drops every recording) and the submission's dispatch (eager or replay).
// A backend derives from RecordedExecutable<Rec> and adds only its API calls, through
// the hooks below.
//
// Why recordings per binding set: without mutable commands a recorded command keeps the
// buffers, scalar values and sizes it was recorded with, so a new binding table or
// parameter value needs a new recording (docs/architecture.md, "Binding tables"). The
// last few are kept (RecordingCache) so that alternating tables replay without
// re-recording; stored parameter expressions arrive as extra parameter values, so each
// distinct shape gets its own recording, kept the same way.
//
// Ownership: the executable owns its runtime-owned slot buffers, its host tasks and its
// recordings. A Rec * from findOrRecord() stays valid until a later findOrRecord()
// evicts it or the recordings are cleared (applyUpdate, the derived destructor). A
// derived class whose recordings use what it releases itself (kernels, modules) clears
// recordings_ first in its destructor.
// Lifetime: as rt::Executable's: the device outlives the executable, bound buffers
// outlive the submissions that bind them.
// Thread-safety: as rt::Executable's: one submit() or update() at a time; mems_ and
// the recordings are the state of the submission in progress.
// Failure modes: every step returns the backend's or the runtime's Error; prepare()
// stops at the first. A submission whose recording fails keeps no recording (the next
// one with that binding set records again); one that fails after recording keeps it.
#pragma once

#include "cgraph/runtime/host_tasks.h"
#include "cgraph/runtime/recording_cache.h"
#include "cgraph/runtime/runtime.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace cgraph::rt {

// What does not depend on the backend's recording type (recorded_executable.cpp).
class RecordedExecutableBase : public Executable {
public:
  // What differs between the backends' recorded executables beyond their API calls.
  struct Config {
    uint32_t ownedAlignment = 1; // bytes, of the runtime-owned slot buffers
    size_t maxRecordings = 8;    // kept at once (at least one)
    bool keyedByProfile = false; // SubmitOptions::profile changes what is recorded
  };

  // Plans the partitions, then prepares the backend's part (prepareDevice), the host
  // tasks and the runtime-owned slots, in that order.
  Error prepare(const FinalizeOptions &opts);

protected:
  // One of the graph's stored partitions, which depend only on earlier ones; `host`:
  // it holds one host task and nothing else.
  struct PartPlan {
    std::vector<uint32_t> nodes;
    bool host = false;
  };
  // One slot's storage in the current submission: a buffer of device() (so of the
  // backend's own Buffer subclass), or null for an unused external slot. `id` is the
  // buffer's serial(): recordings are keyed by it, never by a driver handle, which the
  // driver may reuse after a release.
  struct SlotMem {
    Buffer *buffer = nullptr;
    uint64_t offset = 0;
    uint64_t length = 0;
    uint64_t id = 0;
  };
  // One argument of a kernel node, decoded and checked against the current slots.
  struct KernelArg {
    enum Kind : uint8_t { Slot, Value, Local };
    Kind kind = Value;
    const SlotMem *slot = nullptr; // Slot: its storage in mems_ (bound; valid while mems_ is)
    uint64_t offset = 0;           // Slot: bytes into it, inside the bound range
    uint64_t bits = 0;             // Value: the scalar's bits
    uint64_t size = 0;             // Value: bytes (at most 8); Local: bytes of local memory
  };

  RecordedExecutableBase(Device &device, Graph flattened, ExecMode mode, const Config &config);

  // The backend's programs or modules and kernel objects.
  virtual Error prepareDevice(const FinalizeOptions &opts) = 0;
  // Per graph kernel: whether a node launches it or may launch it after an update.
  std::vector<bool> kernelsUsed() const;
  // mems_ for one submission's slots.
  void resolveSlots(const std::vector<ResolvedSlot> &slots);
  // Argument `i` of kernel node `n` for the current slots and `params`. Fails, naming
  // the node and the argument, on an unbound slot, an offset past the bound range, a
  // by-value argument wider than 8 bytes and a string argument.
  Expected<KernelArg> kernelArg(uint32_t n, uint32_t i, const std::vector<uint64_t> &params) const;
  // e.wait(), its failure in the words every backend uses for a prior submission.
  static Error waitOnHost(Event &e);

  const Config config_;
  std::vector<PartPlan> parts_;
  std::vector<std::vector<uint32_t>> partPreds_; // per node: predecessors in its partition
  std::vector<uint8_t> hasPartSucc_;             // per node: a successor in its partition
  std::unique_ptr<HostTasks> hostTasks_;         // null when the graph has no host node
  std::vector<std::unique_ptr<Buffer>> owned_;   // runtime-owned slots (null: external or planned)
  std::vector<SlotMem> mems_;                    // the current submission's slots

private:
  void planPartitions();
  Error prepareHostTasks(const HostPolicy &policy);
};

// Rec: one recording, everything a replay of one binding set needs.
template <class Rec> class RecordedExecutable : public RecordedExecutableBase {
public:
  // Counters the tests assert on: recordings made so far (evicted ones included) and
  // recordings kept now.
  uint64_t recordingsMade() const { return recordings_.made(); }
  size_t recordingsHeld() const { return recordings_.size(); }

protected:
  RecordedExecutable(Device &device, Graph flattened, ExecMode mode, const Config &config)
      : RecordedExecutableBase(device, std::move(flattened), mode, config) {}

  // The backend's verbs. makeRecording: one recording of the graph for mems_ and
  // `params`. submitEager: node by node, honouring opts.profile and opts.afterNode.
  // submitReplay: runs `rec`.
  virtual Expected<std::unique_ptr<Rec>> makeRecording(const std::vector<uint64_t> &params,
                                                       bool profile) = 0;
  virtual Expected<EventPtr> submitEager(const std::vector<uint64_t> &params,
                                         const SubmitOptions &opts) = 0;
  virtual Expected<EventPtr> submitReplay(Rec &rec, const std::vector<uint64_t> &params,
                                          const SubmitOptions &opts) = 0;
  // Before the submission starts: waits for SubmitOptions::waitFor. The default waits
  // for each event on the host; a backend overrides it to put its own events on its
  // queue instead, or to wait for its previous submission too.
  virtual Error waitForPrior(const std::vector<EventPtr> &waitFor) {
    for (const EventPtr &e : waitFor)
      if (e) CGRAPH_RETURN_IF_ERROR(waitOnHost(*e));
    return Error::success();
  }
  // Refuses a replay the backend cannot run as asked, before anything is recorded.
  virtual Error checkReplay(const SubmitOptions &opts) { return Error::success(); }
  // Called with the event of every submission that succeeded.
  virtual void submitted(const EventPtr &event) {}

  Expected<EventPtr> submit(const std::vector<ResolvedSlot> &slots,
                            const std::vector<uint64_t> &params, const SubmitOptions &opts) final {
    CGRAPH_RETURN_IF_ERROR(waitForPrior(opts.waitFor));
    resolveSlots(slots);
    Expected<EventPtr> ev =
        mode_ == ExecMode::Eager ? submitEager(params, opts) : replay(params, opts);
    if (ev) submitted(*ev);
    return ev;
  }

  // Every recording holds the old values (arguments, sizes, recorded commands): drop
  // them all, and the next replay records the updated graph. The eager path reads
  // graph() per node and needs nothing.
  Error applyUpdate(const std::vector<uint32_t> &) override {
    recordings_.clear();
    return Error::success();
  }

  // The recording for mems_ and `params`, made on first use. The key is the binding
  // set: each slot's buffer identity, offset and length and every parameter value
  // (scalars and sizes are baked into recorded commands), and `profile` where
  // Config::keyedByProfile says it changes the recording.
  Expected<Rec *> findOrRecord(const std::vector<uint64_t> &params, bool profile) {
    std::string key = bindingSetKey(mems_, params);
    if (config_.keyedByProfile) appendKeyBits(key, profile ? 1 : 0);
    return recordings_.findOrMake(std::move(key), config_.maxRecordings,
                                  [&] { return makeRecording(params, profile); });
  }

  RecordingCache<Rec> recordings_;

private:
  Expected<EventPtr> replay(const std::vector<uint64_t> &params, const SubmitOptions &opts) {
    CGRAPH_RETURN_IF_ERROR(checkReplay(opts));
    Expected<Rec *> rec = findOrRecord(params, opts.profile);
    if (!rec) return rec.error();
    return submitReplay(**rec, params, opts);
  }
};

} // namespace cgraph::rt
