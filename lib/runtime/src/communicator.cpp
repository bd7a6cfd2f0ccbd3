// LocalCommunicator and the finalize-time checks for collective nodes.
#include "cgraph/runtime/communicator.h"

#include <cstring>

namespace cgraph::rt {

Error LocalCommunicator::run(const CollectiveCall &call, std::chrono::milliseconds) {
  if (call.kind == CollKind::Send || call.kind == CollKind::Recv)
    return makeError(call.what + ": " + collKindName(call.kind) + " to rank " + std::to_string(call.peer) +
                     " in a world of 1 rank");
  // World 1: every kind is the identity on one block.
  const uint64_t bytes = call.count * scalarSize(call.type);
  if (bytes && call.send != call.recv) std::memmove(call.recv, call.send, bytes);
  return Error::success();
}

bool hasCollectives(const Graph &graph) {
  for (const Node &n : graph.nodes)
    if (n.kind == NodeKind::Collective) return true;
  return false;
}

Error refuseCollectives(const Graph &graph, const std::string &backend) {
  if (!hasCollectives(graph)) return Error::success();
  return makeError(ErrorCode::Unsupported, "collective nodes are not supported by the " + backend + " backend yet");
}

} // namespace cgraph::rt
