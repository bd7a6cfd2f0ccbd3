// The executable graph: a pre-resolved schedule. Finalize compiles every kernel and
// packs each kernel node's argument block once, with a patch list of (arg, slot,
// offset) and (arg, param); an enqueue copies one base pointer per slot and the
// parameter bits, and the submission thread patches and runs. Nodes run level by
// level (level = longest path from a root): nodes of one level are independent, so a
// level wider than one runs its nodes concurrently on the TBB pool; a chain runs on the
// submission thread with no scheduling at all.
// Eager mode runs the same nodes one at a time, synchronously on the calling thread,
// through the ordinary path: per node the kernel is looked up by name, its argument
// block built from the binding table, the launch geometry resolved, then it runs to
// completion (like clSetKernelArg + clEnqueueNDRangeKernel + clFinish).
#include "device.h"
#include "parallel.h"

#include "cgraph/graph/labels.h"
#include "cgraph/graph/order.h"
#include "cgraph/runtime/finalize_progress.h"
#include "cgraph/runtime/host_tasks.h"
#include "collective.h"
#include "cgraph/runtime/slot_init.h"


#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

namespace cgraph::cpu {

namespace {

using Clock = std::chrono::steady_clock;

struct Patch {
  uint32_t arg;
  uint32_t index;  // slot or param
  uint64_t offset; // slot byte offset
  bool param;
};

struct PreparedNode {
  uint32_t node = 0;
  NodeKind kind = NodeKind::Barrier;
  std::shared_ptr<const CompiledModule> module; // keeps `kernel` alive
  const JitKernel *kernel = nullptr;
  std::vector<uint64_t> args;
  std::vector<Patch> patches;
  uint64_t localBytes = 0;
  Launch launch;
  LaunchPlan plan; // of `launch` (a fixed range: planned at finalize)
  bool rangeFromParams = false;
  // Replay's kernel when it is specialized for the launch's shape (`kernel` then points
  // into it; eager runs look the general kernel up in `module`).
  std::shared_ptr<const CompiledModule> specialized;
  // Bounds-checked kernels: the launch's table (internal.h BoundsTable), whose address
  // is the argument block's last word.
  std::vector<uint64_t> bounds;
};

// Replay nodes with a fixed range run their kernel compiled for the launch's work-group
// shape (internal.h's LocalSpecialization) where every group is full and the kernel
// observes its shape or has loops or barriers (PoCL compiles per shape: loop_result's
// `% get_local_size(0)` and its loop to the local size took it 0.9 us a launch, the
// general kernel 1.2). At most this many shapes per kernel and executable: each is a
// compile of its own (kept in the kernel cache).
constexpr size_t kMaxShapesPerKernel = 4;

// Runs submissions one at a time, in FIFO order. A submission that finds the queue idle
// (nothing queued, nothing running) runs on the caller's thread: no hand-off, no
// wake-up, and the event is complete when enqueue returns (IREE's local-sync idea).
// Otherwise it is queued for a worker thread, started on first use, that sleeps on a
// condition variable when there is nothing to do: no thread spins while idle.
class SubmitQueue {
public:
  ~SubmitQueue() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
  }
  // Runs `fn` now if the queue is idle and `inlineOk`; queues it otherwise.
  template <typename F> void submit(F &&fn, bool inlineOk) {
    {
      std::unique_lock<std::mutex> lock(mutex_);
      if (!inlineOk || running_ || !queue_.empty()) {
        if (!thread_.joinable()) thread_ = std::thread([this] { loop(); });
        queue_.emplace_back(std::forward<F>(fn));
        lock.unlock();
        cv_.notify_one();
        return;
      }
      running_ = true;
    }
    fn();
    bool more;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      running_ = false;
      more = !queue_.empty();
    }
    if (more) cv_.notify_one();
  }

private:
  void loop() {
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      cv_.wait(lock, [&] { return stop_ || (!running_ && !queue_.empty()); });
      if (queue_.empty()) return; // stop_, and everything queued has run
      std::function<void()> fn = std::move(queue_.front());
      queue_.pop_front();
      running_ = true;
      lock.unlock();
      fn();
      lock.lock();
      running_ = false;
    }
  }
  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> queue_;
  bool running_ = false; // a submission runs (on the worker or on a caller's thread)
  bool stop_ = false;
  std::thread thread_;
};

