// Backend-neutral runtime interface: devices, buffers, executable graphs, binding
// tables, events.
//
// Model (docs/architecture.md, "The backend contract"): a cgraph::Graph is a
// description; Device::finalize turns it into an Executable for one device (kernels
// compiled, native command buffers built, runtime-owned slots allocated).
// Executable::enqueue validates the binding table and
// parameters ONCE here, in O(slots log slots + params), then hands the resolved submission to the
// backend, which trusts it (backends never re-check what this layer checked).
//
// Ownership and lifetime:
// - A Device is owned by the Backend that opened it (a Registry owns its Backends) and
//   outlives every Buffer and Executable made from it (callers must destroy those first).
// - A Buffer is owned by the caller (unique_ptr). It must stay alive until every
//   Event of a submission that binds it has completed.
// - An Executable is owned by the caller; it keeps a copy of the (flattened) Graph and
//   owns the storage of runtime-initialized slots (SlotInit::Data/Fill/File/Transient).
// - An Event is shared (shared_ptr); waiting on it is allowed from any thread.
//
// Thread-safety: Device and Registry methods are thread-safe. An Executable may be
// enqueued from one thread at a time; submissions of one Executable execute in
// submission order (a new submission waits for the previous one of the same
// Executable, since runtime-owned slots are shared between them). Different
// Executables may be enqueued concurrently.
//
// Failure modes: every call returns Error/Expected; nothing throws and nothing
// prints. A failure during execution (e.g. a host task's file is missing) is reported
// by Event::wait(). Out-of-memory on allocation is an Error, not an abort.
#pragma once

#include "cgraph/error.h"
#include "cgraph/expr.h"
#include "cgraph/graph/memory_plan.h"
#include "cgraph/model.h"

#include <array>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace cgraph::rt {

// ---- capabilities ------------------------------------------------------------------
struct Capabilities {
  bool nativeCommandBuffer = false;   // replays through a driver-level recording
  bool rebindWithoutRerecord = false; // new binding table costs O(bindings)
  bool updatableParams = false;       // new parameter values without re-recording
  bool inOrder = true;                // one submission's nodes may also run concurrently when false
  bool concurrentNodes = false;       // independent nodes of a graph may overlap
  bool profiling = false;             // per-node timestamps on request (eager mode)
  bool profilingReplay = false;       // per-node timestamps in replay too; where false, a
                                      // profiled replay is refused with an Error, never
                                      // quietly run node by node instead
  bool hostPointerBuffers = false;    // Buffer::hostPointer() is non-null
  std::vector<FormKind> kernelForms;  // forms it accepts, best first
  uint32_t computeUnits = 0;
  uint64_t globalMemoryBytes = 0;
  uint64_t maxWorkGroupSize = 0;     // work-items per group (product of the local size)
  bool nonUniformWorkGroups = false; // a local size need not divide the global size
  // Evaluates stored parameter expressions (Graph::exprs, .cgf 2.0) per submission.
  // Where false, enqueue refuses a graph that has any (never runs it with stale values).
  bool storedExpressions = false;
  // Executable::update works (per-node and whole-graph update, enable/disable).
  // Where false, update refuses with an Error and the executable is unchanged.
  bool nodeUpdate = false;
  // SubmitOptions::stream is honoured (cuda: a CUstream of the device's context).
  // Where false, enqueue refuses a submission that names a stream (Unsupported).
  bool callerStreams = false;
  // A bound range must start at a multiple of it (OpenCL sub-buffers:
  // CL_DEVICE_MEM_BASE_ADDR_ALIGN); the memory plan's arena offsets honour it.
  uint32_t bindingOffsetAlignment = 1;
};

