// The level_zero backend's command-list construction, driven through the recording fake
// of the driver table (ze_fake.h): real graphs with real SPIR-V (compiled by lib/kernel),
// finalized and enqueued by the real backend; the tests assert the exact calls and
// arguments, and that the fake found no misuse of the API.
#include "ze_fake.h"
#include "../common/scoped_env.h"
#include "../common/temp_dir.h"
#include "../common/transfer_conformance.h"

#include "cgraph/backends/level_zero/level_zero_backend.h"
#include "cgraph/expr.h"
#include "cgraph/graph/builder.h"
#include "cgraph/graph/order.h"
#include "cgraph/kernel/module_info.h"
#include "cgraph/kernel/opencl_compiler.h"

#include <fstream>
#include "cgraph/kernel/spirv.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>

using namespace cgraph;
namespace fake = cgraph::level_zero::fake;
using Lines = std::vector<std::string>;

namespace {

const char *kSource = R"CL(
__kernel void scale(__global float *d, float s) { d[get_global_id(0)] *= s; }
__kernel void addk(__global uint *d, __global const uint *a, uint k) { d[get_global_id(0)] = a[get_global_id(0)] + k; }
__kernel void lsum(__global uint *d, __local uint *tmp) {
  tmp[get_local_id(0)] = d[get_global_id(0)];
  barrier(CLK_LOCAL_MEM_FENCE);
  d[get_global_id(0)] = tmp[0];
}
)CL";

std::map<std::string, uint32_t> addKernels(GraphBuilder &b) {
  auto r = compileOpenCL(kSource, "l0.cl", CompileOptions{});
  INFO((r ? std::string() : r.error().message()));
  REQUIRE(r);
  uint32_t mod = b.addModule(makeKernelModule("l0.cl", *r, nullptr, false));
  auto ks = reflectKernels(r->spirv.data(), r->spirv.size());
  REQUIRE(ks);
  std::map<std::string, uint32_t> out;
  for (Kernel k : *ks) {
    k.module = mod;
    std::string n = k.name;
    out[n] = b.addKernel(std::move(k));
  }
  return out;
}

Slot slot(const char *name, uint64_t bytes, SlotInit init = SlotInit::External) {
  Slot s;
  s.name = name;
  s.size = bytes;
  s.init = init;
  return s;
}

NDRange range1(uint64_t global, uint64_t local = 0) {
  NDRange r;
  r.dims = 1;
  r.global[0].value = global;
  r.local[0].value = local;
  return r;
}

uint64_t f32(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

// A backend on a freshly installed fake, and its device 0.
// The call sequences the tests expect assume no native binary in a persistent cache (a
// rerun would load what the previous run stored): the cache stays in memory unless a
// test gives a directory of its own.
struct Fixture {
  explicit Fixture(const fake::FakeConfig &cfg = {}, size_t maxRecordings = 8,
                   rt::KernelCacheOptions cache = {std::nullopt, false}) {
    level_zero::LevelZeroBackendOptions o;
    o.driverTable = &fake::install(cfg);
    o.maxRecordings = maxRecordings;
    o.cache = std::move(cache);
    backend = level_zero::makeLevelZeroBackend(o);
    auto d = backend->device(0);
    INFO((d ? std::string() : d.error().message()));
    REQUIRE(d);
    dev = *d;
  }
  std::unique_ptr<rt::Buffer> buffer(uint64_t bytes, uint8_t init = 0) {
    auto b = dev->allocate(bytes, 64);
    REQUIRE(b);
    std::vector<uint8_t> v(bytes, init);
    REQUIRE_FALSE(dev->write(**b, 0, v.data(), v.size()));
    return std::move(*b);
  }
  std::vector<uint8_t> read(rt::Buffer &b) {
    std::vector<uint8_t> v(b.size());
    REQUIRE_FALSE(dev->read(b, 0, v.data(), v.size()));
    return v;
  }
  std::unique_ptr<rt::Executable> finalize(const Graph &g,
                                           rt::ExecMode mode = rt::ExecMode::Replay) {
    rt::FinalizeOptions fo;
    fo.mode = mode;
    fo.host.output = [this](const std::string &l) { output.push_back(l); };
    auto e = dev->finalize(g, fo);
    INFO((e ? std::string() : e.error().message()));
    REQUIRE(e);
    return std::move(*e);
  }
  void run(rt::Executable &exe, const rt::BindingTable &t, const rt::ParamValues &p = {}) {
    auto ev = exe.enqueue(t, p);
    INFO((ev ? std::string() : ev.error().message()));
    REQUIRE(ev);
    Error e = (*ev)->wait();
    INFO(e.message());
    REQUIRE_FALSE(e);
  }
  std::unique_ptr<rt::Backend> backend;
  rt::Device *dev = nullptr;
  std::vector<std::string> output;
};

const Lines kListCalls = {"zeCommandList",
                          "zeCommandQueueExecuteCommandLists",
                          "zeCommandQueueSynchronize",
                          "zeEventPoolCreate",
                          "zeEventCreate",
                          "zeFenceCreate"};

} // namespace