// Bounds-checked launches: sets `table` up for node `n`'s launch (the bindings' sizes:
// from each argument's offset to the end of its slot's binding; __local sizes) and
// points `args`' last word at it. `length`: the submission's slots' binding lengths.
void setBounds(const Graph &g, uint32_t n, uint64_t localBytes, const std::vector<uint64_t> &length,
               std::vector<uint64_t> &table, uint64_t *args) {
  const Node &node = g.nodes[n];
  table.assign(kBoundsSizes + node.args.size(), 0);
  table[kBoundsLocalBytes] = localBytes;
  for (size_t a = 0; a < node.args.size(); ++a) {
    const Arg &arg = node.args[a];
    if (arg.kind == ArgKind::LocalMem) table[kBoundsSizes + a] = arg.value;
    if (arg.kind != ArgKind::Slot) continue;
    const uint64_t len = length[arg.index];
    table[kBoundsSizes + a] = arg.value < len ? len - arg.value : 0;
  }
  args[node.args.size()] = uint64_t(uintptr_t(table.data()));
}

// The error of a bounds-checked launch whose access failed (the table's fields), with
// the node's label: "node 'k2' (kernel 'axpy'): argument 1 ('y'): access at byte 4096
// outside its 4096-byte binding (4-byte write)". Success when none failed.
Error boundsError(const Graph &g, uint32_t n, const std::vector<uint64_t> &table) {
  if (table.empty() || !table[kBoundsFailed]) return Error::success();
  const Node &node = g.nodes[n];
  const Kernel &k = g.kernels[node.kernel];
  std::string m = nodeLabel(g, n) + " (kernel '" + k.name + "'): ";
  const uint64_t arg = table[kBoundsArg];
  const std::string what = " (" + std::to_string(table[kBoundsBytes]) + "-byte " +
                           (table[kBoundsWrite] ? "write" : "read") + ")";
  const std::string at = "access at byte " + std::to_string(int64_t(table[kBoundsOffset])) + " outside ";
  const std::string size = std::to_string(table[kBoundsObject]) + "-byte ";
  if (arg < node.args.size()) {
    m += "argument " + std::to_string(arg);
    if (arg < k.params.size() && !k.params[arg].name.empty()) m += " ('" + k.params[arg].name + "')";
    m += ": " + at + "its " + size + (node.args[arg].kind == ArgKind::LocalMem ? "__local allocation" : "binding") +
         what;
  } else if (arg == kBoundsVariable) {
    m += at + "its " + size + "private or program-scope variable" + what;
  } else if (arg == kBoundsLocalBlock) {
    m += at + "the work-group's " + size + "__local memory" + what;
  } else {
    char addr[32];
    std::snprintf(addr, sizeof addr, "0x%llx", static_cast<unsigned long long>(table[kBoundsOffset]));
    m += std::string("access at address ") + addr + " outside every buffer argument's binding" + what;
  }
  return makeError(m);
}

// Adds the node's label to a failed node's error, unless boundsError or the host task
// (rt::HostTasks names its node) gave it one.
Error withNode(const Graph &g, uint32_t n, Error e) {
  if (!e) return e;
  const std::string label = nodeLabel(g, n);
  if (e.message().rfind(label + " (kernel '", 0) == 0) return e;
  if (g.nodes[n].kind == NodeKind::Host && e.message().rfind(label + ": ", 0) == 0) return e;
  if (g.nodes[n].kind == NodeKind::Collective && e.message().rfind(label + " (rank ", 0) == 0) return e;
  return e.withContext(label);
}

uint64_t dimValue(const Dim &d, const std::vector<uint64_t> &params) {
  return d.param == kNone ? d.value : params[d.param];
}

struct Submission {
  std::vector<char *> base;     // per slot
  std::vector<uint64_t> length; // per slot
  std::vector<uint64_t> params;
  rt::SubmitOptions opts;
  std::shared_ptr<CpuEvent> event;
};

