// Collective nodes as host steps (collective.h).
#include "collective.h"

#include "cgraph/graph/labels.h"

#include <string>

namespace cgraph::cpu {

namespace {

// `elems` elements of `elem` bytes from `offset` inside a slot of `size` bytes.
bool fits(uint64_t offset, uint64_t elems, uint64_t elem, uint64_t size) {
  uint64_t bytes;
  if (__builtin_mul_overflow(elems, elem, &bytes)) return false;
  return offset <= size && bytes <= size - offset;
}

} // namespace

Error runCollective(const Graph &g, uint32_t node, const CollectiveOp &c, char *const *base,
                    const uint64_t *length, rt::Communicator &comm, std::chrono::milliseconds timeout) {
  const uint64_t world = comm.size(), rank = comm.rank(), elem = scalarSize(c.type);
  // The fits() checks below bound every extent by a slot size, so the ends computed
  // after them do not wrap.
  const std::string what = nodeLabel(g, node) + " (rank " + std::to_string(rank) + " of " +
                           std::to_string(world) + ")";
  const char *kind = collKindName(c.kind);
  if (collHasPeer(c.kind)) {
    if (c.peer >= world)
      return makeError(what + ": " + kind + (c.kind == CollKind::Broadcast ? " root " : " peer ") +
                       std::to_string(c.peer) + " is not a rank of the world");
    if (c.kind != CollKind::Broadcast && c.peer == rank)
      return makeError(what + ": " + kind + " to its own rank " + std::to_string(rank));
  }
  rt::CollectiveCall call;
  call.kind = c.kind;
  call.op = c.op;
  call.type = c.type;
  call.count = c.count;
  call.peer = uint32_t(c.peer);
  call.what = what;
  // One side's address, after checking that its elements fit the slot.
  auto side = [&](const char *name, uint32_t slot, uint64_t offset, uint64_t elems) -> Expected<char *> {
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
    call.send = *p;
  }
  if (collHasRecv(c.kind)) {
    auto p = side("receive", c.recvSlot, c.recvOffset, collRecvElems(c.kind, c.count, world));
    if (!p) return p.error();
    call.recv = *p;
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
  if (c.count == 0) return Error::success();
  return comm.run(call, timeout);
}

} // namespace cgraph::cpu