TEST_CASE("level_zero: probe through the driver table", "[level_zero]") {
  SECTION("a device") {
    level_zero::LevelZeroBackendOptions o;
    o.driverTable = &fake::install();
    auto be = level_zero::makeLevelZeroBackend(o);
    rt::BackendProbe p = be->probe();
    REQUIRE(p.available);
    REQUIRE(p.devices.size() == 1);
    const rt::DeviceInfo &d = p.devices[0];
    CHECK(d.backend == "level_zero");
    CHECK(d.name == "Fake Level Zero GPU 0");
    CHECK(d.vendor == "Intel");
    CHECK(d.driverVersion == "Level Zero API 1.4 / driver 16973824 / device 0x0bd5");
    CHECK(d.replay == "command-list");
    CHECK(d.update == "re-record");
    CHECK(d.caps.nativeCommandBuffer);
    CHECK_FALSE(d.caps.rebindWithoutRerecord);
    CHECK(d.caps.profiling);
    CHECK(d.caps.profilingReplay);
    CHECK(d.caps.storedExpressions);
    CHECK(d.caps.nodeUpdate);
    CHECK(d.caps.kernelForms == std::vector<FormKind>{FormKind::SpirV});
    CHECK(d.caps.computeUnits == 32);
    CHECK(d.caps.globalMemoryBytes == (uint64_t(1) << 30));
    CHECK(d.caps.maxWorkGroupSize == 256);
    CHECK(fake::violations().empty());
  }
  SECTION("no driver: zeInit fails") {
    fake::FakeConfig cfg;
    cfg.initResult = ZE_RESULT_ERROR_UNINITIALIZED;
    level_zero::LevelZeroBackendOptions o;
    o.driverTable = &fake::install(cfg);
    auto be = level_zero::makeLevelZeroBackend(o);
    rt::BackendProbe p = be->probe();
    CHECK_FALSE(p.available);
    CHECK(p.reason ==
          "no Level Zero device (zeInit: ZE_RESULT_ERROR_UNINITIALIZED: no driver found)");
    auto d = be->device(0);
    REQUIRE_FALSE(d);
    CHECK(d.error().message() == p.reason);
  }
  SECTION("a driver that reports mutable command lists") {
    fake::FakeConfig cfg;
    cfg.mutableCommandListExtension = true;
    level_zero::LevelZeroBackendOptions o;
    o.driverTable = &fake::install(cfg);
    rt::BackendProbe p = level_zero::makeLevelZeroBackend(o)->probe();
    REQUIRE(p.available);
    CHECK(p.devices[0].replay == "command-list (driver reports mutable command lists; not used)");
  }
  SECTION("a driver without devices") {
    fake::FakeConfig cfg;
    cfg.devices = 0;
    level_zero::LevelZeroBackendOptions o;
    o.driverTable = &fake::install(cfg);
    rt::BackendProbe p = level_zero::makeLevelZeroBackend(o)->probe();
    CHECK_FALSE(p.available);
    CHECK(p.reason == "no Level Zero device (1 driver(s), no device)");
  }
  SECTION("device open: the compute group's ordinal, an async queue, a sync immediate list") {
    Fixture f;
    CHECK(
        fake::calls({"zeContextCreate", "zeCommandQueueCreate", "zeCommandListCreateImmediate"}) ==
        Lines{"zeContextCreate -> ctx#0", "zeCommandQueueCreate(ordinal 1, async) -> queue#0",
              "zeCommandListCreateImmediate(sync) -> list#0"});
    CHECK(fake::violations().empty());
  }
}

TEST_CASE("level_zero: transfers and buffers", "[level_zero]") {
  Fixture f;
  auto b = f.buffer(256, 7);
  std::vector<uint8_t> v(256);
  for (size_t i = 0; i < v.size(); ++i)
    v[i] = uint8_t(i);
  REQUIRE_FALSE(f.dev->write(*b, 0, v.data(), v.size()));
  CHECK(f.read(*b) == v);
  uint8_t out[4];
  Error e = f.dev->read(*b, 254, out, 4);
  REQUIRE(e);
  CHECK(e.message() == "level_zero: read of [254, +4) is outside the 256-byte buffer");
  CHECK(fake::violations().empty());
  b.reset();
  CHECK(fake::liveObjects() == Lines{"ctx#0", "queue#0", "list#0"});
}

TEST_CASE("level_zero: modules come from validated SPIR-V", "[level_zero]") {
  Fixture f;
  GraphBuilder b("m");
  auto k = addKernels(b);
  uint32_t a = b.addSlot(slot("a", 1024));
  b.addKernelNode("s", k["scale"], range1(256),
                  {Arg::slot(a), Arg::scalar(ScalarType::F32, f32(2))});
  Graph g = b.take();
  SECTION("valid") {
    fake::clearCalls();
    auto exe = f.finalize(g);
    const size_t spvBytes = g.modules[0].forms[0].bytes.size();
    CHECK(fake::calls({"zeModuleCreate", "zeKernelCreate"}) ==
          Lines{"zeModuleCreate(spirv, " + std::to_string(spvBytes) + " bytes)",
                "zeKernelCreate(scale) -> kernel#0"});
    CHECK(fake::violations().empty());
  }
  SECTION("invalid SPIR-V never reaches the driver") {
    std::vector<uint8_t> &spv = g.modules[0].forms[0].bytes;
    for (size_t i = 20; i < spv.size(); i += 4)
      spv[i] = 0xFF; // garbage after the header
    fake::clearCalls();
    rt::FinalizeOptions fo;
    auto exe = f.dev->finalize(g, fo);
    REQUIRE_FALSE(exe);
    CHECK(exe.error().message().find("l0.cl: invalid SPIR-V") != std::string::npos);
    CHECK(fake::calls({"zeModuleCreate"}).empty());
    CHECK(fake::violations().empty());
  }
  SECTION("a build failure returns the driver's build log") {
    fake::FakeConfig cfg;
    cfg.buildLog = "error: unsupported capability";
    Fixture f2(cfg);
    rt::FinalizeOptions fo;
    auto exe = f2.dev->finalize(g, fo);
    REQUIRE_FALSE(exe);
    CHECK(exe.error().message() ==
          "module 'l0.cl': zeModuleCreate: ZE_RESULT_ERROR_MODULE_BUILD_FAILURE: error: "
          "unsupported capability");
    CHECK(fake::liveObjects() == Lines{"ctx#0", "queue#0", "list#0"}); // the log was destroyed
  }
}

