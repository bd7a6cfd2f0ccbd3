// The HIP backend's hipGraph construction and submission, through the recording fake of
// the HIP table (fake_hip.h; no AMD GPU exists here). The graphs are real: OpenCL C
// compiled to SPIR-V by lib/kernel, lowered to real amdgcn code objects (which the fake
// checks are AMDGPU ELF shared objects holding each kernel's descriptor).
#include "fake_hip.h"

#include "../common/temp_dir.h"
#include "../opencl/transfer_exprs.h"

#include "cgraph/codegen/table_abi.h"
#include "cgraph/backends/hip/hip_backend.h"
#include "cgraph/expr.h"
#include "cgraph/graph/builder.h"
#include "cgraph/graph/order.h"
#include "cgraph/kernel/module_info.h"
#include "cgraph/kernel/opencl_compiler.h"
#include "cgraph/kernel/spirv.h"

#include <catch2/catch.hpp>

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <cstring>
#include <map>

using namespace cgraph;
namespace fake = cgraph::hip::fake;

namespace {

const char *kSource = R"CL(
__kernel void scale(__global float *d, __global const float *s, float k) {
  size_t i = get_global_id(0);
  d[i] = s[i] * k;
}
__kernel void addp(__global uint *d, uint v) { d[get_global_id(0)] += v; }
)CL";

std::map<std::string, uint32_t> addSource(GraphBuilder &b) {
  auto r = compileOpenCL(kSource, "fake.cl", CompileOptions{});
  INFO((r ? std::string() : r.error().message()));
  REQUIRE(r);
  uint32_t mod = b.addModule(makeKernelModule("fake.cl", *r, nullptr, false));
  auto ks = reflectKernels(r->spirv.data(), r->spirv.size());
  REQUIRE(ks);
  std::map<std::string, uint32_t> out;
  for (Kernel k : *ks) {
    k.module = mod;
    std::string name = k.name;
    out[name] = b.addKernel(std::move(k));
  }
  return out;
}

Slot slot(std::string name, uint64_t bytes, SlotInit init = SlotInit::External) {
  Slot s;
  s.name = std::move(name);
  s.size = bytes;
  s.init = init;
  return s;
}

// Options that keep the code objects out of the kernel cache.
hip::HipBackendOptions noCache() {
  hip::HipBackendOptions o;
  o.useCache = false;
  return o;
}

rt::Device &fakeDevice() {
  static auto backend = hip::makeHipBackendWithApi(fake::api(), noCache());
  auto d = backend->device(0);
  INFO((d ? std::string() : d.error().message()));
  REQUIRE(d);
  return **d;
}

// The kernel node's wrapper arguments (table ABI): `n` cells.
std::vector<uint64_t> cells(const hipKernelNodeParams &p, size_t n) {
  std::vector<uint64_t> v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = *static_cast<const uint64_t *>(p.kernelParams[i]);
  return v;
}

std::vector<const fake::GraphNodeRec *> nodesOf(uintptr_t graph) {
  std::vector<const fake::GraphNodeRec *> out;
  for (uintptr_t h : fake::recorder().graphNodes.at(graph))
    out.push_back(&fake::recorder().nodes.at(h));
  return out;
}

uintptr_t handleOf(const fake::GraphNodeRec *r) {
  for (auto &kv : fake::recorder().nodes)
    if (&kv.second == r) return kv.first;
  return 0;
}

// `g` finalized on the fake with a fresh call log; no argument check failed.
std::unique_ptr<rt::Executable> finalizeOnFake(rt::Device &dev, const Graph &g,
                                               rt::ExecMode mode = rt::ExecMode::Replay) {
  fake::reset();
  rt::FinalizeOptions fo;
  fo.mode = mode;
  auto exe = dev.finalize(g, fo);
  INFO((exe ? std::string() : exe.error().message()));
  REQUIRE(exe);
  CHECK(fake::recorder().violations.empty());
  return std::move(*exe);
}

} // namespace

TEST_CASE("hip: probe and device through the table", "[hip][fake]") {
  auto backend = hip::makeHipBackendWithApi(fake::api(), noCache());
  rt::BackendProbe p = backend->probe();
  REQUIRE(p.available);
  REQUIRE(p.devices.size() == 1);
  CHECK(p.devices[0].backend == "hip");
  CHECK(p.devices[0].name == "cgraph fake MI210");
  CHECK(p.devices[0].driverVersion.find("code object gfx90a") != std::string::npos);
  CHECK(p.devices[0].caps.maxWorkGroupSize == 1024);
  CHECK(fake::recorder().violations.empty());
}

