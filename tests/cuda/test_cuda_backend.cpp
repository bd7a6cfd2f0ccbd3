// CUDA backend conformance: every case compares the cuda backend (replay and eager)
// with the cpu backend on the same graph and inputs, and the kernel conformance suite
// (tests/conformance; its skip table has the cuda entries) runs against the cpu backend.
// Needs a CUDA device: main() (cuda_test_main.cpp) reports the run as skipped (exit 77)
// when probe() finds none, and prints why.
#include "cgraph/backends/cpu/cpu_backend.h"
#include "cgraph/backends/cuda/cuda_backend.h"
#include "cgraph/codegen/ptx.h"
#include "cgraph/expr.h"
#include "cgraph/graph/builder.h"
#include "cgraph/kernel/module_info.h"
#include "cgraph/kernel/opencl_compiler.h"
#include "cgraph/kernel/spirv.h"

#include "../conformance/conformance.h"
#include "../conformance/graph_suite.h"
#include "../opencl/transfer_exprs.h"
#include "../common/device_compare.h"
#include "../common/memory_plan_conformance.h"
#include "../common/transfer_conformance.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>

#include <sys/wait.h>

using namespace cgraph;
using namespace cgraph::devtest;
namespace fs = std::filesystem;

namespace {

rt::Device &cudaDevice() {
  static auto backend = cuda::makeCudaBackend();
  auto d = backend->device(0);
  INFO((d ? std::string() : d.error().message()));
  REQUIRE(d);
  return **d;
}

// Every node kind, owned slots of every init kind, external slots, a parameter, a host
// task, a barrier; a chain so the result is deterministic.
Graph everyNodeKind() {
  GraphBuilder b("every-node-kind");
  auto k = addSource(b, kKernels, "kinds.cl");
  uint32_t a = b.addSlot(slot("a", 1024)), x = b.addSlot(slot("x", 1024));
  uint32_t t = b.addSlot(slot("t", 1024, SlotInit::Transient));
  uint32_t dat = b.addSlot(slot("dat", 1024, SlotInit::Data, seqBytes(1024, 5)));
  uint32_t fil = b.addSlot(slot("fil", 1024, SlotInit::Fill, {9, 8, 7}));
  Param p;
  p.name = "k";
  p.type = ScalarType::U32;
  p.defaultBits = 5;
  uint32_t pk = b.addParam(p);
  std::vector<uint32_t> chain;
  auto fill = [&](const char *name, uint32_t s, uint64_t off, uint64_t bytes, Bytes pat) {
    FillOp f;
    f.slot = s;
    f.offset = off;
    f.bytes = bytes;
    f.pattern = std::move(pat);
    chain.push_back(b.addFill(name, f));
  };
  auto copy = [&](const char *name, uint32_t src, uint64_t so, uint32_t dst, uint64_t dof, uint64_t bytes) {
    CopyOp c;
    c.srcSlot = src;
    c.srcOffset = so;
    c.dstSlot = dst;
    c.dstOffset = dof;
    c.bytes = bytes;
    chain.push_back(b.addCopy(name, c));
  };
  auto rect = [&](const char *name, uint32_t src, uint64_t so, uint32_t dst, uint64_t dof) {
    CopyOp c;
    c.srcSlot = src;
    c.srcOffset = so;
    c.dstSlot = dst;
    c.dstOffset = dof;
    c.region[0] = 12;
    c.region[1] = 4;
    c.region[2] = 2;
    c.srcRowPitch = 16;
    c.srcSlicePitch = 80;  // 5 rows
    c.dstRowPitch = 24;
    c.dstSlicePitch = 100; // not a whole number of rows: cuMemcpy3D cannot, the copy kernel does
    chain.push_back(b.addCopyRect(name, c));
  };
  fill("fill1-ext", x, 0, 256, {0xAB});
  fill("fill4-owned", t, 0, 1024, {1, 2, 3, 4});
  fill("fill8-ext", x, 256, 256, {1, 2, 3, 4, 5, 6, 7, 8});
  fill("fill2-owned-odd", t, 3, 2, {0x55});
  copy("copy-owned-ext", dat, 0, x, 512, 512);
  copy("copy-ext-owned", a, 0, t, 0, 512);
  copy("copy-owned-owned", dat, 100, t, 512, 256);
  chain.push_back(b.addBarrier("barrier"));
  rect("rect-owned-owned", dat, 8, t, 800);
  rect("rect-ext-ext", a, 4, x, 700);
  chain.push_back(b.addKernelNode("addk-ext", k["addk"], range1D(256), {Arg::slot(x), Arg::slot(a), Arg::scalar(ScalarType::U32, 3)}));
  chain.push_back(b.addKernelNode("addk-param", k["addk"], range1D(128, 64), {Arg::slot(a, 512), Arg::slot(t), Arg::param(pk)}));
  HostOp h;
  h.op = "checksum";
  chain.push_back(b.addHost("checksum-x", h, {Arg::slot(x)}));
  NDRange off = range1D(64, 32);
  off.offset[0].value = 16;
  chain.push_back(b.addKernelNode("mark-offset", k["mark"], off, {Arg::slot(a), Arg::param(pk)}));
  chain.push_back(b.addKernelNode("lsum", k["lsum"], range1D(256, 64), {Arg::slot(x), Arg::localMem(64 * 4)}));
  copy("out-t", t, 0, a, 0, 256);
  copy("out-fil", fil, 0, a, 256, 64);
  for (size_t i = 1; i < chain.size(); ++i) b.addEdge(chain[i - 1], chain[i]);
  return b.take();
}

std::vector<Bytes> inputsFor(const Graph &g, uint32_t seed) {
  std::vector<Bytes> in(g.slots.size());
  for (size_t i = 0; i < g.slots.size(); ++i)
    if (g.slots[i].init == SlotInit::External) in[i] = seqBytes(g.slots[i].size, seed + uint32_t(i));
  return in;
}

std::vector<rt::ParamValues> paramSets(const Graph &g, std::vector<uint64_t> values) {
  std::vector<rt::ParamValues> out;
  for (uint64_t v : values) {
    rt::ParamValues p;
    if (!g.params.empty()) p.bits.assign(g.params.size(), v);
    out.push_back(p);
  }
  return out;
}

} // namespace

TEST_CASE("cuda: every node kind, owned slots, parameters, host task: replay == eager == cpu", "[cuda]") {
  Graph g = everyNodeKind();
  auto in = inputsFor(g, 1);
  auto params = paramSets(g, {5, 11, 5});
  auto ref = run(cpuDevice(), g, in, rt::ExecMode::Replay, params);
  auto replay = run(cudaDevice(), g, in, rt::ExecMode::Replay, params);
  auto eager = run(cudaDevice(), g, in, rt::ExecMode::Eager, params);
  requireSame(ref, replay, "cuda replay vs cpu");
  requireSame(ref, eager, "cuda eager vs cpu");
  CHECK(ref[0].slots != ref[1].slots); // the parameter changed the result
}

