#include "structure.h"

#include <string>

namespace cgraph {
namespace cgf {
namespace {


bool knownScalar(ScalarType t) { return scalarSize(t) != 0; }

class Checker {
public:
  Checker(const Graph &g, const char *holder) : g_(g), holder_(holder) {}

  // "refers to slot 99 but the file has 12 slots"
  std::string refersTo(const char *what, uint64_t idx, size_t count) const {
    return "refers to " + std::string(what) + " " + std::to_string(idx) + " but the " + holder_ +
           " has " + std::to_string(count) + " " + what + "s";
  }
  std::string pastNodes(uint64_t idx) const {
    return std::to_string(idx) + " points past the node table (" + std::to_string(g_.nodes.size()) +
           " nodes)";
  }

  Error slots() const {
    for (size_t i = 0; i < g_.slots.size(); ++i) {
      const Slot &s = g_.slots[i];
      if (s.alignment == 0 || (s.alignment & (s.alignment - 1)) != 0)
        return makeError(at("slots", i) + ": alignment " + std::to_string(s.alignment) + " is not a power of two");
      if (static_cast<uint8_t>(s.init) > static_cast<uint8_t>(SlotInit::Transient))
        return makeError(at("slots", i) + ": unknown init kind " + std::to_string(unsigned(s.init)));
      if (s.init == SlotInit::Data && s.data.size() != s.size)
        return makeError(at("slots", i) + ": data has " + std::to_string(s.data.size()) +
                         " bytes but the slot has " + std::to_string(s.size));
      if (s.init == SlotInit::Fill && (s.data.empty() || s.data.size() > kMaxFill))
        return makeError(at("slots", i) + ": fill pattern has " + std::to_string(s.data.size()) +
                         " bytes (must be 1..128)");
    }
    for (size_t i = 0; i < g_.params.size(); ++i)
      if (!knownScalar(g_.params[i].type))
        return makeError(at("params", i) + ": unknown scalar type " + std::to_string(unsigned(g_.params[i].type)));
    return Error::success();
  }

  Error kernels() const {
    for (size_t i = 0; i < g_.modules.size(); ++i)
      for (size_t f = 0; f < g_.modules[i].forms.size(); ++f) {
        auto k = static_cast<uint8_t>(g_.modules[i].forms[f].kind);
        if (k < 1 || k > static_cast<uint8_t>(FormKind::HostObject))
          return makeError(at("modules", i) + ": form " + std::to_string(f) + " has unknown kind " + std::to_string(k));
      }
    for (size_t i = 0; i < g_.kernels.size(); ++i) {
      const Kernel &k = g_.kernels[i];
      if (k.module >= g_.modules.size())
        return makeError(at("kernels", i) + ": " + refersTo("module", k.module, g_.modules.size()));
      for (size_t p = 0; p < k.params.size(); ++p) {
        auto pk = static_cast<uint8_t>(k.params[p].kind);
        if (pk < 1 || pk > static_cast<uint8_t>(ParamKind::Scalar))
          return makeError(at("kernels", i) + ": param " + std::to_string(p) + " has unknown kind " + std::to_string(pk));
      }
    }
    return Error::success();
  }

  Error dim(size_t node, const char *which, int d, const Dim &dm) const {
    if (dm.param != kNone && dm.param >= g_.params.size())
      return makeError(at("nodes", node) + ": " + which + "[" + std::to_string(d) + "] " +
                       refersTo("param", dm.param, g_.params.size()));
    return Error::success();
  }

  Error slotRef(size_t node, const std::string &what, uint32_t slot) const {
    if (slot >= g_.slots.size())
      return makeError(at("nodes", node) + ": " + what + " " + refersTo("slot", slot, g_.slots.size()));
    return Error::success();
  }