TEST_CASE("level_zero: a chain is recorded once and executed per submission", "[level_zero]") {
  Fixture f;
  GraphBuilder b("chain");
  auto k = addKernels(b);
  uint32_t a = b.addSlot(slot("a", 1024)), o = b.addSlot(slot("o", 1024));
  uint32_t n0 = b.addFill("fill", fillOp(a, 0, 1024, {1, 2, 3, 4}));
  uint32_t n1 = b.addKernelNode("k", k["scale"], range1(256),
                                {Arg::slot(a), Arg::scalar(ScalarType::F32, f32(2))});
  uint32_t n2 = b.addCopy("out", copyOp(a, 0, o, 0, 1024));
  b.addEdge(n0, n1);
  b.addEdge(n1, n2);
  auto exe = f.finalize(b.take());
  auto A = f.buffer(1024), O = f.buffer(1024);
  rt::BindingTable t;
  t.slots = {{A.get()}, {O.get()}};
  fake::clearCalls();
  for (int i = 0; i < 3; ++i)
    f.run(*exe, t);
  CHECK(fake::calls(kListCalls) ==
        Lines{
            "zeEventPoolCreate(2) -> pool#0",
            "zeCommandListCreate -> list#1",
            "zeEventCreate(pool#0, 0) -> ev#0",
            "zeCommandListAppendMemoryFill(list#1, mem#0+0, pattern 4, 1024, signal ev#0, wait [])",
            "zeEventCreate(pool#0, 1) -> ev#1",
            "zeCommandListAppendLaunchKernel(list#1, scale, groups 1x1x1 of 256x1x1, args [mem#0+0 "
            "float 1073741824], "
            "signal ev#1, wait [ev#0])",
            "zeCommandListAppendMemoryCopy(list#1, mem#1+0 <- mem#0+0, 1024, signal null, wait "
            "[ev#1])",
            "zeCommandListAppendBarrier(list#1, signal null, wait [])",
            "zeCommandListAppendEventReset(list#1, ev#0)",
            "zeCommandListAppendEventReset(list#1, ev#1)",
            "zeCommandListClose(list#1)",
            "zeFenceCreate -> fence#0",
            "zeCommandQueueExecuteCommandLists([list#1], fence#0)",
            "zeFenceCreate -> fence#1",
            "zeCommandQueueExecuteCommandLists([list#1], fence#1)",
            "zeFenceCreate -> fence#2",
            "zeCommandQueueExecuteCommandLists([list#1], fence#2)",
        });
  CHECK(level_zero::recordingsMade(*exe) == 1);
  CHECK(fake::listExecutions() == 3);
  CHECK(fake::kernelRuns("scale") == 3);
  // The fill and the copy really ran on the fake's memory, in the recorded order.
  std::vector<uint8_t> want(1024);
  for (size_t i = 0; i < want.size(); ++i)
    want[i] = uint8_t(1 + i % 4);
  CHECK(f.read(*O) == want);
  CHECK(fake::violations().empty());
  exe.reset();
  A.reset();
  O.reset();
  // What the device holds: its context, queue, immediate list and cached module.
  CHECK(fake::liveObjects() == Lines{"ctx#0", "queue#0", "list#0", "module#0"});
  f.backend.reset();
  CHECK(fake::liveObjects().empty());
  CHECK(fake::violations().empty());
}

TEST_CASE("level_zero: binding sets and parameters", "[level_zero]") {
  Fixture f;
  GraphBuilder b("rebind");
  auto k = addKernels(b);
  uint32_t d = b.addSlot(slot("d", 4096)), s = b.addSlot(slot("s", 4096));
  Param p;
  p.name = "n";
  p.type = ScalarType::U32;
  p.defaultBits = 256;
  uint32_t pn = b.addParam(p);
  NDRange r;
  r.dims = 1;
  r.global[0] = paramDim(pn);
  b.addKernelNode("add", k["addk"], r, {Arg::slot(d), Arg::slot(s, 64), Arg::param(pn)});
  Graph g = b.take();
  auto exe = f.finalize(g);
  auto D1 = f.buffer(4096), D2 = f.buffer(4096 + 128), S = f.buffer(4096);
  rt::BindingTable t1, t2;
  t1.slots = {{D1.get()}, {S.get()}};
  t2.slots = {{D2.get(), 128}, {S.get()}};
  rt::ParamValues n512;
  REQUIRE_FALSE(n512.set(g, "n", "512"));
  fake::clearCalls();
  f.run(*exe, t1);
  f.run(*exe, t2);
  f.run(*exe, t1); // recorded before: replayed as is
  f.run(*exe, t1, n512);
  CHECK(fake::calls({"zeCommandListAppendLaunchKernel", "zeCommandQueueExecuteCommandLists"}) ==
        Lines{
            "zeCommandListAppendLaunchKernel(list#1, addk, groups 1x1x1 of 256x1x1, args [mem#0+0 "
            "mem#2+64 uint 256], "
            "signal null, wait [])",
            "zeCommandQueueExecuteCommandLists([list#1], fence#0)",
            "zeCommandListAppendLaunchKernel(list#2, addk, groups 1x1x1 of 256x1x1, args "
            "[mem#1+128 mem#2+64 uint 256], "
            "signal null, wait [])",
            "zeCommandQueueExecuteCommandLists([list#2], fence#1)",
            "zeCommandQueueExecuteCommandLists([list#1], fence#2)",
            "zeCommandListAppendLaunchKernel(list#3, addk, groups 2x1x1 of 256x1x1, args [mem#0+0 "
            "mem#2+64 uint 512], "
            "signal null, wait [])",
            "zeCommandQueueExecuteCommandLists([list#3], fence#3)",
        });
  CHECK(level_zero::recordingsMade(*exe) == 3);
  CHECK(fake::violations().empty());
}

