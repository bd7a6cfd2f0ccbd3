// Transfer shapes of the conformance suite, run on every backend (replay and eager):
// small fills at the end of a runtime-owned slot after a whole-slot fill, with and
// without a kernel writing part of the slot in between, at offsets that are and are not
// multiples of 16, with 1- and 4-byte patterns. Each case is checked against contents
// computed here, read two ways: through a copy node into an external slot, and by
// binding the runtime-owned slot itself over its storage (BindingTable::overrideInternal,
// as `cgrun compare` and `cgrun --output` read a transient slot).
//
// Include from test sources only (Catch2 assertions inside). Everything is inline.
#pragma once

#include "cgraph/graph/builder.h"
#include "cgraph/kernel/module_info.h"
#include "cgraph/kernel/opencl_compiler.h"
#include "cgraph/kernel/spirv.h"
#include "cgraph/runtime/runtime.h"

#include <catch2/catch.hpp>

#include <cstring>
#include <string>
#include <vector>

namespace cgraph::conformance {

struct TransferCase {
  std::string name;
  Graph graph;
  uint32_t owned = 0;         // the runtime-owned slot under test
  uint32_t out = 0;           // external slot the last node copies it into
  std::vector<uint8_t> want;  // the owned slot's contents after one run
};

// Compiles OpenCL C `src` (one kernel) and adds its module and kernel to `b`; returns
// the kernel's index.
inline uint32_t addOneKernel(GraphBuilder &b, const char *src, const char *file) {
  auto compiled = compileOpenCL(src, file, CompileOptions{});
  REQUIRE(compiled);
  const std::string text = src;
  const uint32_t mod = b.addModule(makeKernelModule(file, *compiled, &text, false));
  auto ks = reflectKernels(compiled->spirv.data(), compiled->spirv.size());
  REQUIRE(ks);
  REQUIRE(ks->size() == 1);
  Kernel k = (*ks)[0];
  k.module = mod;
  return b.addKernel(std::move(k));
}

inline const char *kWritePart = R"CL(
__kernel void write_part(__global float *s, uint n) {
  size_t i = get_global_id(0);
  if (i < n) s[i] = (float)i;
}
)CL";

// One case: `bytes` of transient slot, zero-filled whole, optionally the first half
// written by a kernel, then `tailBytes` at `tailOffset` filled with `pattern`, then
// copied whole into an external slot.
inline TransferCase fillTailCase(uint64_t bytes, bool kernel, uint64_t tailOffset, uint64_t tailBytes,
                                 std::vector<uint8_t> pattern) {
  TransferCase c;
  c.name = "fill tail at " + std::to_string(tailOffset) + "+" + std::to_string(tailBytes) + " of " +
           std::to_string(bytes) + (kernel ? ", kernel between" : ", no kernel") + ", pattern of " +
           std::to_string(pattern.size());
  GraphBuilder b("fill-tail");
  const uint32_t kernelIndex = addOneKernel(b, kWritePart, "write_part.cl");

  Slot t;
  t.name = "symmat";
  t.size = bytes;
  t.init = SlotInit::Transient;
  c.owned = b.addSlot(t);
  Slot o;
  o.name = "out";
  o.size = bytes;
  o.init = SlotInit::External;
  c.out = b.addSlot(o);

  std::vector<uint32_t> chain;
  FillOp zero;
  zero.slot = c.owned;
  zero.bytes = bytes;
  zero.pattern = {0, 0, 0, 0};
  chain.push_back(b.addFill("zero", zero));
  c.want.assign(bytes, 0);
  if (kernel) {
    const uint64_t n = bytes / 8; // floats in the first half
    NDRange r;
    r.global[0].value = n;
    chain.push_back(b.addKernelNode("half", kernelIndex, r,
                                    {Arg::slot(c.owned), Arg::scalar(ScalarType::U32, n)}));
    for (uint64_t i = 0; i < n; ++i) {
      const float f = float(i);
      std::memcpy(&c.want[i * 4], &f, 4);
    }
  }
  FillOp tail;
  tail.slot = c.owned;
  tail.offset = tailOffset;
  tail.bytes = tailBytes;
  tail.pattern = pattern;
  chain.push_back(b.addFill("last_one", tail));
  for (uint64_t i = 0; i < tailBytes; ++i) c.want[tailOffset + i] = pattern[i % pattern.size()];
  CopyOp cp;
  cp.srcSlot = c.owned;
  cp.dstSlot = c.out;
  cp.bytes = bytes;
  chain.push_back(b.addCopy("read_back", cp));
  for (size_t i = 1; i < chain.size(); ++i) b.addEdge(chain[i - 1], chain[i]);
  c.graph = b.take();
  return c;
}