  // Every field of a collective: known enums, the slots its kind uses in range, the
  // ones it does not use absent, a peer only where the kind has one.
  Error collective(size_t i, const CollectiveOp &c) const {
    const std::string w = at("nodes", i);
    if (uint8_t(c.kind) > kCollKindMax)
      return makeError(w + ": unknown collective kind " + std::to_string(unsigned(c.kind)));
    if (uint8_t(c.op) > kReduceOpMax)
      return makeError(w + ": unknown reduction " + std::to_string(unsigned(c.op)));
    if (!knownScalar(c.type))
      return makeError(w + ": unknown element type " + std::to_string(unsigned(c.type)));
    const char *kind = collKindName(c.kind);
    if (!collReduces(c.kind) && c.op != ReduceOp::Sum)
      return makeError(w + ": " + kind + " has no reduction (found " + reduceOpName(c.op) + ")");
    if (collHasSend(c.kind)) CGRAPH_RETURN_IF_ERROR(slotRef(i, "send side", c.sendSlot));
    else if (c.sendSlot != kNone || c.sendOffset != 0)
      return makeError(w + ": " + kind + " has no send side");
    if (collHasRecv(c.kind)) CGRAPH_RETURN_IF_ERROR(slotRef(i, "receive side", c.recvSlot));
    else if (c.recvSlot != kNone || c.recvOffset != 0)
      return makeError(w + ": " + kind + " has no receive side");
    if (!collHasPeer(c.kind) && c.peer != 0)
      return makeError(w + ": " + kind + " has no peer or root (found " + std::to_string(c.peer) + ")");
    return Error::success();
  }

  Error node(size_t i) const {
    const Node &n = g_.nodes[i];
    auto kind = static_cast<uint8_t>(n.kind);
    if (kind < 1 || kind > static_cast<uint8_t>(NodeKind::Collective))
      return makeError(at("nodes", i) + ": unknown node kind " + std::to_string(kind));
    for (size_t a = 0; a < n.args.size(); ++a) {
      const Arg &arg = n.args[a];
      auto where = [&] { return at("nodes", i) + ": arg " + std::to_string(a); };
      auto ak = static_cast<uint8_t>(arg.kind);
      if (ak < 1 || ak > static_cast<uint8_t>(ArgKind::String))
        return makeError(where() + " has unknown kind " + std::to_string(ak));
      if (!knownScalar(arg.type))
        return makeError(where() + " has unknown scalar type " + std::to_string(unsigned(arg.type)));
      if (arg.kind == ArgKind::Slot && arg.index >= g_.slots.size())
        return makeError(where() + " " + refersTo("slot", arg.index, g_.slots.size()));
      if (arg.kind == ArgKind::Param && arg.index >= g_.params.size())
        return makeError(where() + " " + refersTo("param", arg.index, g_.params.size()));
    }
    switch (n.kind) {
    case NodeKind::Kernel: {
      if (n.kernel >= g_.kernels.size())
        return makeError(at("nodes", i) + ": " + refersTo("kernel", n.kernel, g_.kernels.size()));
      if (n.range.dims < 1 || n.range.dims > 3)
        return makeError(at("nodes", i) + ": range has " + std::to_string(n.range.dims) + " dims (must be 1..3)");
      for (int d = 0; d < 3; ++d) {
        if (n.range.global[d].param == kNone && n.range.local[d].param == kNone &&
            n.range.offset[d].param == kNone)
          continue; // the common case, without calls
        CGRAPH_RETURN_IF_ERROR(dim(i, "global", d, n.range.global[d]));
        CGRAPH_RETURN_IF_ERROR(dim(i, "local", d, n.range.local[d]));
        CGRAPH_RETURN_IF_ERROR(dim(i, "offset", d, n.range.offset[d]));
      }
      break;
    }
    case NodeKind::Copy:
    case NodeKind::CopyRect:
      CGRAPH_RETURN_IF_ERROR(slotRef(i, "copy source", n.copy.srcSlot));
      CGRAPH_RETURN_IF_ERROR(slotRef(i, "copy destination", n.copy.dstSlot));
      break;
    case NodeKind::Fill:
      CGRAPH_RETURN_IF_ERROR(slotRef(i, "fill", n.fill.slot));
      if (n.fill.pattern.empty() || n.fill.pattern.size() > kMaxFill)
        return makeError(at("nodes", i) + ": fill pattern has " + std::to_string(n.fill.pattern.size()) +
                         " bytes (must be 1..128)");
      break;
    case NodeKind::Collective:
      CGRAPH_RETURN_IF_ERROR(collective(i, n.coll));
      break;
    case NodeKind::Conditional:
      if (uint8_t(n.cond.kind) > uint8_t(CondKind::While))
        return makeError(at("nodes", i) + ": unknown condition kind " + std::to_string(unsigned(n.cond.kind)));
      CGRAPH_RETURN_IF_ERROR(slotRef(i, "condition", n.cond.slot));
      if (n.cond.kind == CondKind::While && n.cond.maxTrips == 0)
        return makeError(at("nodes", i) + ": a while node needs a maximum trip count >= 1");
      [[fallthrough]];
    case NodeKind::Subgraph: {
      if (n.subgraph >= g_.subgraphs.size())
        return makeError(at("nodes", i) + ": " + refersTo("subgraph", n.subgraph, g_.subgraphs.size()));
      size_t want = g_.subgraphs[n.subgraph].slots.size();
      if (n.subgraphSlots.size() != want)
        return makeError(at("nodes", i) + ": binds " + std::to_string(n.subgraphSlots.size()) +
                         " slots but subgraph " + std::to_string(n.subgraph) + " has " + std::to_string(want));
      break;
    }
    default:
      break;
    }
    if (n.kernel != kNone && n.kernel >= g_.kernels.size())
      return makeError(at("nodes", i) + ": " + refersTo("kernel", n.kernel, g_.kernels.size()));
    if (n.subgraph != kNone && n.subgraph >= g_.subgraphs.size())
      return makeError(at("nodes", i) + ": " + refersTo("subgraph", n.subgraph, g_.subgraphs.size()));
    for (size_t s = 0; s < n.subgraphSlots.size(); ++s)
      CGRAPH_RETURN_IF_ERROR(slotRef(i, "subgraph slot " + std::to_string(s), n.subgraphSlots[s]));
    return Error::success();
  }