namespace {
// A chain of `n` addk(y, x, k(i)) nodes over 1024 uints (slots x and y).
Graph addkChain(int n, const std::function<uint64_t(int)> &k) {
  GraphBuilder b("chain");
  auto ks = addSource(b, kKernels, "kinds.cl");
  uint32_t x = b.addSlot(slot("x", 4096)), y = b.addSlot(slot("y", 4096));
  uint32_t prev = kNone;
  for (int i = 0; i < n; ++i) {
    uint32_t node = b.addKernelNode("addk" + std::to_string(i), ks["addk"], range1D(1024),
                                    {Arg::slot(y), Arg::slot(x), Arg::scalar(ScalarType::U32, k(i))});
    if (prev != kNone) b.addEdge(prev, node);
    prev = node;
  }
  return b.take();
}

// Adds to every module of `g` the PTX form cgc --target would embed for `sm`, labelled
// with lowering version `options` (the form's `options`).
void addPtxForms(Graph &g, unsigned sm, const std::string &options) {
  for (KernelModule &m : g.modules) {
    auto p = codegen::lowerSpirvToPtx(m.forms[0].bytes.data(), m.forms[0].bytes.size(), m.name, sm);
    REQUIRE(p);
    KernelForm f;
    f.kind = FormKind::PTX;
    f.target = "nvptx64-sm_" + std::to_string(sm);
    f.options = options;
    f.bytes.assign(p->ptx.begin(), p->ptx.end());
    m.forms.push_back(std::move(f));
  }
}

// The device's PTX target, from its driver line ("CUDA 13.0, sm_90, PTX target sm_90").
unsigned ptxTarget(rt::Device &d) {
  const std::string drv = d.info().driverVersion;
  return unsigned(std::stoul(drv.substr(drv.rfind("sm_") + 3)));
}
} // namespace

TEST_CASE("cuda: a new binding table is one table upload, no node update, no re-instantiation", "[cuda]") {
  Graph g = addkChain(100, [](int i) { return uint64_t(i % 3); });
  rt::Device &d = cudaDevice();
  const cuda::CudaCounters before = cuda::counters(d);
  auto exe = d.finalize(g, {});
  REQUIRE(exe);
  const cuda::CudaCounters fin = cuda::counters(d);
  CHECK(fin.graphsInstantiated == before.graphsInstantiated + 1);
  std::vector<std::unique_ptr<rt::Buffer>> bufs;
  for (int i = 0; i < 4; ++i) bufs.push_back(std::move(*d.allocate(4096, 64)));
  for (int round = 0; round < 6; ++round) {
    std::vector<uint32_t> xs(1024), ys(1024);
    for (uint32_t i = 0; i < 1024; ++i) {
      xs[i] = i + uint32_t(round);
      ys[i] = 7 * i;
    }
    rt::Buffer &bx = *bufs[(round * 2) % 4], &by = *bufs[(round * 2 + 1) % 4];
    REQUIRE_FALSE(d.write(bx, 0, xs.data(), 4096));
    REQUIRE_FALSE(d.write(by, 0, ys.data(), 4096));
    rt::BindingTable t;
    t.slots = {{&bx}, {&by}};
    const uint64_t uploads = cuda::counters(d).tableUploads;
    auto ev = (*exe)->enqueue(t, {});
    REQUIRE(ev);
    REQUIRE_FALSE((*ev)->wait());
    CHECK(cuda::counters(d).tableUploads - uploads <= 1);
    std::vector<uint32_t> out(1024);
    REQUIRE_FALSE(d.read(by, 0, out.data(), 4096));
    uint32_t sumk = 0;
    for (int i = 0; i < 100; ++i) sumk += uint32_t(i % 3);
    for (uint32_t i = 0; i < 1024; i += 97) CHECK(out[i] == 7 * i + xs[i] * sumk);
  }
  const cuda::CudaCounters after = cuda::counters(d);
  CHECK(after.graphsInstantiated == fin.graphsInstantiated);
  CHECK(after.nodeUpdates == fin.nodeUpdates);
  // The comparison path the benchmark measures works too.
  REQUIRE_FALSE(cuda::updateEveryKernelNode(**exe));
  CHECK(cuda::counters(d).nodeUpdates == after.nodeUpdates + 100);
}

namespace {
// Whether this process's cuda backend loads tables through the ring (the default;
// CGRAPH_CUDA_TABLE_RING=0 switches it off, as run-tests.sh does for a second pass).
bool tableRing() {
  auto o = cuda::resolveOptions({});
  REQUIRE(o);
  return *o->tableRing;
}
// Whether replay submissions complete through the done word (the default with the ring;
// CudaBackendOptions::completionWord off records events instead).
bool doneWord() {
  auto o = cuda::resolveOptions({});
  REQUIRE(o);
  return *o->tableRing && *o->completionWord;
}
// Slots x (x[i] = i) and y (every element `y0`) of 1024 u32 on `d`, and the table
// binding them as slots 0 and 1 (addkChain's x and y).
struct XY {
  std::unique_ptr<rt::Buffer> x, y;
  rt::BindingTable table;
};
XY boundXY(rt::Device &d, uint32_t y0) {
  std::vector<uint32_t> x(1024), y(1024, y0);
  for (uint32_t i = 0; i < 1024; ++i) x[i] = i;
  XY b;
  auto bx = d.allocate(4096, 64), by = d.allocate(4096, 64);
  REQUIRE(bx);
  REQUIRE(by);
  b.x = std::move(*bx);
  b.y = std::move(*by);
  REQUIRE_FALSE(d.write(*b.x, 0, x.data(), 4096));
  REQUIRE_FALSE(d.write(*b.y, 0, y.data(), 4096));
  b.table.slots.resize(2);
  b.table.slots[0].buffer = b.x.get();
  b.table.slots[1].buffer = b.y.get();
  return b;
}
} // namespace

TEST_CASE("cuda: 40 submissions in flight, each with its own table, and bare launches between them",
          "[cuda][ring]") {
  // More submissions than the ring has entries, none waited for until the end, each
  // taking longer on the device than the host needs to submit it: the ring grows
  // instead of reusing an entry the device has not loaded, and every launch of
  // partition 0 (bare ones too) moves the device's counter with the host's.
  const uint32_t nodes = 300;
  Graph g = addkChain(int(nodes), [](int) { return uint64_t(1); }); // y += 300 x
  rt::Device &d = cudaDevice();
  auto exe = d.finalize(g, {});
  REQUIRE(exe);
  const int rounds = 40, bare = 10;
  std::vector<std::unique_ptr<rt::Buffer>> xs, ys;
  for (int r = 0; r < rounds; ++r) {
    std::vector<uint32_t> x(1024), y(1024, uint32_t(r));
    for (uint32_t i = 0; i < 1024; ++i) x[i] = i + uint32_t(r);
    xs.push_back(std::move(*d.allocate(4096, 64)));
    ys.push_back(std::move(*d.allocate(4096, 64)));
    REQUIRE_FALSE(d.write(*xs.back(), 0, x.data(), 4096));
    REQUIRE_FALSE(d.write(*ys.back(), 0, y.data(), 4096));
  }
  const cuda::CudaCounters before = cuda::counters(d);
  std::vector<rt::EventPtr> evs;
  for (int r = 0; r < rounds; ++r) {
    rt::BindingTable t;
    t.slots.resize(2);
    t.slots[0].buffer = xs[r].get();
    t.slots[1].buffer = ys[r].get();
    auto ev = (*exe)->enqueue(t, {});
    REQUIRE(ev);
    evs.push_back(*ev);
    if (r == bare) { // twice more with round `bare`'s table
      REQUIRE_FALSE(cuda::launchGraphsOnly(**exe));
      REQUIRE_FALSE(cuda::launchGraphsOnly(**exe));
    }
  }
  // Out of order: the last first, then the rest (complete by then: the stream orders them).
  REQUIRE_FALSE(evs.back()->wait());
  for (auto &e : evs) {
    CHECK(e->isComplete());
    REQUIRE_FALSE(e->wait());
  }
  const cuda::CudaCounters after = cuda::counters(d);
  CHECK(after.wordCompletions - before.wordCompletions == (doneWord() ? uint64_t(rounds) : 0));
  CHECK(after.ringLaunches - before.ringLaunches == (tableRing() ? uint64_t(rounds + 2) : 0));
  if (tableRing()) CHECK(after.ringGrowths > before.ringGrowths); // 16 entries, 42 launches queued
  CHECK(after.nodeUpdates == before.nodeUpdates); // no node of the graph is updated
  for (int r = 0; r < rounds; ++r) {
    std::vector<uint32_t> y(1024);
    REQUIRE_FALSE(d.read(*ys[r], 0, y.data(), 4096));
    const uint32_t times = r == bare ? 3 : 1;
    for (uint32_t i = 0; i < 1024; i += 31) {
      INFO("round " << r << ", element " << i);
      CHECK(y[i] == uint32_t(r) + times * nodes * (i + uint32_t(r)));
    }
  }
}

