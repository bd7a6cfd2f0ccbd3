// Updates of a finalized executable (issue 10) on the cpu backend and on PoCL, replay
// and eager: each per-node update kind (scalar, slot and offset, nd-range), node
// enable/disable, whole-graph update, every refusal with its message (and the
// executable unchanged after it), and a submission in flight keeping its old values.
#include "cl_test_util.h"

#include "cgraph/backends/cpu/cpu_backend.h"
#include "cgraph/graph/order.h"

using namespace cgraph;
using namespace cgraph::cltest;

namespace {

const char *kSource = R"CL(
__kernel void copy_u32(__global const uint *src, __global uint *dst) {
  size_t i = get_global_id(0);
  dst[i] = src[i];
}
__kernel void add_u32(__global const uint *a, __global const uint *b, __global uint *c) {
  size_t i = get_global_id(0);
  c[i] = a[i] + b[i];
}
__kernel void inc_u32(__global uint *a, uint by) {
  size_t i = get_global_id(0);
  a[i] += by;
}
__kernel void inc2x_u32(__global uint *a, uint by) {
  size_t i = get_global_id(0);
  a[i] += 2 * by;
}
)CL";

constexpr uint32_t kN = 256;

// inc5: a += 5; inc7: a += 7; add: c = a + b; inc1: c += 1 (a chain), and apart from it
// lone: d += 1 (no edges to the chain).
struct Chain {
  Graph g;
  uint32_t sA, sB, sC, sD;
  uint32_t inc5, inc7, add, inc1, lone;
  uint32_t kCopy, kAdd, kInc, kInc2x;
  // secondKernel: the kernel of node 'add'; inc7Kernel: inc7's, which may switch between
  // inc_u32 and inc2x_u32 (its alternatives) when `alternatives` is set.
  explicit Chain(const char *secondKernel = "add_u32", bool alternatives = false,
                 const char *inc7Kernel = "inc_u32") {
    GraphBuilder b("update");
    sA = b.addSlot(externalSlot("a", kN * 4));
    sB = b.addSlot(externalSlot("b", kN * 4));
    sC = b.addSlot(externalSlot("c", kN * 4));
    sD = b.addSlot(externalSlot("d", kN * 4));
    kInc = addKernelSource(b, kSource, "update.cl", "inc_u32");
    kAdd = kInc - 1;
    kCopy = kInc - 2;
    kInc2x = kInc + 1;
    REQUIRE(b.graph().kernels[kAdd].name == "add_u32");
    REQUIRE(b.graph().kernels[kInc2x].name == "inc2x_u32");
    const uint32_t k2 = std::string(secondKernel) == "add_u32" ? kAdd : kCopy;
    inc5 = b.addKernelNode("inc5", kInc, range1D(kN), {Arg::slot(sA), Arg::scalar(ScalarType::U32, 5)});
    const uint32_t k7 = std::string(inc7Kernel) == "inc_u32" ? kInc : kInc2x;
    inc7 = b.addKernelNode("inc7", k7, range1D(kN), {Arg::slot(sA), Arg::scalar(ScalarType::U32, 7)});
    std::vector<Arg> addArgs{Arg::slot(sA), Arg::slot(sB), Arg::slot(sC)};
    if (k2 == kCopy) addArgs = {Arg::slot(sA), Arg::slot(sC)};
    add = b.addKernelNode("add", k2, range1D(kN), addArgs);
    inc1 = b.addKernelNode("inc1", kInc, range1D(kN), {Arg::slot(sC), Arg::scalar(ScalarType::U32, 1)});
    lone = b.addKernelNode("lone", kInc, range1D(kN), {Arg::slot(sD), Arg::scalar(ScalarType::U32, 1)});
    b.addEdge(inc5, inc7);
    b.addEdge(inc7, add);
    b.addEdge(add, inc1);
    g = b.take();
    if (alternatives) g.nodes[inc7].alternatives = {k7, k7 == kInc ? kInc2x : kInc};
    REQUIRE(!finalizeForFile(g));
  }
};

struct Run {
  std::vector<uint32_t> a, b, c, d;
};