TEST_CASE("hip: no AMD GPU here, and the real runtime's probe says why", "[hip]") {
  auto backend = hip::makeHipBackend();
  rt::BackendProbe p = backend->probe();
  CHECK_FALSE(p.available);
  INFO(p.reason);
  // No library, or libamdhip64 (libamdhip64-dev brings it) without a GPU.
  CHECK((p.reason.find("libamdhip64.so not found") == 0 ||
         p.reason.find("no HIP device (libamdhip64.so") == 0));
  auto d = backend->device(0);
  CHECK_FALSE(d);
}

TEST_CASE("hip: one hipGraph per partition, table-ABI kernel nodes, memcpy/memset nodes, edges",
          "[hip][fake]") {
  rt::Device &dev = fakeDevice();
  GraphBuilder b("fake-graph");
  auto k = addSource(b);
  const uint32_t x = b.addSlot(slot("x", 4096)), y = b.addSlot(slot("y", 4096));
  const uint32_t t = b.addSlot(slot("t", 4096, SlotInit::Transient));
  const uint32_t u = b.addSlot(slot("u", 4096, SlotInit::Transient));
  Param pk;
  pk.name = "v";
  pk.type = ScalarType::U32;
  pk.defaultBits = 7;
  const uint32_t pv = b.addParam(pk);
  FillOp f;
  f.slot = t;
  f.bytes = 4096;
  f.pattern = {1, 2, 3, 4};
  const uint32_t nFill = b.addFill("fill-t", f); // owned, 4-byte pattern: memset node
  CopyOp c;
  c.srcSlot = t;
  c.dstSlot = u;
  c.bytes = 1024;
  const uint32_t nCopy = b.addCopy("copy-t-u", c); // owned -> owned: memcpy node
  const uint32_t nScale = b.addKernelNode(
      "scale", k["scale"], range1D(1024, 64),
      {Arg::slot(y, 0), Arg::slot(x, 16), Arg::scalar(ScalarType::F32, 0x40000000)});
  const uint32_t nAdd =
      b.addKernelNode("addp", k["addp"], range1D(1024), {Arg::slot(y), Arg::param(pv)});
  CopyOp ce;
  ce.srcSlot = u;
  ce.dstSlot = x; // external: the builtin copy kernel (rebinds through the table)
  ce.bytes = 512;
  const uint32_t nCopyExt = b.addCopy("copy-u-x", ce);
  HostOp h;
  h.op = "checksum";
  const uint32_t nHost = b.addHost("checksum", h, {Arg::slot(x)});
  const uint32_t nAfter = b.addKernelNode("addp-after", k["addp"], range1D(256),
                                          {Arg::slot(x), Arg::scalar(ScalarType::U32, 1)});
  b.addEdge(nFill, nCopy);
  b.addEdge(nCopy, nCopyExt);
  b.addEdge(nScale, nAdd);
  b.addEdge(nAdd, nHost);
  b.addEdge(nCopyExt, nHost);
  b.addEdge(nHost, nAfter);
  Graph g = b.take();

  fake::reset();
  rt::FinalizeOptions fo;
  fo.mode = rt::ExecMode::Replay;
  std::vector<std::string> lines;
  fo.host.output = [&](const std::string &l) { lines.push_back(l); };
  auto exe = dev.finalize(g, fo);
  INFO((exe ? std::string() : exe.error().message()));
  REQUIRE(exe);
  const fake::Recorder &rec = fake::recorder();
  INFO("violations: " << (rec.violations.empty() ? std::string() : rec.violations[0]));
  CHECK(rec.violations.empty());

  // One graph per device partition (the host task splits them), each instantiated once,
  // nothing launched at finalize.
  auto order = executionOrder(g);
  REQUIRE(order);
  size_t devParts = 0;
  for (const Partition &p : computePartitions(g, *order)) {
    bool host = false;
    for (uint32_t n : p.nodes)
      host |= g.nodes[n].kind == NodeKind::Host;
    devParts += !host;
  }
  CHECK(devParts == 2);
  CHECK(rec.count("hipGraphCreate") == devParts);
  CHECK(rec.count("hipGraphInstantiate") == devParts);
  CHECK(rec.count("hipGraphLaunch") == 0);
  CHECK(hip::counters(dev).graphsInstantiated >= devParts);
  // Order: every node of a graph is added before that graph is instantiated.
  {
    auto firstInst = std::find(rec.calls.begin(), rec.calls.end(), "hipGraphInstantiate");
    auto firstCreate = std::find(rec.calls.begin(), rec.calls.end(), "hipGraphCreate");
    REQUIRE(firstCreate < firstInst);
    for (auto it = firstCreate; it != firstInst; ++it)
      CHECK((*it == "hipGraphCreate" || it->rfind("hipGraphAdd", 0) == 0));
  }
  // Nodes of the first device graph: memset, memcpy, copy kernel, two kernels.
  std::map<std::string, const fake::GraphNodeRec *> byName;
  const fake::GraphNodeRec *memsetNode = nullptr, *memcpyNode = nullptr;
  size_t kernelNodes = 0;
  for (auto &kv : rec.graphNodes) {
    for (const fake::GraphNodeRec *r : nodesOf(kv.first)) {
      if (r->kind == fake::GraphNodeRec::Memset) memsetNode = r;
      if (r->kind == fake::GraphNodeRec::Memcpy) memcpyNode = r;
      if (r->kind == fake::GraphNodeRec::Kernel) {
        ++kernelNodes;
        byName[r->function + (byName.count(r->function) ? "#2" : "")] = r;
      }
    }
  }
  CHECK(kernelNodes == 4); // scale, addp, cgraph_copy, addp-after
  REQUIRE(memsetNode);
  CHECK(memsetNode->memset.elementSize == 4);
  CHECK(memsetNode->memset.width == 1024);
  CHECK(memsetNode->memset.value == 0x04030201u);
  REQUIRE(memcpyNode);
  CHECK(memcpyNode->memcpy.extent.width == 1024);
  // Edges: the memcpy depends on the memset; the copy kernel on the memcpy; addp on scale.
  REQUIRE(memcpyNode->deps.size() == 1);
  CHECK(memcpyNode->deps[0] == handleOf(memsetNode));
  REQUIRE(byName.count("scale"));
  REQUIRE(byName.count("addp"));
  REQUIRE(byName.count("cgraph_copy"));
  CHECK(byName["scale"]->deps.empty());
  REQUIRE(byName["addp"]->deps.size() == 1);
  CHECK(byName["addp"]->deps[0] == handleOf(byName["scale"]));
  REQUIRE(byName["cgraph_copy"]->deps.size() == 1);
  CHECK(byName["cgraph_copy"]->deps[0] == handleOf(memcpyNode));
  // Table-ABI arguments: {table, {a, m} per parameter, offsets x3, work_dim}.
  const hipKernelNodeParams &sp = byName["scale"]->kernel;
  const uint64_t tableAddr = cells(sp, 1)[0];
  // The table was uploaded once at finalize: slots first (owned slots hold their
  // allocation, external ones are unbound yet), then the parameter default.
  size_t finalizeUploads = 0;
  for (auto &up : rec.uploads)
    finalizeUploads += up.first == tableAddr;
  CHECK(finalizeUploads == 1);
  const uint64_t *table = reinterpret_cast<const uint64_t *>(fake::deviceBytes(tableAddr));
  REQUIRE(table);
  CHECK(table[x] == 0);
  CHECK(table[t] != 0);
  CHECK(table[u] != 0);
  CHECK(table[g.slots.size() + pv] == 7);
  CHECK(sp.gridDim.x == 16);
  CHECK(sp.blockDim.x == 64);
  CHECK(sp.sharedMemBytes == 0);
  const std::vector<uint64_t> sv = cells(sp, 1 + 2 * 3 + 4);
  CHECK(reinterpret_cast<uint64_t>(memsetNode->memset.dst) == table[t]);
  CHECK(reinterpret_cast<uint64_t>(memcpyNode->memcpy.srcPtr.ptr) == table[t]);
  CHECK(reinterpret_cast<uint64_t>(memcpyNode->memcpy.dstPtr.ptr) == table[u]);
  CHECK(sv[1] == 0);
  CHECK(sv[2] == y); // slot y, offset 0
  CHECK(sv[3] == 16);
  CHECK(sv[4] == x); // slot x, offset 16
  CHECK(sv[5] == 0x40000000);
  CHECK(sv[6] == codegen::kLiteral); // literal scalar 2.0f
  CHECK(sv[7] == 0);
  CHECK(sv[10] == 1); // work_dim
  const std::vector<uint64_t> av = cells(byName["addp"]->kernel, 1 + 2 * 2 + 4);
  CHECK(av[4] == g.slots.size() + pv); // the parameter's table entry
  const std::vector<uint64_t> cv = cells(byName["cgraph_copy"]->kernel, 23);
  CHECK(cv[1] == 0);
  CHECK(cv[2] == x); // dst slot through the table
  CHECK(cv[4] == u); // src slot through the table
  CHECK(cv[5] == 512);

  // Submissions: the table is uploaded only when it changed; every submission launches
  // each device graph once, with the host task between them.
  auto bx = dev.allocate(4096, 64), by = dev.allocate(4096, 64), bx2 = dev.allocate(4096, 64);
  REQUIRE(bx);
  REQUIRE(by);
  REQUIRE(bx2);
  rt::BindingTable bt;
  bt.slots.resize(g.slots.size());
  bt.slots[x].buffer = bx->get();
  bt.slots[y].buffer = by->get();
  auto submitOnce = [&](const rt::BindingTable &tbl, const rt::ParamValues &pvals) {
    fake::reset();
    auto ev = (*exe)->enqueue(tbl, pvals);
    INFO((ev ? std::string() : ev.error().message()));
    REQUIRE(ev);
    REQUIRE_FALSE((*ev)->wait());
    INFO("violations: " << (rec.violations.empty() ? std::string() : rec.violations[0]));
    CHECK(rec.violations.empty());
    CHECK(rec.graphLaunches.size() == devParts);
    CHECK(rec.count("hipGraphInstantiate") == 0);
    CHECK(rec.count("hipGraphAddKernelNode") == 0);
  };
  auto tableUploads = [&]() {
    size_t n = 0;
    for (auto &up : rec.uploads)
      n += up.first == tableAddr;
    return n;
  };
  submitOnce(bt, {});
  CHECK(tableUploads() == 1);
  CHECK(table[x] != 0);
  CHECK(lines.size() == 1); // the checksum host task ran between the graphs
  {
    // The upload comes before the first graph launch.
    auto up = std::find(rec.calls.begin(), rec.calls.end(), "hipMemcpyHtoDAsync");
    auto launch = std::find(rec.calls.begin(), rec.calls.end(), "hipGraphLaunch");
    CHECK(up < launch);
  }
  const uint64_t firstX = table[x];
  submitOnce(bt, {}); // same bindings, same parameters: no upload
  CHECK(tableUploads() == 0);
  bt.slots[x].buffer = bx2->get(); // new binding: one upload, no node update
  submitOnce(bt, {});
  CHECK(tableUploads() == 1);
  CHECK(table[x] != firstX);
  CHECK(rec.count("hipGraphExecKernelNodeSetParams") == 0);
  rt::ParamValues p9;
  p9.bits = {9};
  submitOnce(bt, p9); // new parameter value: one upload (it lives in the table)
  CHECK(tableUploads() == 1);
  CHECK(table[g.slots.size() + pv] == 9);
  CHECK(rec.count("hipGraphExecKernelNodeSetParams") == 0);
}

