// The GPU executable's submissions into a caller's stream capture (graph_executable.h
// captureInto): the table loader and every node launched on the device's stream while
// it is joined to the capture, so the caller's graph (torch.cuda.graph,
// cuStreamBeginCapture) holds cgraph's work as its own nodes.
#include "cgraph/backends/gpu_common/graph_executable.h"

namespace cgraph::gpu {

namespace {

// The event of a captured submission: nothing ran, nothing is pending (the work runs
// whenever the caller's graph is launched, ordered by the caller).
class CapturedEvent final : public rt::Event {
public:
  Error wait() override { return Error::success(); }
  bool isComplete() const override { return true; }
  const std::vector<rt::NodeTiming> &nodeTimings() const override { return none_; }

private:
  std::vector<rt::NodeTiming> none_;
};

} // namespace

Expected<rt::EventPtr> GraphExecutable::captureInto(const std::vector<ResolvedSlot> &slots,
                                                    const std::vector<uint64_t> &params,
                                                    const rt::SubmitOptions &opts) {
  const auto refuse = [](const std::string &why) {
    return makeError(ErrorCode::Unsupported, "cannot record this run into the caller's stream capture: " + why);
  };
  if (opts.afterNode) return refuse("a per-node callback needs the host between nodes");
  if (opts.profile) return refuse("node times need events between nodes");
  for (const PartGraph &pg : parts_)
    for (uint32_t n : pg.nodes) {
      if (graph_.nodes[n].kind == NodeKind::Host) return refuse(planLabel(n) + " is a host task");
      if (plans_[n].kind == NodePlan::Extension) return refuse(planLabel(n) + " has no captured form");
    }
  CGRAPH_RETURN_IF_ERROR(checkSubmit(opts));
  CGRAPH_RETURN_IF_ERROR(driver_->makeCurrent());
  Launch load;
  std::vector<uint64_t> values;
  if (Error e = capturedTableLoad(load, values))
    return refuse("the parameter table (" + std::to_string(table_.size()) + " entries): " + e.message());
  if (values.size() < table_.size()) return refuse("the table loader has room for fewer values (internal error)");
  setTable(slots, params);
  // The table by value in the loader's parameters: the driver copies them into the
  // captured node, so the caller's graph loads these values whenever it runs.
  std::copy(table_.begin(), table_.end(), values.begin());
  // From here on the device's table may hold what the caller's graph last loaded.
  tableShared_ = true;
  uploaded_.clear();
  lastSubmitDone_ = false;
  // runNodeEager sets the launches of parameter-dependent ranges and transfers to this
  // run's values in place; the replay graphs' updates compare against those launches,
  // so they get their old values back afterwards.
  std::vector<std::pair<uint32_t, Launch>> saved;
  for (uint32_t n = 0; n < graph_.nodes.size(); ++n)
    if (plans_[n].paramRange || plans_[n].exprTransfer) saved.emplace_back(n, plans_[n].launch);
  Error e = driver_->streamJoin(opts.stream);
  if (!e) e = driver_->launchKernel(load).withContext("the table loader (captured)");
  capturing_ = true;
  for (size_t i = 0; i < parts_.size() && !e; ++i)
    for (size_t k = 0; k < parts_[i].nodes.size() && !e; ++k) e = runNodeEager(parts_[i].nodes[k], params);
  capturing_ = false;
  // The caller's stream waits for what was recorded, which also ends the device's
  // stream's part in the capture (a capture must end on the stream it began on).
  if (Error s = driver_->streamSignal(opts.stream); s && !e) e = std::move(s);
  for (auto &[n, l] : saved) {
    plans_[n].launch = std::move(l);
    plans_[n].launch.bind();
  }
  if (e) return e;
  return rt::EventPtr(std::make_shared<CapturedEvent>());
}

} // namespace cgraph::gpu
