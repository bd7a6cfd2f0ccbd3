// Helpers of the device conformance suites (cuda, level_zero): each case builds a graph,
// runs it on the backend under test and on the cpu backend with the same inputs, and
// compares every external slot and the host tasks' output. Catch2 assertions inside:
// include from test sources only. Everything is inline; the cpu device is one per
// process (a function-local static), used from the test thread only.
#pragma once

#include "cgraph/backends/cpu/cpu_backend.h"
#include "cgraph/graph/builder.h"
#include "cgraph/kernel/module_info.h"
#include "cgraph/kernel/opencl_compiler.h"
#include "cgraph/kernel/spirv.h"

#include <catch2/catch.hpp>

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace cgraph::devtest {

using Bytes = std::vector<uint8_t>;

inline rt::Device &cpuDevice() {
  static auto backend = cpu::makeCpuBackend();
  auto d = backend->device(0);
  REQUIRE(d);
  return **d;
}

// Compiles `source` into `b` (SPIR-V module + every kernel); kernel name -> index.
inline std::map<std::string, uint32_t> addSource(GraphBuilder &b, const std::string &source, const std::string &file) {
  auto r = compileOpenCL(source, file, CompileOptions{});
  INFO((r ? std::string() : r.error().message()));
  REQUIRE(r);
  uint32_t mod = b.addModule(makeKernelModule(file, *r, &source, false));
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

inline Slot slot(std::string name, uint64_t bytes, SlotInit init = SlotInit::External, std::vector<uint8_t> data = {}) {
  Slot s;
  s.name = std::move(name);
  s.size = bytes;
  s.init = init;
  s.data = std::move(data);
  return s;
}

inline Bytes seqBytes(size_t n, uint32_t seed) {
  Bytes b(n);
  for (size_t i = 0; i < n; ++i) b[i] = uint8_t((i * 7 + seed * 13) & 0xFF);
  return b;
}

struct RunResult {
  std::vector<Bytes> slots; // external slots' contents after the run, by slot index
  std::vector<std::string> lines; // host task output
};

// Runs `g` on `d` `times` times, each time with fresh buffers initialised from `inputs`
// (one per slot; empty = not external) and parameter values `params[i]`.
inline std::vector<RunResult> run(rt::Device &d, const Graph &g, const std::vector<Bytes> &inputs, rt::ExecMode mode,
                           const std::vector<rt::ParamValues> &params) {
  rt::FinalizeOptions fo;
  fo.mode = mode;
  auto lines = std::make_shared<std::vector<std::string>>();
  fo.host.output = [lines](const std::string &l) { lines->push_back(l); };
  auto exe = d.finalize(g, fo);
  INFO(d.info().backend << ": " << (exe ? std::string() : exe.error().message()));
  REQUIRE(exe);
  std::vector<RunResult> out;
  for (const rt::ParamValues &pv : params) {
    lines->clear();
    std::vector<std::unique_ptr<rt::Buffer>> bufs(inputs.size());
    rt::BindingTable t;
    t.slots.resize(inputs.size());
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (inputs[i].empty()) continue;
      auto b = d.allocate(inputs[i].size(), 64);
      REQUIRE(b);
      bufs[i] = std::move(*b);
      REQUIRE_FALSE(d.write(*bufs[i], 0, inputs[i].data(), inputs[i].size()));
      t.slots[i].buffer = bufs[i].get();
    }
    auto ev = (*exe)->enqueue(t, pv);
    INFO(d.info().backend << ": " << (ev ? std::string() : ev.error().message()));
    REQUIRE(ev);
    Error e = (*ev)->wait();
    INFO(e.message());
    REQUIRE_FALSE(e);
    RunResult r;
    r.slots.resize(inputs.size());
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (!bufs[i]) continue;
      r.slots[i].resize(inputs[i].size());
      REQUIRE_FALSE(d.read(*bufs[i], 0, r.slots[i].data(), r.slots[i].size()));
    }
    r.lines = *lines;
    out.push_back(std::move(r));
  }
  return out;
}

inline void requireSame(const std::vector<RunResult> &ref, const std::vector<RunResult> &got, const char *what) {
  REQUIRE(ref.size() == got.size());
  for (size_t r = 0; r < ref.size(); ++r) {
    for (size_t s = 0; s < ref[r].slots.size(); ++s) {
      INFO(what << ": submission " << r << ", slot " << s);
      const Bytes &a = ref[r].slots[s], &b = got[r].slots[s];
      size_t first = 0;
      while (first < a.size() && first < b.size() && a[first] == b[first]) ++first;
      INFO("first difference at byte " << first);
      CHECK(a == b);
    }
    INFO(what << ": host output, submission " << r);
    CHECK(ref[r].lines == got[r].lines);
  }
}

inline const char *kKernels = R"CL(
__kernel void addk(__global uint *d, __global const uint *s, uint k) {
  size_t i = get_global_id(0);
  d[i] = d[i] + s[i] * k;
}
__kernel void mark(__global uint *d, uint v) { d[get_global_id(0)] = v + (uint)get_global_offset(0); }
__kernel void lsum(__global uint *d, __local uint *tmp) {
  size_t l = get_local_id(0);
  tmp[l] = d[get_global_id(0)];
  barrier(CLK_LOCAL_MEM_FENCE);
  if (l == 0) {
    uint s = 0;
    for (size_t i = 0; i < get_local_size(0); ++i) s += tmp[i];
    d[get_global_id(0)] = s;
  }
}
)CL";

inline NDRange range1(uint64_t global, uint64_t local = 0, uint64_t offset = 0) {
  NDRange r;
  r.dims = 1;
  r.global[0].value = global;
  r.local[0].value = local;
  r.offset[0].value = offset;
  return r;
}

} // namespace cgraph::devtest
