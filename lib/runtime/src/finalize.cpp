// rt::Device::finalize: what every backend's finalize does before its own part
// (runtime.h): validate, flatten, check collectives, choose stages for conditionals.
#include "cgraph/runtime/runtime.h"

#include "cgraph/graph/flatten.h"
#include "cgraph/graph/validate.h"
#include "cgraph/runtime/communicator.h"
#include "cgraph/runtime/staged.h"

#include <chrono>

namespace cgraph::rt {

namespace {

// Validated and flattened, for a graph copied (const Graph &) or consumed (Graph &&).
template <class G> Expected<Graph> validatedFlat(G &&graph, double *us) {
  const auto t0 = std::chrono::steady_clock::now();
  ValidateOptions vo;
  vo.warnings = false;
  CGRAPH_RETURN_IF_ERROR(firstError(validateGraph(graph, vo)));
  Expected<Graph> flat = flattenSubgraphs(std::forward<G>(graph));
  if (!flat) return flat.error();
  *us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
  return flat;
}

// The communicator collective nodes need on a device that runs them `support`-wise.
Error checkCommunicator(const Device &device, Device::CollectiveSupport support, const Graph &flat,
                        const FinalizeOptions &opts) {
  const std::string &backend = device.info().backend;
  if (support == Device::CollectiveSupport::None) return refuseCollectives(flat, backend);
  const bool host = support == Device::CollectiveSupport::Host;
  Communicator *comm = opts.communicator;
  if (!comm)
    return makeError(ErrorCode::Invalid,
                     std::string("the graph has collective nodes but no communicator was given (") +
                         (host ? "run it under mpirun, or bind one in FinalizeOptions"
                               : "bind an NCCL communicator, cgraph/comm/nccl.h, in FinalizeOptions") +
                         ")");
  if (host && comm->streamOrdered())
    return makeError(ErrorCode::Invalid, std::string("the ") + comm->name() + " communicator runs collectives on GPU "
                                             "streams; the " + backend +
                                             " backend needs a host communicator (MPI, or local for one rank)");
  if (!host && !comm->streamOrdered())
    return makeError(ErrorCode::Invalid, "the " + backend +
                                             " backend runs collectives through a stream-ordered communicator "
                                             "(NCCL); the " + comm->name() + " communicator runs on the host");
  if (!host && device.communicatorDevice() >= 0 && comm->deviceIndex() != device.communicatorDevice())
    return makeError(ErrorCode::Invalid, "the communicator runs on " + backend + " device " +
                                             std::to_string(comm->deviceIndex()) + ", the executable on device " +
                                             std::to_string(device.communicatorDevice()));
  if (opts.checkCollectives) return checkSameCollectives(flat, *comm, opts.collectiveTimeout);
  return Error::success();
}

} // namespace

Error Device::runsConditionalsNatively(const Graph &, const FinalizeOptions &) {
  return makeError(ErrorCode::Unsupported, "conditional nodes run as runtime-driven stages on this backend");
}

Expected<std::unique_ptr<Executable>> Device::finalizeChecked(FlatGraph flat, const FinalizeOptions &opts) {
  const bool collectives = hasCollectives(flat.graph);
  if (collectives) CGRAPH_RETURN_IF_ERROR(checkCommunicator(*this, collectiveSupport(), flat.graph, opts));
  if (hasConditionals(flat.graph)) {
    // With collectives, conditionals run as runtime-driven stages on every backend: each
    // stage is finalized (its collectives compared across the ranks) on its own, and no
    // collective call has to sit inside a native conditional body. Every rank must take
    // the same branches and trips, or a collective fails by its time limit.
    if (collectives) return finalizeStaged(*this, std::move(flat.graph), opts);
    Error native = runsConditionalsNatively(flat.graph, opts);
    if (native && native.code() != ErrorCode::Unsupported) return native;
    if (native) return finalizeStaged(*this, std::move(flat.graph), opts);
  }
  return finalizeFlat(std::move(flat), opts);
}

Expected<std::unique_ptr<Executable>> Device::finalize(const Graph &graph, const FinalizeOptions &opts) {
  FlatGraph flat;
  Expected<Graph> g = validatedFlat(graph, &flat.flattenUs);
  if (!g) return g.error();
  flat.graph = std::move(*g);
  flat.original = &graph;
  return finalizeChecked(std::move(flat), opts);
}

Expected<std::unique_ptr<Executable>> Device::finalizeOwned(Graph graph, const FinalizeOptions &opts) {
  // Subgraph nodes become child graphs, which needs the graph as it was: the copying path.
  for (const Node &n : graph.nodes)
    if (n.kind == NodeKind::Subgraph) return finalize(graph, opts);
  FlatGraph flat;
  Expected<Graph> g = validatedFlat(std::move(graph), &flat.flattenUs);
  if (!g) return g.error();
  flat.graph = std::move(*g);
  return finalizeChecked(std::move(flat), opts);
}

} // namespace cgraph::rt
