// Multi-device graphs (issue 10): nodes placed on two logical devices, run on cpu +
// PoCL, PoCL + cpu and cpu + cpu, replay and eager, compared with the same graph on
// one device. The graph moves slots both ways, keeps a runtime-owned slot on the home
// device, and has a while node placed on device 1.
#include "cl_test_util.h"

#include "cgraph/backends/cpu/cpu_backend.h"
#include "cgraph/graph/order.h"
#include "cgraph/runtime/multi_device.h"

using namespace cgraph;
using namespace cgraph::cltest;

namespace {

const char *kSource = R"CL(
__kernel void inc_u32(__global uint *a, uint by) { a[get_global_id(0)] += by; }
__kernel void add_u32(__global const uint *a, __global const uint *b, __global uint *c) {
  size_t i = get_global_id(0);
  c[i] = a[i] + b[i];
}
__kernel void add_into(__global uint *a, __global const uint *c) { a[get_global_id(0)] += c[get_global_id(0)]; }
__kernel void countdown(__global uint *c) { c[0] -= 1u; }
)CL";

constexpr uint32_t kN = 256;

// a (external), b (owned: fill 7), c (external), flag (owned: fill 3).
// a += 1 @0; c = a + b @1; c += 5 @1; a += c @0; while flag (max 5) { c += 100; flag-- } @1;
// c += 1000 @0.
Graph makeGraph() {
  GraphBuilder b("multi");
  uint32_t a = b.addSlot(externalSlot("a", kN * 4));
  Slot fb;
  fb.name = "b";
  fb.size = kN * 4;
  fb.init = SlotInit::Fill;
  fb.data = {7, 0, 0, 0};
  uint32_t bs = b.addSlot(fb);
  uint32_t c = b.addSlot(externalSlot("c", kN * 4));
  Slot ff;
  ff.name = "flag";
  ff.size = 4;
  ff.init = SlotInit::Fill;
  ff.data = {3, 0, 0, 0};
  uint32_t flag = b.addSlot(ff);
  const uint32_t kInc = addKernelSource(b, kSource, "multi.cl", "inc_u32");
  const uint32_t kAdd = kInc + 1, kInto = kInc + 2, kDown = kInc + 3;
  auto placed = [&](uint32_t node, uint32_t device) {
    b.graph().nodes[node].device = device;
    return node;
  };
  uint32_t n0 = placed(b.addKernelNode("inc_a", kInc, range1D(kN), {Arg::slot(a), Arg::scalar(ScalarType::U32, 1)}), 0);
  uint32_t n1 = placed(b.addKernelNode("sum", kAdd, range1D(kN), {Arg::slot(a), Arg::slot(bs), Arg::slot(c)}), 1);
  uint32_t n2 = placed(b.addKernelNode("inc_c", kInc, range1D(kN), {Arg::slot(c), Arg::scalar(ScalarType::U32, 5)}), 1);
  uint32_t n3 = placed(b.addKernelNode("into", kInto, range1D(kN), {Arg::slot(a), Arg::slot(c)}), 0);
  GraphBuilder body("body");
  uint32_t bc = body.addSlot(externalSlot("c", kN * 4)), bf = body.addSlot(externalSlot("flag", 4));
  const uint32_t bInc = addKernelSource(body, kSource, "multi.cl", "inc_u32");
  uint32_t b1 = body.addKernelNode("add100", bInc, range1D(kN), {Arg::slot(bc), Arg::scalar(ScalarType::U32, 100)});
  uint32_t b2 = body.addKernelNode("down", bInc + 3, range1D(1), {Arg::slot(bf)});
  body.addEdge(b1, b2);
  Node w;
  w.name = "loop";
  w.kind = NodeKind::Conditional;
  w.cond.kind = CondKind::While;
  w.cond.slot = flag;
  w.cond.maxTrips = 5;
  w.subgraph = b.addSubgraphGraph(body.take());
  w.subgraphSlots = {c, flag};
  w.device = 1;
  uint32_t n4 = b.addNode(std::move(w));
  uint32_t n5 = placed(b.addKernelNode("last", kInc, range1D(kN), {Arg::slot(c), Arg::scalar(ScalarType::U32, 1000)}), 0);
  (void)kDown;
  b.addEdge(n0, n1);
  b.addEdge(n1, n2);
  b.addEdge(n2, n3);
  b.addEdge(n3, n4);
  b.addEdge(n4, n5);
  Graph g = b.take();
  REQUIRE(!finalizeForFile(g));
  return g;
}

struct Result {
  std::vector<uint32_t> a, c;
};

