// Helpers for the cgrun end-to-end tests: build .cgf files with the real builder,
// compiler and writer, and run the real cgrun binary (CGRUN_PATH) through the shell.
#pragma once

#include "cgraph/format/writer.h"
#include "cgraph/graph/builder.h"
#include "cgraph/graph/hazards.h"
#include "cgraph/graph/order.h"
#include "cgraph/kernel/module_info.h"
#include "cgraph/kernel/opencl_compiler.h"
#include "cgraph/kernel/spirv.h"
#include "cgraph/runtime/npy.h"

#include <catch2/catch.hpp>
#include "tool_test_util.h"

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace cgruntest {

namespace fs = std::filesystem;
using namespace cgraph;

using tooltest::quote;
using tooltest::Result;
using tooltest::slurp;

inline fs::path scratch(const std::string &name) {
  fs::path dir = fs::path(CGRAPH_BINARY_DIR) / "cgrun_test_tmp" / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return fs::canonical(dir);
}

// Runs `cgrun <args>` in `cwd`; args go to the shell as written.
inline Result cgrun(const std::string &args, const fs::path &cwd) {
  return tooltest::runTool(CGRUN_PATH, args, cwd, cwd / "std");
}

inline uint32_t addModule(GraphBuilder &b, const std::string &src, const std::string &name) {
  Expected<CompileResult> r = compileOpenCL(src, name, CompileOptions{});
  INFO((r ? std::string() : r.error().message()));
  REQUIRE(r.ok());
  const uint32_t m = b.addModule(makeKernelModule(name, *r, &src, true));
  Expected<std::vector<Kernel>> ks = reflectKernels(r->spirv.data(), r->spirv.size());
  REQUIRE(ks.ok());
  for (Kernel k : *ks) {
    k.module = m;
    b.addKernel(k);
  }
  return m;
}

inline Slot slot(const std::string &name, uint64_t bytes, SlotInit init = SlotInit::External) {
  Slot s;
  s.name = name;
  s.size = bytes;
  s.init = init;
  return s;
}

// Edges from hazards, requirements, order and partitions, then the file.
inline void writeGraph(Graph g, const fs::path &path) {
  g.edges = inferHazardEdges(g);
  Error e = finalizeForFile(g);
  INFO(e.message());
  REQUIRE_FALSE(e);
  e = writeCgfFile(g, path.string());
  INFO(e.message());
  REQUIRE_FALSE(e);
}

constexpr uint32_t kN = 1024;

// y = a*x + y (k0); t = y (copy); t *= 0.5 (k2); checksum(t) (host).
// With x = 1, y = 2, a = 2: y = 4, t = 2.
inline void writeSaxpy(const fs::path &path, const std::string &hostOp = "checksum",
                       std::vector<Arg> extraHostArgs = {}, const std::string &library = "") {
  GraphBuilder b("saxpy");
  addModule(b,
            "__kernel void saxpy(__global float *y, __global const float *x, float a) {\n"
            "  size_t i = get_global_id(0);\n  y[i] = a * x[i] + y[i];\n}\n"
            "__kernel void scale(__global float *y, float s) { y[get_global_id(0)] *= s; }\n",
            "saxpy.cl");
  const uint32_t x = b.addSlot(slot("x", kN * 4));
  const uint32_t y = b.addSlot(slot("y", kN * 4));
  const uint32_t t = b.addSlot(slot("t", kN * 4, SlotInit::Transient));
  Param a;
  a.name = "a";
  a.type = ScalarType::F32;
  float two = 2.0f;
  uint32_t bits;
  std::memcpy(&bits, &two, 4);
  a.defaultBits = bits;
  const uint32_t pa = b.addParam(a);
  const Graph &g = b.graph();
  b.addKernelNode("k0", g.findKernel("saxpy"), range1D(kN, 64), {Arg::slot(y), Arg::slot(x), Arg::param(pa)});
  b.addCopy("cp", copyOp(y, 0, t, 0, kN * 4));
  float half = 0.5f;
  std::memcpy(&bits, &half, 4);
  b.addKernelNode("k2", g.findKernel("scale"), range1D(kN), {Arg::slot(t), Arg::scalar(ScalarType::F32, bits)});
  std::vector<Arg> hostArgs = {Arg::slot(t)};
  for (Arg &e : extraHostArgs) hostArgs.push_back(e);
  HostOp op;
  op.op = hostOp;
  op.library = library;
  b.addHost("sum", op, hostArgs);
  writeGraph(b.take(), path);
}

inline void writeFloats(const fs::path &path, float value, uint32_t n = kN) {
  std::vector<float> v(n, value);
  Error e = rt::writeNpyFile(path.string(), ScalarType::F32, v.data(), v.size() * 4);
  REQUIRE_FALSE(e);
}

// A scratch directory holding saxpy.cgf (writeSaxpy) and ones.npy, y4.npy, y5.npy
// (1024 floats of 1, 4 and 5); run() runs cgrun there.
struct Saxpy {
  fs::path dir;
  explicit Saxpy(const std::string &name) : dir(scratch(name)) {
    writeSaxpy(dir / "saxpy.cgf");
    writeFloats(dir / "ones.npy", 1.0f);
    writeFloats(dir / "y4.npy", 4.0f);
    writeFloats(dir / "y5.npy", 5.0f);
  }
  Result run(const std::string &args) { return cgrun(args, dir); }
};

// The inputs of saxpy.cgf: x all ones, y all twos.
inline const std::string kSaxpyInputs = "saxpy.cgf --input x=ones.npy --fill y=2 ";

} // namespace cgruntest