struct DeviceInfo {
  std::string backend; // "cpu", "cuda", "opencl", ...
  std::string name;    // human-readable device name
  std::string vendor;
  std::string driverVersion; // part of the binary cache key
  Capabilities caps;
  // How ExecMode::Replay runs on this device, in the backend's words (the opencl
  // backend: "command-buffer" or "pre-resolved"); empty when the backend does not say.
  // Informational only (cgrun --list-devices); never part of a cache key.
  std::string replay;
  // How Executable::update reaches the replayed form, in the backend's words ("direct":
  // the next submission reads the new values; "re-record": recordings are dropped and
  // made again on the next submission); empty when updates are not supported.
  std::string update;
};

// ---- memory ------------------------------------------------------------------------
class Device;

class Buffer {
public:
  virtual ~Buffer() = default;
  virtual uint64_t size() const = 0;
  // Non-null where the device memory is directly addressable by the host (CPU).
  virtual void *hostPointer() { return nullptr; }
  // The device that allocated it, where the backend knows it. Executable::enqueue
  // refuses a binding whose buffer reports another device; null = not checked.
  virtual const Device *device() const { return nullptr; }
  // A number no other buffer of this process has had (a freed buffer's successor at
  // the same address has another): what Executable::enqueue compares to know a
  // binding is the one it checked before, without a virtual call.
  uint64_t serial() const { return serial_; }

private:
  const uint64_t serial_ = nextSerial();
  static uint64_t nextSerial();
};

// One entry of a binding table: a buffer range bound to a slot.
struct Binding {
  Buffer *buffer = nullptr; // not owned; null = unbound
  uint64_t offset = 0;
  uint64_t length = 0; // 0 = from offset to the end of the buffer
};

// Indexed by slot index of the (unflattened) Graph that was finalized. Only slots with
// SlotInit::External need an entry; entries for runtime-initialized slots are ignored
// unless `overrideInternal` is set, in which case a non-null entry replaces them.
struct BindingTable {
  std::vector<Binding> slots;
  bool overrideInternal = false;
};

// Parameter values indexed by Graph::params; value bits as in Param::defaultBits.
// An empty vector means "all defaults".
struct ParamValues {
  std::vector<uint64_t> bits;
  // Sets param `name` of `g` from text ("2.5", "17", "0x10"), typed by the param.
  Error set(const Graph &g, const std::string &name, const std::string &text);
};

// ---- events ------------------------------------------------------------------------
struct NodeTiming {
  uint32_t node = kNone; // index in the finalized graph (Executable::graph())
  uint64_t startNs = 0;  // steady-clock (host) or device clock, relative to submit
  uint64_t endNs = 0;
  uint32_t lane = 0; // thread / queue / stream id, for trace viewers
};

// Backends derive from WaitOnceEvent (wait_once_event.h), which keeps wait()'s
// promise below for them.
class Event {
public:
  virtual ~Event() = default;
  // Blocks until all work of the submission is done; returns its failure, if any.
  // May be called several times and from several threads; returns the same result.
  virtual Error wait() = 0;
  virtual bool isComplete() const = 0;
  // Filled when the submission asked for profiling; valid after wait().
  virtual const std::vector<NodeTiming> &nodeTimings() const = 0;
};
using EventPtr = std::shared_ptr<Event>;

// ---- host tasks ----------------------------------------------------------------------
// What host tasks (built-in or plugin) may do. Paths named in a .cgf (File slots,
// read_file/write_file host tasks) must resolve inside one of `allowedDirs`
// (default: the current directory); plugin libraries load only with allowPlugins.
struct HostPolicy {
  std::vector<std::string> allowedDirs;
  // Relative paths (File slots, host task paths, plugin libraries) resolve against
  // this directory; empty = the current directory. Tools set it to the .cgf's folder.
  std::string baseDir;
  bool allowPlugins = false;
  // Where built-in host tasks such as "print" and "checksum" write their text.
  // Default: none, the text is dropped (lib/ never prints; the tools print it).
  // Called from a runtime worker thread, serialized per submission.
  std::function<void(const std::string &line)> output;
};

