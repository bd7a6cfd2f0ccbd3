// Runtime-driven conditional nodes: the staged executable (staged.h says what it does).
#include "cgraph/runtime/staged.h"

#include "stages.h"

#include <algorithm>
#include <chrono>

namespace cgraph::rt {

namespace {
using detail::DoneEvent;
using detail::makeExternal;
using detail::stageGraph;

class StagedExecutable : public Executable {
public:
  StagedExecutable(Device &device, Graph flat, ExecMode mode)
      : Executable(device, flat, mode), plan_(std::move(flat)) {}

  Error build(const FinalizeOptions &opts) {
    auto owned = allocateOwnedSlots(opts.host, 1, opts.planMemory);
    if (!owned) return owned.error();
    owned_ = std::move(*owned);
    const Graph &g = plan_;
    std::vector<uint32_t> run;
    auto flush = [&]() -> Error {
      if (run.empty()) return Error::success();
      Stage st;
      st.nodes = run;
      auto exe = device_->finalizeOwned(stageGraph(g, run), opts);
      if (!exe) return exe.error();
      st.exe = std::move(*exe);
      stages_.push_back(std::move(st));
      run.clear();
      return Error::success();
    };
    for (uint32_t n : g.order) {
      if (g.nodes[n].kind != NodeKind::Conditional) {
        run.push_back(n);
        continue;
      }
      CGRAPH_RETURN_IF_ERROR(flush());
      const Node &node = g.nodes[n];
      Graph body = g.subgraphs[node.subgraph];
      makeExternal(body.slots); // every body slot is one of the parent's
      Stage st;
      st.cond = n;
      for (const Param &p : body.params) st.paramMap.push_back(g.findParam(p.name));
      auto exe = device_->finalize(body, opts);
      if (!exe) return exe.error().withContext(nodeLabel(g, n) + ": body");
      st.exe = std::move(*exe);
      stages_.push_back(std::move(st));
    }
    return flush();
  }

protected:
  Expected<EventPtr> submit(const std::vector<ResolvedSlot> &slots, const std::vector<uint64_t> &params,
                            const SubmitOptions &opts) override {
    for (const EventPtr &e : opts.waitFor)
      if (e) CGRAPH_RETURN_IF_ERROR(e->wait().withContext("a waited-for submission failed"));
    const Graph &g = plan_;
    BindingTable all;
    all.overrideInternal = true;
    all.slots.resize(g.slots.size());
    for (size_t s = 0; s < g.slots.size(); ++s) {
      Binding &b = all.slots[s];
      if (slots[s].buffer) {
        b = Binding{slots[s].buffer, slots[s].offset, slots[s].length};
      } else if (s < owned_.size() && owned_[s]) {
        b = Binding{owned_[s].get(), 0, 0};
      }
    }
    ParamValues pv;
    pv.bits.assign(params.begin(), params.begin() + g.params.size());
    std::vector<NodeTiming> timings;
    const auto t0 = std::chrono::steady_clock::now();
    Error e = runStages(all, pv, opts, timings, t0);
    return EventPtr(std::make_shared<DoneEvent>(std::move(e), std::move(timings)));
  }

  // Each updated node is in one ordinary stage: the stage executable gets the node's
  // new state (it checks and applies it natively). A conditional node can only be
  // enabled or disabled; its body's nodes are not nodes of graph().
  Error applyUpdate(const std::vector<uint32_t> &nodes) override {
    for (uint32_t n : nodes) {
      if (plan_.nodes[n].kind == NodeKind::Conditional) continue; // runStages reads nodeEnabled
      for (Stage &st : stages_) {
        auto it = std::find(st.nodes.begin(), st.nodes.end(), n);
        if (st.cond != kNone || it == st.nodes.end()) continue;
        auto u = detail::forwardedUpdate(plan_, graph_, n, uint32_t(it - st.nodes.begin()), nodeEnabled(n), nullptr);
        if (!u) return u.error();
        CGRAPH_RETURN_IF_ERROR(st.exe->update(*u));
      }
    }
    return Error::success();
  }

private:
  struct Stage {
    std::vector<uint32_t> nodes; // ordinary stage: its nodes in plan_ (stage node i = nodes[i])
    uint32_t cond = kNone;       // conditional stage: the node
    std::vector<uint32_t> paramMap; // body param i = plan_ param paramMap[i]
    std::unique_ptr<Executable> exe;
  };