TEST_CASE("cuda: completions in flight outlive their executable; a host task last records an event",
          "[cuda][ring]") {
  rt::Device &d = cudaDevice();
  std::vector<uint32_t> y(1024);
  XY xy = boundXY(d, 5);
  const rt::BindingTable &t = xy.table;
  std::vector<rt::EventPtr> evs;
  const cuda::CudaCounters before = cuda::counters(d);
  {
    auto exe = d.finalize(addkChain(200, [](int) { return uint64_t(1); }), {}); // y += 200 x
    REQUIRE(exe);
    for (int r = 0; r < 3; ++r) {
      auto ev = (*exe)->enqueue(t, {});
      REQUIRE(ev);
      evs.push_back(*ev);
    }
  } // the executable goes first (its destructor waits for the stream)
  for (auto &e : evs) {
    REQUIRE_FALSE(e->wait());
    CHECK(e->isComplete());
  }
  CHECK(cuda::counters(d).wordCompletions - before.wordCompletions == (doneWord() ? 3u : 0u));
  REQUIRE_FALSE(d.read(*xy.y, 0, y.data(), 4096));
  for (uint32_t i = 0; i < 1024; i += 37) CHECK(y[i] == 5 + 3 * 200 * i);

  // A host task after the kernels: the last partition runs on the host, so the
  // submission's completion is an event recorded after it.
  GraphBuilder b("host-last");
  auto ks = addSource(b, kKernels, "kinds.cl");
  uint32_t sx = b.addSlot(slot("x", 4096)), sy = b.addSlot(slot("y", 4096));
  uint32_t k1 = b.addKernelNode("addk", ks["addk"], range1D(1024),
                                {Arg::slot(sy), Arg::slot(sx), Arg::scalar(ScalarType::U32, 2)});
  HostOp h;
  h.op = "checksum";
  uint32_t hn = b.addHost("sum-y", h, {Arg::slot(sy)});
  b.addEdge(k1, hn);
  auto exe = d.finalize(b.take(), {});
  REQUIRE(exe);
  const uint64_t words = cuda::counters(d).wordCompletions;
  auto ev = (*exe)->enqueue(t, {});
  REQUIRE(ev);
  REQUIRE_FALSE((*ev)->wait());
  CHECK(cuda::counters(d).wordCompletions == words);
  REQUIRE_FALSE(d.read(*xy.y, 0, y.data(), 4096));
  for (uint32_t i = 0; i < 1024; i += 37) CHECK(y[i] == 5 + 3 * 200 * i + 2 * i);
}

TEST_CASE("cuda: finalizes after the first take their pinned words from the pool", "[cuda][ring]") {
  // The ring, its count and the done word are small pinned blocks (gpu_common
  // pinned_pool.h): once an executable gave them back, the next finalize and its
  // submissions pin no new host memory (CudaBackendOptions::pinnedPool off: one each).
  auto resolved = cuda::resolveOptions({});
  REQUIRE(resolved);
  const bool pool = *resolved->pinnedPool;
  rt::Device &d = cudaDevice();
  std::vector<uint32_t> y(1024);
  XY xy = boundXY(d, 1);
  const rt::BindingTable &t = xy.table;
  auto round = [&] {
    auto exe = d.finalize(addkChain(10, [](int) { return uint64_t(1); }), {}); // y += 10 x
    REQUIRE(exe);
    auto ev = (*exe)->enqueue(t, {});
    REQUIRE(ev);
    REQUIRE_FALSE((*ev)->wait());
  };
  round();
  const uint64_t pinned = cuda::counters(d).pinnedAllocations;
  for (int r = 0; r < 3; ++r) round();
  const uint64_t more = cuda::counters(d).pinnedAllocations - pinned;
  if (pool) CHECK(more == 0);
  else if (tableRing()) CHECK(more >= 3 * 2); // the ring and its count, per finalize
  REQUIRE_FALSE(d.read(*xy.y, 0, y.data(), 4096));
  for (uint32_t i = 0; i < 1024; i += 37) CHECK(y[i] == 1 + 4 * 10 * i);
}

TEST_CASE("cuda: an nd-range from a parameter updates only that node", "[cuda]") {
  GraphBuilder b("shape");
  auto k = addSource(b, kKernels, "kinds.cl");
  uint32_t d0 = b.addSlot(slot("d", 4 * 512));
  Param n;
  n.name = "n";
  n.type = ScalarType::U32;
  n.defaultBits = 64;
  uint32_t pn = b.addParam(n);
  NDRange r = range1D(64, 32);
  r.global[0] = paramDim(pn);
  uint32_t a = b.addKernelNode("mark", k["mark"], r, {Arg::slot(d0), Arg::scalar(ScalarType::U32, 1)});
  uint32_t c = b.addKernelNode("fixed", k["mark"], range1D(32), {Arg::slot(d0, 4 * 256), Arg::scalar(ScalarType::U32, 2)});
  b.addEdge(a, c);
  Graph g = b.take();
  auto in = std::vector<Bytes>{Bytes(4 * 512, 0)};
  auto params = paramSets(g, {64, 128, 128, 32});
  auto ref = run(cpuDevice(), g, in, rt::ExecMode::Replay, params);
  const uint64_t updates = cuda::counters(cudaDevice()).nodeUpdates;
  auto got = run(cudaDevice(), g, in, rt::ExecMode::Replay, params);
  requireSame(ref, got, "cuda replay vs cpu");
  CHECK(cuda::counters(cudaDevice()).nodeUpdates - updates == 2); // 64->128, 128->32
}

TEST_CASE("cuda: errors name the node; a warm cache does no lowering and no PTX JIT", "[cuda]") {
  GraphBuilder b("errors");
  auto k = addSource(b, kKernels, "kinds.cl");
  uint32_t d0 = b.addSlot(slot("d", 4 * 4096));
  b.addKernelNode("too-big", k["mark"], range1D(4096, 2048), {Arg::slot(d0), Arg::scalar(ScalarType::U32, 1)});
  auto exe = cudaDevice().finalize(b.take(), {});
  REQUIRE_FALSE(exe);
  CHECK(exe.error().message().find("node 'too-big'") != std::string::npos);

  // A second backend instance: a new device object with an empty in-memory cache reads
  // the cubin from the persistent cache.
  Graph g = everyNodeKind();
  REQUIRE(cudaDevice().finalize(g, {}));
  auto other = cuda::makeCudaBackend();
  auto d2 = other->device(0);
  REQUIRE(d2);
  REQUIRE((*d2)->finalize(g, {}));
  CHECK(cuda::counters(**d2).ptxJits == 0);
  CHECK(cuda::counters(**d2).lowerings == 0);
}

TEST_CASE("cuda: an embedded PTX form is used instead of lowering the SPIR-V", "[cuda][forms]") {
  Graph g = everyNodeKind();
  // The PTX form cgc --target would embed, for this device's PTX target.
  const unsigned sm = ptxTarget(cudaDevice());
  addPtxForms(g, sm, "");
  auto other = cuda::makeCudaBackend(); // a fresh device object: no in-memory modules
  auto d2 = other->device(0);
  REQUIRE(d2);
  auto in = inputsFor(g, 3);
  auto params = paramSets(g, {7});
  auto ref = run(cpuDevice(), g, in, rt::ExecMode::Replay, params);
  auto got = run(**d2, g, in, rt::ExecMode::Replay, params);
  requireSame(ref, got, "cuda replay from the PTX form vs cpu");
  // Only the builtin copy/fill module (no forms) was lowered here.
  CHECK(cuda::counters(**d2).lowerings <= 1);
}