TEST_CASE("hip: a parameter-dependent nd-range updates only its node", "[hip][fake]") {
  rt::Device &dev = fakeDevice();
  GraphBuilder b("param-range");
  auto k = addSource(b);
  const uint32_t d = b.addSlot(slot("d", 1 << 16));
  Param n;
  n.name = "n";
  n.type = ScalarType::U32;
  n.defaultBits = 256;
  const uint32_t pn = b.addParam(n);
  NDRange r = range1D(256, 64);
  r.global[0].param = pn;
  const uint32_t a =
      b.addKernelNode("ranged", k["addp"], r, {Arg::slot(d), Arg::scalar(ScalarType::U32, 1)});
  const uint32_t c = b.addKernelNode("fixed", k["addp"], range1D(128, 64),
                                     {Arg::slot(d), Arg::scalar(ScalarType::U32, 2)});
  b.addEdge(a, c);
  Graph g = b.take();
  fake::reset();
  rt::FinalizeOptions fo;
  fo.mode = rt::ExecMode::Replay;
  auto exe = dev.finalize(g, fo);
  INFO((exe ? std::string() : exe.error().message()));
  REQUIRE(exe);
  const fake::Recorder &rec = fake::recorder();
  CHECK(rec.count("hipGraphInstantiate") == 1);
  auto buf = dev.allocate(1 << 16, 64);
  REQUIRE(buf);
  rt::BindingTable bt;
  bt.slots.resize(1);
  bt.slots[0].buffer = buf->get();
  auto submit = [&](uint64_t value) {
    fake::reset();
    rt::ParamValues pv;
    pv.bits = {value};
    auto ev = (*exe)->enqueue(bt, pv);
    INFO((ev ? std::string() : ev.error().message()));
    REQUIRE(ev);
    REQUIRE_FALSE((*ev)->wait());
    CHECK(rec.violations.empty());
    CHECK(rec.graphLaunches.size() == 1);
  };
  const uint64_t before = hip::counters(dev).nodeUpdates;
  submit(256); // the planned range already: no update
  CHECK(rec.execUpdates.empty());
  submit(1024); // 16 work-groups now: one update, of the ranged node only
  REQUIRE(rec.execUpdates.size() == 1);
  CHECK(rec.nodes.at(rec.execUpdates[0].first).function == "addp");
  CHECK(rec.execUpdates[0].second.gridDim.x == 16);
  CHECK(rec.execUpdates[0].second.blockDim.x == 64);
  {
    // The update precedes the launch.
    auto up = std::find(rec.calls.begin(), rec.calls.end(), "hipGraphExecKernelNodeSetParams");
    auto launch = std::find(rec.calls.begin(), rec.calls.end(), "hipGraphLaunch");
    CHECK(up < launch);
  }
  submit(1024); // unchanged: no update
  CHECK(rec.execUpdates.empty());
  CHECK(hip::counters(dev).nodeUpdates == before + 1);
}

