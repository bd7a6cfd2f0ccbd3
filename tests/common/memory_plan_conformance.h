// Memory planning in the conformance suite, run on every backend (replay and eager):
// a graph whose transient slots may share memory only where the edges order them. Two
// independent branches (a backend may run them at once) each go through a transient
// slot, so sharing those two would be wrong; a chain after them reuses memory. The
// results are computed here and must equal the executable's with planning on and off.
//
// Include from test sources only (Catch2 assertions inside). Everything is inline.
#pragma once

#include "transfer_conformance.h" // addOneKernel

#include "cgraph/graph/builder.h"
#include "cgraph/runtime/runtime.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

namespace cgraph::conformance {

inline const char *kAxpb = R"CL(
__kernel void axpb(__global float *dst, __global const float *src, float a, float b) {
  size_t i = get_global_id(0);
  dst[i] = a * src[i] + b;
}
)CL";

struct PlanCase {
  Graph graph;
  uint32_t in = 0, outA = 0, outB = 0, out = 0;
  uint32_t a = 0, b = 0, t1 = 0, t3 = 0; // transient slots
  uint32_t n = 0;                        // floats per slot
};

inline uint64_t floatBits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

// in -> a = 2 in -> outA = a + 1;  in -> b = 3 in -> outB = b + 1  (no edge between);
// then, after both branches, t1 = 2 outA + 1 -> t2 = t1 / 2 -> t3 = t2 + 2 -> out = t3 - 1.
inline PlanCase branchesAndChain(uint32_t n = 4096) {
  PlanCase c;
  c.n = n;
  GraphBuilder b("plan-branches");
  const uint32_t kernel = addOneKernel(b, kAxpb, "axpb.cl");
  auto slot = [&](const char *name, SlotInit init) {
    Slot s;
    s.name = name;
    s.size = uint64_t(n) * 4;
    s.init = init;
    return b.addSlot(s);
  };
  c.in = slot("in", SlotInit::External);
  c.outA = slot("outA", SlotInit::External);
  c.outB = slot("outB", SlotInit::External);
  c.out = slot("out", SlotInit::External);
  c.a = slot("a", SlotInit::Transient);
  c.b = slot("b", SlotInit::Transient);
  c.t1 = slot("t1", SlotInit::Transient);
  const uint32_t t2 = slot("t2", SlotInit::Transient);
  c.t3 = slot("t3", SlotInit::Transient);
  NDRange r;
  r.global[0].value = n;
  auto node = [&](const char *name, uint32_t dst, uint32_t from, float a, float bias) {
    return b.addKernelNode(name, kernel, r,
                           {Arg::slot(dst), Arg::slot(from), Arg::scalar(ScalarType::F32, floatBits(a)),
                            Arg::scalar(ScalarType::F32, floatBits(bias))});
  };
  const uint32_t a1 = node("a1", c.a, c.in, 2, 0), a2 = node("a2", c.outA, c.a, 1, 1);
  const uint32_t b1 = node("b1", c.b, c.in, 3, 0), b2 = node("b2", c.outB, c.b, 1, 1);
  const uint32_t c1 = node("c1", c.t1, c.outA, 2, 1), c2 = node("c2", t2, c.t1, 0.5f, 0);
  const uint32_t c3 = node("c3", c.t3, t2, 1, 2), c4 = node("c4", c.out, c.t3, 1, -1);
  for (auto [f, t] : std::vector<std::pair<uint32_t, uint32_t>>{
           {a1, a2}, {b1, b2}, {a2, c1}, {b2, c1}, {c1, c2}, {c2, c3}, {c3, c4}})
    b.addEdge(f, t);
  c.graph = b.take();
  return c;
}

// Runs the case on `d` in `mode` with planning on and off, three submissions each, and
// checks every external result against values computed here.
inline void checkMemoryPlan(rt::Device &d, rt::ExecMode mode) {
  const PlanCase c = branchesAndChain();
  std::vector<float> in(c.n);
  for (uint32_t i = 0; i < c.n; ++i) in[i] = float(i % 97) - 40.0f;
  for (bool plan : {true, false}) {
    INFO(d.info().backend << (mode == rt::ExecMode::Replay ? " replay" : " eager") << ", planning "
                          << (plan ? "on" : "off"));
    rt::FinalizeOptions fo;
    fo.mode = mode;
    fo.planMemory = plan;
    auto exe = d.finalize(c.graph, fo);
    INFO((exe ? std::string() : exe.error().message()));
    REQUIRE(exe);
    const MemoryPlan &p = (*exe)->memoryPlan();
    auto apart = [&](uint32_t x, uint32_t y) {
      return std::find(p.conflicts[x].begin(), p.conflicts[x].end(), y) != p.conflicts[x].end();
    };
    if (plan) {
      // The branches' slots stay apart; the chain reuses memory.
      CHECK((!p.isPlanned(c.a) || !p.isPlanned(c.b) || apart(c.a, c.b)));
      CHECK(p.slots > 0);
      CHECK(p.bytesAfter < p.bytesBefore);
      REQUIRE(p.isPlanned(c.t1));
      REQUIRE(p.isPlanned(c.t3));
      CHECK_FALSE(apart(c.t1, c.t3));
    } else {
      CHECK(p.slots == 0);
    }
    const uint64_t bytes = uint64_t(c.n) * 4;
    std::vector<std::unique_ptr<rt::Buffer>> bufs;
    rt::BindingTable table;
    table.slots.resize(c.graph.slots.size());
    for (uint32_t s : {c.in, c.outA, c.outB, c.out}) {
      auto buf = d.allocate(bytes, 64);
      REQUIRE(buf);
      table.slots[s].buffer = buf->get();
      bufs.push_back(std::move(*buf));
    }
    REQUIRE_FALSE(d.write(*bufs[0], 0, in.data(), bytes));
    for (int round = 0; round < 3; ++round) {
      INFO("submission " << round);
      auto ev = (*exe)->enqueue(table, rt::ParamValues{});
      INFO((ev ? std::string() : ev.error().message()));
      REQUIRE(ev);
      Error e = (*ev)->wait();
      INFO(e.message());
      REQUIRE_FALSE(e);
      std::vector<float> oa(c.n), ob(c.n), out(c.n);
      REQUIRE_FALSE(d.read(*bufs[1], 0, oa.data(), bytes));
      REQUIRE_FALSE(d.read(*bufs[2], 0, ob.data(), bytes));
      REQUIRE_FALSE(d.read(*bufs[3], 0, out.data(), bytes));
      uint32_t bad = 0;
      for (uint32_t i = 0; i < c.n; ++i) {
        const float wantA = 2 * in[i] + 1, wantB = 3 * in[i] + 1;
        const float wantOut = ((2 * wantA + 1) * 0.5f + 2) - 1;
        if (oa[i] != wantA || ob[i] != wantB || out[i] != wantOut) ++bad;
      }
      CHECK(bad == 0);
    }
  }
}

} // namespace cgraph::conformance