TEST_CASE("cuda: kernel suite, replay and eager against the C++ references", "[cuda][kernels]") {
  conformance::runKernelSuite({"cuda", &cudaDevice()});
}

TEST_CASE("cuda: kernel suite, cases without a C++ reference against cpu", "[cuda][kernels]") {
  conformance::compareWithoutReference({"cuda", &cudaDevice()}, {"cpu", &cpuDevice()});
}

TEST_CASE("cuda: graph suite, replay and eager", "[cuda][graph]") {
  conformance::runGraphSuite({"cuda", &cudaDevice()});
}

namespace {

const char *kUpdateKernels = R"CL(
__kernel void inc_u32(__global uint *a, uint by) { a[get_global_id(0)] += by; }
__kernel void inc2x_u32(__global uint *a, uint by) { a[get_global_id(0)] += 2u * by; }
__kernel void countdown(__global uint *c) { c[0] -= 1u; }
)CL";

// Runs `g` once per step on fresh buffers, applying step i to the executable before
// run i (issue 10's updates); the step's Error must be success.
std::vector<RunResult> runSteps(rt::Device &d, const Graph &g, const std::vector<Bytes> &inputs, rt::ExecMode mode,
                                const std::vector<std::function<Error(rt::Executable &)>> &steps) {
  rt::FinalizeOptions fo;
  fo.mode = mode;
  auto exe = d.finalize(g, fo);
  INFO(d.info().backend << ": " << (exe ? std::string() : exe.error().message()));
  REQUIRE(exe);
  std::vector<RunResult> out;
  for (const auto &step : steps) {
    Error e = step(**exe);
    INFO(d.info().backend << ": update: " << e.message());
    REQUIRE_FALSE(e);
    std::vector<std::unique_ptr<rt::Buffer>> bufs(inputs.size());
    rt::BindingTable t;
    t.slots.resize(inputs.size());
    for (size_t i = 0; i < inputs.size(); ++i) {
      auto b = d.allocate(inputs[i].size(), 64);
      REQUIRE(b);
      bufs[i] = std::move(*b);
      REQUIRE_FALSE(d.write(*bufs[i], 0, inputs[i].data(), inputs[i].size()));
      t.slots[i].buffer = bufs[i].get();
    }
    auto ev = (*exe)->enqueue(t, {});
    INFO(d.info().backend << ": " << (ev ? std::string() : ev.error().message()));
    REQUIRE(ev);
    Error w = (*ev)->wait();
    INFO(w.message());
    REQUIRE_FALSE(w);
    RunResult r;
    for (size_t i = 0; i < inputs.size(); ++i) {
      r.slots.emplace_back(inputs[i].size());
      REQUIRE_FALSE(d.read(*bufs[i], 0, r.slots[i].data(), r.slots[i].size()));
    }
    out.push_back(std::move(r));
  }
  return out;
}

} // namespace

TEST_CASE("cuda: executable updates (arguments, range, kernel alternative, enable/disable, whole graph) vs cpu",
          "[cuda][update]") {
  auto build = [](const char *inc7Kernel) {
    GraphBuilder b("update");
    auto k = addSource(b, kUpdateKernels, "update.cl");
    uint32_t a = b.addSlot(slot("a", 4 * 256)), c = b.addSlot(slot("c", 4 * 256));
    uint32_t n5 = b.addKernelNode("inc5", k["inc_u32"], range1D(256, 64), {Arg::slot(a), Arg::scalar(ScalarType::U32, 5)});
    uint32_t n7 = b.addKernelNode("inc7", k[inc7Kernel], range1D(256, 64), {Arg::slot(a), Arg::scalar(ScalarType::U32, 7)});
    uint32_t nc = b.addKernelNode("incc", k["inc_u32"], range1D(256), {Arg::slot(c), Arg::scalar(ScalarType::U32, 1)});
    b.addEdge(n5, n7);
    b.addEdge(n7, nc); // so incc may be pointed at a (updates keep hazards ordered)
    Graph g = b.take();
    g.nodes[n7].alternatives = {k[inc7Kernel], k[std::string(inc7Kernel) == "inc_u32" ? "inc2x_u32" : "inc_u32"]};
    return g;
  };
  Graph g = build("inc_u32"), doubled = build("inc2x_u32");
  const uint32_t kInc2x = g.findKernel("inc2x_u32");
  doubled.nodes[0].args[1] = Arg::scalar(ScalarType::U32, 40);
  std::vector<std::function<Error(rt::Executable &)>> steps = {
      [](rt::Executable &) { return Error::success(); },
      [](rt::Executable &e) {
        rt::NodeUpdate u;
        u.node = e.findNode("inc7");
        u.args = {{1, Arg::scalar(ScalarType::U32, 100)}};
        return e.update(u);
      },
      [&](rt::Executable &e) {
        rt::NodeUpdate u;
        u.node = e.findNode("inc7");
        u.kernel = kInc2x;
        u.setRange = true;
        u.range = range1D(128, 32);
        return e.update(u);
      },
      [](rt::Executable &e) {
        rt::NodeUpdate u;
        u.node = e.findNode("inc5");
        u.enabled = 0;
        rt::NodeUpdate s;
        s.node = e.findNode("incc");
        s.args = {{0, Arg::slot(0, 4 * 128)}}; // incc now adds to a's second half
        s.setRange = true;
        s.range = range1D(128);
        Error x = e.update(u);
        return x ? x : e.update(s);
      },
      [](rt::Executable &e) {
        rt::NodeUpdate u;
        u.node = e.findNode("inc5");
        u.enabled = 1;
        return e.update(u);
      },
      [&](rt::Executable &e) { return e.update(doubled); },
  };
  std::vector<Bytes> in = {seqBytes(4 * 256, 1), seqBytes(4 * 256, 2)};
  rt::Device &cuda = cudaDevice();
  CHECK(cuda.info().caps.nodeUpdate);
  CHECK(cuda.info().update == "node-params");
  auto ref = runSteps(cpuDevice(), g, in, rt::ExecMode::Replay, steps);
  const uint64_t updates = cuda::counters(cuda).nodeUpdates;
  auto replay = runSteps(cuda, g, in, rt::ExecMode::Replay, steps);
  CHECK(cuda::counters(cuda).nodeUpdates > updates); // updates reached the CUDA graph
  auto eager = runSteps(cuda, g, in, rt::ExecMode::Eager, steps);
  requireSame(ref, replay, "cuda replay vs cpu");
  requireSame(ref, eager, "cuda eager vs cpu");
  // The cpu reference itself changed at every step (the updates did something).
  for (size_t i = 1; i < ref.size(); ++i) CHECK(ref[i].slots != ref[i - 1].slots);
}

