// Helpers for the CPU backend tests: compile kernels from tests/cpu/kernels, build
// graphs with GraphBuilder, bind host data, run and read back.
#pragma once

#include "cgraph/backends/cpu/cpu_backend.h"
#include "cgraph/graph/builder.h"
#include "cgraph/runtime/runtime.h"

#include <catch2/catch.hpp>

#include <cstring>
#include <map>
#include <string>
#include <vector>

namespace cgtest {

using namespace cgraph;

rt::Device &cpuDevice();

// Adds the module compiled from tests/cpu/kernels/<file> and its kernels; returns the
// kernel indices by name. `clangArgs`: extra clang -cc1 arguments (e.g. "-O2" for the
// optimized IR shapes that -O0 does not give). Fails the test on a compile error.
std::map<std::string, uint32_t> addKernels(GraphBuilder &b, const std::string &file,
                                           const std::vector<std::string> &clangArgs = {});
// The same for OpenCL C source text; `file` names the module.
std::map<std::string, uint32_t> addKernelSource(GraphBuilder &b, const std::string &source,
                                                const std::string &file,
                                                const std::vector<std::string> &clangArgs = {});

uint32_t addSlot(GraphBuilder &b, const std::string &name, uint64_t bytes);

// Owns one device buffer per slot of a graph.
struct Buffers {
  std::vector<std::unique_ptr<rt::Buffer>> bufs;
  rt::BindingTable table;
  Buffers(const Graph &g);
  template <typename T> void set(uint32_t slot, const std::vector<T> &v) {
    REQUIRE(!cpuDevice().write(*bufs[slot], 0, v.data(), v.size() * sizeof(T)));
  }
  template <typename T> std::vector<T> get(uint32_t slot) {
    std::vector<T> v(bufs[slot]->size() / sizeof(T));
    REQUIRE(!cpuDevice().read(*bufs[slot], 0, v.data(), v.size() * sizeof(T)));
    return v;
  }
};

std::unique_ptr<rt::Executable> finalizeOrFail(const Graph &g, rt::ExecMode mode = rt::ExecMode::Replay);
// Enqueues and waits; fails the test on any error.
void runOrFail(rt::Executable &exe, const rt::BindingTable &t, const rt::ParamValues &p = {},
               bool profile = false, std::vector<rt::NodeTiming> *timings = nullptr);

inline uint64_t f32(float f) { uint32_t u; std::memcpy(&u, &f, 4); return u; }
inline uint64_t f64(double f) { uint64_t u; std::memcpy(&u, &f, 8); return u; }
// Distance in units in the last place between two floats of the same sign handling.
int64_t ulpDiff(float a, float b);
int64_t ulpDiff(double a, double b);

} // namespace cgtest

namespace cgtest {

// One kernel launch as a one-node graph: each KArg is a buffer (initial contents),
// a scalar, or a __local allocation.
struct KArg {
  enum Kind { Buf, Scalar, Local } kind = Buf;
  std::vector<uint8_t> data;
  Arg arg;
};
template <typename T> KArg buf(const std::vector<T> &v) {
  KArg a;
  a.data.resize(v.size() * sizeof(T));
  std::memcpy(a.data.data(), v.data(), a.data.size());
  return a;
}
inline KArg zeros(size_t bytes) { KArg a; a.data.assign(bytes, 0); return a; }
inline KArg scalar(ScalarType t, uint64_t bits) { KArg a; a.kind = KArg::Scalar; a.arg = Arg::scalar(t, bits); return a; }
inline KArg localMem(uint64_t bytes) { KArg a; a.kind = KArg::Local; a.arg = Arg::localMem(bytes); return a; }

// Returns the final contents of every buffer argument (empty vectors for the others).
std::vector<std::vector<uint8_t>> runOne(const std::string &file, const std::string &kernel,
                                         const NDRange &range, const std::vector<KArg> &args,
                                         const std::vector<std::string> &clangArgs = {});
template <typename T> std::vector<T> as(const std::vector<uint8_t> &b) {
  std::vector<T> v(b.size() / sizeof(T));
  std::memcpy(v.data(), b.data(), v.size() * sizeof(T));
  return v;
}

} // namespace cgtest
