// The conditional cases of the graph conformance suite (graph_cases.h): while and if
// nodes over counters in an external slot that the kernels count down, and a loop that
// is still true after its trip limit.
#include "graph_cases.h"

#include "../common/transfer_conformance.h" // addOneKernel

#include "cgraph/graph/builder.h"
#include "cgraph/graph/order.h"

#include <catch2/catch.hpp>

#include <cstring>

namespace cgraph::conformance {

namespace {

constexpr uint32_t kData = 64; // floats of `data`

const char *kCountDown = R"CL(
__kernel void count_down(__global uint *c, uint index) {
  if (get_global_id(0) == 0) c[index] -= 1;
}
)CL";

// A graph over the slots data (kData floats) and ctr (4 words), both external; child
// graphs see the same two slots.
struct Scope {
  GraphBuilder b;
  uint32_t data, ctr, add, down;
  explicit Scope(const std::string &name) : b(name) {
    add = addOneKernel(b, kAddValueKernel, "add_value.cl");
    down = addOneKernel(b, kCountDown, "count_down.cl");
    data = b.addSlot(external("data", 4 * kData));
    ctr = b.addSlot(external("ctr", 16));
  }
  static Slot external(const std::string &name, uint64_t bytes) {
    Slot s;
    s.name = name;
    s.size = bytes;
    s.init = SlotInit::External;
    return s;
  }
  uint32_t addValue(const std::string &name, float v) {
    uint32_t bits;
    std::memcpy(&bits, &v, 4);
    NDRange r;
    r.global[0].value = kData;
    return b.addKernelNode(name, add, r, {Arg::slot(data), Arg::scalar(ScalarType::F32, bits)});
  }
  uint32_t countDown(const std::string &name, uint32_t index) {
    NDRange r;
    r.global[0].value = 1;
    return b.addKernelNode(name, down, r, {Arg::slot(ctr), Arg::scalar(ScalarType::U32, index)});
  }
  uint32_t conditional(const std::string &name, CondKind kind, uint32_t index, uint32_t maxTrips, Graph body) {
    Node n;
    n.name = name;
    n.kind = NodeKind::Conditional;
    n.cond.kind = kind;
    n.cond.slot = ctr;
    n.cond.offset = 4 * index;
    n.cond.maxTrips = maxTrips;
    n.subgraph = b.addSubgraphGraph(std::move(body));
    n.subgraphSlots = {data, ctr};
    return b.addNode(std::move(n));
  }
  Graph take() { return b.take(); }
};

Graph body(const std::string &name, float v, int countIndex) {
  Scope s(name);
  const uint32_t a = s.addValue("add", v);
  if (countIndex >= 0) s.b.addEdge(a, s.countDown("down", uint32_t(countIndex)));
  return s.take();
}

// A case of `top`'s graph, data starting zeroed and ctr at `counters`.
GraphCase caseOf(const std::string &name, Scope &top, const std::vector<uint32_t> &counters) {
  GraphCase c;
  c.name = name;
  const uint32_t data = top.data, ctr = top.ctr;
  c.graph = top.take();
  Error e = finalizeForFile(c.graph);
  INFO(e.message());
  REQUIRE_FALSE(e);
  c.inputs.resize(c.graph.slots.size());
  c.inputs[data] = floatBytes(std::vector<float>(kData, 0.0f));
  c.inputs[ctr] = wordBytes(counters);
  return c;
}

// while ctr[0] (at most 10 trips) { data += 10; ctr[0]-- }; if ctr[1] { data += 100 };
// if ctr[2] { data += 1000 }. ctr starts [3, 1, 0, 0]: the first run adds 130, the
// second 100 (ctr[0] is 0 by then).
GraphCase whileAndIf() {
  Scope top("graph-conditionals");
  const uint32_t loop = top.conditional("loop", CondKind::While, 0, 10, body("loop_body", 10, 0));
  const uint32_t yes = top.conditional("if_true", CondKind::If, 1, 0, body("true_body", 100, -1));
  const uint32_t no = top.conditional("if_false", CondKind::If, 2, 0, body("false_body", 1000, -1));
  top.b.addEdge(loop, yes);
  top.b.addEdge(yes, no);
  const uint32_t data = top.data, ctr = top.ctr;
  GraphCase c = caseOf("conditionals", top, {3, 1, 0, 0});
  Submission first, second;
  first.want = {{data, floatBytes(std::vector<float>(kData, 130.0f))}, {ctr, wordBytes({0, 1, 0, 0})}};
  second.want = {{data, floatBytes(std::vector<float>(kData, 230.0f))}, {ctr, wordBytes({0, 1, 0, 0})}};
  c.runs = {first, second};
  return c;
}

// while ctr[3] (at most 2 trips) { data += 1; ctr[3]-- } with ctr[3] = 5: the
// submission fails naming the limit, never stops silently.
GraphCase tripLimit() {
  Scope top("graph-trip-limit");
  top.conditional("loop", CondKind::While, 3, 2, body("loop_body", 1, 3));
  GraphCase c = caseOf("while over its trip limit", top, {0, 0, 0, 5});
  Submission run;
  run.fails = true;
  run.failure = "trips (its maximum)";
  c.runs = {run};
  return c;
}

} // namespace

std::vector<GraphCase> conditionalCases() {
  std::vector<GraphCase> out;
  out.push_back(whileAndIf());
  out.push_back(tripLimit());
  return out;
}

} // namespace cgraph::conformance