TEST_CASE("hip: eager mode launches each node on the stream, no graphs", "[hip][fake]") {
  rt::Device &dev = fakeDevice();
  GraphBuilder b("eager");
  auto k = addSource(b);
  const uint32_t d = b.addSlot(slot("d", 4096));
  const uint32_t a = b.addKernelNode("one", k["addp"], range1D(1024),
                                     {Arg::slot(d), Arg::scalar(ScalarType::U32, 1)});
  const uint32_t c = b.addKernelNode("two", k["addp"], range1D(512, 128),
                                     {Arg::slot(d, 64), Arg::scalar(ScalarType::U32, 2)});
  b.addEdge(a, c);
  Graph g = b.take();
  fake::reset();
  rt::FinalizeOptions fo;
  fo.mode = rt::ExecMode::Eager;
  auto exe = dev.finalize(g, fo);
  REQUIRE(exe);
  const fake::Recorder &rec = fake::recorder();
  CHECK(rec.count("hipGraphCreate") == 0);
  auto buf = dev.allocate(4096, 64);
  REQUIRE(buf);
  rt::BindingTable bt;
  bt.slots.resize(1);
  bt.slots[0].buffer = buf->get();
  fake::reset();
  auto ev = (*exe)->enqueue(bt, {});
  REQUIRE(ev);
  REQUIRE_FALSE((*ev)->wait());
  CHECK(rec.violations.empty());
  REQUIRE(rec.eagerLaunches.size() == 2);
  CHECK(rec.eagerLaunches[0].second.blockDim.x * rec.eagerLaunches[0].second.gridDim.x == 1024);
  CHECK(rec.eagerLaunches[1].second.blockDim.x == 128);
  CHECK(rec.eagerLaunches[1].second.gridDim.x == 4);
  const std::vector<uint64_t> v = cells(rec.eagerLaunches[1].second, 1 + 2 * 2 + 4);
  CHECK(v[1] == 64); // slot offset
  CHECK(v[2] == 0);  // slot index
  CHECK(rec.count("hipGraphLaunch") == 0);
}

