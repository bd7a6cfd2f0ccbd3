// Conditional nodes (issue 10) run runtime-driven on the cpu backend and on PoCL,
// replay and eager: a while loop counting down a device counter, an if inside a
// subgraph node (flattening keeps it), a while nested in the if's body, the trip limit
// failing the submission with the node named, and ordinary nodes around them.
#include "cl_test_util.h"

#include "cgraph/backends/cpu/cpu_backend.h"
#include "cgraph/graph/order.h"

using namespace cgraph;
using namespace cgraph::cltest;

namespace {

const char *kSource = R"CL(
__kernel void add_u32(__global uint *a, uint by) { a[get_global_id(0)] += by; }
__kernel void countdown(__global uint *c) { c[0] -= 1u; }
)CL";

constexpr uint32_t kN = 64;
// Counter i lives at byte 128 * i of slot ctr (OpenCL sub-buffers need 128-byte aligned
// offsets on PoCL).
constexpr uint32_t kStride = 128, kCtrBytes = 3 * kStride;

// A graph over slots data (kN u32) and ctr (3 counters), with the kernels above.
struct Scope {
  GraphBuilder b;
  uint32_t data, ctr, kAdd, kDown;
  explicit Scope(const char *name) : b(name) {
    data = b.addSlot(externalSlot("data", kN * 4));
    ctr = b.addSlot(externalSlot("ctr", kCtrBytes));
    kDown = addKernelSource(b, kSource, "cond.cl", "countdown");
    kAdd = kDown - 1;
  }
  uint32_t add(const std::string &name, uint32_t by) {
    return b.addKernelNode(name, kAdd, range1D(kN), {Arg::slot(data), Arg::scalar(ScalarType::U32, by)});
  }
  uint32_t down(const std::string &name, uint32_t index) {
    return b.addKernelNode(name, kDown, range1D(1), {Arg::slot(ctr, index * kStride)});
  }
  // A conditional node over this scope's slots (body slots = {data, ctr}).
  uint32_t conditional(const std::string &name, CondKind kind, uint32_t index, uint32_t maxTrips, Graph body) {
    Node n;
    n.name = name;
    n.kind = NodeKind::Conditional;
    n.cond.kind = kind;
    n.cond.slot = ctr;
    n.cond.offset = index * kStride;
    n.cond.maxTrips = maxTrips;
    n.subgraph = b.addSubgraphGraph(std::move(body));
    n.subgraphSlots = {data, ctr};
    return b.addNode(std::move(n));
  }
  Graph take() {
    Graph g = b.take();
    REQUIRE(!finalizeForFile(g));
    return g;
  }
};

// data += 1; while ctr[0] (max 10) { data += 10; ctr[0]-- };
// wrap = subgraph { if ctr[1] { data += 100; while ctr[2] (max 5) { data += 7; ctr[2]-- } } };
// data += 1000.
Graph makeGraph() {
  Scope inner("inner_body");
  uint32_t a = inner.add("add7", 7), d = inner.down("down2", 2);
  inner.b.addEdge(a, d);
  Scope ifBody("if_body");
  uint32_t h = ifBody.add("add100", 100);
  uint32_t w = ifBody.conditional("inner", CondKind::While, 2, 5, inner.take());
  ifBody.b.addEdge(h, w);
  Scope wrap("wrap");
  wrap.conditional("maybe", CondKind::If, 1, 0, ifBody.take());
  Scope loop("loop_body");
  uint32_t l1 = loop.add("add10", 10), l2 = loop.down("down0", 0);
  loop.b.addEdge(l1, l2);

  Scope top("conditional");
  uint32_t first = top.add("first", 1);
  uint32_t loopNode = top.conditional("loop", CondKind::While, 0, 10, loop.take());
  Graph wrapGraph = wrap.take();
  uint32_t wrapNode = top.b.addSubgraph("wrap", std::move(wrapGraph), {top.data, top.ctr});
  uint32_t last = top.add("last", 1000);
  top.b.addEdge(first, loopNode);
  top.b.addEdge(loopNode, wrapNode);
  top.b.addEdge(wrapNode, last);
  return top.take();
}

struct Devices {
  std::unique_ptr<rt::Backend> cpu = cpu::makeCpuBackend();
  std::unique_ptr<rt::Backend> ocl = opencl::makeOpenCLBackend();
  std::vector<rt::Device *> list() {
    Expected<rt::Device *> c = cpu->device(0);
    REQUIRE(c);
    return {*c, openPocl(*ocl)};
  }
};

struct Outcome {
  Error error;
  std::vector<uint32_t> data, ctr;
};