TEST_CASE("level_zero: edges become events, independent nodes do not wait", "[level_zero]") {
  Fixture f;
  GraphBuilder b("diamond");
  auto k = addKernels(b);
  uint32_t a = b.addSlot(slot("a", 1024)), x = b.addSlot(slot("x", 1024)),
           y = b.addSlot(slot("y", 1024));
  uint32_t top = b.addFill("top", fillOp(a, 0, 1024, {5, 0, 0, 0}));
  uint32_t l = b.addKernelNode("l", k["addk"], range1(256, 64),
                               {Arg::slot(x), Arg::slot(a), Arg::scalar(ScalarType::U32, 1)});
  uint32_t r = b.addKernelNode("r", k["addk"], range1(256, 64),
                               {Arg::slot(y), Arg::slot(a), Arg::scalar(ScalarType::U32, 2)});
  uint32_t bar = b.addBarrier("join");
  uint32_t out = b.addCopy("out", copyOp(x, 0, y, 0, 512));
  b.addEdge(top, l);
  b.addEdge(top, r);
  b.addEdge(l, bar);
  b.addEdge(r, bar);
  b.addEdge(bar, out);
  Graph g = b.take();
  auto exe = f.finalize(g);
  auto A = f.buffer(1024), X = f.buffer(1024), Y = f.buffer(1024);
  rt::BindingTable t;
  t.slots = {{A.get()}, {X.get()}, {Y.get()}};
  fake::clearCalls();
  f.run(*exe, t);
  // The barrier node records nothing: the copy waits for what it waited for.
  CHECK(fake::calls({"zeCommandListAppend"}) ==
        Lines{
            "zeCommandListAppendMemoryFill(list#1, mem#0+0, pattern 4, 1024, signal ev#0, wait [])",
            "zeCommandListAppendLaunchKernel(list#1, addk, groups 4x1x1 of 64x1x1, args [mem#1+0 "
            "mem#0+0 uint 1], "
            "signal ev#1, wait [ev#0])",
            "zeCommandListAppendLaunchKernel(list#1, addk, groups 4x1x1 of 64x1x1, args [mem#2+0 "
            "mem#0+0 uint 2], "
            "signal ev#2, wait [ev#0])",
            "zeCommandListAppendMemoryCopy(list#1, mem#2+0 <- mem#1+0, 512, signal null, wait "
            "[ev#1 ev#2])",
            "zeCommandListAppendBarrier(list#1, signal null, wait [])",
            "zeCommandListAppendEventReset(list#1, ev#0)",
            "zeCommandListAppendEventReset(list#1, ev#1)",
            "zeCommandListAppendEventReset(list#1, ev#2)",
        });
  CHECK(fake::violations().empty());

  SECTION("an update re-records; a disabled node passes its waits on") {
    rt::NodeUpdate u;
    u.node = exe->findNode("l");
    u.enabled = 0;
    REQUIRE_FALSE(exe->update(u));
    fake::clearCalls();
    f.run(*exe, t);
    CHECK(fake::calls({"zeCommandListAppendLaunchKernel", "zeCommandListAppendMemoryCopy"}) ==
          Lines{
              "zeCommandListAppendLaunchKernel(list#2, addk, groups 4x1x1 of 64x1x1, args [mem#2+0 "
              "mem#0+0 uint 2], "
              "signal ev#4, wait [ev#3])",
              "zeCommandListAppendMemoryCopy(list#2, mem#2+0 <- mem#1+0, 512, signal null, wait "
              "[ev#3 ev#4])",
          });
    CHECK(level_zero::recordingsMade(*exe) == 2);
    CHECK(fake::violations().empty());
  }
}

TEST_CASE("level_zero: host tasks split the lists", "[level_zero]") {
  Fixture f;
  GraphBuilder b("host");
  auto k = addKernels(b);
  uint32_t a = b.addSlot(slot("a", 64));
  uint32_t n0 = b.addFill("f", fillOp(a, 0, 64, {3, 0, 0, 0}));
  HostOp h;
  h.op = "print";
  uint32_t n1 = b.addHost("show", h, {Arg::slot(a)});
  uint32_t n2 = b.addKernelNode("k", k["addk"], range1(16),
                                {Arg::slot(a), Arg::slot(a), Arg::scalar(ScalarType::U32, 1)});
  b.addEdge(n0, n1);
  b.addEdge(n1, n2);
  auto exe = f.finalize(b.take());
  auto A = f.buffer(64);
  rt::BindingTable t;
  t.slots = {{A.get()}};
  fake::clearCalls();
  f.run(*exe, t);
  CHECK(fake::calls({"zeCommandListCreate", "zeCommandListClose", "zeCommandQueue",
                     "zeCommandListAppendMemoryCopy"}) ==
        Lines{
            "zeCommandListCreate -> list#1",
            "zeCommandListClose(list#1)",
            "zeCommandListCreate -> list#2",
            "zeCommandListClose(list#2)",
            "zeCommandQueueExecuteCommandLists([list#1], null)",
            "zeCommandQueueSynchronize(queue#0)",
            // print only reads its slot: staged out, not copied back
            "zeCommandListAppendMemoryCopy(list#0, host <- mem#0+0, 64, signal null, wait [])",
            "zeCommandQueueExecuteCommandLists([list#2], fence#0)",
        });
  REQUIRE(f.output.size() == 1);
  INFO(f.output[0]);
  // print shows f32 by default: the u32 3 the fill wrote is 4.20389539e-45.
  CHECK(f.output[0].rfind("print a: 4.20389539e-45 4.20389539e-45 ", 0) ==
        0); // the task saw the fill's result
  CHECK(fake::violations().empty());
}