TEST_CASE("cuda: stored expressions and conditional nodes vs cpu", "[cuda][expr][conditional]") {
  GraphBuilder b("expr_cond");
  auto k = addSource(b, kUpdateKernels, "update.cl");
  uint32_t a = b.addSlot(slot("a", 4 * 1024)), c = b.addSlot(slot("ctr", 4));
  Param n;
  n.name = "n";
  n.type = ScalarType::I32;
  n.defaultBits = 64;
  b.addParam(n);
  // inc over align_up($n, 32) items, by $n * 2 (both stored expressions).
  uint32_t e = b.addKernelNode("inc", k["inc_u32"], range1D(64, 32), {Arg::slot(a), Arg::scalar(ScalarType::U32, 1)});
  // while ctr != 0 (max 8): a += 3; ctr--.
  GraphBuilder body("body");
  auto bk = addSource(body, kUpdateKernels, "update.cl");
  uint32_t ba = body.addSlot(slot("a", 4 * 1024)), bc = body.addSlot(slot("ctr", 4));
  uint32_t b1 = body.addKernelNode("add3", bk["inc_u32"], range1D(1024), {Arg::slot(ba), Arg::scalar(ScalarType::U32, 3)});
  uint32_t b2 = body.addKernelNode("down", bk["countdown"], range1D(1), {Arg::slot(bc)});
  body.addEdge(b1, b2);
  Node w;
  w.name = "loop";
  w.kind = NodeKind::Conditional;
  w.cond.kind = CondKind::While;
  w.cond.slot = c;
  w.cond.maxTrips = 8;
  w.subgraph = b.addSubgraphGraph(body.take());
  w.subgraphSlots = {a, c};
  uint32_t wn = b.addNode(std::move(w));
  b.addEdge(e, wn);
  Graph g = b.take();
  auto program = [&](const std::string &text) {
    auto p = expr::parse(text);
    REQUIRE(p);
    auto m = expr::remapVariables(*p, {0});
    REQUIRE(m);
    return expr::encode(*m);
  };
  g.exprs.push_back(FieldExpr{e, ExprField::Global0, 0, program("align_up($n, 32)")});
  g.exprs.push_back(FieldExpr{e, ExprField::ScalarArg, 1, program("$n * 2")});
  std::vector<Bytes> in = {seqBytes(4 * 1024, 3), Bytes{5, 0, 0, 0}};
  auto params = paramSets(g, {64, 200, 1000, 64});
  auto ref = run(cpuDevice(), g, in, rt::ExecMode::Replay, params);
  auto replay = run(cudaDevice(), g, in, rt::ExecMode::Replay, params);
  auto eager = run(cudaDevice(), g, in, rt::ExecMode::Eager, params);
  requireSame(ref, replay, "cuda replay vs cpu");
  requireSame(ref, eager, "cuda eager vs cpu");
  for (const RunResult &r : ref) CHECK(r.slots[1] == Bytes{0, 0, 0, 0}); // the loop ran to 0
}

namespace {

// while ctr (max `maxTrips`): { a += 3; if flag: { b += 5 (kernel); b[0..64) = 0x2a..
// (fill); b[64..128) = a[0..64) (copy) }; ctr-- }, then a += 1 after the loop. Every
// body slot is external, so copies and fills in the body are table-reading kernels.
Graph nativeCondGraph(uint32_t maxTrips, bool nested = true, bool copies = true) {
  GraphBuilder b("native_cond");
  auto k = addSource(b, kUpdateKernels, "update.cl");
  uint32_t a = b.addSlot(slot("a", 4 * 1024)), c = b.addSlot(slot("ctr", 4)), f = b.addSlot(slot("flag", 4)),
           bs = b.addSlot(slot("b", 4 * 256));
  GraphBuilder inner("inner");
  auto ik = addSource(inner, kUpdateKernels, "update.cl");
  uint32_t ia = inner.addSlot(slot("a", 4 * 1024)), ib = inner.addSlot(slot("b", 4 * 256));
  uint32_t i1 = inner.addKernelNode("add5", ik["inc_u32"], range1D(256, 64), {Arg::slot(ib), Arg::scalar(ScalarType::U32, 5)});
  FillOp fill;
  fill.slot = ib;
  fill.bytes = 64;
  fill.pattern = {0x2a, 0, 0, 0};
  CopyOp cp;
  cp.srcSlot = ia;
  cp.dstSlot = ib;
  cp.dstOffset = 64;
  cp.bytes = 64;
  if (copies) {
    uint32_t i2 = inner.addFill("fill", fill);
    uint32_t i3 = inner.addCopy("copy", cp);
    inner.addEdge(i1, i2);
    inner.addEdge(i2, i3);
  }
  GraphBuilder body("body");
  auto bk = addSource(body, kUpdateKernels, "update.cl");
  uint32_t ba = body.addSlot(slot("a", 4 * 1024)), bc = body.addSlot(slot("ctr", 4)),
           bf = body.addSlot(slot("flag", 4)), bb = body.addSlot(slot("b", 4 * 256));
  uint32_t b1 = body.addKernelNode("add3", bk["inc_u32"], range1D(1024), {Arg::slot(ba), Arg::scalar(ScalarType::U32, 3)});
  if (!nested) {
    // the if's body inline in the loop's body (unconditionally)
    uint32_t x1 = body.addKernelNode("add5", bk["inc_u32"], range1D(256, 64), {Arg::slot(bb), Arg::scalar(ScalarType::U32, 5)});
    body.addEdge(b1, x1);
    uint32_t last = x1;
    if (copies) {
      fill.slot = bb;
      uint32_t x2 = body.addFill("fill", fill);
      cp.srcSlot = ba;
      cp.dstSlot = bb;
      uint32_t x3 = body.addCopy("copy", cp);
      body.addEdge(x1, x2);
      body.addEdge(x2, x3);
      last = x3;
    }
    uint32_t b3 = body.addKernelNode("down", bk["countdown"], range1D(1), {Arg::slot(bc)});
    body.addEdge(last, b3);
    (void)bf;
  } else {
  Node ifn;
  ifn.name = "maybe";
  ifn.kind = NodeKind::Conditional;
  ifn.cond.kind = CondKind::If;
  ifn.cond.slot = bf;
  ifn.subgraph = body.addSubgraphGraph(inner.take());
  ifn.subgraphSlots = {ba, bb};
  uint32_t b2 = body.addNode(std::move(ifn));
  uint32_t b3 = body.addKernelNode("down", bk["countdown"], range1D(1), {Arg::slot(bc)});
  body.addEdge(b1, b2);
  body.addEdge(b2, b3);
  }
  Node w;
  w.name = "loop";
  w.kind = NodeKind::Conditional;
  w.cond.kind = CondKind::While;
  w.cond.slot = c;
  w.cond.maxTrips = maxTrips;
  w.subgraph = b.addSubgraphGraph(body.take());
  w.subgraphSlots = {a, c, f, bs};
  uint32_t wn = b.addNode(std::move(w));
  uint32_t after = b.addKernelNode("after", k["inc_u32"], range1D(1024, 256), {Arg::slot(a), Arg::scalar(ScalarType::U32, 1)});
  b.addEdge(wn, after);
  return b.take();
}

Bytes u32Bytes(uint32_t v) { return Bytes{uint8_t(v), uint8_t(v >> 8), uint8_t(v >> 16), uint8_t(v >> 24)}; }

} // namespace

// The simpler shapes first, so that a failure names the feature.
TEST_CASE("cuda: native while loops: plain body, copy/fill in the body, nested if", "[cuda][conditional]") {
  rt::Device &cuda = cudaDevice();
  const std::vector<rt::ParamValues> once(1);
  for (int shape = 0; shape < 3; ++shape) {
    const bool nested = shape == 2, copies = shape == 1;
    Graph g = nativeCondGraph(8, nested, copies);
    for (uint32_t trips : {0u, 3u}) {
      INFO("shape " << shape << " (nested " << nested << ", copies " << copies << "), ctr " << trips);
      std::vector<Bytes> in = {seqBytes(4 * 1024, 3), u32Bytes(trips), u32Bytes(1), seqBytes(4 * 256, 4)};
      auto ref = run(cpuDevice(), g, in, rt::ExecMode::Replay, once);
      auto replay = run(cuda, g, in, rt::ExecMode::Replay, once);
      requireSame(ref, replay, "cuda native replay vs cpu");
    }
  }
}

