// Level Zero backend conformance on a real device: every case compares the level_zero
// backend (replay and eager) with the cpu backend on the same graph and inputs, and the
// kernel conformance suite (tests/conformance) runs against the cpu backend. main()
// (level_zero_test_main.cpp) reports the run as skipped (exit 77) with the probe's
// reason where no device exists, which is everywhere this project has run so far: these
// cases have never run on hardware.
#include "cgraph/backends/cpu/cpu_backend.h"
#include "cgraph/backends/level_zero/level_zero_backend.h"
#include "cgraph/graph/builder.h"
#include "cgraph/kernel/module_info.h"
#include "cgraph/kernel/opencl_compiler.h"
#include "cgraph/kernel/spirv.h"

#include "../conformance/conformance.h"
#include "../conformance/graph_suite.h"
#include "../common/device_compare.h"

#include <catch2/catch.hpp>

#include <cstring>
#include <memory>
#include <vector>

using namespace cgraph;
using namespace cgraph::devtest;

namespace {

rt::Device &zeDevice() {
  static auto backend = level_zero::makeLevelZeroBackend();
  auto d = backend->device(0);
  INFO((d ? std::string() : d.error().message()));
  REQUIRE(d);
  return **d;
}

} // namespace

TEST_CASE("level_zero: every node kind, replay and eager vs cpu", "[level_zero][gpu]") {
  GraphBuilder b("every-node-kind");
  auto k = addSource(b, kKernels, "kinds.cl");
  uint32_t a = b.addSlot(slot("a", 1024)), x = b.addSlot(slot("x", 1024));
  uint32_t t = b.addSlot(slot("t", 1024, SlotInit::Transient));
  uint32_t dat = b.addSlot(slot("dat", 1024, SlotInit::Data, seqBytes(1024, 5)));
  uint32_t fil = b.addSlot(slot("fil", 1024, SlotInit::Fill, {9, 8, 7, 6}));
  Param p;
  p.name = "k";
  p.type = ScalarType::U32;
  p.defaultBits = 5;
  uint32_t pk = b.addParam(p);
  std::vector<uint32_t> chain;
  chain.push_back(b.addFill("zero_t", fillOp(t, 0, 1024, {0})));
  chain.push_back(b.addCopy("dat_to_t", copyOp(dat, 0, t, 0, 512)));
  chain.push_back(b.addKernelNode("add", k["addk"], range1(256, 64),
                                  {Arg::slot(a), Arg::slot(t), Arg::param(pk)}));
  chain.push_back(b.addFill("odd_fill", fillOp(x, 0, 96, {1, 2, 3})));
  chain.push_back(b.addKernelNode("mark", k["mark"], range1(64, 0, 128),
                                  {Arg::slot(x, 0), Arg::scalar(ScalarType::U32, 3)}));
  chain.push_back(b.addBarrier("bar"));
  chain.push_back(
      b.addKernelNode("lsum", k["lsum"], range1(256, 32), {Arg::slot(a), Arg::localMem(32 * 4)}));
  CopyOp c;
  c.srcSlot = fil;
  c.dstSlot = x;
  c.dstOffset = 512;
  c.region[0] = 16;
  c.region[1] = 4;
  c.srcRowPitch = 32;
  c.dstRowPitch = 64;
  chain.push_back(b.addCopyRect("rect", c));
  HostOp h;
  h.op = "checksum";
  chain.push_back(b.addHost("sum", h, {Arg::slot(a)}));
  chain.push_back(b.addKernelNode("after_host", k["addk"], range1(256),
                                  {Arg::slot(x), Arg::slot(a), Arg::scalar(ScalarType::U32, 1)}));
  for (size_t i = 1; i < chain.size(); ++i)
    b.addEdge(chain[i - 1], chain[i]);
  Graph g = b.take();
  std::vector<Bytes> in(g.slots.size());
  in[a] = seqBytes(1024, 1);
  in[x] = seqBytes(1024, 2);
  rt::ParamValues p7;
  REQUIRE_FALSE(p7.set(g, "k", "7"));
  std::vector<rt::ParamValues> params = {rt::ParamValues{}, p7, rt::ParamValues{}};
  auto ref = run(cpuDevice(), g, in, rt::ExecMode::Replay, params);
  requireSame(ref, run(zeDevice(), g, in, rt::ExecMode::Replay, params),
              "level_zero replay vs cpu");
  requireSame(ref, run(zeDevice(), g, in, rt::ExecMode::Eager, params), "level_zero eager vs cpu");
}

TEST_CASE("level_zero: recordings per binding set, updates", "[level_zero][gpu]") {
  GraphBuilder b("rebind");
  auto k = addSource(b, kKernels, "kinds.cl");
  uint32_t a = b.addSlot(slot("a", 1024)), s = b.addSlot(slot("s", 1024));
  b.addKernelNode("add", k["addk"], range1(256, 64),
                  {Arg::slot(a), Arg::slot(s), Arg::scalar(ScalarType::U32, 3)});
  Graph g = b.take();
  rt::Device &d = zeDevice();
  auto exe = d.finalize(g, {});
  REQUIRE(exe);
  std::vector<std::unique_ptr<rt::Buffer>> bufs;
  for (int i = 0; i < 3; ++i) {
    auto buf = d.allocate(1024, 64);
    REQUIRE(buf);
    Bytes init = seqBytes(1024, uint32_t(i));
    REQUIRE_FALSE(d.write(**buf, 0, init.data(), init.size()));
    bufs.push_back(std::move(*buf));
  }
  auto submit = [&](rt::Buffer &target) {
    rt::BindingTable t;
    t.slots = {{&target}, {bufs[2].get()}};
    auto ev = (*exe)->enqueue(t, {});
    REQUIRE(ev);
    REQUIRE_FALSE((*ev)->wait());
  };
  submit(*bufs[0]);
  submit(*bufs[1]);
  submit(*bufs[0]);
  CHECK(level_zero::recordingsMade(**exe) == 2);
  rt::NodeUpdate u;
  u.node = (*exe)->findNode("add");
  u.args = {{2, Arg::scalar(ScalarType::U32, 4)}};
  REQUIRE_FALSE((*exe)->update(u));
  submit(*bufs[0]);
  CHECK(level_zero::recordingsMade(**exe) == 3);
  // a0 + 2 * 3 * s + 4 * s, per element (uint arithmetic on bytes grouped as uint32).
  Bytes a0 = seqBytes(1024, 0), sv = seqBytes(1024, 2), got(1024);
  REQUIRE_FALSE(d.read(*bufs[0], 0, got.data(), got.size()));
  for (size_t i = 0; i < 256; ++i) {
    uint32_t av, svv, gv;
    std::memcpy(&av, &a0[i * 4], 4);
    std::memcpy(&svv, &sv[i * 4], 4);
    std::memcpy(&gv, &got[i * 4], 4);
    INFO("element " << i);
    CHECK(gv == av + 10u * svv);
  }
}

TEST_CASE("level_zero: kernel suite, replay and eager against the C++ references", "[level_zero][gpu][kernels]") {
  conformance::runKernelSuite({"level_zero", &zeDevice()});
}

TEST_CASE("level_zero: kernel suite, cases without a C++ reference against cpu", "[level_zero][gpu][kernels]") {
  conformance::compareWithoutReference({"level_zero", &zeDevice()}, {"cpu", &cpuDevice()});
}

TEST_CASE("level_zero: graph suite, replay and eager", "[level_zero][gpu][graph]") {
  conformance::runGraphSuite({"level_zero", &zeDevice()});
}