class CpuExecutable : public rt::Executable {
public:
  CpuExecutable(CpuDevice &device, Graph flat, const rt::FinalizeOptions &opts)
      : Executable(device, std::move(flat), opts.mode), cpu_(device), useCache_(opts.useCache),
        checkBounds_(device.options().checkBounds), comm_(opts.communicator),
        collectiveTimeout_(opts.collectiveTimeout) {}

  Error prepare(const rt::FinalizeOptions &opts) {
    const Graph &g = graph_;
    progress_ = rt::ModuleProgress(opts, g.modules.size());
    // The plan is the graph's stored order and partitions (flattenSubgraphs checked or
    // computed them). Partitions run in index order, which respects their deps; inside
    // a partition nodes run level by level (level = longest path over the partition's
    // own edges), so the nodes of one level are independent.
    order_ = g.order;
    std::vector<uint32_t> partOf(g.nodes.size(), 0);
    for (uint32_t p = 0; p < g.partitions.size(); ++p)
      for (uint32_t n : g.partitions[p].nodes) partOf[n] = p;
    std::vector<std::vector<uint32_t>> succ(g.nodes.size());
    for (const Edge &e : g.edges)
      if (partOf[e.from] == partOf[e.to]) succ[e.from].push_back(e.to);
    std::vector<uint32_t> level(g.nodes.size(), 0);
    levels_.clear();
    for (const cgraph::Partition &part : g.partitions) {
      uint32_t maxLevel = 0;
      for (uint32_t n : part.nodes) {
        maxLevel = std::max(maxLevel, level[n]);
        for (uint32_t s : succ[n]) level[s] = std::max(level[s], level[n] + 1);
      }
      const size_t base = levels_.size();
      levels_.resize(base + maxLevel + 1);
      for (uint32_t n : part.nodes) levels_[base + level[n]].push_back(n);
    }
    nodes_.resize(g.nodes.size());

    // Runtime-owned slots live as long as the executable.
    auto owned = allocateOwnedSlots(opts.host, 64, opts.planMemory);
    if (!owned) return owned.error();
    storage_ = std::move(*owned);

    bool hasHost = false;
    for (uint32_t n = 0; n < g.nodes.size(); ++n) {
      const Node &node = g.nodes[n];
      PreparedNode &p = nodes_[n];
      p.node = n;
      p.kind = node.kind;
      if (node.kind == NodeKind::Host) hasHost = true;
      if (node.kind == NodeKind::Collective) hasCollectives_ = true;
      if (node.kind != NodeKind::Kernel) continue;
      CGRAPH_RETURN_IF_ERROR(prepareKernel(n, p).withContext(nodeLabel(g, n)));
      // Alternatives in other modules are compiled now (a switch then finds them in the
      // compiler's cache, and a module that does not build fails here, not at update).
      for (uint32_t k : node.alternatives) {
        if (g.kernels[k].module == g.kernels[node.kernel].module) continue;
        auto compiled = compileModule(g.kernels[k].module);
        if (!compiled) return compiled.error().withContext(nodeLabel(g, n) + ": alternative '" + g.kernels[k].name + "'");
      }
    }
    if (hasHost) {
      auto h = rt::HostTasks::prepare(g, opts.host);
      if (!h) return h.error();
      host_ = std::move(*h);
    }
    progress_ = rt::ModuleProgress(); // the caller's callback is not kept past finalize
    return Error::success();
  }

  // Every kernel of the module, compiled (or found in the compiler's cache).
  Expected<std::shared_ptr<const CompiledModule>> compileModule(uint32_t module) {
    std::vector<std::string> names;
    for (const Kernel &k : graph_.kernels)
      if (k.module == module) names.push_back(k.name);
    auto compiled = cpu_.compiler().get(graph_.modules[module], names, useCache_, checkBounds_);
    if (compiled) progress_.ready(module);
    return compiled;
  }