TEST_CASE("cuda: native conditional nodes (0, 1, N trips, nested if, copy/fill in a body, trip limit, disabled) "
          "vs cpu and vs runtime-driven",
          "[cuda][conditional]") {
  rt::Device &cuda = cudaDevice();
  INFO(cuda.info().replay);
  REQUIRE(cuda.info().replay.find("conditional nodes native") != std::string::npos);
  Graph g = nativeCondGraph(8);
  const std::vector<rt::ParamValues> once(1);
  for (uint32_t trips : {0u, 1u, 5u, 8u})
    for (uint32_t flag : {0u, 1u}) {
      INFO("ctr " << trips << ", flag " << flag);
      std::vector<Bytes> in = {seqBytes(4 * 1024, 3), u32Bytes(trips), u32Bytes(flag), seqBytes(4 * 256, 4)};
      auto ref = run(cpuDevice(), g, in, rt::ExecMode::Replay, once);
      const uint64_t before = cuda::counters(cuda).conditionalNodes;
      auto replay = run(cuda, g, in, rt::ExecMode::Replay, once);
      CHECK(cuda::counters(cuda).conditionalNodes - before == 2); // the while and the nested if
      auto eager = run(cuda, g, in, rt::ExecMode::Eager, once);
      requireSame(ref, replay, "cuda native replay vs cpu");
      requireSame(ref, eager, "cuda eager (runtime-driven) vs cpu");
      CHECK(ref[0].slots[1] == u32Bytes(0)); // the loop ran to 0
      if (trips > 0) CHECK(ref[0].slots[0] != in[0]);
      if (trips > 0 && flag) CHECK(ref[0].slots[3] != in[3]);
      else CHECK(ref[0].slots[3] == in[3]);
    }
  // The same executable submitted again reuses its state (trip counters reset).
  {
    std::vector<Bytes> in = {seqBytes(4 * 1024, 5), u32Bytes(3), u32Bytes(1), seqBytes(4 * 256, 6)};
    const std::vector<rt::ParamValues> thrice(3);
    requireSame(run(cpuDevice(), g, in, rt::ExecMode::Replay, thrice), run(cuda, g, in, rt::ExecMode::Replay, thrice),
                "cuda native replay x3 vs cpu");
  }
  // Runtime-driven on the same device gives the same bytes (the A/B switch).
  {
    std::vector<Bytes> in = {seqBytes(4 * 1024, 7), u32Bytes(6), u32Bytes(1), seqBytes(4 * 256, 8)};
    auto native = run(cuda, g, in, rt::ExecMode::Replay, once);
    cuda::CudaBackendOptions so;
    so.nativeConditionals = false;
    static auto stagedBackend = cuda::makeCudaBackend(so);
    auto stagedDevice = stagedBackend->device(0);
    REQUIRE(stagedDevice);
    auto staged = run(**stagedDevice, g, in, rt::ExecMode::Replay, once);
    CHECK(cuda::counters(**stagedDevice).conditionalNodes == 0);
    requireSame(native, staged, "cuda native vs runtime-driven");
  }
  // Reaching the trip limit with the condition still nonzero fails the submission, on
  // both backends, with the same words; a later submission that stays under it succeeds.
  {
    Graph lim = nativeCondGraph(4);
    rt::FinalizeOptions fo;
    for (rt::Device *d : {&cpuDevice(), &cuda}) {
      auto exe = d->finalize(lim, fo);
      REQUIRE(exe);
      for (uint32_t ctr : {9u, 2u}) {
        std::vector<Bytes> in = {seqBytes(4 * 1024, 1), u32Bytes(ctr), u32Bytes(0), seqBytes(4 * 256, 2)};
        std::vector<std::unique_ptr<rt::Buffer>> bufs;
        rt::BindingTable t;
        for (const Bytes &x : in) {
          auto b = d->allocate(x.size(), 64);
          REQUIRE(b);
          REQUIRE_FALSE(d->write(**b, 0, x.data(), x.size()));
          t.slots.push_back(rt::Binding{b->get(), 0, 0});
          bufs.push_back(std::move(*b));
        }
        auto ev = (*exe)->enqueue(t, {});
        REQUIRE(ev);
        Error e = (*ev)->wait();
        INFO(d->info().backend << ": ctr " << ctr << ": " << e.message());
        if (ctr == 9) {
          CHECK(e.failed());
          CHECK(e.message().find("while node 'loop': the condition is still nonzero after 4 trips (its maximum)") !=
                std::string::npos);
        } else {
          CHECK_FALSE(e.failed());
        }
      }
    }
  }
  // A disabled conditional runs neither its condition nor its body.
  {
    std::vector<Bytes> in = {seqBytes(4 * 1024, 9), u32Bytes(3), u32Bytes(1), seqBytes(4 * 256, 10)};
    std::vector<std::function<Error(rt::Executable &)>> steps = {
        [](rt::Executable &e) {
          rt::NodeUpdate u;
          u.node = e.findNode("loop");
          u.enabled = 0;
          return e.update(u);
        },
        [](rt::Executable &e) {
          rt::NodeUpdate u;
          u.node = e.findNode("loop");
          u.enabled = 1;
          return e.update(u);
        }};
    auto ref = runSteps(cpuDevice(), g, in, rt::ExecMode::Replay, steps);
    auto got = runSteps(cuda, g, in, rt::ExecMode::Replay, steps);
    requireSame(ref, got, "cuda native replay with the loop disabled / enabled vs cpu");
    CHECK(ref[0].slots[1] == in[1]); // disabled: ctr untouched
    CHECK(ref[1].slots[1] == u32Bytes(0));
  }
}

// Issue 8: a Subgraph node runs as one CUDA child graph node (slots remapped); an
// executable update of a node inside it flattens that subgraph into its partition's
// graph first. Replay and eager vs cpu.
TEST_CASE("cuda: subgraphs as child graphs, and updates of their nodes, vs cpu", "[cuda][subgraph]") {
  GraphBuilder child("child");
  auto ck = addSource(child, kUpdateKernels, "update.cl");
  uint32_t cs = child.addSlot(slot("cs", 4 * 256));
  uint32_t c1 = child.addKernelNode("c1", ck["inc_u32"], range1D(256, 64), {Arg::slot(cs), Arg::scalar(ScalarType::U32, 3)});
  uint32_t c2 = child.addKernelNode("c2", ck["inc2x_u32"], range1D(128, 64), {Arg::slot(cs), Arg::scalar(ScalarType::U32, 5)});
  child.addEdge(c1, c2);
  GraphBuilder b("subgraphs");
  auto k = addSource(b, kUpdateKernels, "update.cl");
  uint32_t a = b.addSlot(slot("a", 4 * 256)), y = b.addSlot(slot("y", 4 * 256));
  uint32_t pre = b.addKernelNode("pre", k["inc_u32"], range1D(256, 64), {Arg::slot(y), Arg::scalar(ScalarType::U32, 1)});
  uint32_t sub = b.addSubgraph("sub", child.take(), {y});
  uint32_t post = b.addKernelNode("post", k["inc2x_u32"], range1D(256, 64), {Arg::slot(y), Arg::scalar(ScalarType::U32, 7)});
  uint32_t other = b.addKernelNode("other", k["inc_u32"], range1D(256), {Arg::slot(a), Arg::scalar(ScalarType::U32, 9)});
  b.addEdge(pre, sub);
  b.addEdge(sub, post);
  (void)other;
  Graph g = b.take();
  std::vector<std::function<Error(rt::Executable &)>> steps = {
      [](rt::Executable &) { return Error::success(); },
      [](rt::Executable &e) {
        rt::NodeUpdate u;
        u.node = e.findNode("sub/c2");
        u.args = {{1, Arg::scalar(ScalarType::U32, 100)}};
        return e.update(u);
      },
      [](rt::Executable &e) {
        rt::NodeUpdate u;
        u.node = e.findNode("sub/c1");
        u.enabled = 0;
        return e.update(u);
      },
  };
  std::vector<Bytes> in = {seqBytes(4 * 256, 1), seqBytes(4 * 256, 2)};
  auto ref = runSteps(cpuDevice(), g, in, rt::ExecMode::Replay, steps);
  auto replay = runSteps(cudaDevice(), g, in, rt::ExecMode::Replay, steps);
  auto eager = runSteps(cudaDevice(), g, in, rt::ExecMode::Eager, steps);
  requireSame(ref, replay, "cuda replay vs cpu");
  requireSame(ref, eager, "cuda eager vs cpu");
  for (size_t i = 1; i < ref.size(); ++i) CHECK(ref[i].slots != ref[i - 1].slots);
}