// One submission with a[i] = i, b[i] = 1000 + i, c = d = 0 in fresh buffers.
struct Submission {
  std::vector<std::unique_ptr<rt::Buffer>> bufs;
  rt::EventPtr ev;
};
Submission start(rt::Device &dev, rt::Executable &exe) {
  Submission s;
  std::vector<uint32_t> a(kN), b(kN), zero(kN, 0);
  for (uint32_t i = 0; i < kN; ++i) {
    a[i] = i;
    b[i] = 1000 + i;
  }
  rt::BindingTable t;
  for (const std::vector<uint32_t> *v : {&a, &b, &zero, &zero}) {
    s.bufs.push_back(alloc(dev, kN * 4));
    writeAll(dev, *s.bufs.back(), *v);
    t.slots.push_back({});
    t.slots.back().buffer = s.bufs.back().get();
  }
  auto ev = exe.enqueue(t, {});
  INFO((ev ? std::string() : ev.error().message()));
  REQUIRE(ev);
  s.ev = *ev;
  return s;
}
Run finish(rt::Device &dev, Submission &s) {
  Error e = s.ev->wait();
  INFO(e.message());
  REQUIRE(!e);
  Run r;
  r.a = readAll<uint32_t>(dev, *s.bufs[0]);
  r.b = readAll<uint32_t>(dev, *s.bufs[1]);
  r.c = readAll<uint32_t>(dev, *s.bufs[2]);
  r.d = readAll<uint32_t>(dev, *s.bufs[3]);
  return r;
}
Run runOnce(rt::Device &dev, rt::Executable &exe) {
  Submission s = start(dev, exe);
  return finish(dev, s);
}

// c[i] for a chain that adds `aInc(i)` to a[i] and `cInc` to c.
std::vector<uint32_t> expectC(uint32_t (*aInc)(uint32_t), uint32_t cInc) {
  std::vector<uint32_t> c(kN);
  for (uint32_t i = 0; i < kN; ++i) c[i] = i + aInc(i) + 1000 + i + cInc;
  return c;
}

void requireError(const Error &e, const std::string &part) {
  INFO("error: " << e.message() << "\nexpected to contain: " << part);
  REQUIRE(e);
  CHECK(e.message().find(part) != std::string::npos);
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

std::unique_ptr<rt::Executable> finalize(rt::Device &dev, const Graph &g, rt::ExecMode mode) {
  rt::FinalizeOptions fo;
  fo.mode = mode;
  auto exe = dev.finalize(g, fo);
  INFO((exe ? std::string() : exe.error().message()));
  REQUIRE(exe);
  return std::move(*exe);
}

const std::vector<uint32_t> kBase = expectC([](uint32_t) { return 12u; }, 1);

} // namespace

TEST_CASE("update: per-node updates on every backend, replay and eager", "[opencl][cpu][update]") {
  Chain ch;
  Devices devs;
  for (rt::Device *dev : devs.list())
    for (rt::ExecMode mode : {rt::ExecMode::Replay, rt::ExecMode::Eager}) {
      INFO(dev->info().backend << (mode == rt::ExecMode::Replay ? " replay" : " eager"));
      REQUIRE(dev->info().caps.nodeUpdate);
      REQUIRE(!dev->info().update.empty());
      auto exe = finalize(*dev, ch.g, mode);
      REQUIRE(exe->findNode("inc7") == ch.inc7);
      REQUIRE(exe->findNode("nope") == kNone);
      CHECK(runOnce(*dev, *exe).c == kBase);

      // A scalar argument.
      rt::NodeUpdate u;
      u.node = ch.inc7;
      u.args = {{1, Arg::scalar(ScalarType::U32, 100)}};
      REQUIRE(!exe->update(u));
      CHECK(runOnce(*dev, *exe).c == expectC([](uint32_t) { return 105u; }, 1));

      // An nd-range: inc5 covers the first half only.
      rt::NodeUpdate r;
      r.node = ch.inc5;
      r.setRange = true;
      r.range = range1D(kN / 2);
      REQUIRE(!exe->update(r));
      CHECK(runOnce(*dev, *exe).c == expectC([](uint32_t i) { return i < kN / 2 ? 105u : 100u; }, 1));

      // A slot argument with an offset, and the range with it: inc1 adds to c's second half.
      rt::NodeUpdate s;
      s.node = ch.inc1;
      s.args = {{0, Arg::slot(ch.sC, kN / 2 * 4)}};
      s.setRange = true;
      s.range = range1D(kN / 2);
      REQUIRE(!exe->update(s));
      {
        Run run = runOnce(*dev, *exe);
        for (uint32_t i = 0; i < kN; ++i) {
          INFO("i = " << i);
          REQUIRE(run.c[i] == i + (i < kN / 2 ? 105u : 100u) + 1000 + i + (i >= kN / 2 ? 1u : 0u));
        }
      }
      // Another slot: inc1 now increments b (read by add, which runs before it).
      rt::NodeUpdate other;
      other.node = ch.inc1;
      other.args = {{0, Arg::slot(ch.sB)}, {1, Arg::scalar(ScalarType::U32, 3)}};
      other.setRange = true;
      other.range = range1D(kN);
      REQUIRE(!exe->update(other));
      {
        Run run = runOnce(*dev, *exe);
        CHECK(run.c == expectC([](uint32_t i) { return i < kN / 2 ? 105u : 100u; }, 0));
        for (uint32_t i = 0; i < kN; ++i) REQUIRE(run.b[i] == 1003 + i);
      }
    }
}