TEST_CASE("hip: code objects come from the persistent cache on a warm start", "[hip][fake][cache]") {
  // A fresh cache folder, so the first run is cold whatever ran before.
  cgraph::test::TempDir dir("cgraph-hip-cache");
  hip::HipBackendOptions options;
  options.useCache = true;
  options.cache.dir = dir.str();
  options.cache.persistent = true;
  GraphBuilder b("cached");
  auto k = addSource(b);
  const uint32_t d = b.addSlot(slot("d", 4096));
  b.addKernelNode("one", k["addp"], range1D(1024), {Arg::slot(d), Arg::scalar(ScalarType::U32, 1)});
  Graph g = b.take();
  uint64_t lowered[2] = {0, 0};
  for (int run = 0; run < 2; ++run) {
    // A new backend each time: a new device with an empty memory tier.
    auto backend = hip::makeHipBackendWithApi(fake::api(), options);
    auto dev = backend->device(0);
    REQUIRE(dev);
    rt::FinalizeOptions fo;
    fo.mode = rt::ExecMode::Replay;
    auto exe = (*dev)->finalize(g, fo);
    INFO((exe ? std::string() : exe.error().message()));
    REQUIRE(exe);
    lowered[run] = hip::counters(**dev).lowerings;
    CHECK(fake::recorder().violations.empty());
  }
  CHECK(lowered[0] == 1); // cold: lowered and linked once
  CHECK(lowered[1] == 0); // warm: the stored code object, no lowering
}

