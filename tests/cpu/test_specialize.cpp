// Kernels specialized for their launch's work-group shape (internal.h's
// LocalSpecialization; command_buffer.cpp compiles one for each replay node with a fixed
// range whose groups are all full): the specialized code gives the general kernel's
// results and a host reference's, on every shape the executable meets (full groups,
// shapes shared by nodes, several shapes of one kernel, a trailing partial group of
// backend-chosen groups, which must keep the general kernel), in replay and eager;
// which finalizes compile a specialization (the compiler's counter); and the key that
// keeps shapes and kernels apart in the kernel cache.
#include "cpu_test_util.h"

#include "device.h"
#include "internal.h"

#include "../common/temp_dir.h"

#include "cgraph/kernel/module_info.h"
#include "cgraph/kernel/opencl_compiler.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>

using namespace cgtest;

namespace {

// shape: reads its local sizes and group counts, and a neighbour's value across a
// barrier through `% get_local_size(0)`; loops to its local size.
// free_loop: barrier-free, loops to its local size over its group's inputs.
// sizes: barrier-free and loop-free, reads its local size and id.
const char *kSpecializeSource = R"CL(
__kernel void shape(__global const uint *in, __global uint *out, __local uint *tile) {
  size_t lx = get_local_id(0), ly = get_local_id(1);
  size_t nx = get_local_size(0), ny = get_local_size(1);
  size_t gx = get_global_id(0), gy = get_global_id(1), w = get_global_size(0);
  tile[ly * nx + lx] = in[gy * w + gx];
  barrier(CLK_LOCAL_MEM_FENCE);
  uint s = 0;
  for (size_t k = 0; k < nx; ++k) s += tile[ly * nx + k] * (uint)(k + 1);
  out[gy * w + gx] = s * 31u + tile[ly * nx + (lx + 1) % nx] +
                     (uint)(nx * 100000 + ny * 10000 + get_num_groups(0) * 10 + get_num_groups(1));
}
__kernel void free_loop(__global const uint *in, __global uint *out) {
  size_t n = get_local_size(0), base = get_global_id(0) - get_local_id(0);
  uint s = 0;
  for (size_t k = 0; k < n; ++k) s += in[base + k] * (uint)(k + 3);
  out[get_global_id(0)] = s + (uint)((get_local_id(0) + 5) % n) * 7u + (uint)n;
}
__kernel void sizes(__global uint *out) {
  out[get_global_id(0)] = (uint)(get_local_size(0) * 8 + get_local_id(0) % 7);
}
)CL";

KernelModule module() {
  auto res = compileOpenCL(kSpecializeSource, "shapes.cl", CompileOptions{});
  INFO((res ? std::string() : res.error().message()));
  REQUIRE(res.ok());
  return makeKernelModule("shapes.cl", *res, nullptr, false);
}

std::map<std::string, uint32_t> addShapeKernels(GraphBuilder &b) {
  return addKernelSource(b, kSpecializeSource, "shapes.cl");
}

uint32_t input(uint64_t i) {
  return uint32_t(i * 2654435761u + 12345u);
}

// Host references: OpenCL's shape builtins for work-item (gx, gy) of a launch.
std::vector<uint32_t> refShape(uint64_t w, uint64_t h, uint64_t lx0, uint64_t ly0) {
  std::vector<uint32_t> out(w * h);
  const uint64_t groupsX = (w + lx0 - 1) / lx0, groupsY = (h + ly0 - 1) / ly0;
  for (uint64_t gy = 0; gy < h; ++gy)
    for (uint64_t gx = 0; gx < w; ++gx) {
      const uint64_t x0 = gx / lx0 * lx0, y0 = gy / ly0 * ly0;
      const uint64_t nx = std::min(lx0, w - x0), ny = std::min(ly0, h - y0);
      const uint64_t lx = gx - x0;
      uint32_t s = 0;
      for (uint64_t k = 0; k < nx; ++k)
        s += input(gy * w + x0 + k) * uint32_t(k + 1);
      out[gy * w + gx] = s * 31u + input(gy * w + x0 + (lx + 1) % nx) +
                         uint32_t(nx * 100000 + ny * 10000 + groupsX * 10 + groupsY);
    }
  return out;
}

std::vector<uint32_t> refFreeLoop(uint64_t n0, uint64_t l0) {
  std::vector<uint32_t> out(n0);
  for (uint64_t g = 0; g < n0; ++g) {
    const uint64_t base = g / l0 * l0, n = std::min(l0, n0 - base);
    uint32_t s = 0;
    for (uint64_t k = 0; k < n; ++k)
      s += input(base + k) * uint32_t(k + 3);
    out[g] = s + uint32_t((g - base + 5) % n) * 7u + uint32_t(n);
  }
  return out;
}

struct Launch2 {
  uint64_t w, h, lx, ly;
};