TEST_CASE("level_zero: a host task that writes its slot is copied back", "[level_zero]") {
  Fixture f;
  cgraph::test::TempDir dir("cgraph-ze-host");
  std::vector<uint8_t> bytes(64);
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = uint8_t(i * 3 + 1);
  std::ofstream(dir.path() / "in.bin", std::ios::binary).write(reinterpret_cast<const char *>(bytes.data()), 64);
  GraphBuilder b("read");
  uint32_t a = b.addSlot(slot("a", 64));
  HostOp h;
  h.op = "read_file";
  b.addHost("load", h, {Arg::slot(a), Arg::string("in.bin")});
  rt::FinalizeOptions fo;
  fo.host.allowedDirs = {dir.path().string()};
  fo.host.baseDir = dir.path().string();
  auto exe = f.dev->finalize(b.take(), fo);
  INFO((exe ? std::string() : exe.error().message()));
  REQUIRE(exe);
  auto A = f.buffer(64);
  rt::BindingTable t;
  t.slots = {{A.get()}};
  fake::clearCalls();
  f.run(**exe, t);
  CHECK(fake::calls({"zeCommandListAppendMemoryCopy"}) ==
        Lines{
            "zeCommandListAppendMemoryCopy(list#0, host <- mem#0+0, 64, signal null, wait [])",
            "zeCommandListAppendMemoryCopy(list#0, mem#0+0 <- host, 64, signal null, wait [])",
        });
  CHECK(f.read(*A) == bytes);
  CHECK(fake::violations().empty());
}

// A fill, then two lsum kernels (nodes 1 and 2), chained: the timestamp cases' graph.
static Graph fillAndTwoKernels(const char *name) {
  GraphBuilder b(name);
  auto k = addKernels(b);
  uint32_t a = b.addSlot(slot("a", 1024));
  uint32_t n0 = b.addFill("f", fillOp(a, 0, 1024, {1, 0, 0, 0}));
  uint32_t n1 =
      b.addKernelNode("k1", k["lsum"], range1(256, 64), {Arg::slot(a), Arg::localMem(256)});
  uint32_t n2 =
      b.addKernelNode("k2", k["lsum"], range1(256, 64), {Arg::slot(a), Arg::localMem(256)});
  b.addEdge(n0, n1);
  b.addEdge(n1, n2);
  return b.take();
}

TEST_CASE("level_zero: eager mode, afterNode and kernel timestamps", "[level_zero]") {
  Fixture f;
  auto exe = f.finalize(fillAndTwoKernels("eager"), rt::ExecMode::Eager);
  auto A = f.buffer(1024);
  rt::BindingTable t;
  t.slots = {{A.get()}};
  fake::clearCalls();
  std::vector<uint32_t> seen;
  rt::SubmitOptions so;
  so.profile = true;
  so.afterNode = [&](uint32_t n) {
    seen.push_back(n);
    return Error::success();
  };
  auto ev = exe->enqueue(t, {}, so);
  REQUIRE(ev);
  REQUIRE_FALSE((*ev)->wait());
  CHECK(seen == std::vector<uint32_t>{0, 1, 2});
  CHECK(fake::calls(kListCalls) ==
        Lines{
            "zeEventPoolCreate(2, timestamps) -> pool#0",
            "zeCommandListAppendMemoryFill(list#0, mem#0+0, pattern 4, 1024, signal null, wait [])",
            "zeEventCreate(pool#0, 0) -> ev#0",
            "zeCommandListAppendLaunchKernel(list#0, lsum, groups 4x1x1 of 64x1x1, args [mem#0+0 "
            "local 256], "
            "signal ev#0, wait [])",
            "zeEventCreate(pool#0, 1) -> ev#1",
            "zeCommandListAppendLaunchKernel(list#0, lsum, groups 4x1x1 of 64x1x1, args [mem#0+0 "
            "local 256], "
            "signal ev#1, wait [])",
        });
  // The fake's clock: 100 ticks per command, 2 ns per tick.
  const auto &tm = (*ev)->nodeTimings();
  REQUIRE(tm.size() == 2);
  CHECK(tm[0].node == 1);
  CHECK(tm[0].startNs == 0);
  CHECK(tm[0].endNs == 200);
  CHECK(tm[1].node == 2);
  CHECK(tm[1].startNs == 200);
  CHECK(tm[1].endNs == 400);
  CHECK(fake::violations().empty());
  CHECK(fake::calls({"zeEventPoolDestroy"}) == Lines{"zeEventPoolDestroy(pool#0)"});

  SECTION("afterNode stops the submission") {
    rt::SubmitOptions stop;
    stop.afterNode = [](uint32_t n) { return n == 1 ? makeError("stop at 1") : Error::success(); };
    auto e2 = exe->enqueue(t, {}, stop);
    REQUIRE_FALSE(e2);
    CHECK(e2.error().message() == "stop at 1");
  }
}

TEST_CASE("level_zero: a profiled replay has its own recording with kernel timestamps",
          "[level_zero]") {
  Fixture f;
  const uint32_t n1 = 1, n2 = 2;
  auto exe = f.finalize(fillAndTwoKernels("prof"));
  auto A = f.buffer(1024);
  rt::BindingTable t;
  t.slots = {{A.get()}};
  fake::clearCalls();
  rt::SubmitOptions so;
  so.profile = true;
  for (int round = 0; round < 3; ++round) {
    INFO("round " << round);
    auto ev = exe->enqueue(t, {}, so);
    REQUIRE(ev);
    REQUIRE_FALSE((*ev)->wait());
    // The fake's clock: 100 ticks per command, 2 ns per tick.
    const auto &tm = (*ev)->nodeTimings();
    REQUIRE(tm.size() == 2);
    CHECK(tm[0].node == n1);
    CHECK(tm[0].startNs == 0);
    CHECK(tm[0].endNs == 200);
    CHECK(tm[1].node == n2);
    CHECK(tm[1].startNs == 200);
    CHECK(tm[1].endNs == 400);
  }
  // One recording for the three rounds: a timestamp pool with an event per command that
  // is waited for or timed, none reset inside the list; the host resets all three after
  // reading them (the fake reports a second signal without a reset as a violation).
  Lines pools = fake::calls({"zeEventPoolCreate"});
  REQUIRE(pools.size() == 1);
  CHECK(pools[0].rfind("zeEventPoolCreate(3, timestamps)", 0) == 0);
  CHECK(fake::calls({"zeCommandListAppendEventReset"}).empty());
  CHECK(fake::calls({"zeEventHostReset"}).size() == 9);
  CHECK(fake::calls({"zeCommandQueueExecuteCommandLists"}).size() == 3);
  CHECK(fake::violations().empty());

  SECTION("a plain replay of the same bindings is recorded apart, without timestamps") {
    fake::clearCalls();
    auto ev = exe->enqueue(t, {});
    REQUIRE(ev);
    REQUIRE_FALSE((*ev)->wait());
    CHECK((*ev)->nodeTimings().empty());
    pools = fake::calls({"zeEventPoolCreate"});
    REQUIRE(pools.size() == 1);
    CHECK(pools[0].find("timestamps") == std::string::npos);
    CHECK(fake::calls({"zeEventHostReset"}).empty());
    CHECK(fake::calls({"zeCommandListAppendEventReset"}).size() == 2);
    CHECK(fake::violations().empty());
  }
}