TEST_CASE("hip: a subgraph node is one child graph node, its slots remapped", "[hip][fake]") {
  rt::Device &dev = fakeDevice();
  GraphBuilder child("child");
  auto ck = addSource(child);
  const uint32_t cs = child.addSlot(slot("cs", 4096));
  const uint32_t c1 = child.addKernelNode("c1", ck["addp"], range1D(1024, 64),
                                          {Arg::slot(cs), Arg::scalar(ScalarType::U32, 1)});
  const uint32_t c2 = child.addKernelNode("c2", ck["addp"], range1D(1024, 64),
                                          {Arg::slot(cs), Arg::scalar(ScalarType::U32, 2)});
  child.addEdge(c1, c2);

  GraphBuilder b("with-subgraph");
  auto k = addSource(b);
  b.addSlot(slot("x", 4096)); // unused by the nodes: y is slot 1, so remapping shows
  const uint32_t y = b.addSlot(slot("y", 4096));
  const uint32_t pre = b.addKernelNode("pre", k["addp"], range1D(1024, 64),
                                       {Arg::slot(y), Arg::scalar(ScalarType::U32, 3)});
  const uint32_t sub = b.addSubgraph("sub", child.take(), {y}); // child slot 0 -> y
  const uint32_t post = b.addKernelNode("post", k["addp"], range1D(1024, 64),
                                        {Arg::slot(y), Arg::scalar(ScalarType::U32, 4)});
  b.addEdge(pre, sub);
  b.addEdge(sub, post);
  Graph g = b.take();
  auto exe = finalizeOnFake(dev, g);
  const fake::Recorder &rec = fake::recorder();
  CHECK(rec.count("hipGraphAddChildGraphNode") == 1);
  CHECK(rec.count("hipGraphInstantiate") == 1);
  // The graph calls in order: the partition's graph, `pre`, then the child graph (its
  // two kernels, the edge inside), the child node after `pre`, the child graph
  // destroyed (the node holds a copy), `post` after the child node.
  std::vector<std::string> graphCalls;
  for (const std::string &c : rec.calls)
    if (c.rfind("hipGraph", 0) == 0) graphCalls.push_back(c);
  CHECK(graphCalls == std::vector<std::string>{"hipGraphCreate", "hipGraphAddKernelNode", "hipGraphCreate",
                                               "hipGraphAddKernelNode", "hipGraphAddKernelNode",
                                               "hipGraphAddChildGraphNode", "hipGraphDestroy",
                                               "hipGraphAddKernelNode", "hipGraphInstantiate"});
  const uintptr_t top = rec.execs.rbegin()->second; // handles only grow
  auto topNodes = nodesOf(top);
  REQUIRE(topNodes.size() == 3);
  const fake::GraphNodeRec *childNode = topNodes[1];
  REQUIRE(childNode->kind == fake::GraphNodeRec::Child);
  CHECK(childNode->deps == std::vector<uintptr_t>{handleOf(topNodes[0])});
  CHECK(topNodes[2]->deps == std::vector<uintptr_t>{handleOf(childNode)}); // post after the child
  auto inner = nodesOf(childNode->child);
  REQUIRE(inner.size() == 2);
  CHECK(inner[0]->deps.empty());
  CHECK(inner[1]->deps == std::vector<uintptr_t>{handleOf(inner[0])});
  // Slots remapped: the child's kernels read table entry y (slot 1 of the parent).
  // Cells: {table, offset, slot, value, literal, ...}.
  CHECK(cells(inner[0]->kernel, 4)[2] == y);
  CHECK(cells(inner[0]->kernel, 4)[3] == 1);
  CHECK(cells(inner[1]->kernel, 4)[2] == y);
  CHECK(cells(inner[1]->kernel, 4)[3] == 2);
  CHECK(cells(topNodes[2]->kernel, 4)[3] == 4);

  // A submission launches the one instantiated graph.
  auto buf = dev.allocate(4096, 64), buf2 = dev.allocate(4096, 64);
  REQUIRE(buf);
  REQUIRE(buf2);
  rt::BindingTable bt;
  bt.slots.resize(2);
  bt.slots[0].buffer = buf->get();
  bt.slots[1].buffer = buf2->get();
  fake::reset();
  auto ev = exe->enqueue(bt, rt::ParamValues{});
  INFO((ev ? std::string() : ev.error().message()));
  REQUIRE(ev);
  REQUIRE_FALSE((*ev)->wait());
  CHECK(rec.graphLaunches.size() == 1);
  CHECK(rec.violations.empty());
}