// One graph of `shape` launches (each its own input and output) and `free_loop` ones;
// finalized in `mode` without the kernel cache; returns the compiles it took and checks
// every output against the host reference.
uint64_t runShapes(const std::vector<Launch2> &shapes, const std::vector<Launch2> &frees, rt::ExecMode mode) {
  GraphBuilder b("shapes");
  auto k = addShapeKernels(b);
  struct Out {
    uint32_t in, out;
    std::vector<uint32_t> ref;
  };
  std::vector<Out> outs;
  for (const Launch2 &s : shapes) {
    const uint64_t n = s.w * s.h;
    const std::string id = std::to_string(outs.size());
    Out o{addSlot(b, "in" + id, n * 4), addSlot(b, "out" + id, n * 4), refShape(s.w, s.h, s.lx, s.ly)};
    b.addKernelNode("shape" + id, k["shape"], range2D(s.w, s.h, s.lx, s.ly),
                    {Arg::slot(o.in), Arg::slot(o.out), Arg::localMem(s.lx * s.ly * 4)});
    outs.push_back(std::move(o));
  }
  for (const Launch2 &f : frees) {
    const std::string id = std::to_string(outs.size());
    Out o{addSlot(b, "in" + id, f.w * 4), addSlot(b, "out" + id, f.w * 4), refFreeLoop(f.w, f.lx)};
    b.addKernelNode("free" + id, k["free_loop"], range1D(f.w, f.lx), {Arg::slot(o.in), Arg::slot(o.out)});
    outs.push_back(std::move(o));
  }
  Graph g = b.take();
  cpu::KernelCompiler &jit = static_cast<cpu::CpuDevice &>(cpuDevice()).compiler();
  const uint64_t before = jit.compiles();
  rt::FinalizeOptions fo;
  fo.mode = mode;
  fo.useCache = false;
  auto exe = cpuDevice().finalize(g, fo);
  INFO((exe ? std::string() : exe.error().message()));
  REQUIRE(exe.ok());
  const uint64_t compiles = jit.compiles() - before;
  Buffers bufs(g);
  for (const Out &o : outs) {
    std::vector<uint32_t> in(o.ref.size());
    for (size_t i = 0; i < in.size(); ++i)
      in[i] = input(i);
    bufs.set(o.in, in);
  }
  // Twice: the second run is the one whose launches the plan has tuned.
  for (int run = 0; run < 2; ++run) {
    runOrFail(**exe, bufs.table);
    for (size_t i = 0; i < outs.size(); ++i) {
      INFO("launch " << i << ", run " << run);
      REQUIRE(bufs.get<uint32_t>(outs[i].out) == outs[i].ref);
    }
  }
  return compiles;
}

} // namespace

TEST_CASE("cpu specialization: a replay node with full groups runs its kernel compiled for its shape",
          "[cpu][specialize]") {
  // Replay: the module (once per node: no kernel cache) and one specialization.
  REQUIRE(runShapes({{32, 4, 8, 2}}, {}, rt::ExecMode::Replay) == 2);
  REQUIRE(runShapes({}, {{64, 1, 16, 1}}, rt::ExecMode::Replay) == 2);
  // Eager runs the general kernel, with the same results.
  REQUIRE(runShapes({{32, 4, 8, 2}}, {}, rt::ExecMode::Eager) == 1);
  REQUIRE(runShapes({}, {{64, 1, 16, 1}}, rt::ExecMode::Eager) == 1);
}

TEST_CASE("cpu specialization: a launch with a partial group keeps the general kernel",
          "[cpu][specialize]") {
  // A node without a local size: the backend chooses the groups (work_group.cpp's
  // kGroupItems, 16384). 20000 work-items are a full group and a partial one, whose
  // get_local_size() differs: the general kernel runs it. 32768 are two full groups.
  for (uint64_t n : {uint64_t(20000), uint64_t(32768)}) {
    INFO(n << " work-items");
    GraphBuilder b("sizes");
    auto k = addShapeKernels(b);
    const uint32_t out = addSlot(b, "out", n * 4);
    b.addKernelNode("sizes", k["sizes"], range1D(n), {Arg::slot(out)});
    Graph g = b.take();
    cpu::KernelCompiler &jit = static_cast<cpu::CpuDevice &>(cpuDevice()).compiler();
    std::vector<std::vector<uint32_t>> results;
    for (rt::ExecMode mode : {rt::ExecMode::Replay, rt::ExecMode::Eager}) {
      const uint64_t before = jit.compiles();
      rt::FinalizeOptions fo;
      fo.mode = mode;
      fo.useCache = false;
      auto exe = cpuDevice().finalize(g, fo);
      REQUIRE(exe.ok());
      REQUIRE(jit.compiles() - before == (mode == rt::ExecMode::Replay && n == 32768 ? 2 : 1));
      Buffers bufs(g);
      runOrFail(**exe, bufs.table);
      results.push_back(bufs.get<uint32_t>(out));
    }
    REQUIRE(results[0] == results[1]);
    // The last work-item's group: partial (20000 - 16384) or full.
    const uint64_t lastGroup = n == 20000 ? 20000 - 16384 : 16384;
    REQUIRE(results[0].back() == uint32_t(lastGroup * 8 + (lastGroup - 1) % 7));
  }
}