  Error rest() const {
    size_t nn = g_.nodes.size();
    for (size_t i = 0; i < g_.edges.size(); ++i) {
      if (g_.edges[i].from >= nn) return makeError(at("edges", i) + ": 'from' node " + pastNodes(g_.edges[i].from));
      if (g_.edges[i].to >= nn) return makeError(at("edges", i) + ": 'to' node " + pastNodes(g_.edges[i].to));
    }
    for (size_t i = 0; i < g_.order.size(); ++i)
      if (g_.order[i] >= nn) return makeError(at("order", i) + ": node " + pastNodes(g_.order[i]));
    for (size_t i = 0; i < g_.partitions.size(); ++i) {
      const Partition &p = g_.partitions[i];
      for (size_t k = 0; k < p.nodes.size(); ++k)
        if (p.nodes[k] >= nn)
          return makeError(at("partitions", i) + ": nodes[" + std::to_string(k) + "] " + pastNodes(p.nodes[k]));
      for (size_t k = 0; k < p.deps.size(); ++k)
        if (p.deps[k] >= g_.partitions.size())
          return makeError(at("partitions", i) + ": deps[" + std::to_string(k) + "] " +
                           refersTo("partition", p.deps[k], g_.partitions.size()));
    }
    return Error::success();
  }

private:
  static constexpr size_t kMaxFill = 128;
  const Graph &g_;
  const char *holder_;
};

} // namespace

Error checkStructure(const Graph &g, const char *holder) {
  Checker c(g, holder);
  CGRAPH_RETURN_IF_ERROR(c.slots());
  CGRAPH_RETURN_IF_ERROR(c.kernels());
  for (size_t i = 0; i < g.nodes.size(); ++i) CGRAPH_RETURN_IF_ERROR(c.node(i));
  return c.rest();
}

} // namespace cgf
} // namespace cgraph