TEST_CASE("hip: copy/fill sizes from expressions are patched only on the nodes that changed",
          "[hip][fake][expr]") {
  rt::Device &dev = fakeDevice();
  GraphBuilder b("transfer-exprs");
  Param n;
  n.name = "n";
  n.type = ScalarType::I32;
  n.defaultBits = 4;
  b.addParam(n);
  const uint32_t s = b.addSlot(slot("s", 4096)), d = b.addSlot(slot("d", 4096));
  FillOp f;
  f.slot = d;
  f.bytes = 4;
  f.pattern = {1, 0, 0, 0};
  const uint32_t fillA = b.addFill("fillA", f);
  CopyOp c;
  c.srcSlot = s;
  c.dstSlot = d;
  c.dstOffset = 2048;
  c.bytes = 4;
  const uint32_t copyB = b.addCopy("copyB", c);
  b.addEdge(fillA, copyB);
  Graph g = b.take();
  exprtest::addExpr(g, fillA, ExprField::FillBytes, 0, "$n * 4");
  exprtest::addExpr(g, copyB, ExprField::CopyBytes, 0, "min($n, 4) * 4");
  exprtest::addExpr(g, copyB, ExprField::CopySrcOffset, 0, "min($n, 4) * 8");
  auto exe = finalizeOnFake(dev, g);
  const fake::Recorder &rec = fake::recorder();
  // Both run as the builtin kernels (no memcpy/memset node), on the fixed grid.
  CHECK(rec.count("hipGraphAddKernelNode") == 2);
  CHECK(rec.count("hipGraphAddMemcpyNode") == 0);
  CHECK(rec.count("hipGraphAddMemsetNode") == 0);
  std::map<std::string, uintptr_t> nodeOf;
  REQUIRE(rec.count("hipGraphInstantiate") == 1);
  for (const fake::GraphNodeRec *r : nodesOf(rec.execs.rbegin()->second)) // handles only grow
    nodeOf[r->function] = handleOf(r);
  REQUIRE(nodeOf.size() == 2);
  CHECK(rec.nodes.at(nodeOf["cgraph_fill"]).kernel.gridDim.x == 1024);

  auto bs = dev.allocate(4096, 64), bd = dev.allocate(4096, 64);
  REQUIRE(bs);
  REQUIRE(bd);
  rt::BindingTable bt;
  bt.slots.resize(2);
  bt.slots[0].buffer = bs->get();
  bt.slots[1].buffer = bd->get();
  auto submit = [&](int64_t value) {
    fake::reset();
    rt::ParamValues pv;
    pv.bits = {uint64_t(value)};
    auto ev = exe->enqueue(bt, pv);
    INFO((ev ? std::string() : ev.error().message()));
    REQUIRE(ev);
    REQUIRE_FALSE((*ev)->wait());
    CHECK(rec.violations.empty());
    CHECK(rec.graphLaunches.size() == 1);
  };
  auto updated = [&](const char *fn) {
    for (auto &u : rec.execUpdates)
      if (u.first == nodeOf[fn]) return cells(u.second, 6);
    return std::vector<uint64_t>{};
  };
  submit(4); // the values planned at finalize were placeholders: both set once
  CHECK(rec.execUpdates.size() == 2);
  CHECK(rec.count("hipGraphExecKernelNodeSetParams") == 2);
  CHECK(updated("cgraph_fill")[3] == 16);  // bytes
  CHECK(updated("cgraph_copy")[1] == 2048); // dst offset (literal)
  CHECK(updated("cgraph_copy")[3] == 32);   // src offset
  CHECK(updated("cgraph_copy")[5] == 16);   // bytes
  submit(4); // unchanged: no driver call but the launch
  CHECK(rec.execUpdates.empty());
  CHECK(rec.count("hipGraphExecKernelNodeSetParams") == 0);
  submit(9); // the fill's size changes, the copy's (min($n, 4)) does not
  REQUIRE(rec.execUpdates.size() == 1);
  CHECK(rec.execUpdates[0].first == nodeOf["cgraph_fill"]);
  CHECK(updated("cgraph_fill")[3] == 36);
  submit(2); // both change
  CHECK(rec.execUpdates.size() == 2);

  // Eager: the same kernels, cells patched before each launch.
  auto eager = finalizeOnFake(dev, g, rt::ExecMode::Eager);
  fake::reset();
  rt::ParamValues pv;
  pv.bits = {uint64_t(3)};
  auto ev = eager->enqueue(bt, pv);
  REQUIRE(ev);
  REQUIRE_FALSE((*ev)->wait());
  REQUIRE(rec.eagerLaunches.size() == 2);
  CHECK(rec.eagerLaunches[0].first == "cgraph_fill");
  CHECK(cells(rec.eagerLaunches[0].second, 4)[3] == 12);
  CHECK(cells(rec.eagerLaunches[1].second, 6)[5] == 12);
}