  Error prepareKernel(uint32_t n, PreparedNode &p) {
    const Graph &g = graph_;
    const Node &node = g.nodes[n];
    const Kernel &kern = g.kernels[node.kernel];
    const KernelModule &mod = g.modules[kern.module];
    auto compiled = compileModule(kern.module);
    if (!compiled) return compiled.error();
    p.module = *compiled;
    p.kernel = p.module->find(kern.name);
    if (!p.kernel) return makeError("kernel '" + kern.name + "' not found in module '" + mod.name + "'");
    if (node.args.size() != p.kernel->numParams)
      return makeError("kernel '" + kern.name + "' takes " + std::to_string(p.kernel->numParams) +
                       " arguments, the node gives " + std::to_string(node.args.size()));
    // A bounds-checked kernel's block ends with its table's address (set per run).
    p.args.assign(node.args.size() + (p.kernel->checked ? 1 : 0), 0);
    uint64_t local = p.kernel->staticLocalBytes;
    for (uint32_t a = 0; a < node.args.size(); ++a) {
      const Arg &arg = node.args[a];
      switch (arg.kind) {
      case ArgKind::Slot: p.patches.push_back({a, arg.index, arg.value, false}); break;
      case ArgKind::Param: p.patches.push_back({a, arg.index, 0, true}); break;
      case ArgKind::Scalar: p.args[a] = arg.value; break;
      case ArgKind::LocalMem:
        local = (local + 127) / 128 * 128;
        p.args[a] = local;
        local += arg.value;
        break;
      case ArgKind::String: return makeError("arg " + std::to_string(a) + " is a string (host tasks only)");
      }
    }
    p.localBytes = local;
    const NDRange &r = node.range;
    for (int d = 0; d < 3; ++d)
      p.rangeFromParams = p.rangeFromParams || r.global[d].param != kNone || r.local[d].param != kNone ||
                          r.offset[d].param != kNone;
    if (!p.rangeFromParams) {
      resolveLaunch(p, r, {});
      CGRAPH_RETURN_IF_ERROR(specialize(p, node.kernel));
    }
    return Error::success();
  }

  // Swaps `p`'s replay kernel for one specialized for its planned shape where that
  // applies (kMaxShapesPerKernel above). Errors: the specialized compile failing.
  Error specialize(PreparedNode &p, uint32_t kernel) {
    if (mode_ == rt::ExecMode::Eager) return Error::success();
    if (!p.kernel->heavy && !p.kernel->groupShape) return Error::success();
    const Launch &l = p.plan.l;
    LocalSpecialization spec;
    spec.kernel = graph_.kernels[kernel].name;
    for (int d = 0; d < 3; ++d) {
      if (l.global[d] % l.local[d] != 0) return Error::success(); // a partial group
      spec.local[d] = l.local[d];
    }
    std::shared_ptr<const CompiledModule> *slot = nullptr;
    size_t shapes = 0;
    for (Shape &s : shapes_) {
      if (s.kernel != kernel) continue;
      ++shapes;
      if (std::equal(s.local, s.local + 3, spec.local)) slot = &s.module;
    }
    if (!slot) {
      if (shapes >= kMaxShapesPerKernel) return Error::success();
      auto compiled = cpu_.compiler().getSpecialized(graph_.modules[graph_.kernels[kernel].module], spec,
                                                     useCache_, checkBounds_);
      if (!compiled)
        return compiled.error().withContext("kernel '" + spec.kernel + "' specialized for local size " +
                                            std::to_string(spec.local[0]) + "x" + std::to_string(spec.local[1]) +
                                            "x" + std::to_string(spec.local[2]));
      shapes_.push_back({kernel, {spec.local[0], spec.local[1], spec.local[2]}, *compiled});
      slot = &shapes_.back().module;
    }
    const JitKernel *k = (*slot)->find(spec.kernel);
    if (!k) return makeError("kernel '" + spec.kernel + "' missing from its specialized module");
    LaunchPlan plan;
    planLaunch(*k, p.localBytes, p.launch, plan);
    // (The same kernel facts plan the same groups; were they to differ, the general
    // kernel stays.)
    if (!std::equal(plan.l.local, plan.l.local + 3, spec.local)) return Error::success();
    p.specialized = *slot;
    p.kernel = k;
    p.plan = plan;
    return Error::success();
  }