// ---- executables -------------------------------------------------------------------
// A change to one node of a finalized executable (Executable::update). Every field is
// optional; all of them are checked before any is applied.
struct NodeUpdate {
  uint32_t node = kNone; // index in Executable::graph() (Executable::findNode)
  // Kernel nodes: argument index -> new value, of the same kind as the old one (a
  // scalar of the same type, another slot and offset, a parameter of the same type,
  // a __local size).
  std::vector<std::pair<uint32_t, Arg>> args;
  // Kernel nodes: a new nd-range of literal sizes (same number of dimensions or not).
  bool setRange = false;
  NDRange range;
  // Kernel nodes: switch to this kernel (index into graph().kernels), which must be one
  // of the node's Node::alternatives; kNone leaves the kernel.
  uint32_t kernel = kNone;
  // Any node: 0 disables it (it does nothing; its edges still order the others, as
  // CUDA's cuGraphNodeSetEnabled), 1 enables it again, -1 leaves it.
  int enabled = -1;
};


enum class ExecMode {
  Replay, // pre-resolved schedule / native command buffer, replayed per enqueue
  Eager,  // node by node through the backend's ordinary submit path (for comparison)
};

class Communicator; // communicator.h

// Progress of a long finalize (FinalizeOptions::progress): `phase` ("compiling kernels"),
// and how many of its steps are done out of how many (done == total: the phase ended).
using FinalizeProgressFn = std::function<void(const char *phase, uint64_t done, uint64_t total)>;

struct FinalizeOptions {
  ExecMode mode = ExecMode::Replay;
  HostPolicy host;
  bool useCache = true; // in-memory + persistent binary cache (lib/cache)
  // Memory planning (cgraph/graph/memory_plan.h): transient slots whose lifetimes do
  // not overlap share runtime-owned memory. Off: every owned slot has its own buffer.
  bool planMemory = true;
  // Collective nodes run through this communicator (communicator.h); not owned, it must
  // outlive the executable. Null: a graph with collective nodes fails at finalize.
  Communicator *communicator = nullptr;
  // The longest one collective may wait for its peers; past it the submission fails
  // with ErrorCode::Timeout naming the node and rank, instead of hanging.
  std::chrono::milliseconds collectiveTimeout{60000};
  // Before a graph with collective nodes runs in a world of several ranks, the ranks
  // compare what they will run (rt::checkSameCollectives, one exchange at finalize,
  // on backends with host communicators), so a mismatch is an error instead of a hang.
  bool checkCollectives = true;
  // Called on the finalizing thread as the work of a long finalize advances (every
  // backend: once per kernel module compiled or loaded; finalize_progress.h), for a
  // progress display. Null: none. Must not throw.
  FinalizeProgressFn progress;
};

struct SubmitOptions {
  std::vector<EventPtr> waitFor; // must complete (successfully) before this starts
  bool profile = false;          // fill Event::nodeTimings()
  // Eager mode only (Replay ignores it): called once per node, in execution order,
  // after node `node` (index in Executable::graph()) completed and before the next
  // node starts; calls are never concurrent. The hook may read any buffer bound to
  // this submission (Device::read). Returning a failed Error stops the submission:
  // no later node runs and Event::wait() returns that Error. Called from a runtime
  // thread (not necessarily the one that called enqueue). `cgrun compare` uses it.
  std::function<Error(uint32_t node)> afterNode;
  // The caller's native stream (a CUstream on cuda, in the device's primary context),
  // or null. The submission starts after the work the caller queued on it so far, and
  // work the caller queues on it afterwards starts after the submission, without the
  // host waiting for either (as a library launching on a framework's current stream):
  // torch.cuda.current_stream().cuda_stream, a CuPy stream's ptr; CUDA's default stream
  // is CU_STREAM_LEGACY ((void *)0x1), since null means none here. The stream must stay
  // valid until the submission completed. Devices without Capabilities::callerStreams
  // refuse a non-null stream. A stream being captured into a graph: the submission is
  // recorded into the caller's graph (cuda: its nodes on the device's stream joined to
  // the capture), runs whenever that graph runs, and its event is complete at once.
  void *stream = nullptr;
};