// A submission that binds a runtime-owned slot over its storage (as `cgrun compare` and
// `cgrun --output` read a transient slot) must not replay memset/memcpy nodes that were
// built with the owned storage's address: the kernels read the bound buffer through the
// table, so those nodes would write memory nobody reads. (The cuda backend shares this
// code; its conformance suite checks the bytes on a device.)
TEST_CASE("hip: binding an owned slot over its storage leaves no memset node on the owned storage",
          "[hip][fake]") {
  rt::Device &dev = fakeDevice();
  GraphBuilder b("fill-override");
  addSource(b);
  const uint32_t t = b.addSlot(slot("t", 4096, SlotInit::Transient));
  const uint32_t out = b.addSlot(slot("out", 4096));
  FillOp f;
  f.slot = t;
  f.bytes = 4096;
  f.pattern = {0, 0, 0, 0};
  const uint32_t nZero = b.addFill("zero", f);
  f.offset = 4092;
  f.bytes = 4;
  f.pattern = {0, 0, 0x80, 0x3f};
  const uint32_t nLast = b.addFill("last_one", f);
  CopyOp c;
  c.srcSlot = t;
  c.dstSlot = out;
  c.bytes = 4096;
  const uint32_t nCopy = b.addCopy("read_back", c);
  b.addEdge(nZero, nLast);
  b.addEdge(nLast, nCopy);
  Graph g = b.take();
  auto exe = finalizeOnFake(dev, g);
  auto outBuf = dev.allocate(4096, 64);
  auto overBuf = dev.allocate(4096, 64);
  REQUIRE(outBuf);
  REQUIRE(overBuf);
  auto memsetsOfLastLaunch = [&]() {
    const fake::Recorder &rec = fake::recorder();
    REQUIRE_FALSE(rec.graphLaunches.empty());
    std::vector<uint64_t> dsts;
    for (const fake::GraphNodeRec *n : nodesOf(rec.execs.at(rec.graphLaunches.back())))
      if (n->kind == fake::GraphNodeRec::Memset) dsts.push_back(uint64_t(uintptr_t(n->memset.dst)));
    return dsts;
  };
  auto submit = [&](bool bindOwned) {
    rt::BindingTable table;
    table.slots.resize(g.slots.size());
    table.slots[out].buffer = outBuf->get();
    if (bindOwned) {
      table.overrideInternal = true;
      table.slots[t].buffer = overBuf->get();
    }
    auto ev = exe->enqueue(table, rt::ParamValues{});
    INFO((ev ? std::string() : ev.error().message()));
    REQUIRE(ev);
    REQUIRE_FALSE((*ev)->wait());
  };
  submit(false);
  const std::vector<uint64_t> owned = memsetsOfLastLaunch();
  REQUIRE(owned.size() == 2); // both fills of the owned slot as driver memsets
  const uint64_t ownedBase = *std::min_element(owned.begin(), owned.end());
  submit(true);
  for (uint64_t d : memsetsOfLastLaunch()) {
    INFO("memset node at " << d << ", owned storage at " << ownedBase);
    CHECK_FALSE((d >= ownedBase && d < ownedBase + 4096));
  }
  submit(false); // the owned storage again
  CHECK(fake::recorder().violations.empty());
}
