// LocalCommunicator, the checks that turn a collective node into a call, the watch
// over stream-ordered collectives, and the finalize-time checks.
#include "cgraph/runtime/communicator.h"

#include "cgraph/graph/labels.h"
#include "cgraph/graph/order.h"
#include "cgraph/runtime/wait_once_event.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <vector>

#include <xxhash.h>
#include <thread>

namespace cgraph::rt {

Error Communicator::enqueue(const CollectiveCall &call, void *, std::chrono::milliseconds) {
  return makeError(ErrorCode::Unsupported,
                   call.what + ": the " + std::string(name()) + " communicator runs collectives on the host only");
}

Error Communicator::allGatherHost(const void *mine, void *all, uint64_t bytes, std::chrono::milliseconds timeout,
                                  const std::string &what) {
  CollectiveCall call;
  call.kind = CollKind::AllGather;
  call.type = ScalarType::U8;
  call.send = mine;
  call.recv = all;
  call.count = bytes;
  call.what = what;
  // One time limit for the whole exchange: flush gets what run() left of it.
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  CGRAPH_RETURN_IF_ERROR(run(call, timeout));
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
  return flush(std::max(left, std::chrono::milliseconds(0)));
}

Error LocalCommunicator::run(const CollectiveCall &call, std::chrono::milliseconds) {
  if (call.kind == CollKind::Send || call.kind == CollKind::Recv)
    return makeError(call.what + ": " + collKindName(call.kind) + " to rank " + std::to_string(call.peer) +
                     " in a world of 1 rank");
  // World 1: every kind is the identity on one block.
  const uint64_t bytes = call.count * scalarSize(call.type);
  if (bytes && call.send != call.recv) std::memmove(call.recv, call.send, bytes);
  return Error::success();
}

namespace {

// `elems` elements of `elem` bytes from `offset` inside a slot of `size` bytes.
bool fits(uint64_t offset, uint64_t elems, uint64_t elem, uint64_t size) {
  uint64_t bytes;
  if (__builtin_mul_overflow(elems, elem, &bytes)) return false;
  return offset <= size && bytes <= size - offset;
}

} // namespace

Expected<CollectiveCall> resolveCollective(const Graph &g, uint32_t node, const CollectiveOp &c,
                                           const uint64_t *base, const uint64_t *length, uint32_t rank,
                                           uint32_t world) {
  const uint64_t elem = scalarSize(c.type);
  // The fits() checks below bound every extent by a slot size, so the ends computed
  // after them do not wrap.
  const std::string what =
      nodeLabel(g, node) + " (rank " + std::to_string(rank) + " of " + std::to_string(world) + ")";
  const char *kind = collKindName(c.kind);
  if (collHasPeer(c.kind)) {
    if (c.peer >= world)
      return makeError(what + ": " + kind + (c.kind == CollKind::Broadcast ? " root " : " peer ") +
                       std::to_string(c.peer) + " is not a rank of the world");
    // A send or receive of no elements moves nothing, whatever its peer (a pipeline's
    // first stage receives nothing; in a world of one rank every peer is the rank).
    if (c.kind != CollKind::Broadcast && c.peer == rank && c.count != 0)
      return makeError(what + ": " + kind + " to its own rank " + std::to_string(rank));
  }
  CollectiveCall call;
  call.kind = c.kind;
  call.op = c.op;
  call.type = c.type;
  call.count = c.count;
  call.peer = uint32_t(c.peer);
  call.what = what;
  // One side's address, after checking that its elements fit the slot.
  auto side = [&](const char *name, uint32_t slot, uint64_t offset, uint64_t elems) -> Expected<uint64_t> {
    if (slot >= g.slots.size()) return makeError(what + ": " + kind + " " + name + " side: no slot " + std::to_string(slot));
    if (!fits(offset, elems, elem, length[slot]))
      return makeError(what + ": " + kind + " " + name + " side: " + std::to_string(elems) + " elements of " +
                       std::to_string(elem) + " bytes from offset " + std::to_string(offset) +
                       " are past the end of " + slotLabel(g, slot) + " (" + std::to_string(length[slot]) +
                       " bytes)");
    return base[slot] + offset;
  };
  if (collHasSend(c.kind)) {
    auto p = side("send", c.sendSlot, c.sendOffset, collSendElems(c.kind, c.count, world));
    if (!p) return p.error();
    call.send = reinterpret_cast<const void *>(uintptr_t(*p));
  }
  if (collHasRecv(c.kind)) {
    auto p = side("receive", c.recvSlot, c.recvOffset, collRecvElems(c.kind, c.count, world));
    if (!p) return p.error();
    call.recv = reinterpret_cast<void *>(uintptr_t(*p));
  }
  // One slot on both sides (offsets from expressions, so not checked statically): the
  // same bytes where the kind works in place, else disjoint ranges.
  if (call.send && call.recv && c.sendSlot == c.recvSlot && c.count) {
    const bool inPlaceOk = c.kind == CollKind::AllReduce || c.kind == CollKind::Broadcast;
    const uint64_t sendEnd = c.sendOffset + collSendElems(c.kind, c.count, world) * elem;
    const uint64_t recvEnd = c.recvOffset + collRecvElems(c.kind, c.count, world) * elem;
    if (!(inPlaceOk && c.sendOffset == c.recvOffset) && c.sendOffset < recvEnd && c.recvOffset < sendEnd)
      return makeError(what + ": " + kind + " send side [" + std::to_string(c.sendOffset) + ", " +
                       std::to_string(sendEnd) + ") and receive side [" + std::to_string(c.recvOffset) + ", " +
                       std::to_string(recvEnd) + ") overlap in " + slotLabel(g, c.sendSlot));
  }
  return call;
}

Expected<uint64_t> collectiveFingerprint(const Graph &g, uint64_t *nodes) {
  auto order = executionOrder(g);
  if (!order) return order.error();
  std::vector<uint8_t> bytes;
  auto put = [&](uint64_t v) {
    for (int i = 0; i < 8; ++i) bytes.push_back(uint8_t(v >> (8 * i)));
  };
  uint64_t count = 0;
  for (uint32_t n : *order) {
    const Node &node = g.nodes[n];
    if (node.kind != NodeKind::Collective || node.coll.kind == CollKind::Send || node.coll.kind == CollKind::Recv)
      continue;
    const CollectiveOp &c = node.coll;
    ++count;
    put(uint64_t(c.kind) | uint64_t(c.op) << 8 | uint64_t(c.type) << 16);
    put(c.count);
    put(c.kind == CollKind::Broadcast ? c.peer : 0);
    for (const FieldExpr &fe : g.exprs)
      if (fe.node == n && (fe.field == ExprField::CollCount || (fe.field == ExprField::CollPeer && c.kind == CollKind::Broadcast))) {
        put(uint64_t(fe.field) << 32 | fe.code.size());
        bytes.insert(bytes.end(), fe.code.begin(), fe.code.end());
      }
  }
  if (nodes) *nodes = count;
  return XXH3_64bits(bytes.data(), bytes.size());
}

Error checkSameCollectives(const Graph &g, Communicator &comm, std::chrono::milliseconds timeout) {
  const uint32_t world = comm.size(), rank = comm.rank();
  if (world <= 1) return Error::success();
  uint64_t nodes = 0;
  auto fp = collectiveFingerprint(g, &nodes);
  if (!fp) return fp.error();
  // Every rank takes part, a rank without such nodes included (its fingerprint tells).
  const uint64_t mine[2] = {*fp, nodes};
  std::vector<uint64_t> all(2 * size_t(world));
  CGRAPH_RETURN_IF_ERROR(comm.allGatherHost(mine, all.data(), sizeof(mine), timeout,
                                            "finalize: comparing the ranks' collective nodes (rank " +
                                                std::to_string(rank) + " of " + std::to_string(world) + ")"));
  for (uint32_t r = 1; r < world; ++r)
    if (all[2 * r] != all[0] || all[2 * r + 1] != all[1])
      return makeError("the ranks run different collectives: rank 0 has " + std::to_string(all[1]) +
                       " all_reduce/all_gather/reduce_scatter/broadcast nodes, rank " + std::to_string(r) + " has " +
                       std::to_string(all[2 * r + 1]) +
                       (all[2 * r + 1] == all[1] ? " that differ in kind, reduction, type, count or root" : "") +
                       " (every rank must run the same ones in the same order)");
  return Error::success();
}

namespace {

class CollectiveWatchEvent final : public WaitOnceEvent {
public:
  CollectiveWatchEvent(EventPtr inner, Communicator &comm, std::chrono::milliseconds timeout, std::string what)
      : inner_(std::move(inner)), comm_(&comm), timeout_(timeout), what_(std::move(what)) {}
  bool isComplete() const override { return inner_->isComplete(); }
  const Event &inner() const { return *inner_; }

private:
  Error waitOnce() override {
    using clock = std::chrono::steady_clock;
    const auto start = clock::now();
    const auto deadline = start + timeout_;
    auto pause = std::chrono::microseconds(2);
    while (!inner_->isComplete()) {
      if (Error e = comm_->asyncError()) {
        comm_->abort();
        return std::move(e).withContext(what_);
      }
      if (clock::now() >= deadline) {
        comm_->abort();
        return makeError(ErrorCode::Timeout, what_ + ": not complete after " + std::to_string(timeout_.count()) +
                                                 " ms (a peer that stopped or never joined); the " +
                                                 comm_->name() + " communicator was aborted");
      }
      std::this_thread::sleep_for(pause);
      pause = std::min(pause * 2, std::chrono::microseconds(500));
    }
    Error e = inner_->wait();
    timings_ = inner_->nodeTimings();
    if (!e) e = comm_->asyncError();
    return e;
  }

  EventPtr inner_;
  Communicator *comm_;
  std::chrono::milliseconds timeout_;
  std::string what_;
};

} // namespace

EventPtr watchCollectives(EventPtr inner, Communicator &comm, std::chrono::milliseconds timeout, std::string what) {
  return std::make_shared<CollectiveWatchEvent>(std::move(inner), comm, timeout, std::move(what));
}

const Event &unwrapWatched(const Event &e) {
  if (auto *w = dynamic_cast<const CollectiveWatchEvent *>(&e)) return w->inner();
  return e;
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