TEST_CASE("level_zero: what replay refuses and how errors read", "[level_zero]") {
  GraphBuilder b("errs");
  auto k = addKernels(b);
  uint32_t a = b.addSlot(slot("a", 1024));
  NDRange r = range1(128, 64);
  r.offset[0].value = 64;
  b.addKernelNode("off", k["scale"], r, {Arg::slot(a), Arg::scalar(ScalarType::F32, f32(1))});
  b.addKernelNode("plain", k["scale"], range1(64, 64),
                  {Arg::slot(a), Arg::scalar(ScalarType::F32, f32(1))});
  b.addEdge(0, 1);
  Graph g = b.take();

  SECTION("a global offset through the extension, reset for the next launch") {
    Fixture f;
    auto exe = f.finalize(g);
    auto A = f.buffer(1024);
    rt::BindingTable t;
    t.slots = {{A.get()}};
    fake::clearCalls();
    f.run(*exe, t);
    CHECK(fake::calls({"zeCommandListAppendLaunchKernel"}) ==
          Lines{"zeCommandListAppendLaunchKernel(list#1, scale, groups 2x1x1 of 64x1x1, offset "
                "64,0,0, args [mem#0+0 "
                "float 1065353216], signal ev#0, wait [])",
                "zeCommandListAppendLaunchKernel(list#1, scale, groups 1x1x1 of 64x1x1, args "
                "[mem#0+0 float "
                "1065353216], signal null, wait [ev#0])"});
    CHECK(fake::violations().empty());
  }
  SECTION("a global offset without the extension") {
    fake::FakeConfig cfg;
    cfg.globalOffsetExtension = false;
    Fixture f(cfg);
    auto exe = f.finalize(g);
    auto A = f.buffer(1024);
    rt::BindingTable t;
    t.slots = {{A.get()}};
    auto ev = exe->enqueue(t, {});
    REQUIRE_FALSE(ev);
    CHECK(ev.error().message() ==
          "node 'off': a global offset needs the ZE_experimental_global_offset extension, which "
          "this driver does not report");
    CHECK(fake::violations().empty());
  }
  SECTION("a failing call names itself, the node and the result") {
    fake::FakeConfig cfg;
    cfg.failCall = "zeCommandListAppendLaunchKernel";
    Fixture f(cfg);
    auto exe = f.finalize(g);
    auto A = f.buffer(1024);
    rt::BindingTable t;
    t.slots = {{A.get()}};
    auto ev = exe->enqueue(t, {});
    REQUIRE_FALSE(ev);
    CHECK(ev.error().message() ==
          "node 'off': zeCommandListAppendLaunchKernel: ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY");
    exe.reset();
    A.reset();
    // The failed recording was released; the device keeps its cached module.
    CHECK(fake::liveObjects() == Lines{"ctx#0", "queue#0", "list#0", "module#0"});
  }
  SECTION("allocation failure") {
    fake::FakeConfig cfg;
    cfg.failCall = "zeMemAllocDevice";
    Fixture f(cfg);
    auto buf = f.dev->allocate(4096, 64);
    REQUIRE_FALSE(buf);
    CHECK(buf.error().message() == "level_zero: allocating 4096 bytes: zeMemAllocDevice: "
                                   "ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY");
  }
}

TEST_CASE("level_zero: fills the device cannot do natively, rectangular copies, owned slots",
          "[level_zero]") {
  Fixture f;
  GraphBuilder b("copies");
  uint32_t src = b.addSlot(slot("src", 256)), dst = b.addSlot(slot("dst", 256));
  Slot own = slot("own", 96, SlotInit::Fill);
  own.data = {9, 8, 7};
  uint32_t ow = b.addSlot(own);
  uint32_t n0 = b.addFill("odd", fillOp(src, 0, 96, {1, 2, 3}));
  CopyOp c;
  c.srcSlot = src;
  c.srcOffset = 0;
  c.dstSlot = dst;
  c.dstOffset = 16;
  c.region[0] = 8;
  c.region[1] = 4;
  c.region[2] = 1;
  c.srcRowPitch = 16;
  c.dstRowPitch = 32;
  uint32_t n1 = b.addCopyRect("rect", c);
  uint32_t n2 = b.addCopy("own", copyOp(ow, 0, dst, 160, 96));
  b.addEdge(n0, n1);
  b.addEdge(n1, n2);
  auto exe = f.finalize(b.take());
  auto S = f.buffer(256), D = f.buffer(256);
  rt::BindingTable t;
  t.slots = {{S.get()}, {D.get()}, {}};
  fake::clearCalls();
  f.run(*exe, t);
  CHECK(fake::calls({"zeCommandListAppendMemory"}) ==
        Lines{
            // mem#0: the odd fill's source, mem#1: the owned slot, mem#2/3: src/dst
            "zeCommandListAppendMemoryCopy(list#1, mem#2+0 <- mem#0+0, 96, signal ev#0, wait [])",
            "zeCommandListAppendMemoryCopyRegion(list#1, mem#3+16 <- mem#2+0, 8x4x1, pitch 32/16, "
            "signal ev#1, wait [ev#0])",
            "zeCommandListAppendMemoryCopy(list#1, mem#3+160 <- mem#1+0, 96, signal null, wait "
            "[ev#1])",
        });
  std::vector<uint8_t> want(256, 0);
  for (int row = 0; row < 4; ++row)
    for (int i = 0; i < 8; ++i)
      want[16 + row * 32 + i] = uint8_t(1 + (row * 16 + i) % 3);
  for (int i = 0; i < 96; ++i)
    want[160 + i] = uint8_t(9 - i % 3);
  CHECK(f.read(*D) == want);
  CHECK(fake::violations().empty());
}