TEST_CASE("update: enable and disable nodes", "[opencl][cpu][update]") {
  Chain ch;
  Devices devs;
  for (rt::Device *dev : devs.list())
    for (rt::ExecMode mode : {rt::ExecMode::Replay, rt::ExecMode::Eager}) {
      INFO(dev->info().backend << (mode == rt::ExecMode::Replay ? " replay" : " eager"));
      auto exe = finalize(*dev, ch.g, mode);
      rt::NodeUpdate off;
      off.node = ch.inc7;
      off.enabled = 0;
      REQUIRE(!exe->update(off));
      CHECK_FALSE(exe->nodeEnabled(ch.inc7));
      CHECK(runOnce(*dev, *exe).c == expectC([](uint32_t) { return 5u; }, 1));
      // Disabling the last node and the lone one: the rest still runs in order.
      for (uint32_t n : {ch.inc1, ch.lone}) {
        rt::NodeUpdate u;
        u.node = n;
        u.enabled = 0;
        REQUIRE(!exe->update(u));
      }
      {
        Run run = runOnce(*dev, *exe);
        CHECK(run.c == expectC([](uint32_t) { return 5u; }, 0));
        CHECK(run.d == std::vector<uint32_t>(kN, 0));
      }
      for (uint32_t n : {ch.inc7, ch.inc1, ch.lone}) {
        rt::NodeUpdate u;
        u.node = n;
        u.enabled = 1;
        REQUIRE(!exe->update(u));
      }
      Run run = runOnce(*dev, *exe);
      CHECK(run.c == kBase);
      CHECK(run.d == std::vector<uint32_t>(kN, 1));
    }
}

TEST_CASE("update: every refusal names the problem and changes nothing", "[opencl][cpu][update]") {
  Chain ch;
  Devices devs;
  for (rt::Device *dev : devs.list()) {
    INFO(dev->info().backend);
    auto exe = finalize(*dev, ch.g, rt::ExecMode::Replay);
    auto upd = [&](auto fill) {
      rt::NodeUpdate u;
      u.node = ch.inc7;
      fill(u);
      return exe->update(u);
    };
    requireError(upd([](rt::NodeUpdate &u) { u.node = 99; }), "node index 99 is out of range");
    requireError(upd([](rt::NodeUpdate &u) { u.args = {{2, Arg::scalar(ScalarType::U32, 1)}}; }),
                 "node 'inc7': argument 2 is out of range (the kernel takes 2)");
    requireError(upd([&](rt::NodeUpdate &u) { u.args = {{1, Arg::slot(ch.sB)}}; }),
                 "argument 1 is a scalar, not a slot");
    requireError(upd([](rt::NodeUpdate &u) { u.args = {{1, Arg::scalar(ScalarType::F32, f32Bits(1.5f))}}; }),
                 "argument 1 is u32, not f32");
    requireError(upd([](rt::NodeUpdate &u) { u.args = {{0, Arg::slot(17)}}; }),
                 "slot index 17 is out of range");
    requireError(upd([](rt::NodeUpdate &u) {
                   u.setRange = true;
                   u.range = range1D(0);
                 }),
                 "node 'inc7': global size in dimension 0 is 0");
    requireError(upd([](rt::NodeUpdate &u) {
                   u.setRange = true;
                   u.range = range1D(kN);
                   u.range.local[0].value = 1u << 20;
                 }),
                 "larger than the device's maximum");
    requireError(upd([](rt::NodeUpdate &u) { u.enabled = 2; }), "enabled must be 0 or 1");
    // The lone node has no edge to the chain: pointing it at `a` would race.
    requireError(upd([&](rt::NodeUpdate &u) {
                   u.node = ch.lone;
                   u.args = {{0, Arg::slot(ch.sA)}};
                 }),
                 "node 'lone': the update makes it access slot 'a', which node 'inc5' also accesses, "
                 "and no edge orders the two");
    // A valid scalar next to an invalid one: neither applies.
    requireError(upd([](rt::NodeUpdate &u) {
                   u.args = {{1, Arg::scalar(ScalarType::U32, 50)}, {3, Arg::scalar(ScalarType::U32, 1)}};
                 }),
                 "argument 3 is out of range");
    CHECK(runOnce(*dev, *exe).c == kBase);
  }
}