  // `plan`: also plan the launch for runPlanned (replay); eager runs through runKernel.
  void resolveLaunch(PreparedNode &p, const NDRange &r, const std::vector<uint64_t> &params,
                     bool plan = true) {
    Launch &l = p.launch;
    l.dims = r.dims;
    for (uint32_t d = 0; d < 3; ++d) {
      l.global[d] = d < r.dims ? std::max<uint64_t>(dimValue(r.global[d], params), 1) : 1;
      l.offset[d] = d < r.dims ? dimValue(r.offset[d], params) : 0;
      l.local[d] = 1;
    }
    if (r.hasLocal()) {
      for (uint32_t d = 0; d < r.dims; ++d) l.local[d] = std::max<uint64_t>(dimValue(r.local[d], params), 1);
    } else {
      chooseLocalSize(*p.kernel, graph_.kernels[graph_.nodes[p.node].kernel], l);
    }
    if (plan) planLaunch(*p.kernel, p.localBytes, l, p.plan);
  }

  Expected<rt::EventPtr> submit(const std::vector<ResolvedSlot> &slots, const std::vector<uint64_t> &params,
                                const rt::SubmitOptions &opts) override {
    auto sub = std::make_shared<Submission>();
    sub->base.resize(slots.size());
    sub->length.resize(slots.size());
    for (size_t s = 0; s < slots.size(); ++s) {
      const ResolvedSlot &r = slots[s];
      if (r.buffer) {
        sub->base[s] = static_cast<char *>(r.buffer->hostPointer()) + r.offset;
        sub->length[s] = r.length;
      } else if (storage_[s]) {
        sub->base[s] = static_cast<char *>(storage_[s]->hostPointer());
        sub->length[s] = storage_[s]->size();
      }
    }
    sub->params = params;
    sub->opts = opts;
    sub->event = std::make_shared<CpuEvent>();
    rt::EventPtr ev = sub->event;
    if (mode_ == rt::ExecMode::Eager) {
      runEager(*sub);
      return ev;
    }
    // Inline only when nothing it waits for is pending: a caller may enqueue work that
    // waits for an event it completes later, and must not block in enqueue.
    bool inlineOk = true;
    for (const rt::EventPtr &e : opts.waitFor)
      if (e && !e->isComplete()) inlineOk = false;
    queue_.submit([this, sub] { runReplay(*sub); }, inlineOk);
    return ev;
  }

  Error waitDeps(const Submission &sub) {
    for (const rt::EventPtr &e : sub.opts.waitFor)
      if (e) CGRAPH_RETURN_IF_ERROR(e->wait().withContext("a waited-for submission failed"));
    return Error::success();
  }

  Error applyUpdate(const std::vector<uint32_t> &nodes) override {
    for (uint32_t n : nodes) {
      if (graph_.nodes[n].kind != NodeKind::Kernel) continue;
      PreparedNode fresh;
      fresh.node = n;
      fresh.kind = NodeKind::Kernel;
      CGRAPH_RETURN_IF_ERROR(prepareKernel(n, fresh).withContext(nodeLabel(graph_, n)));
      nodes_[n] = std::move(fresh);
    }
    return Error::success();
  }