inline std::vector<TransferCase> fillTailCases() {
  const uint64_t bytes = 1 << 20;
  const std::vector<uint8_t> one = {0x00, 0x00, 0x80, 0x3f}; // 1.0f
  std::vector<TransferCase> out;
  for (bool kernel : {false, true}) {
    out.push_back(fillTailCase(bytes, kernel, bytes - 4, 4, one));   // last element, offset % 16 == 12
    out.push_back(fillTailCase(bytes, kernel, bytes - 16, 16, one)); // last 16 bytes, offset % 16 == 0
    out.push_back(fillTailCase(bytes, kernel, bytes - 36, 20, one)); // offset % 16 == 12, not the end
    out.push_back(fillTailCase(bytes, kernel, bytes - 3, 3, {0x5a})); // bytes, odd offset
  }
  return out;
}

inline std::string firstDifference(const std::vector<uint8_t> &a, const std::vector<uint8_t> &b) {
  if (a.size() != b.size()) return "sizes differ";
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i] != b[i])
      return "byte " + std::to_string(i) + ": " + std::to_string(a[i]) + " vs " + std::to_string(b[i]);
  return "";
}

// Runs every fill-tail case on `d` in `mode`: twice without binding the owned slot, then
// twice binding it over its storage, then once more without (the owned storage again).
// `withKernels` false: only the cases without a kernel (a backend stand-in that moves
// bytes but runs no kernels).
inline void checkFillTails(rt::Device &d, rt::ExecMode mode, bool withKernels = true) {
  for (const TransferCase &c : fillTailCases()) {
    if (!withKernels && c.graph.nodes.size() > 3) continue;
    INFO(d.info().backend << (mode == rt::ExecMode::Replay ? " replay: " : " eager: ") << c.name);
    rt::FinalizeOptions fo;
    fo.mode = mode;
    auto exe = d.finalize(c.graph, fo);
    INFO((exe ? std::string() : exe.error().message()));
    REQUIRE(exe);
    const uint64_t bytes = c.want.size();
    for (int round = 0; round < 5; ++round) {
      const bool bindOwned = round == 2 || round == 3;
      INFO("submission " << round << (bindOwned ? " (owned slot bound over)" : ""));
      auto out = d.allocate(bytes, 64);
      auto over = d.allocate(bytes, 64);
      REQUIRE(out);
      REQUIRE(over);
      std::vector<uint8_t> junk(bytes, 0xEE);
      REQUIRE_FALSE(d.write(**out, 0, junk.data(), bytes));
      REQUIRE_FALSE(d.write(**over, 0, junk.data(), bytes));
      rt::BindingTable table;
      table.slots.resize(c.graph.slots.size());
      table.slots[c.out].buffer = out->get();
      if (bindOwned) {
        table.overrideInternal = true;
        table.slots[c.owned].buffer = over->get();
      }
      auto ev = (*exe)->enqueue(table, rt::ParamValues{});
      INFO((ev ? std::string() : ev.error().message()));
      REQUIRE(ev);
      Error e = (*ev)->wait();
      INFO(e.message());
      REQUIRE_FALSE(e);
      std::vector<uint8_t> got(bytes);
      REQUIRE_FALSE(d.read(**out, 0, got.data(), bytes));
      INFO("copied out: " << firstDifference(c.want, got));
      CHECK(got == c.want);
      if (bindOwned) {
        REQUIRE_FALSE(d.read(**over, 0, got.data(), bytes));
        INFO("bound owned slot: " << firstDifference(c.want, got));
        CHECK(got == c.want);
      }
    }
  }
}

} // namespace cgraph::conformance