TEST_CASE("update: a submission in flight keeps the values it was enqueued with", "[opencl][cpu][update]") {
  Chain ch;
  Devices devs;
  for (rt::Device *dev : devs.list()) {
    INFO(dev->info().backend);
    auto exe = finalize(*dev, ch.g, rt::ExecMode::Replay);
    Submission first = start(*dev, *exe);
    rt::NodeUpdate u;
    u.node = ch.inc7;
    u.args = {{1, Arg::scalar(ScalarType::U32, 70)}};
    REQUIRE(!exe->update(u));
    Submission second = start(*dev, *exe);
    CHECK(finish(*dev, first).c == kBase);
    CHECK(finish(*dev, second).c == expectC([](uint32_t) { return 75u; }, 1));
  }
}

TEST_CASE("update: whole graph from a graph of the same topology", "[opencl][cpu][update]") {
  Chain ch;
  Devices devs;
  Chain changed;
  changed.g.nodes[changed.inc7].args[1] = Arg::scalar(ScalarType::U32, 40);
  changed.g.nodes[changed.inc5].range = range1D(kN / 4);
  Chain otherKernel("copy_u32");
  Chain otherEdges;
  otherEdges.g.edges.pop_back();
  for (rt::Device *dev : devs.list())
    for (rt::ExecMode mode : {rt::ExecMode::Replay, rt::ExecMode::Eager}) {
      INFO(dev->info().backend << (mode == rt::ExecMode::Replay ? " replay" : " eager"));
      auto exe = finalize(*dev, ch.g, mode);
      CHECK(runOnce(*dev, *exe).c == kBase);
      REQUIRE(!exe->update(changed.g));
      CHECK(runOnce(*dev, *exe).c == expectC([](uint32_t i) { return i < kN / 4 ? 45u : 40u; }, 1));
      requireError(exe->update(otherKernel.g),
                   "whole-graph update: node 2 'add': kernel differs (add_u32 vs copy_u32)");
      requireError(exe->update(otherEdges.g), "whole-graph update: the source graph has");
      // Refused updates changed nothing; the original graph brings the old values back.
      CHECK(runOnce(*dev, *exe).c == expectC([](uint32_t i) { return i < kN / 4 ? 45u : 40u; }, 1));
      REQUIRE(!exe->update(ch.g));
      CHECK(runOnce(*dev, *exe).c == kBase);
    }
}

TEST_CASE("update: a node switches to one of its alternative kernels", "[opencl][cpu][update]") {
  Chain ch("add_u32", true);
  Chain doubled("add_u32", true, "inc2x_u32"); // the same graph with inc7 on inc2x_u32
  Chain plain;                                  // no alternatives
  Devices devs;
  for (rt::Device *dev : devs.list())
    for (rt::ExecMode mode : {rt::ExecMode::Replay, rt::ExecMode::Eager}) {
      INFO(dev->info().backend << (mode == rt::ExecMode::Replay ? " replay" : " eager"));
      auto exe = finalize(*dev, ch.g, mode);
      CHECK(runOnce(*dev, *exe).c == kBase);
      rt::NodeUpdate u;
      u.node = ch.inc7;
      u.kernel = ch.kInc2x;
      REQUIRE(!exe->update(u));
      CHECK(exe->graph().nodes[ch.inc7].kernel == ch.kInc2x);
      CHECK(runOnce(*dev, *exe).c == expectC([](uint32_t) { return 19u; }, 1));
      // With a new argument in the same update.
      u.kernel = ch.kInc;
      u.args = {{1, Arg::scalar(ScalarType::U32, 20)}};
      REQUIRE(!exe->update(u));
      CHECK(runOnce(*dev, *exe).c == expectC([](uint32_t) { return 25u; }, 1));
      // Refused: a kernel not in the list, a node without alternatives.
      rt::NodeUpdate bad;
      bad.node = ch.inc7;
      bad.kernel = ch.kAdd;
      requireError(exe->update(bad), "node 'inc7': kernel 'add_u32' is not one of its alternatives "
                                     "(inc_u32, inc2x_u32)");
      bad.node = ch.inc5;
      bad.kernel = ch.kInc2x;
      requireError(exe->update(bad), "node 'inc5': kernel 'inc2x_u32' is not one of its alternatives "
                                     "(it has none)");
      CHECK(runOnce(*dev, *exe).c == expectC([](uint32_t) { return 25u; }, 1));
      // Whole graph: the source's kernel choice is applied when it is an alternative.
      REQUIRE(!exe->update(doubled.g));
      CHECK(runOnce(*dev, *exe).c == expectC([](uint32_t) { return 19u; }, 1));
      REQUIRE(!exe->update(ch.g));
      CHECK(runOnce(*dev, *exe).c == kBase);
      // Without alternatives a different kernel is still a topology change.
      auto strict = finalize(*dev, plain.g, mode);
      requireError(strict->update(doubled.g), "node 1 'inc7': kernel differs (inc_u32 vs inc2x_u32)");
    }
}