  Error runOnce(Stage &st, const BindingTable &b, const ParamValues &pv, const SubmitOptions &opts,
                std::vector<NodeTiming> &timings, std::chrono::steady_clock::time_point t0) {
    SubmitOptions so;
    so.profile = opts.profile;
    if (opts.afterNode && st.cond == kNone)
      so.afterNode = [&](uint32_t n) { return opts.afterNode(st.nodes[n]); };
    const uint64_t startNs = uint64_t(
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count());
    auto ev = st.exe->enqueue(b, pv, so);
    if (!ev) return ev.error();
    CGRAPH_RETURN_IF_ERROR((*ev)->wait());
    if (!opts.profile || st.cond != kNone) return Error::success();
    for (NodeTiming t : (*ev)->nodeTimings()) {
      // Relative to the stage's submission, which started startNs after this one's.
      t.node = st.nodes[t.node];
      t.startNs += startNs;
      t.endNs += startNs;
      timings.push_back(t);
    }
    return Error::success();
  }

  Error runStages(const BindingTable &all, const ParamValues &pv, const SubmitOptions &opts,
                  std::vector<NodeTiming> &timings, std::chrono::steady_clock::time_point t0) {
    const Graph &g = plan_;
    for (Stage &st : stages_) {
      if (st.cond == kNone) {
        CGRAPH_RETURN_IF_ERROR(runOnce(st, all, pv, opts, timings, t0));
        continue;
      }
      if (!nodeEnabled(st.cond)) continue; // disabled: neither the condition nor the body runs
      const Node &node = g.nodes[st.cond];
      const CondOp &cd = node.cond;
      const Binding &cb = all.slots[cd.slot];
      BindingTable body;
      body.overrideInternal = true;
      for (uint32_t s : node.subgraphSlots) body.slots.push_back(all.slots[s]);
      ParamValues bp;
      for (uint32_t p : st.paramMap) bp.bits.push_back(pv.bits[p]);
      const std::string what = std::string(condKindName(cd.kind)) + " " + nodeLabel(g, st.cond);
      for (uint32_t trips = 0;; ++trips) {
        uint32_t value = 0;
        CGRAPH_RETURN_IF_ERROR(
            device_->read(*cb.buffer, cb.offset + cd.offset, &value, 4).withContext(what + ": reading the condition"));
        if (value == 0) break;
        if (cd.kind == CondKind::While && trips == cd.maxTrips)
          return makeError(what + ": the condition is still nonzero after " + std::to_string(trips) +
                           " trips (its maximum)");
        CGRAPH_RETURN_IF_ERROR(runOnce(st, body, bp, opts, timings, t0).withContext(what));
        if (cd.kind == CondKind::If) break;
      }
      if (opts.afterNode) CGRAPH_RETURN_IF_ERROR(opts.afterNode(st.cond));
    }
    return Error::success();
  }

  Graph plan_; // the flattened graph as given (Executable::graph() may have rewritten fields)
  std::vector<std::unique_ptr<Buffer>> owned_;
  std::vector<Stage> stages_;
};

} // namespace

bool hasConditionals(const Graph &flattened) {
  for (const Node &n : flattened.nodes)
    if (n.kind == NodeKind::Conditional) return true;
  return false;
}

Expected<std::unique_ptr<Executable>> finalizeStaged(Device &device, Graph flattened,
                                                     const FinalizeOptions &opts) {
  auto exe = std::make_unique<StagedExecutable>(device, std::move(flattened), opts.mode);
  CGRAPH_RETURN_IF_ERROR(exe->build(opts));
  return std::unique_ptr<Executable>(std::move(exe));
}

} // namespace cgraph::rt
