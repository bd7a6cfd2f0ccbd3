// Collective nodes of a graph description (docs/graph-json.md, "Collective nodes"):
// all_reduce, all_gather, reduce_scatter, broadcast, send and recv over slots, with
// offsets, element count and peer (or root) that may be expressions over parameters
// such as `$rank` and `$world`, stored per field (ExprField::CollSendOffset..CollPeer).
#include "reader.h"

#include <tuple>

namespace cgraph::desc {

namespace {

// The node keys of the six kinds, in CollKind order.
const char *const kCollKeys[] = {"all_reduce", "all_gather", "reduce_scatter", "broadcast", "send", "recv"};

} // namespace

const char *DescriptionReader::collectiveKey(const JValue &n) {
  for (const char *k : kCollKeys)
    if (n.find(k)) return k;
  return nullptr;
}

void DescriptionReader::readCollectiveNode(GraphCtx &c, const JValue &spec, const char *key, Node &node) {
  const std::string &f = c.file;
  CollectiveOp &op = node.coll;
  if (!parseCollKind(key, &op.kind)) failAt(f, spec, std::string("unknown collective '") + key + "'");
  node.kind = NodeKind::Collective;
  const std::string what = std::string(key) + " of node '" + node.name + "'";
  const std::string ofNode = " of node '" + node.name + "'";
  expectKind(f, spec, JValue::Kind::Object, std::string("'") + key + "'");
  const bool hasSend = collHasSend(op.kind), hasRecv = collHasRecv(op.kind);
  const bool inPlace = op.kind == CollKind::AllReduce || op.kind == CollKind::Broadcast;
  switch (op.kind) {
  case CollKind::AllReduce: checkKeys(f, spec, {"slot", "src", "dst", "count", "type", "op"}, key); break;
  case CollKind::ReduceScatter: checkKeys(f, spec, {"src", "dst", "count", "type", "op"}, key); break;
  case CollKind::AllGather: checkKeys(f, spec, {"src", "dst", "count", "type"}, key); break;
  case CollKind::Broadcast: checkKeys(f, spec, {"slot", "src", "dst", "count", "type", "root"}, key); break;
  case CollKind::Send:
  case CollKind::Recv: checkKeys(f, spec, {"slot", "count", "type", "peer"}, key); break;
  }
  if (const JValue *t = spec.find("type")) op.type = toType(f, *t);
  if (const JValue *o = spec.find("op")) {
    const std::string name = toStr(f, *o, "'op'");
    if (!parseReduceOp(name, &op.op))
      failAt(f, *o, "unknown reduction '" + name + "' (expected sum, max, min or prod)");
  }
  const JValue *slot = spec.find("slot");
  if (slot && (spec.find("src") || spec.find("dst")))
    failAt(f, *slot, what + ": 'slot' (in place) and 'src'/'dst' exclude each other");
  if (slot) {
    if (op.kind == CollKind::Recv) {
      std::tie(op.recvSlot, op.recvOffset) = readTransferRef(c, *slot, ofNode, ExprField::CollRecvOffset);
    } else {
      const size_t before = c.pendingExprs.size();
      std::tie(op.sendSlot, op.sendOffset) = readTransferRef(c, *slot, ofNode, ExprField::CollSendOffset);
      if (inPlace) {
        // In place: the receive side is the same bytes, the same expression.
        op.recvSlot = op.sendSlot;
        op.recvOffset = op.sendOffset;
        if (c.pendingExprs.size() > before) {
          FieldExpr fe = c.pendingExprs.back();
          fe.field = ExprField::CollRecvOffset;
          c.pendingExprs.push_back(std::move(fe));
        }
      }
    }
  } else if (op.kind == CollKind::Send || op.kind == CollKind::Recv) {
    require(f, spec, "slot", what);
  } else {
    if (hasSend)
      std::tie(op.sendSlot, op.sendOffset) =
          readTransferRef(c, require(f, spec, "src", what + (inPlace ? " (or 'slot')" : "")), ofNode,
                             ExprField::CollSendOffset);
    if (hasRecv)
      std::tie(op.recvSlot, op.recvOffset) =
          readTransferRef(c, require(f, spec, "dst", what + (inPlace ? " (or 'slot')" : "")), ofNode,
                             ExprField::CollRecvOffset);
  }
  op.count = readTransferUInt(c, require(f, spec, "count", what), "'count'", ofNode, ExprField::CollCount);
  if (op.kind == CollKind::Broadcast) {
    if (const JValue *r = spec.find("root"))
      op.peer = readTransferUInt(c, *r, "'root'", ofNode, ExprField::CollPeer);
  } else if (op.kind == CollKind::Send || op.kind == CollKind::Recv) {
    op.peer = readTransferUInt(c, require(f, spec, "peer", what), "'peer'", ofNode, ExprField::CollPeer);
  }
}

} // namespace cgraph::desc