class Executable {
public:
  virtual ~Executable() = default;

  // Validates `bindings` and `params` against the graph's per-slot requirements in
  // O(slots log slots + params + parameter-driven ranges) (errors name the slot:
  // `slot 'y': bound range is 1024 bytes, the graph needs at least 4096`), then submits.
  // Also refused before anything runs: two slots bound to overlapping ranges of one
  // buffer where either is written (hazards are tracked per slot, so such a pair would
  // race), and nd-ranges (from parameters, or literal ones on the first enqueue) with a
  // zero size, a local size over Capabilities::maxWorkGroupSize, or one that does not
  // divide the global size on a device without non-uniform work-groups; errors name the
  // node. The binding table is resolved at enqueue; the caller may reuse or change it
  // right after enqueue returns.
  //
  // Stored parameter expressions (Graph::exprs) are evaluated here, once per enqueue
  // and O(total expression length), with this submission's parameter values; every
  // result is range-checked before anything runs (a global or local size < 1, a
  // negative offset, a scalar argument that does not fit its type; then the nd-range
  // checks above), and errors name the node and field:
  // `node 'upd.3': global[0] = align_up($n - 6, 64) is 0; it must be at least 1`.
  // Backends see each expression as an extra parameter: on a device with
  // Capabilities::storedExpressions, graph() has the expression's field rewritten to
  // read parameter graph().params.size() + e (e = index into graph().exprs), and the
  // params vector given to submit() holds the parameter bits followed by one int64
  // per expression. Copy/fill fields and slot sizes (.cgf 2.2): see the end of this file.
  Expected<EventPtr> enqueue(const BindingTable &bindings, const ParamValues &params,
                             const SubmitOptions &opts = {});

  // Updates one node for every later submission (SYCL/UR command-buffer update, CUDA
  // cuGraphExec*SetParams / cuGraphNodeSetEnabled). Semantics: the update first waits
  // for every earlier submission of this executable to complete (a submission in
  // flight always runs with the values it was enqueued with), then applies; the next
  // enqueue sees the new values. Checked before anything changes, each error naming
  // the node: unknown node, a kernel that is not one of the node's alternatives, an
  // argument or range on a non-kernel node, an argument
  // index out of range, a kind or scalar type that differs from the old argument, a
  // field that is a stored expression (change the parameters instead), an unknown slot
  // or parameter, a zero or over-large range, and a new slot access that the graph's
  // edges do not order against another node's access to that slot. On any error the
  // executable is unchanged. Not thread-safe against concurrent enqueue or update on
  // the same executable (like enqueue itself).
  Error update(const NodeUpdate &u);
  // Whole-graph update (SYCL's): `source` must have the topology of the graph this
  // executable was finalized from (same nodes by index, kinds, names, edges, slots and
  // kernels by name); every kernel node's arguments and nd-range are taken from it.
  // Refused with the first mismatch named (`node 17 'sweep.8': kernel differs
  // (jacobi_step vs jacobi_step2)`); then nothing changes. Waits like update().
  Error update(const Graph &source);
  // Node index by name in graph(), or kNone.
  uint32_t findNode(const std::string &name) const;
  bool nodeEnabled(uint32_t node) const { return node >= disabled_.size() || !disabled_[node]; }

  // The graph as finalized (subgraphs flattened). Node indices in NodeTiming refer to it.
  const Graph &graph() const { return graph_; }
  ExecMode mode() const { return mode_; }
  Device &device() const { return *device_; }

  // Where finalize spent its time, phase by phase in order, for backends that measure
  // it (cuda, hip: kernels, slots, plans, graph nodes, instantiate); empty otherwise.
  struct Phase {
    std::string name;
    double us = 0;
  };
  const std::vector<Phase> &finalizePhases() const { return phases_; }