Outcome runWith(rt::Device &dev, rt::Executable &exe, std::vector<uint32_t> counters) {
  std::vector<uint32_t> data(kN), ctr(kCtrBytes / 4, 0);
  for (uint32_t i = 0; i < kN; ++i) data[i] = i;
  for (uint32_t i = 0; i < 3; ++i) ctr[i * kStride / 4] = counters[i];
  auto bd = alloc(dev, kN * 4), bc = alloc(dev, kCtrBytes);
  writeAll(dev, *bd, data);
  writeAll(dev, *bc, ctr);
  rt::BindingTable t;
  t.slots = {{bd.get(), 0, 0}, {bc.get(), 0, 0}};
  auto ev = exe.enqueue(t, {});
  INFO((ev ? std::string() : ev.error().message()));
  REQUIRE(ev);
  Outcome o;
  o.error = (*ev)->wait();
  o.data = readAll<uint32_t>(dev, *bd);
  std::vector<uint32_t> all = readAll<uint32_t>(dev, *bc);
  for (uint32_t i = 0; i < 3; ++i) o.ctr.push_back(all[i * kStride / 4]);
  return o;
}

} // namespace

TEST_CASE("conditional: if and while nodes, nested and inside a subgraph", "[opencl][cpu][conditional]") {
  Graph g = makeGraph();
  Devices devs;
  struct Case {
    uint32_t c0, c1, c2;
  };
  for (rt::Device *dev : devs.list())
    for (rt::ExecMode mode : {rt::ExecMode::Replay, rt::ExecMode::Eager}) {
      INFO(dev->info().backend << (mode == rt::ExecMode::Replay ? " replay" : " eager"));
      rt::FinalizeOptions fo;
      fo.mode = mode;
      auto exe = dev->finalize(g, fo);
      INFO((exe ? std::string() : exe.error().message()));
      REQUIRE(exe);
      for (Case c : {Case{3, 1, 2}, Case{0, 0, 4}, Case{10, 1, 5}, Case{1, 7, 0}}) {
        INFO("ctr = " << c.c0 << " " << c.c1 << " " << c.c2);
        Outcome o = runWith(*dev, **exe, {c.c0, c.c1, c.c2});
        INFO(o.error.message());
        REQUIRE(!o.error);
        const uint32_t add = 1 + 10 * c.c0 + (c.c1 ? 100 + 7 * c.c2 : 0) + 1000;
        for (uint32_t i = 0; i < kN; ++i) REQUIRE(o.data[i] == i + add);
        CHECK(o.ctr == std::vector<uint32_t>{0, c.c1, c.c1 ? 0 : c.c2});
      }
      // Trip limits: the submission fails, naming the node (and the enclosing one).
      Outcome o = runWith(*dev, **exe, {11, 0, 0});
      REQUIRE(o.error);
      CHECK(o.error.message() == "while node 'loop': the condition is still nonzero after 10 trips (its maximum)");
      CHECK(o.ctr[0] == 1); // what the last trip wrote is kept
      o = runWith(*dev, **exe, {0, 1, 6});
      REQUIRE(o.error);
      CHECK(o.error.message() == "if node 'wrap/maybe': while node 'inner': the condition is still nonzero "
                                 "after 5 trips (its maximum)");
      // Updates reach the stage that holds the node: 'last' adds 2000 instead of 1000;
      // disabling the while node skips its condition and body.
      rt::NodeUpdate u;
      u.node = (*exe)->findNode("last");
      u.args = {{1, Arg::scalar(ScalarType::U32, 2000)}};
      REQUIRE_FALSE((*exe)->update(u));
      rt::NodeUpdate off;
      off.node = (*exe)->findNode("loop");
      off.enabled = 0;
      REQUIRE_FALSE((*exe)->update(off));
      o = runWith(*dev, **exe, {4, 0, 0});
      INFO(o.error.message());
      REQUIRE(!o.error);
      for (uint32_t i = 0; i < kN; ++i) REQUIRE(o.data[i] == i + 1 + 2000);
      CHECK(o.ctr[0] == 4);
      off.enabled = 1;
      REQUIRE_FALSE((*exe)->update(off));
      o = runWith(*dev, **exe, {4, 0, 0});
      REQUIRE(!o.error);
      for (uint32_t i = 0; i < kN; ++i) REQUIRE(o.data[i] == i + 1 + 40 + 2000);
    }
}

TEST_CASE("conditional: validation refuses bad conditions", "[cpu][conditional]") {
  Devices devs;
  rt::Device *cpu = devs.list()[0];
  auto bad = [&](auto edit) {
    Graph g = makeGraph();
    for (Node &n : g.nodes)
      if (n.kind == NodeKind::Conditional) edit(n);
    auto exe = cpu->finalize(g, {});
    REQUIRE(!exe);
    return exe.error().message();
  };
  CHECK(bad([](Node &n) { n.cond.offset = 2; }).find("condition offset 2 is not a multiple of 4") !=
        std::string::npos);
  CHECK(bad([](Node &n) { n.cond.offset = 384; }).find("condition reads bytes [384, 388) of slot 'ctr' which has 384 bytes") !=
        std::string::npos);
  CHECK(bad([](Node &n) { n.cond.maxTrips = 0; }).find("a while node needs a maximum trip count of at least 1") !=
        std::string::npos);
  CHECK(bad([](Node &n) { n.subgraphSlots = {0}; }).find("has 2 slots but the node binds 1") != std::string::npos);
}