// Issue 12: copy/fill offsets and sizes, a host task's integer argument and slot sizes
// as expressions over $n (.cgf 2.2; the case tests/opencl/test_backends_shared.cpp runs
// on cpu and opencl), per submission, replay and eager vs cpu.
TEST_CASE("cuda: copy, fill, host task and slot size expressions vs cpu", "[cuda][expr]") {
  const Graph g = exprtest::transferExprsGraph().graph; // slots: src, dst external; tmp, pat owned
  std::vector<Bytes> in = {seqBytes(1024, 3), seqBytes(1024, 4), Bytes{}, Bytes{}};
  auto params = paramSets(g, {4, 16, 2, 16, 40, 9});
  auto ref = run(cpuDevice(), g, in, rt::ExecMode::Replay, params);
  auto replay = run(cudaDevice(), g, in, rt::ExecMode::Replay, params);
  auto eager = run(cudaDevice(), g, in, rt::ExecMode::Eager, params);
  requireSame(ref, replay, "cuda replay vs cpu");
  requireSame(ref, eager, "cuda eager vs cpu");
  for (const RunResult &r : ref) CHECK(r.lines.size() == 1);
}

TEST_CASE("cuda: coarse entries (4 work-items per thread) vs cpu: aligned, tail, misaligned buffer, odd offset",
          "[cuda][coarsen]") {
  cuda::CudaBackendOptions o;
  o.coarsenMinItems = 1; // every 1-D range of a coarse-able kernel
  static auto backend = cuda::makeCudaBackend(o);
  auto d = backend->device(0);
  INFO((d ? std::string() : d.error().message()));
  REQUIRE(d);
  const char *src = R"CL(
__kernel void affine(__global const uint *x, __global uint *y, uint a) {
  size_t i = get_global_id(0);
  y[i] = a * x[i] + (uint)i;
}
__kernel void pairs(__global const float2 *x, __global float *y) {
  int i = get_global_id(0);
  y[i] = x[i].x * 0.5f - x[i].y;
}
)CL";
  struct Case {
    uint64_t n, xOffset, globalOffset;
  };
  // Whole threads with aligned buffers (the vector path); a tail; x bound 4 and 8 bytes
  // into its buffer; a global offset that is not a multiple of 4 (the one-by-one path).
  for (const Case &c : {Case{4096, 0, 0}, Case{4099, 0, 0}, Case{4096, 4, 0}, Case{4096, 0, 2},
                        Case{1027, 8, 3}, Case{3, 0, 0}}) {
    DYNAMIC_SECTION("n " << c.n << ", x at +" << c.xOffset << ", global offset " << c.globalOffset) {
      const uint64_t before = cuda::counters(**d).coarsePlans;
      GraphBuilder b("coarse");
      auto k = addSource(b, src, "coarse.cl");
      const uint64_t items = c.n + c.globalOffset;
      // pairs reads float2: its binding moves by twice as much (8-byte aligned elements).
      uint32_t x = b.addSlot(slot("x", 8 * items + 2 * c.xOffset)), y = b.addSlot(slot("y", 4 * items));
      uint32_t y2 = b.addSlot(slot("y2", 4 * items));
      b.addKernelNode("affine", k["affine"], range1(c.n, 0, c.globalOffset),
                      {Arg::slot(x, c.xOffset), Arg::slot(y), Arg::scalar(ScalarType::U32, 7)});
      b.addKernelNode("pairs", k["pairs"], range1(c.n, 0, c.globalOffset), {Arg::slot(x, 2 * c.xOffset), Arg::slot(y2)});
      Graph g = b.take();
      std::vector<Bytes> in = inputsFor(g, 3);
      auto ps = std::vector<rt::ParamValues>{rt::ParamValues{}};
      auto ref = run(cpuDevice(), g, in, rt::ExecMode::Replay, ps);
      requireSame(ref, run(**d, g, in, rt::ExecMode::Replay, ps), "replay");
      requireSame(ref, run(**d, g, in, rt::ExecMode::Eager, ps), "eager");
      CHECK(ref[0].slots[y] != in[y]);
      // affine ran on its coarse entry in replay and in eager (pairs has one where its
      // float2 copies merged: test_cuda_coarsen).
      CHECK(cuda::counters(**d).coarsePlans - before >= 2);
    }
  }
}

TEST_CASE("cuda: a table over the loader's 496 values is copied from pinned staging, new values each submission",
          "[cuda][table]") {
  for (const uint32_t nParams : {400u, 600u}) {
    DYNAMIC_SECTION(nParams << " parameters") {
      GraphBuilder b("big-table");
      auto k = addSource(b, kKernels, "kinds.cl");
      uint32_t x = b.addSlot(slot("x", 4096)), y = b.addSlot(slot("y", 4096));
      std::vector<uint32_t> ps;
      for (uint32_t i = 0; i < nParams; ++i) {
        Param p;
        p.name = "p" + std::to_string(i);
        p.type = ScalarType::U32;
        p.defaultBits = i;
        ps.push_back(b.addParam(p));
      }
      // Three kernels reading parameters from the start, middle and end of the table.
      uint32_t prev = kNone;
      for (uint32_t i : {0u, nParams / 2, nParams - 1}) {
        uint32_t n = b.addKernelNode("addk-p" + std::to_string(i), k["addk"], range1(1024),
                                     {Arg::slot(y), Arg::slot(x), Arg::param(ps[i])});
        if (prev != kNone) b.addEdge(prev, n);
        prev = n;
      }
      Graph g = b.take();
      std::vector<rt::ParamValues> sets;
      for (uint64_t s = 1; s <= 4; ++s) {
        rt::ParamValues pv;
        for (uint32_t i = 0; i < nParams; ++i) pv.bits.push_back(s * 1000 + i);
        sets.push_back(pv);
      }
      auto in = inputsFor(g, 5);
      auto ref = run(cpuDevice(), g, in, rt::ExecMode::Replay, sets);
      rt::Device &d = cudaDevice();
      const cuda::CudaCounters before = cuda::counters(d);
      requireSame(ref, run(d, g, in, rt::ExecMode::Replay, sets), "replay");
      const cuda::CudaCounters after = cuda::counters(d);
      // One upload per submission, plus finalize's own copy of the initial table.
      const uint64_t uploads = after.tableUploads - before.tableUploads;
      const uint64_t copies = after.tableCopies - before.tableCopies;
      CHECK(uploads >= 4);
      CHECK(uploads <= 5);
      // Through the ring, any size goes up without a copy. Else, 2 slots + nParams
      // values: the parameter loader holds 400 + 2 (the submissions set its
      // parameters), not 600 + 2 (every upload is a copy from pinned staging).
      if (tableRing())
        CHECK(copies <= 1);
      else if (nParams + 2 > 496)
        CHECK(copies == uploads);
      else
        CHECK(copies <= 1);
    }
  }
}