  // The memory plan finalize made for the transient slots (no planned slot and a
  // reason in `skipped` when none: planning off, no two slots with disjoint lifetimes,
  // a backend that allocates owned slots itself). Planned slots live at offsets of one
  // arena that enqueue allocates (as large as the packing of the largest sizes seen so
  // far needs) and packs again when expression-sized slots change size.
  const MemoryPlan &memoryPlan() const { return plan_; }
  // Bytes of runtime-owned memory this executable holds now: the slots allocated at
  // finalize (as reported by the backend through allocateOwnedSlots), the grown
  // expression-sized slots and the shared blocks.
  uint64_t ownedBytes() const;

protected:
  std::vector<Phase> phases_;
  Executable(Device &device, Graph flattened, ExecMode mode);
  // Resolved submission: one (pointer-or-buffer, size) per slot of graph(), parameter
  // bits per param of graph(); everything has been checked.
  struct ResolvedSlot {
    Buffer *buffer = nullptr; // null for runtime-owned slots the backend resolved itself
    uint64_t offset = 0;
    uint64_t length = 0;
  };
  // Allocates and initializes every runtime-owned slot of graph() on device() through
  // the one slot-setup path (slot_init.h allocateOwnedSlots, sized by the graph's
  // requirements). Every backend calls it at finalize; result[i] is null for External.
  // Planned transient slots (FinalizeOptions::planMemory) are left out, as External
  // ones are: enqueue passes them to submit() as bound slots in their shared blocks.
  Expected<std::vector<std::unique_ptr<Buffer>>> allocateOwnedSlots(const HostPolicy &policy,
                                                                    uint32_t minAlignment = 1,
                                                                    bool planMemory = true);
  // The same, each buffer typed as the backend's own Buffer subclass B (they all come
  // from device(), whose allocate() makes only B). Fills *out; on error *out is empty.
  template <class B>
  Error allocateOwnedSlotsAs(const HostPolicy &policy, uint32_t minAlignment,
                             std::vector<std::unique_ptr<B>> *out, bool planMemory = true) {
    out->clear();
    auto owned = allocateOwnedSlots(policy, minAlignment, planMemory);
    if (!owned) return owned.error();
    out->resize(owned->size());
    for (size_t i = 0; i < owned->size(); ++i) (*out)[i].reset(static_cast<B *>((*owned)[i].release()));
    return Error::success();
  }
  // The storage behind every slot for one submission: calls f(i, B *buffer, offset,
  // length) for slot i, with the bound buffer of slots[i] (submit() checked that it
  // belongs to this backend) and its range, else the runtime-owned owned[i] whole,
  // else (no storage: an unused external slot) a null buffer. O(slots), no allocation.
  template <class B, class F>
  static void forEachSlotStorage(const std::vector<ResolvedSlot> &slots,
                                 const std::vector<std::unique_ptr<B>> &owned, F &&f) {
    for (size_t i = 0; i < slots.size(); ++i) {
      const ResolvedSlot &r = slots[i];
      if (r.buffer) f(i, static_cast<B *>(r.buffer), r.offset, r.length);
      else if (i < owned.size() && owned[i]) f(i, owned[i].get(), uint64_t(0), owned[i]->size());
      else f(i, static_cast<B *>(nullptr), uint64_t(0), uint64_t(0));
    }
  }
  // A copy node's source offset, destination offset and size, or a fill node's offset
  // (dstOffset) and size, for the submission whose params (as given to submit()) are
  // `params`: the node's fields, with those that are stored expressions (.cgf 2.2)
  // evaluated. Backends read copy and fill fields only through this: graph() holds 0
  // in an expression field. O(1), no allocation; `node` must be a Copy or Fill node.
  struct Transfer {
    uint64_t srcOffset = 0, dstOffset = 0, bytes = 0;
  };
  Transfer transfer(uint32_t node, const std::vector<uint64_t> &params) const;
  // A collective node's fields for the submission whose params are `params`, those that
  // are stored expressions evaluated (enqueue checked they are not negative). O(1).
  CollectiveOp collective(uint32_t node, const std::vector<uint64_t> &params) const;
  virtual Expected<EventPtr> submit(const std::vector<ResolvedSlot> &slots,
                                    const std::vector<uint64_t> &params,
                                    const SubmitOptions &opts) = 0;
  // During submit(): whether `slots` and `params` are those of the previous submit()
  // call (same buffers, ranges and values; no update in between), so what the backend
  // derived from them then (its table, nd-ranges) still holds. False when unsure.
  bool sameAsLastSubmit() const { return sameAsLast_; }
  // Called by update() after graph() and nodeEnabled() hold the new state of `nodes`
  // and no submission is in flight; the backend brings its prepared or recorded form
  // up to date. An Error here makes update() restore the old state and call this again.
  // Backends with Capabilities::nodeUpdate override it.
  virtual Error applyUpdate(const std::vector<uint32_t> &nodes);
  Graph graph_;
  ExecMode mode_;
  Device *device_;
  // Per slot of graph(): what a binding must satisfy (from lib/graph's requirements).
  struct SlotNeed {
    uint64_t minSize = 0;
    uint32_t alignment = 1;
    uint32_t usage = 0;
    bool external = true; // SlotInit::External: the binding table must supply it
  };
  std::vector<SlotNeed> needs_;
  // Original (unflattened) slot i maps to graph() slot slotMap_[i]; subgraph-only
  // slots have no entry in a caller's binding table.
  std::vector<uint32_t> slotMap_;

private:
  Error checkOverlaps();
  Error checkRanges(bool all);
  Error checkRange(uint32_t node);
  Error checkUpdate(const NodeUpdate &u, Node &changed) const;
  Error commitUpdates(std::vector<std::pair<uint32_t, Node>> changed,
                      const std::vector<std::pair<uint32_t, int>> &enabled);
  void computeNeeds();
  std::vector<uint8_t> disabled_; // per node of graph_
  EventPtr last_;                 // the latest submission (update waits for it)
  Error evaluateExprs();
  struct ExprSlot {
    expr::Program program; // decoded and checked at construction
    std::string text;      // infix with parameter names, for messages
  };
  std::vector<ExprSlot> exprCode_;
  // Copy/fill fields that are expressions: per node, kNone or an index into
  // transferParams_ ({source offset, destination/fill offset, bytes: indices into the
  // submit() params or kNone; the node}). Empty when the graph has none.
  std::vector<uint32_t> transferIndex_;
  std::vector<std::array<uint32_t, 4>> transferParams_;
  // Collective nodes with stored expressions: per node an index into collParams_
  // ({send offset, recv offset, count, peer}: parameter indices or kNone).
  std::vector<uint32_t> collIndex_;
  std::vector<std::array<uint32_t, 4>> collParams_;
  // Per slot: kNone or the expression (index into graph().exprs) giving its size.
  std::vector<uint32_t> slotSizeExpr_;
  // Runtime-owned slots of expression size: the largest size seen so far (ensureGrown).
  std::vector<std::unique_ptr<Buffer>> grown_;
  HostPolicy ownedPolicy_;
  uint32_t ownedAlignment_ = 1;
  uint64_t finalizeOwnedBytes_ = 0; // what allocateOwnedSlots allocated
  // Memory planning (owned_memory.cpp): the plan and its arena (grown like grown_);
  // per enqueue the planned slots' bytes and whether slot j was placed in the arena
  // (such slots share bytes on purpose: checkOverlaps skips them); the sizes the
  // offsets were packed for, the offsets and the arena size they need.
  MemoryPlan plan_;
  std::unique_ptr<Buffer> arena_;
  std::vector<uint64_t> planBytes_, packedBytes_, planOffsets_;
  uint64_t arenaNeed_ = 0;
  uint32_t planAlign_ = 1;     // arenaAlignment(), fixed at planning
  std::vector<uint8_t> inArena_;
  uint32_t inArenaCount_ = 0;  // slots noted in this enqueue
  uint32_t arenaAlignment() const;
  std::vector<uint64_t> plannedSizes();
  void resetArena();
  void planOwnedSlots(bool enabled);
  void replanOwnedSlots();
  bool planned(uint32_t slot) const { return plan_.isPlanned(slot); }
  void notePlanned(uint32_t slot, uint64_t bytes);
  Error placePlanned();
  Error checkTransfers();
  Error ensureGrown(uint32_t slot, uint64_t bytes);
  std::vector<int64_t> exprStack_;
  std::string exprError_; // set when the graph's expressions cannot be evaluated here
  std::vector<ResolvedSlot> scratchSlots_;
  std::vector<uint64_t> scratchParams_;
  std::vector<uint8_t> written_;          // per slot: some node writes it
  std::vector<uint32_t> paramRangeNodes_; // kernel nodes whose nd-range reads a parameter
  bool literalRangesChecked_ = false;
  struct BoundRange {
    const Buffer *buffer;
    uint64_t begin, end;
    uint32_t slot;
  };
  std::vector<BoundRange> scratchRanges_;
  // The binding table and parameter values of the last enqueue whose checks passed
  // (the checks depend on nothing else while no update happens and the graph has no
  // stored expressions): an enqueue with the same buffers, of the same size and device,
  // the same ranges and the same values passes them again, so it skips them and
  // submits scratchSlots_ / scratchParams_ as they are, with sameAsLast_ set (a
  // buffer's size and device never change; Buffer::serial tells a buffer from a
  // successor at its address).
  struct CheckedBinding {
    const Buffer *buffer;
    uint64_t serial, offset, length;
  };
  std::vector<CheckedBinding> checkedBindings_;
  std::vector<uint64_t> checkedParams_;
  bool checkedOverride_ = false;
  bool checked_ = false;
  bool sameAsChecked(const BindingTable &bindings, const ParamValues &params) const;
  bool sameAsLast_ = false;
  void rememberChecked(const BindingTable &bindings, const ParamValues &params);
};