TEST_CASE("level_zero: stored expressions key the recordings", "[level_zero]") {
  Fixture f;
  GraphBuilder b("exprs");
  auto k = addKernels(b);
  uint32_t d = b.addSlot(slot("d", 1024)), s = b.addSlot(slot("s", 1024));
  Param p;
  p.name = "n";
  p.type = ScalarType::I32;
  p.defaultBits = 1;
  b.addParam(p);
  uint32_t node = b.addKernelNode("add", k["addk"], range1(64, 64),
                                  {Arg::slot(d), Arg::slot(s), Arg::scalar(ScalarType::U32, 0)});
  Graph g = b.take();
  auto add = [&](ExprField field, uint32_t arg, const char *text) {
    auto prog = expr::parse(text);
    REQUIRE(prog);
    auto m = expr::remapVariables(*prog, {0});
    REQUIRE(m);
    FieldExpr e;
    e.node = node;
    e.field = field;
    e.arg = arg;
    e.code = expr::encode(*m);
    g.exprs.push_back(e);
  };
  add(ExprField::Global0, 0, "$n * 64");
  add(ExprField::ScalarArg, 2, "$n + 1");
  REQUIRE_FALSE(finalizeForFile(g));
  auto exe = f.finalize(g);
  auto D = f.buffer(1024), S = f.buffer(1024);
  rt::BindingTable t;
  t.slots = {{D.get()}, {S.get()}};
  rt::ParamValues n3;
  REQUIRE_FALSE(n3.set(g, "n", "3"));
  fake::clearCalls();
  f.run(*exe, t);
  f.run(*exe, t, n3);
  f.run(*exe, t);
  CHECK(fake::calls({"zeCommandListAppendLaunchKernel", "zeCommandQueueExecuteCommandLists"}) ==
        Lines{
            "zeCommandListAppendLaunchKernel(list#1, addk, groups 1x1x1 of 64x1x1, args [mem#0+0 "
            "mem#1+0 uint 2], "
            "signal null, wait [])",
            "zeCommandQueueExecuteCommandLists([list#1], fence#0)",
            "zeCommandListAppendLaunchKernel(list#2, addk, groups 3x1x1 of 64x1x1, args [mem#0+0 "
            "mem#1+0 uint 4], "
            "signal null, wait [])",
            "zeCommandQueueExecuteCommandLists([list#2], fence#1)",
            "zeCommandQueueExecuteCommandLists([list#1], fence#2)",
        });
  CHECK(level_zero::recordingsMade(*exe) == 2);
  CHECK(fake::violations().empty());
}

TEST_CASE("level_zero: conditional nodes run as runtime-driven stages", "[level_zero]") {
  // Fills really run in the fake, so the condition a fill writes is what the runtime
  // reads between stages: while (ctr) { data = 5; ctr = 0; } runs exactly once.
  Fixture f;
  GraphBuilder body("body");
  uint32_t bd = body.addSlot(slot("data", 64)), bc = body.addSlot(slot("ctr", 16));
  uint32_t f5 = body.addFill("five", fillOp(bd, 0, 64, {5, 0, 0, 0}));
  uint32_t f0 = body.addFill("stop", fillOp(bc, 0, 16, {0, 0, 0, 0}));
  body.addEdge(f5, f0);
  GraphBuilder b("cond");
  uint32_t data = b.addSlot(slot("data", 64)), ctr = b.addSlot(slot("ctr", 16));
  uint32_t start = b.addFill("start", fillOp(ctr, 0, 16, {1, 0, 0, 0}));
  Node n;
  n.name = "loop";
  n.kind = NodeKind::Conditional;
  n.cond.kind = CondKind::While;
  n.cond.slot = ctr;
  n.cond.offset = 0;
  n.cond.maxTrips = 4;
  n.subgraph = b.addSubgraphGraph(body.take());
  n.subgraphSlots = {data, ctr};
  uint32_t loop = b.addNode(std::move(n));
  b.addEdge(start, loop);
  Graph g = b.take();
  REQUIRE_FALSE(finalizeForFile(g));
  auto exe = f.finalize(g);
  auto D = f.buffer(64), C = f.buffer(16);
  rt::BindingTable t;
  t.slots = {{D.get()}, {C.get()}};
  fake::clearCalls();
  f.run(*exe, t);
  CHECK(fake::calls({"zeCommandListAppendMemoryFill"}) ==
        Lines{"zeCommandListAppendMemoryFill(list#1, mem#1+0, pattern 4, 16, signal null, wait [])",
              "zeCommandListAppendMemoryFill(list#2, mem#0+0, pattern 4, 64, signal ev#0, wait [])",
              "zeCommandListAppendMemoryFill(list#2, mem#1+0, pattern 4, 16, signal null, wait "
              "[ev#0])"});
  CHECK(fake::listExecutions() == 2); // the start, one trip of the body
  CHECK(f.read(*D) == std::vector<uint8_t>{5, 0, 0, 0, 5, 0, 0, 0, 5, 0, 0, 0, 5, 0, 0, 0,
                                           5, 0, 0, 0, 5, 0, 0, 0, 5, 0, 0, 0, 5, 0, 0, 0,
                                           5, 0, 0, 0, 5, 0, 0, 0, 5, 0, 0, 0, 5, 0, 0, 0,
                                           5, 0, 0, 0, 5, 0, 0, 0, 5, 0, 0, 0, 5, 0, 0, 0});
  CHECK(fake::violations().empty());
}