Result runOn(const std::vector<rt::Device *> &devices, const Graph &g, rt::ExecMode mode) {
  rt::FinalizeOptions fo;
  fo.mode = mode;
  auto exe = rt::finalizeMultiDevice(devices, g, fo);
  INFO((exe ? std::string() : exe.error().message()));
  REQUIRE(exe);
  rt::Device &home = *devices[0];
  Result last;
  for (int round = 0; round < 2; ++round) { // the second run sees the owned flag at 0
    std::vector<uint32_t> a(kN), c(kN, 0);
    for (uint32_t i = 0; i < kN; ++i) a[i] = i;
    auto ba = alloc(home, kN * 4), bc = alloc(home, kN * 4);
    writeAll(home, *ba, a);
    writeAll(home, *bc, c);
    rt::BindingTable t;
    t.slots = {{ba.get(), 0, 0}, {}, {bc.get(), 0, 0}, {}};
    runAndWait(**exe, t);
    last.a = readAll<uint32_t>(home, *ba);
    last.c = readAll<uint32_t>(home, *bc);
    // Independent check of round 0: a1 = i + 1; c = a1 + 7 + 5; a = a1 + c;
    // c += 3 * 100 (round 0 only); c += 1000.
    for (uint32_t i = 0; i < kN; ++i) {
      const uint32_t a1 = i + 1, c1 = a1 + 7 + 5;
      INFO("round " << round << ", i = " << i);
      REQUIRE(last.a[i] == a1 + c1);
      REQUIRE(last.c[i] == c1 + (round == 0 ? 300u : 0u) + 1000);
    }
  }
  return last;
}

} // namespace

TEST_CASE("multi-device: a graph split over two devices equals one device", "[opencl][cpu][multi-device]") {
  Graph g = makeGraph();
  REQUIRE(rt::hasPlacement(g));
  auto cpuBackend = cpu::makeCpuBackend();
  auto oclBackend = opencl::makeOpenCLBackend();
  Expected<rt::Device *> cpuDev = cpuBackend->device(0);
  REQUIRE(cpuDev);
  rt::Device *cpu = *cpuDev, *ocl = openPocl(*oclBackend);
  for (rt::ExecMode mode : {rt::ExecMode::Replay, rt::ExecMode::Eager}) {
    INFO((mode == rt::ExecMode::Replay ? "replay" : "eager"));
    Result one = runOn({cpu}, g, mode);
    CHECK(runOn({cpu, ocl}, g, mode).c == one.c);
    CHECK(runOn({ocl, cpu}, g, mode).c == one.c);
    CHECK(runOn({cpu, cpu}, g, mode).c == one.c);
  }
}

TEST_CASE("multi-device: errors name the node and the device", "[cpu][multi-device]") {
  Graph g = makeGraph();
  auto cpuBackend = cpu::makeCpuBackend();
  rt::Device *cpu = *cpuBackend->device(0);
  g.nodes[g.findNode("last")].device = 2;
  auto exe = rt::finalizeMultiDevice({cpu, cpu}, g, {});
  REQUIRE(!exe);
  CHECK(exe.error().message() == "node 'last' is placed on device 2 but 2 devices were given");
  CHECK(!rt::finalizeMultiDevice({}, g, {}));
  g.nodes[g.findNode("last")].device = 1;
  auto ok = rt::finalizeMultiDevice({cpu, cpu}, g, {});
  REQUIRE(ok);
  // Updates reach the node's segment; a slot its segment does not bind is refused.
  rt::NodeUpdate u;
  u.node = (*ok)->findNode("inc_c");
  u.args = {{1, Arg::scalar(ScalarType::U32, 6)}};
  REQUIRE_FALSE((*ok)->update(u));
  std::vector<uint32_t> a(kN), c(kN, 0);
  for (uint32_t i = 0; i < kN; ++i) a[i] = i;
  auto ba = alloc(*cpu, kN * 4), bc = alloc(*cpu, kN * 4);
  writeAll(*cpu, *ba, a);
  writeAll(*cpu, *bc, c);
  rt::BindingTable t;
  t.slots = {{ba.get(), 0, 0}, {}, {bc.get(), 0, 0}, {}};
  runAndWait(**ok, t);
  std::vector<uint32_t> got = readAll<uint32_t>(*cpu, *bc);
  for (uint32_t i = 0; i < kN; ++i) REQUIRE(got[i] == (i + 1) + 7 + 6 + 300 + 1000);
  rt::NodeUpdate bad;
  bad.node = (*ok)->findNode("inc_c"); // device 1's first segment uses a, b and c, not flag
  bad.args = {{0, Arg::slot(3)}};
  Error e = (*ok)->update(bad);
  REQUIRE(e);
  CHECK(e.message().find("node 'inc_c': the update makes it use slot 'flag', which its device's segment does not "
                         "bind") != std::string::npos);
}