class Device {
public:
  virtual ~Device() = default;
  virtual const DeviceInfo &info() const = 0;

  virtual Expected<std::unique_ptr<Buffer>> allocate(uint64_t bytes, uint32_t alignment = 64) = 0;
  // Host <-> device transfers, synchronous. Range errors are reported, never clamped.
  virtual Error write(Buffer &dst, uint64_t offset, const void *src, uint64_t bytes) = 0;
  virtual Error read(Buffer &src, uint64_t offset, void *dst, uint64_t bytes) = 0;
  // Copies `bytes` from `src` (a buffer of device `from`: another device, or this one)
  // into `dst` (this device's) on a direct path: a peer copy where the driver has one
  // (cuda: cuMemcpyPeerAsync), a memcpy where both buffers are host memory (the
  // default). Synchronous. The caller orders it: the work that wrote `src` and the work
  // that uses `dst` have completed. ErrorCode::Unsupported where there is no direct
  // path: the caller stages through host memory (read + write). Range errors are
  // reported.
  virtual Error copyFromDevice(Device &from, Buffer &src, uint64_t srcOffset, Buffer &dst, uint64_t dstOffset,
                               uint64_t bytes);

  // Compiles kernels (through the binary cache) and builds the executable. What every
  // backend needs runs here once (lib/runtime/src/finalize.cpp): the graph is
  // validated (lib/graph) and flattened (subgraphs inlined, a stored plan checked);
  // collective nodes are checked against collectiveSupport() and the communicator
  // (present, of the right kind, the same collectives on every rank); a graph with
  // conditional nodes the backend does not take natively (runsConditionalsNatively)
  // becomes runtime-driven stages (staged.h). Then the backend's finalizeFlat. Errors
  // name the node.
  Expected<std::unique_ptr<Executable>> finalize(const Graph &graph, const FinalizeOptions &opts);
  // The same, taking the graph: flattened in place and moved into the executable
  // instead of copied (for graphs without Subgraph nodes: a 1000-node graph's copy is a
  // tenth of a warm finalize).
  Expected<std::unique_ptr<Executable>> finalizeOwned(Graph graph, const FinalizeOptions &opts);