TEST_CASE("cpu specialization: shapes of one kernel in one graph are compiled once each",
          "[cpu][specialize]") {
  // Two nodes share the 8x2 shape, one is 16x1 and one 4x4; free_loop 16 (twice) and
  // 32. 7 nodes: 7 module compiles (no kernel cache) + 5 shapes.
  REQUIRE(runShapes({{32, 4, 8, 2}, {64, 2, 8, 2}, {48, 3, 16, 1}, {16, 16, 4, 4}},
                    {{64, 1, 16, 1}, {96, 1, 32, 1}, {48, 1, 16, 1}}, rt::ExecMode::Replay) == 12);
}

TEST_CASE("cpu specialization: the kernel cache keeps shapes apart", "[cpu][specialize]") {
  // Through a persistent cache of this test's own, empty at the start (ctest's cache
  // directory outlives a run): a fresh compiler finds the 8x2 specialization on disk,
  // compiles the 16x1 one (a different key), and each runs as its own shape. Every
  // compiler gets the directory through its cache options.
  cgraph::test::TempDir dir("cgraph-specialize");
  const rt::KernelCacheOptions cache{dir.str(), true};
  const KernelModule m = module();
  cpu::LocalSpecialization a{"shape", {8, 2, 1}}, c{"shape", {16, 1, 1}};
  {
    cpu::KernelCompiler jit(std::nullopt, cache);
    REQUIRE(jit.getSpecialized(m, a, true).ok());
  }
  cpu::KernelCompiler jit(std::nullopt, cache);
  auto fromDisk = jit.getSpecialized(m, a, true);
  REQUIRE(fromDisk.ok());
  REQUIRE(jit.compiles() == 0);
  auto other = jit.getSpecialized(m, c, true);
  REQUIRE(other.ok());
  REQUIRE(jit.compiles() == 1);
  auto again = jit.getSpecialized(m, c, true);
  REQUIRE(again.ok());
  REQUIRE(jit.compiles() == 1);
  REQUIRE(jit.memoryHits() == 1);
  // The specialized modules hold that kernel only.
  REQUIRE((*other)->kernels.size() == 1);
  REQUIRE((*other)->find("free_loop") == nullptr);
  // Two kernels of the module specialized for one shape are two entries: a fresh
  // compiler finds both on disk (mlp's layernorm and softmax at 256 once took turns
  // overwriting one entry, and each finalize compiled again).
  {
    cpu::KernelCompiler first(std::nullopt, cache);
    REQUIRE(first.getSpecialized(m, {"free_loop", {16, 1, 1}}, true).ok());
    REQUIRE(first.getSpecialized(m, {"sizes", {16, 1, 1}}, true).ok());
    REQUIRE(first.compiles() == 2);
    cpu::KernelCompiler second(std::nullopt, cache);
    auto f = second.getSpecialized(m, {"free_loop", {16, 1, 1}}, true);
    auto z = second.getSpecialized(m, {"sizes", {16, 1, 1}}, true);
    REQUIRE(f.ok());
    REQUIRE(z.ok());
    REQUIRE(second.compiles() == 0);
    REQUIRE((*f)->find("free_loop"));
    REQUIRE((*z)->find("sizes"));
  }

  for (auto [spec, mod] : {std::pair{a, *fromDisk}, std::pair{c, *other}}) {
    const cpu::JitKernel *k = mod->find("shape");
    REQUIRE(k);
    const uint64_t w = spec.local[0] * 2, h = spec.local[1] * 3;
    std::vector<uint32_t> in(w * h), out(w * h, 0);
    for (size_t i = 0; i < in.size(); ++i)
      in[i] = input(i);
    const uint64_t args[3] = {uint64_t(uintptr_t(in.data())), uint64_t(uintptr_t(out.data())), 0};
    cpu::Launch l;
    l.dims = 2;
    l.global[0] = w;
    l.global[1] = h;
    l.local[0] = spec.local[0];
    l.local[1] = spec.local[1];
    REQUIRE(!cpu::runKernel(*k, args, spec.local[0] * spec.local[1] * 4, l));
    REQUIRE(out == refShape(w, h, spec.local[0], spec.local[1]));
  }
}

TEST_CASE("cpu specialization: a kernel the module lacks is an error", "[cpu][specialize]") {
  cpu::KernelCompiler jit;
  auto r = jit.getSpecialized(module(), cpu::LocalSpecialization{"nope", {8, 1, 1}}, false);
  REQUIRE(!r.ok());
  REQUIRE_THAT(r.error().message(), Catch::Matchers::Contains("has no kernel 'nope'"));
}
