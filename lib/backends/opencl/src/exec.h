// The OpenCL executable graph (command_buffer.cpp: preparation and recordings;
// submit.cpp: the eager and replay submission paths). Not installed.
#pragma once

#include "internal.h"

#include "cgraph/graph/labels.h"
#include "cgraph/runtime/recorded_executable.h"

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

// Recorded command buffers or pre-resolved node lists per binding set, over the shared
// recorded executable (cgraph/runtime/recorded_executable.h), which owns the plan, the
// slots and the recordings.
class OpenCLExecutable final : public rt::RecordedExecutable<Recording> {
public:
  OpenCLExecutable(OpenCLDevice &device, Graph flattened, rt::ExecMode mode);
  ~OpenCLExecutable() override;

protected:
  Error prepareDevice(const rt::FinalizeOptions &opts) override;
  Expected<std::unique_ptr<Recording>> makeRecording(const std::vector<uint64_t> &params,
                                                     bool profile) override;
  // Our own events join the queue's wait list (wait_); anything else is waited for here.
  Error waitForPrior(const std::vector<rt::EventPtr> &waitFor) override;
  Error checkReplay(const rt::SubmitOptions &opts) override;
  Expected<rt::EventPtr> submitEager(const std::vector<uint64_t> &params,
                                     const rt::SubmitOptions &opts) override;
  Expected<rt::EventPtr> submitReplay(Recording &rec, const std::vector<uint64_t> &params,
                                      const rt::SubmitOptions &opts) override;

private:
  // The cl_mem behind a slot's storage; null when unbound.
  static cl_mem memOf(const SlotMem &m) {
    return m.buffer ? static_cast<OpenCLBuffer *>(m.buffer)->mem() : nullptr;
  }
  cl_uint waitCount() const { return cl_uint(wait_.size()); }
  const cl_event *waitEvents() const { return wait_.empty() ? nullptr : wait_.data(); }
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
  // Waits for the events in wait_ (submissions this one must follow, possibly on other
  // queues) and clears it; before a host task, which drains only this queue.
  Error waitOutside();
  Expected<rt::EventPtr> submitPreResolved(Recording &rec, const std::vector<uint64_t> &params,
                                           bool profile);

  OpenCLDevice *dev_;
  const ClApi *api_;
  std::vector<std::shared_ptr<const Program>> programs_;
  std::vector<cl_kernel> kernels_;        // per graph kernel; null when no node launches it
  std::vector<cl_program> kernelProgram_; // per graph kernel
  // The current submission's wait list: events of this backend it must follow, joined
  // to its first command (they are alive while submit() runs; cleared at its start).
  std::vector<cl_event> wait_;
};

} // namespace cgraph::opencl
