// Helpers for the OpenCL backend tests: real kernels compiled from OpenCL C (clang +
// translator), real PoCL devices.
#pragma once

#include "cgraph/backends/opencl/opencl_backend.h"
#include "cgraph/graph/builder.h"
#include "cgraph/kernel/module_info.h"
#include "cgraph/kernel/opencl_compiler.h"
#include "cgraph/kernel/spirv.h"

#include <catch2/catch.hpp>

#include <cstring>
#include <string>
#include <vector>

namespace cgraph::cltest {

// Compiles `source`, adds its module (SPIR-V + OpenCL C forms) and every kernel in it
// to `b`; returns the graph index of kernel `kernel`.
inline uint32_t addKernelSource(GraphBuilder &b, const std::string &source,
                                const std::string &file, const std::string &kernel) {
  Expected<CompileResult> r = compileOpenCL(source, file, CompileOptions{});
  INFO((r ? std::string() : r.error().message()));
  REQUIRE(r);
  uint32_t mod = b.addModule(makeKernelModule(file, *r, &source, false));
  Expected<std::vector<Kernel>> ks = reflectKernels(r->spirv.data(), r->spirv.size());
  REQUIRE(ks);
  uint32_t found = kNone;
  for (Kernel k : *ks) {
    k.module = mod;
    std::string name = k.name;
    uint32_t idx = b.addKernel(std::move(k));
    if (name == kernel) found = idx;
  }
  REQUIRE(found != kNone);
  return found;
}

inline Slot externalSlot(std::string name, uint64_t bytes) {
  Slot s;
  s.name = std::move(name);
  s.size = bytes;
  s.init = SlotInit::External;
  return s;
}

inline uint64_t f32Bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

// The first device of the "opencl" backend; the test fails (not skips) without one.
inline rt::Device *openPocl(rt::Backend &backend) {
  rt::BackendProbe p = backend.probe();
  INFO("opencl probe: " << p.reason);
  REQUIRE(p.available);
  Expected<rt::Device *> d = backend.device(0);
  INFO((d ? std::string() : d.error().message()));
  REQUIRE(d);
  return *d;
}

template <class T> std::vector<T> readAll(rt::Device &d, rt::Buffer &b) {
  std::vector<T> out(b.size() / sizeof(T));
  Error e = d.read(b, 0, out.data(), out.size() * sizeof(T));
  INFO(e.message());
  REQUIRE(!e);
  return out;
}

template <class T> void writeAll(rt::Device &d, rt::Buffer &b, const std::vector<T> &v) {
  Error e = d.write(b, 0, v.data(), v.size() * sizeof(T));
  INFO(e.message());
  REQUIRE(!e);
}

inline std::unique_ptr<rt::Buffer> alloc(rt::Device &d, uint64_t bytes) {
  auto b = d.allocate(bytes, 64);
  INFO((b ? std::string() : b.error().message()));
  REQUIRE(b);
  return std::move(*b);
}

inline void runAndWait(rt::Executable &exe, const rt::BindingTable &t, const rt::ParamValues &p = {},
                       const rt::SubmitOptions &o = {}) {
  auto ev = exe.enqueue(t, p, o);
  INFO((ev ? std::string() : ev.error().message()));
  REQUIRE(ev);
  Error e = (*ev)->wait();
  INFO(e.message());
  REQUIRE(!e);
}

} // namespace cgraph::cltest
