// The OpenCL executable graph (command_buffer.cpp: preparation and recordings;
// submit.cpp: the eager and replay submission paths). Not installed.
#pragma once

#include "internal.h"

#include "cgraph/graph/labels.h"
#include "cgraph/runtime/host_tasks.h"
#include "cgraph/runtime/recording_cache.h"

#include <map>
#include <tuple>
#include <unordered_map>

namespace cgraph::opencl {

// Sub-buffers for buffer arguments at non-zero offsets (a kernel argument is a cl_mem,
// never a pointer + offset). Owned; released with the set.
class SubBuffers {
public:
  SubBuffers(const ClApi &api, uint32_t align) : api_(&api), align_(align) {}
  ~SubBuffers();
  SubBuffers(const SubBuffers &) = delete;
  SubBuffers &operator=(const SubBuffers &) = delete;
  Expected<cl_mem> get(cl_mem parent, uint64_t offset, uint64_t size);

private:
  const ClApi *api_;
  uint32_t align_;
  std::map<std::tuple<cl_mem, uint64_t, uint64_t>, cl_mem> subs_;
};

// A kernel launch's sizes, resolved.
struct Launch {
  cl_uint dims = 1;
  size_t global[3] = {1, 1, 1}, local[3] = {0, 0, 0}, offset[3] = {0, 0, 0};
  bool hasLocal = false, hasOffset = false;
};

// One node of a pre-resolved replay: everything its clEnqueue* call takes, resolved for
// one binding set (cl_mem handles with offsets, launch sizes, a cl_kernel whose
// arguments are set and never changed again). Barrier nodes have none: the in-order
// queue and the topological stored order already give their ordering.
struct ResolvedOp {
  enum Kind : uint8_t { Kernel, Copy, CopyRect, Fill, Host, Marker }; // Marker: a barrier node
  Kind kind = Kernel;
  uint32_t node = kNone;
  cl_kernel kernel = nullptr;                     // Kernel (owned by the Recording)
  Launch launch;                                  // Kernel
  cl_mem src = nullptr, dst = nullptr;            // Copy, CopyRect; Fill: dst
  size_t srcOffset = 0, dstOffset = 0, bytes = 0; // Copy; Fill: dstOffset, bytes
  size_t so[3] = {0, 0, 0}, dO[3] = {0, 0, 0}, region[3] = {0, 0, 0}; // CopyRect
  size_t srcRowPitch = 0, srcSlicePitch = 0, dstRowPitch = 0, dstSlicePitch = 0;
  const void *pattern = nullptr; // Fill: the graph's bytes (the executable outlives it)
  size_t patternSize = 0;
};

// One replayable recording for one binding set: either a command buffer per device
// partition with host partitions in between ("command-buffer"), or one flat list of
// resolved operations ("pre-resolved", `ops`).
struct Recording {
  struct Part {
    cl_command_buffer_khr cb = nullptr;
    uint32_t hostNode = kNone;
  };
  Recording(const ClApi &a, const ClCommandBufferApi &c, uint32_t align)
      : api(&a), cbApi(&c), subs(a, align) {}
  ~Recording();
  const ClApi *api;
  const ClCommandBufferApi *cbApi;
  std::vector<Part> parts;
  std::vector<ResolvedOp> ops; // pre-resolved strategy only
  SubBuffers subs;
  std::vector<cl_mem> retained;   // the bound buffers, kept alive while recorded
  std::vector<cl_kernel> kernels; // per kernel node, owned (see findOrRecord)
  cl_event lastUse = nullptr;     // for devices without simultaneous use
};

class OpenCLExecutable final : public rt::Executable {
public:
  OpenCLExecutable(OpenCLDevice &device, Graph flattened, rt::ExecMode mode,
                   const rt::FinalizeOptions &opts);
  ~OpenCLExecutable() override;
  Error prepare(const rt::FinalizeOptions &opts);

  // Counters the tests assert on.
  uint64_t recordingsMade() const { return recordings_.made(); }
  size_t recordingsHeld() const { return recordings_.size(); }

protected:
  Expected<rt::EventPtr> submit(const std::vector<ResolvedSlot> &slots,
                                const std::vector<uint64_t> &params,
                                const rt::SubmitOptions &opts) override;
  Error applyUpdate(const std::vector<uint32_t> &nodes) override;

private:
  struct SlotMem {
    cl_mem mem = nullptr;
    uint64_t offset = 0;
    uint64_t length = 0;
    uint64_t id = 0;
  };
  struct PartPlan {
    std::vector<uint32_t> nodes;
    bool host = false;
  };