  Error runNode(PreparedNode &p, const Submission &sub) {
    if (!nodeEnabled(p.node)) return Error::success(); // disabled: its edges still order
    const Node &node = graph_.nodes[p.node];
    switch (p.kind) {
    case NodeKind::Kernel: {
      for (const Patch &pt : p.patches)
        p.args[pt.arg] = pt.param ? sub.params[pt.index] : uint64_t(uintptr_t(sub.base[pt.index] + pt.offset));
      if (p.rangeFromParams) resolveLaunch(p, node.range, sub.params);
      if (!p.kernel->checked) return runPlanned(*p.kernel, p.args.data(), p.plan);
      setBounds(graph_, p.node, p.localBytes, sub.length, p.bounds, p.args.data());
      CGRAPH_RETURN_IF_ERROR(runPlanned(*p.kernel, p.args.data(), p.plan));
      return boundsError(graph_, p.node, p.bounds);
    }
    case NodeKind::Copy: {
      const CopyOp &c = node.copy;
      const Transfer t = transfer(p.node, sub.params); // fields may be expressions
      if (t.bytes)
        std::memmove(sub.base[c.dstSlot] + t.dstOffset, sub.base[c.srcSlot] + t.srcOffset, t.bytes);
      return Error::success();
    }
    case NodeKind::CopyRect: {
      const CopyOp &c = node.copy;
      const uint64_t srp = c.srcRowPitch ? c.srcRowPitch : c.region[0];
      const uint64_t ssp = c.srcSlicePitch ? c.srcSlicePitch : srp * c.region[1];
      const uint64_t drp = c.dstRowPitch ? c.dstRowPitch : c.region[0];
      const uint64_t dsp = c.dstSlicePitch ? c.dstSlicePitch : drp * c.region[1];
      const char *src = sub.base[c.srcSlot] + c.srcOffset;
      char *dst = sub.base[c.dstSlot] + c.dstOffset;
      for (uint64_t z = 0; z < c.region[2]; ++z)
        for (uint64_t y = 0; y < c.region[1]; ++y)
          std::memmove(dst + z * dsp + y * drp, src + z * ssp + y * srp, c.region[0]);
      return Error::success();
    }
    case NodeKind::Fill: {
      const FillOp &f = node.fill;
      const Transfer t = transfer(p.node, sub.params);
      rt::fillPattern(sub.base[f.slot] + t.dstOffset, t.bytes, f.pattern.data(), f.pattern.size());
      return Error::success();
    }
    case NodeKind::Host: {
      std::vector<rt::HostSpan> spans(sub.base.size());
      for (size_t s = 0; s < spans.size(); ++s) {
        spans[s].data = sub.base[s];
        spans[s].size = sub.length[s];
      }
      return host_->run(p.node, spans, sub.params);
    }
    case NodeKind::Collective: // finalize checked that there is a communicator
      return runCollective(graph_, p.node, collective(p.node, sub.params), sub.base.data(), sub.length.data(),
                           *comm_, collectiveTimeout_);
    case NodeKind::Barrier:
    case NodeKind::Subgraph:
    case NodeKind::Conditional: return Error::success(); // flattened / staged before here
    }
    return Error::success();
  }

