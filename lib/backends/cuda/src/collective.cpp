// Collective nodes on cuda (exec.h CollPlan): the stream-ordered communicator's calls
// (NCCL) captured into the partition's CUDA graph, or enqueued on the stream in eager
// mode.
#include "exec.h"

#include "cgraph/graph/labels.h"

namespace cgraph::cuda {

namespace {

bool sameCall(const rt::CollectiveCall &a, const rt::CollectiveCall &b) {
  return a.kind == b.kind && a.op == b.op && a.type == b.type && a.send == b.send && a.recv == b.recv &&
         a.count == b.count && a.peer == b.peer;
}

} // namespace

Error CudaExecutable::prepareCollectives() {
  for (uint32_t n = 0; n < graph_.nodes.size(); ++n) {
    if (graph_.nodes[n].kind != NodeKind::Collective) continue;
    plans_[n].kind = NodePlan::Extension;
    plans_[n].ext = uint32_t(colls_.size());
    CollPlan cp;
    cp.node = n;
    colls_.push_back(cp);
    collNames_ += (collNames_.empty() ? "" : ", ") + nodeLabel(graph_, n);
  }
  if (colls_.empty()) return Error::success();
  if (!comm_ || !comm_->streamOrdered()) return makeError(ErrorCode::Internal, "collective nodes without a communicator");
  if (mode_ == rt::ExecMode::Replay && !api_->cuStreamBeginCaptureToGraph)
    return makeError(ErrorCode::Unsupported, "collective nodes in replay need a driver with "
                                             "cuStreamBeginCaptureToGraph (CUDA 12.3); use eager mode");
  if (mode_ == rt::ExecMode::Replay)
    CGRAPH_CU_CHECK(*api_, "cuStreamCreate", api_->cuStreamCreate(&captureStream_, CU_STREAM_NON_BLOCKING));
  return Error::success();
}

Expected<rt::CollectiveCall> CudaExecutable::collectiveCall(uint32_t n, const std::vector<uint64_t> &params) const {
  return rt::resolveCollective(graph_, n, collective(n, params), table_.data(), slotLength_.data(), comm_->rank(),
                               comm_->size());
}

Expected<gpu::GraphNodeHandle> CudaExecutable::addCollectiveNode(CUgraph g, uint32_t p,
                                                                 const std::vector<gpu::GraphNodeHandle> &deps,
                                                                 uint32_t part) {
  CollPlan &cp = colls_[plans_[p].ext];
  cp.part = part;
  cp.haveBuilt = false;
  gpu::GraphNodeHandle out = nullptr;
  // A side whose slot is not bound yet (finalize, before the first submission binds
  // the external slots): an empty placeholder node, which keeps the edges and which
  // the first submission captures over (bindingsChanged).
  const CollectiveOp &op = graph_.nodes[p].coll;
  auto unbound = [&](bool has, uint32_t slot) { return has && slot < nSlots_ && table_[slot] == 0; };
  if (unbound(collHasSend(op.kind), op.sendSlot) || unbound(collHasRecv(op.kind), op.recvSlot)) {
    CGRAPH_RETURN_IF_ERROR(driver_->addEmptyNode(&out, gpu::GraphHandle(g), deps));
    return out;
  }
  // The values of the submission being prepared (the first: the defaults).
  const std::vector<uint64_t> params(table_.begin() + nSlots_, table_.begin() + nSlots_ + nParams_);
  auto call = collectiveCall(p, params);
  if (!call) return call.error();
  cp.built = *call;
  cp.haveBuilt = true;
  std::vector<CUgraphNode> d(deps.size());
  for (size_t i = 0; i < deps.size(); ++i) d[i] = CUgraphNode(deps[i]);
  if (call->count == 0) { // nothing moves: an empty node keeps the edges
    CGRAPH_RETURN_IF_ERROR(driver_->addEmptyNode(&out, gpu::GraphHandle(g), deps));
    return out;
  }
  const std::string what = planLabel(p);
  CUresult rc = api_->cuStreamBeginCaptureToGraph(captureStream_, g, d.data(), nullptr, d.size(),
                                                  CU_STREAM_CAPTURE_MODE_RELAXED);
  if (rc != CUDA_SUCCESS) return cuError(*api_, "cuStreamBeginCaptureToGraph", rc).withContext(what);
  Error e = comm_->enqueue(*call, captureStream_, collectiveTimeout_);
  // The nodes the capture ended with: what the collective's successors wait for.
  std::vector<CUgraphNode> sinks;
  if (!e) {
    CUstreamCaptureStatus status;
    const CUgraphNode *last = nullptr;
    size_t nLast = 0;
    rc = api_->cuStreamGetCaptureInfo(captureStream_, &status, nullptr, nullptr, &last, nullptr, &nLast);
    if (rc != CUDA_SUCCESS) e = cuError(*api_, "cuStreamGetCaptureInfo", rc).withContext(what);
    else sinks.assign(last, last + nLast);
  }
  CUgraph captured = nullptr;
  rc = api_->cuStreamEndCapture(captureStream_, &captured);
  if (e) return e;
  if (rc != CUDA_SUCCESS) return cuError(*api_, "cuStreamEndCapture", rc).withContext(what);
  if (sinks.size() == 1 && sinks[0] != nullptr) return gpu::GraphNodeHandle(sinks[0]);
  std::vector<gpu::GraphNodeHandle> ends(sinks.begin(), sinks.end());
  if (ends.empty()) ends = deps; // the call captured nothing
  CGRAPH_RETURN_IF_ERROR(driver_->addEmptyNode(&out, gpu::GraphHandle(g), ends));
  return out;
}

Error CudaExecutable::runExtensionEager(uint32_t p, const std::vector<uint64_t> &params) {
  if (p >= graph_.nodes.size() || graph_.nodes[p].kind != NodeKind::Collective)
    return gpu::GraphExecutable::runExtensionEager(p, params);
  auto call = collectiveCall(p, params);
  if (!call) return call.error();
  if (call->count == 0) return Error::success();
  return comm_->enqueue(*call, dev_->stream(), collectiveTimeout_);
}

Error CudaExecutable::bindingsChanged(const std::vector<uint64_t> &params) {
  for (CollPlan &cp : colls_) {
    auto call = collectiveCall(cp.node, params);
    if (!call) return call.error();
    if (cp.haveBuilt && sameCall(cp.built, *call)) continue;
    if (cp.part == kNone) continue; // not built into a graph
    // The captured call holds addresses and counts: its partition (the node alone, as
    // partitions put collectives) is captured again for this submission's.
    CGRAPH_RETURN_IF_ERROR(rebuildPartition(cp.part).withContext(planLabel(cp.node)));
    CGRAPH_RETURN_IF_ERROR(partitionRebuilt(cp.part));
    ++dev_->counters().collectiveRecaptures;
  }
  return Error::success();
}

rt::EventPtr CudaExecutable::watched(rt::EventPtr e) const {
  if (colls_.empty() || !e) return e;
  return rt::watchCollectives(std::move(e), *comm_, collectiveTimeout_,
                              collNames_ + " (rank " + std::to_string(comm_->rank()) + " of " +
                                  std::to_string(comm_->size()) + ")");
}

} // namespace cgraph::cuda