TEST_CASE("level_zero: native binaries in the kernel cache", "[level_zero][cache]") {
  // A cache directory of its own, through the backend's options; binaries of any size
  // are stored.
  cgraph::test::TempDir dir("cgraph-l0-cache");
  const rt::KernelCacheOptions cache{dir.str(), true};
  cgraph::test::ScopedEnv anySize("CGRAPH_CACHE_MIN_ITEM_SIZE", nullptr);
  GraphBuilder b("cached");
  auto k = addKernels(b);
  uint32_t a = b.addSlot(slot("a", 1024));
  b.addKernelNode("s", k["scale"], range1(256),
                  {Arg::slot(a), Arg::scalar(ScalarType::F32, f32(2))});
  Graph g = b.take();
  const size_t spv = g.modules[0].forms[0].bytes.size();
  {
    Fixture f({}, 8, cache);
    fake::clearCalls();
    auto e1 = f.finalize(g);
    auto e2 = f.finalize(g); // the memory tier: no driver call
    CHECK(fake::calls({"zeModuleCreate"}) ==
          Lines{"zeModuleCreate(spirv, " + std::to_string(spv) + " bytes)"});
  }
  {
    Fixture f({}, 8, cache); // a new device (a new process, as far as the cache can tell)
    fake::clearCalls();
    auto e1 = f.finalize(g);
    CHECK(fake::calls({"zeModuleCreate"}) ==
          Lines{"zeModuleCreate(native, " + std::to_string(spv + 8) + " bytes)"});
    rt::FinalizeOptions fo;
    fo.useCache = false;
    fake::clearCalls();
    auto e2 = f.dev->finalize(g, fo);
    REQUIRE(e2);
    CHECK(fake::calls({"zeModuleCreate"}) ==
          Lines{"zeModuleCreate(spirv, " + std::to_string(spv) + " bytes)"});
    CHECK(fake::violations().empty());
  }
}

TEST_CASE("level_zero: recordings are kept per binding set, oldest dropped first", "[level_zero]") {
  Fixture f({}, 2);
  GraphBuilder b("lru");
  auto k = addKernels(b);
  uint32_t a = b.addSlot(slot("a", 256));
  b.addKernelNode("s", k["scale"], range1(64),
                  {Arg::slot(a), Arg::scalar(ScalarType::F32, f32(2))});
  auto exe = f.finalize(b.take());
  std::vector<std::unique_ptr<rt::Buffer>> bufs;
  for (int i = 0; i < 3; ++i)
    bufs.push_back(f.buffer(256));
  auto with = [&](int i) {
    rt::BindingTable t;
    t.slots = {{bufs[size_t(i)].get()}};
    f.run(*exe, t);
  };
  with(0);
  with(1);
  with(0); // kept
  CHECK(level_zero::recordingsMade(*exe) == 2);
  with(2); // drops the least recently used: buffer 1's
  CHECK(level_zero::recordingsMade(*exe) == 3);
  with(0); // still kept
  CHECK(level_zero::recordingsMade(*exe) == 3);
  with(1); // recorded again
  CHECK(level_zero::recordingsMade(*exe) == 4);
  // Two recordings alive (one list each), plus the device's immediate list.
  auto live = fake::liveObjects();
  CHECK(std::count_if(live.begin(), live.end(),
                      [](const std::string &o) { return o.rfind("list#", 0) == 0; }) == 3);
  CHECK(fake::violations().empty());
}

TEST_CASE("level_zero: a failure after a list was executed drains the queue first",
          "[level_zero]") {
  fake::FakeConfig cfg;
  cfg.failCall = "zeFenceCreate";
  Fixture f(cfg);
  GraphBuilder b("drain");
  uint32_t a = b.addSlot(slot("a", 64));
  uint32_t n0 = b.addFill("f1", fillOp(a, 0, 64, {1}));
  HostOp h;
  h.op = "print";
  uint32_t n1 = b.addHost("show", h, {Arg::slot(a)});
  uint32_t n2 = b.addFill("f2", fillOp(a, 0, 64, {2}));
  b.addEdge(n0, n1);
  b.addEdge(n1, n2);
  auto exe = f.finalize(b.take());
  auto A = f.buffer(64);
  rt::BindingTable t;
  t.slots = {{A.get()}};
  fake::clearCalls();
  auto ev = exe->enqueue(t, {});
  REQUIRE_FALSE(ev);
  CHECK(ev.error().message() == "zeFenceCreate: ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY");
  CHECK(fake::calls({"zeCommandQueue", "zeFenceCreate"}) ==
        Lines{"zeCommandQueueExecuteCommandLists([list#1], null)",
              "zeCommandQueueSynchronize(queue#0)",
              "zeFenceCreate -> injected ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY",
              "zeCommandQueueSynchronize(queue#0)"});
  // The next submission runs normally.
  f.run(*exe, t);
  CHECK(f.read(*A) == std::vector<uint8_t>(64, 2));
  CHECK(fake::violations().empty());
}

// The conformance suite's transfer shapes on the stand-in driver, which moves bytes but
// runs no kernels: the cases with a kernel between the fills run on devices only.
TEST_CASE("level_zero fake: transfer conformance: fills at the end of an owned slot (replay and eager)",
          "[level_zero][fake][conformance]") {
  Fixture f;
  conformance::checkFillTails(*f.dev, rt::ExecMode::Replay, false);
  conformance::checkFillTails(*f.dev, rt::ExecMode::Eager, false);
  CHECK(fake::violations().empty());
}