  void runReplay(Submission &sub) {
    Error err = waitDeps(sub);
    std::vector<rt::NodeTiming> timings;
    const bool profile = sub.opts.profile;
    const Clock::time_point t0 = Clock::now();
    if (profile) timings.resize(graph_.nodes.size());
    auto timed = [&](uint32_t n) -> Error {
      if (!profile) return runNode(nodes_[n], sub);
      rt::NodeTiming &t = timings[n];
      t.node = n;
      t.lane = parallelLane();
      t.startNs = uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t0).count());
      Error e = runNode(nodes_[n], sub);
      t.endNs = uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t0).count());
      return e;
    };
    for (size_t lv = 0; lv < levels_.size() && !err; ++lv) {
      const std::vector<uint32_t> &nodes = levels_[lv];
      if (nodes.size() == 1) {
        // The label only on failure: building it costs more than a small kernel.
        if (Error e = timed(nodes[0])) err = withNode(graph_, nodes[0], std::move(e));
        continue;
      }
      // Results are published under a mutex: the join inside libtbb is invisible to
      // ThreadSanitizer (libtbb is not instrumented), the mutex is not. First in node
      // order wins, so the reported error does not depend on scheduling.
      std::mutex errMutex;
      size_t errAt = nodes.size();
      Error levelErr;
      parallelFor(0, nodes.size(), 1, Partition::Dynamic, [&](uint64_t b, uint64_t end) {
        for (size_t i = b; i < end; ++i) {
          Error e = withNode(graph_, nodes[i], timed(nodes[i]));
          // Taken by every node (not only failing ones) so that its timing record is
          // also ordered before the read below, as far as ThreadSanitizer can tell.
          std::lock_guard<std::mutex> lock(errMutex);
          if (e && i < errAt) {
            errAt = i;
            levelErr = std::move(e);
          }
        }
      });
      std::lock_guard<std::mutex> lock(errMutex);
      if (levelErr) err = std::move(levelErr);
    }
    // Sends a collective left in flight are delivered before the event completes.
    if (!err && comm_ && hasCollectives_) err = comm_->flush(collectiveTimeout_);
    sub.event->complete(std::move(err), std::move(timings));
  }

  void runEager(Submission &sub) {
    Error err = waitDeps(sub);
    std::vector<rt::NodeTiming> timings;
    const Clock::time_point t0 = Clock::now();
    for (uint32_t n : order_) {
      if (err) break;
      const Node &node = graph_.nodes[n];
      const uint64_t start = uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t0).count());
      if (!nodeEnabled(n)) {
        // disabled: nothing runs
      } else if (node.kind == NodeKind::Kernel) {
        // As an application would: kernel object looked up by name (created once, like
        // clCreateKernel), arguments set from the binding table, launch, finish.
        const PreparedNode &pre = nodes_[n];
        const JitKernel *k = pre.module->find(graph_.kernels[node.kernel].name);
        std::vector<uint64_t> args(node.args.size() + (k->checked ? 1 : 0));
        uint64_t local = k->staticLocalBytes;
        for (size_t a = 0; a < node.args.size(); ++a) {
          const Arg &arg = node.args[a];
          switch (arg.kind) {
          case ArgKind::Slot: args[a] = uint64_t(uintptr_t(sub.base[arg.index] + arg.value)); break;
          case ArgKind::Param: args[a] = sub.params[arg.index]; break;
          case ArgKind::Scalar: args[a] = arg.value; break;
          case ArgKind::LocalMem:
            local = (local + 127) / 128 * 128;
            args[a] = local;
            local += arg.value;
            break;
          case ArgKind::String: break;
          }
        }
        PreparedNode p;
        p.node = n;
        p.kernel = k;
        resolveLaunch(p, node.range, sub.params, false);
        std::vector<uint64_t> bounds;
        if (k->checked) setBounds(graph_, n, local, sub.length, bounds, args.data());
        Error e = runKernel(*k, args.data(), local, p.launch);
        if (!e) e = boundsError(graph_, n, bounds);
        err = withNode(graph_, n, std::move(e));
      } else {
        err = withNode(graph_, n, runNode(nodes_[n], sub));
      }
      // Eager callers (cgrun compare) read this node's results before the next runs.
      if (!err && sub.opts.afterNode) err = sub.opts.afterNode(n);
      if (sub.opts.profile) {
        rt::NodeTiming t;
        t.node = n;
        t.startNs = start;
        t.endNs = uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t0).count());
        timings.push_back(t);
      }
    }
    // Sends a collective left in flight are delivered before the event completes.
    if (!err && comm_ && hasCollectives_) err = comm_->flush(collectiveTimeout_);
    sub.event->complete(std::move(err), std::move(timings));
  }

  ~CpuExecutable() override = default;

private:
  CpuDevice &cpu_;
  bool useCache_;
  rt::ModuleProgress progress_; // during prepare only
  bool checkBounds_; // the device's CpuOptions::checkBounds
  std::vector<uint32_t> order_;
  std::vector<std::vector<uint32_t>> levels_;
  std::vector<PreparedNode> nodes_;
  // Specialized kernels compiled for this executable, by kernel and shape.
  struct Shape {
    uint32_t kernel;
    uint64_t local[3];
    std::shared_ptr<const CompiledModule> module;
  };
  std::vector<Shape> shapes_;
  std::vector<std::unique_ptr<rt::Buffer>> storage_;
  std::unique_ptr<rt::HostTasks> host_;
  rt::Communicator *comm_; // not owned (FinalizeOptions::communicator)
  std::chrono::milliseconds collectiveTimeout_;
  bool hasCollectives_ = false;
  SubmitQueue queue_; // last: joined first, before the state it uses goes away
};

} // namespace

Expected<std::unique_ptr<rt::Executable>> makeExecutable(CpuDevice &device, Graph flat,
                                                         const rt::FinalizeOptions &opts) {
  auto exe = std::make_unique<CpuExecutable>(device, std::move(flat), opts);
  CGRAPH_RETURN_IF_ERROR(exe->prepare(opts));
  return std::unique_ptr<rt::Executable>(std::move(exe));
}

} // namespace cgraph::cpu