TEST_CASE("cuda: programmatic edges only into kernels whose module waits for its grid dependencies",
          "[cuda][forms]") {
  const unsigned sm = ptxTarget(cudaDevice());
  const Graph plain = addkChain(3, [](int i) { return uint64_t(i + 1); });
  auto in = inputsFor(plain, 9);
  auto ps = std::vector<rt::ParamValues>{rt::ParamValues{}};
  auto ref = run(cpuDevice(), plain, in, rt::ExecMode::Replay, ps);
  // The same module with an embedded PTX form of this lowering, and the same PTX
  // labelled as made by an older lowering version (which may lack the prologue).
  for (const bool current : {true, false}) {
    DYNAMIC_SECTION((current ? "this lowering's form" : "an older lowering's form")) {
      Graph g = plain;
      addPtxForms(g, sm, current ? codegen::ptxLoweringVersion() : "cgraph-cuda-lowering-4;llvm-14;ptx75");
      auto other = cuda::makeCudaBackend(); // a fresh device object: no in-memory modules
      auto d2 = other->device(0);
      REQUIRE(d2);
      requireSame(ref, run(**d2, g, in, rt::ExecMode::Replay, ps), "replay");
      const uint64_t edges = cuda::counters(**d2).programmaticEdges;
      if (current && codegen::waitsForGridDependencies(sm))
        CHECK(edges == 2);
      else
        CHECK(edges == 0);
    }
  }
}

// ---- Device failures are errors, never aborts -------------------------------------

TEST_CASE("cuda: out of device memory is an error naming the call; the device goes on", "[cuda][errors]") {
  rt::Device &d = cudaDevice();
  constexpr uint64_t kPetabyte = uint64_t(1) << 50;
  auto big = d.allocate(kPetabyte, 64);
  REQUIRE_FALSE(big);
  INFO(big.error().message());
  CHECK(big.error().message().find("CUDA_ERROR_OUT_OF_MEMORY") != std::string::npos);
  CHECK(big.error().code() == ErrorCode::OutOfMemory);

  // A runtime-owned slot larger than the device's memory: finalize refuses it before
  // allocating, naming it and both sizes.
  GraphBuilder b("oom");
  auto k = addSource(b, kKernels, "kinds.cl");
  uint32_t huge = b.addSlot(slot("huge", kPetabyte, SlotInit::Transient));
  b.addKernelNode("mark-huge", k["mark"], range1D(256), {Arg::slot(huge), Arg::scalar(ScalarType::U32, 1)});
  auto exe = d.finalize(b.take(), {});
  REQUIRE_FALSE(exe);
  INFO(exe.error().message());
  CHECK(exe.error().message().find("is more than the memory of device") != std::string::npos);
  CHECK(exe.error().message().find("slot 'huge'") != std::string::npos);

  // Nothing was left half-made: the same device runs a graph and gets its results.
  Graph g = everyNodeKind();
  std::vector<Bytes> in = inputsFor(g, 11);
  requireSame(run(cpuDevice(), g, in, rt::ExecMode::Replay, paramSets(g, {5})),
              run(d, g, in, rt::ExecMode::Replay, paramSets(g, {5})), "cuda after OOM vs cpu");
}

namespace {
// A kernel that writes 4 TiB past its buffer: the device faults. A fault poisons the
// CUDA context for the rest of the process, so the case that provokes it runs in a child
// process (the hidden case below, run by the one after it).
const char *kFaultKernel = R"CL(
__kernel void poke(__global uint *d, ulong far) { d[get_global_id(0) + far] = 1u; }
)CL";
} // namespace

TEST_CASE("cuda child: a faulting kernel", "[.cuda-fault-child]") {
  const char *mode = std::getenv("CGRAPH_TEST_FAULT_MODE");
  REQUIRE(mode);
  rt::Device &d = cudaDevice();
  GraphBuilder b("fault");
  auto k = addSource(b, kFaultKernel, "fault.cl");
  uint32_t s = b.addSlot(slot("d", 4096));
  Param p;
  p.name = "far";
  p.type = ScalarType::U64;
  p.defaultBits = 0;
  uint32_t pf = b.addParam(p);
  b.addKernelNode("poke", k["poke"], range1D(256), {Arg::slot(s), Arg::param(pf)});
  rt::FinalizeOptions fo;
  fo.mode = std::string(mode) == "eager" ? rt::ExecMode::Eager : rt::ExecMode::Replay;
  auto exe = d.finalize(b.take(), fo);
  REQUIRE(exe);
  auto buf = d.allocate(4096, 64);
  REQUIRE(buf);
  rt::BindingTable t;
  t.slots = {{buf->get()}};
  rt::ParamValues harmless, far;
  harmless.bits = {0};
  far.bits = {uint64_t(1) << 40}; // 4 TiB of uints past the buffer
  // A first submission within bounds works.
  auto ok = (*exe)->enqueue(t, harmless);
  REQUIRE(ok);
  REQUIRE_FALSE((*ok)->wait());
  // The fault comes back from wait (or from enqueue, where the launch itself reports
  // it) as an Error naming the CUDA error.
  std::string message;
  ErrorCode code = ErrorCode::Invalid;
  auto ev = (*exe)->enqueue(t, far);
  if (!ev) {
    message = ev.error().message();
    code = ev.error().code();
  } else {
    Error e = (*ev)->wait();
    REQUIRE(e);
    message = e.message();
    code = e.code();
  }
  INFO(message);
  CHECK(code == ErrorCode::DeviceLost);
  CHECK((message.find("CUDA_ERROR_ILLEGAL_ADDRESS") != std::string::npos ||
         message.find("CUDA_ERROR_LAUNCH_FAILED") != std::string::npos));
  // Everything after the fault fails with errors too (the context is gone), and the
  // executable, buffers and device are destroyed without aborting (the process exits 0
  // when these checks pass).
  auto again = (*exe)->enqueue(t, harmless);
  if (again) CHECK((*again)->wait());
  CHECK_FALSE(d.allocate(4096, 64));
  std::printf("fault message: %s\n", message.c_str());
}

TEST_CASE("cuda: a kernel that faults is an error, not an abort (replay and eager)", "[cuda][errors]") {
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec); // this test binary
  REQUIRE_FALSE(ec);
  for (const char *mode : {"replay", "eager"}) {
    INFO(mode);
    const fs::path out = fs::temp_directory_path() / ("cgraph-cuda-fault-" + std::string(mode) + ".txt");
    const std::string cmd = std::string("CGRAPH_TEST_FAULT_MODE=") + mode + " '" + self.string() +
                            "' '[.cuda-fault-child]' > '" + out.string() + "' 2>&1";
    const int status = std::system(cmd.c_str());
    std::ifstream f(out);
    std::stringstream text;
    text << f.rdbuf();
    INFO(text.str());
    REQUIRE(WIFEXITED(status)); // not killed by a signal (abort, segfault)
    CHECK(WEXITSTATUS(status) == 0);
    CHECK(text.str().find("fault message: ") != std::string::npos);
    CHECK(text.str().find("All tests passed") != std::string::npos);
    fs::remove(out);
  }
}

TEST_CASE("cuda: transfer conformance: fills at the end of an owned slot (replay and eager)", "[cuda][conformance]") {
  conformance::checkFillTails(cudaDevice(), rt::ExecMode::Replay);
  conformance::checkFillTails(cudaDevice(), rt::ExecMode::Eager);
}

TEST_CASE("cuda: memory plan conformance: branches apart, a chain shared (replay and eager)",
          "[cuda][conformance][plan]") {
  conformance::checkMemoryPlan(cudaDevice(), rt::ExecMode::Replay);
  conformance::checkMemoryPlan(cudaDevice(), rt::ExecMode::Eager);
}