  // How the backend runs collective nodes: not at all (finalize refuses such graphs),
  // as host steps through a host communicator (cpu), or on its streams through a
  // stream-ordered one (cuda).
  enum class CollectiveSupport { None, Host, Stream };
  virtual CollectiveSupport collectiveSupport() const { return CollectiveSupport::None; }
  // For CollectiveSupport::Stream: the device index the communicator must be on
  // (Communicator::deviceIndex; the CUDA ordinal); -1 takes any.
  virtual int communicatorDevice() const { return -1; }

protected:
  // What finalize hands the backend.
  struct FlatGraph {
    Graph graph;                     // validated and flat: no Subgraph nodes
    const Graph *original = nullptr; // the graph as given (child graphs per Subgraph
                                     // node); null when it was moved in (finalizeOwned)
    double flattenUs = 0;            // validation and flattening, microseconds
  };
  // The backend's part: compile the kernels and build the executable for `flat`.
  virtual Expected<std::unique_ptr<Executable>> finalizeFlat(FlatGraph flat, const FinalizeOptions &opts) = 0;
  // For a flat graph with conditional nodes: success where finalizeFlat builds them
  // natively; ErrorCode::Unsupported where they run as runtime-driven stages (the
  // default); any other error fails finalize.
  virtual Error runsConditionalsNatively(const Graph &flat, const FinalizeOptions &opts);

private:
  Expected<std::unique_ptr<Executable>> finalizeChecked(FlatGraph flat, const FinalizeOptions &opts);
};