  Error initOwnedSlots();
  Error resolve(const std::vector<ResolvedSlot> &slots);
  Error setArgs(cl_kernel k, uint32_t n, const std::vector<uint64_t> &params, SubBuffers &subs);
  Launch launchDims(uint32_t n, const std::vector<uint64_t> &params) const;

  // submit.cpp
  // Node `n`'s operands for the current slots: the one place eager, command-buffer and
  // pre-resolved submission compute them. `k`: the kernel object a kernel node uses.
  ResolvedOp resolveOp(uint32_t n, cl_kernel k, const std::vector<uint64_t> &params) const;
  // The clEnqueue* call of `op` on the queue; `call` names it for errors.
  cl_int enqueueOp(const ResolvedOp &op, cl_uint nWait, const cl_event *wait, cl_event *ev,
                   const char *&call) const;
  Error enqueueNode(uint32_t n, const std::vector<uint64_t> &params, SubBuffers &subs,
                    cl_uint nWait, const cl_event *wait, cl_event *ev);
  // Records node `n`; it waits for the sync points of its predecessors in the
  // partition (`done`), and done[n] becomes its own completion (a barrier node's is the
  // union of its predecessors').
  Error recordNode(cl_command_buffer_khr cb, uint32_t n, const std::vector<uint64_t> &params,
                   SubBuffers &subs, cl_kernel k,
                   std::vector<std::vector<cl_sync_point_khr>> &done);
  Expected<Recording *> findOrRecord(const std::vector<uint64_t> &params);
  // Fills `rec` with command buffers (recordCommandBuffers) or a resolved node list
  // (resolveOps) for the current binding set and `params`.
  Error recordCommandBuffers(Recording &rec, const std::vector<uint64_t> &params);
  Error resolveOps(Recording &rec, const std::vector<uint64_t> &params);
  // The kernel object for node `n` in `rec`: one per distinct (kernel, argument list),
  // created and its arguments set on first use (`shared` maps argument lists to them).
  Expected<cl_kernel> recordingKernel(Recording &rec, uint32_t n,
                                      const std::vector<uint64_t> &params,
                                      std::unordered_map<std::string, cl_kernel> &shared,
                                      bool setArgsNow);
  Error runHost(uint32_t n, const std::vector<uint64_t> &params);
  // Waits for the events in `wait` (submissions this one must follow, possibly on other
  // queues) and clears it; before a host task, which drains only this queue.
  Error waitOutside(std::vector<cl_event> &wait);
  Expected<rt::EventPtr> submitEager(const std::vector<uint64_t> &params,
                                     std::vector<cl_event> &wait, bool profile,
                                     const std::function<Error(uint32_t)> &afterNode);
  Expected<rt::EventPtr> submitReplay(const std::vector<uint64_t> &params,
                                      std::vector<cl_event> &wait, bool profile);
  Expected<rt::EventPtr> submitPreResolved(Recording &rec, const std::vector<uint64_t> &params,
                                           std::vector<cl_event> &wait, bool profile);

  OpenCLDevice *dev_;
  const ClApi *api_;
  rt::HostPolicy host_;
  bool planMemory_ = true; // FinalizeOptions::planMemory
  std::vector<uint32_t> order_;
  std::vector<PartPlan> parts_;
  std::vector<std::vector<uint32_t>> partPreds_; // predecessors inside the same partition
  std::vector<std::shared_ptr<const Program>> programs_;
  std::vector<cl_kernel> kernels_;        // per graph kernel; null when no node launches it
  std::vector<cl_program> kernelProgram_; // per graph kernel
  std::vector<std::unique_ptr<OpenCLBuffer>> owned_; // runtime-initialized slots
  std::unique_ptr<rt::HostTasks> hostTasks_;
  std::vector<SlotMem> mems_; // the current submission's slots
  rt::RecordingCache<Recording> recordings_;
};

} // namespace cgraph::opencl