// ---- backends ----------------------------------------------------------------------
// A backend probes its driver (dlopen) and reports what it found or why not.
struct BackendProbe {
  std::string backend; // "cpu", "opencl", ...
  bool available = false;
  std::string reason;              // why unavailable ("libcuda.so.1 not found", ...)
  std::vector<DeviceInfo> devices; // when available
};

class Backend {
public:
  virtual ~Backend() = default;
  virtual const char *name() const = 0;
  virtual BackendProbe probe() = 0;
  // Opens device `index` of this backend; the Backend owns it.
  virtual Expected<Device *> device(uint32_t index) = 0;
};

// The set of backends compiled into a program. Tools create one and add the backends
// they link (e.g. cgraph::cpu::makeCpuBackend()); lib/runtime depends on no backend.
class Registry {
public:
  void add(std::unique_ptr<Backend> backend);
  const std::vector<std::unique_ptr<Backend>> &backends() const { return backends_; }
  Backend *find(const std::string &name) const;
  // "cpu", "cpu:0", "opencl:1": backend name with optional device index.
  Expected<Device *> open(const std::string &spec) const;

private:
  std::vector<std::unique_ptr<Backend>> backends_;
};

} // namespace cgraph::rt

// ---- notes ---------------------------------------------------------------------------
// Executable::enqueue and the .cgf 2.2 expression fields. Kernel nd-ranges and arguments
// become Dim::param / ArgKind::Param (a host task argument too, keeping its Arg::type);
// copy and fill fields read 0 in graph() and come to backends through transfer().
// Per submission they must not be negative, fill fields must be multiples of the
// pattern, and every such copy or fill must lie inside its slots' sizes for this
// submission (`node 'c': dst offset 800 (= $n * 8) + bytes 400 (= $n * 4) is past the
// end of slot 'dst' (1024 bytes in this submission)`); 0 bytes does nothing. A slot
// whose size is an expression has that size in the submission (at least 1; a binding
// must hold it, the resolved range is exactly that long, graph() shows it unsized); a
// runtime-owned one is allocated by enqueue for the largest size seen and
// re-initialized when it grows (format/SPEC.md 5a): the growth waits for the previous
// submission and is the only allocation enqueue makes.
