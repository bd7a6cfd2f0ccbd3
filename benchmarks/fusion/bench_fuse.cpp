// bench_fuse [--nodes N]... [--max-group K]: the time cgraph::fusion::fuseGraph takes
// for --auto (chain planning, the fused kernels' IR, rewriting the graph) on time-loop
// graphs b = f(a); a = g(b) of N kernel nodes (default 1000, 10000 and 100000), built
// with the GraphBuilder API, b named scratch. Prints one row per size: the fused groups,
// the total time and the time per node, which stays about constant when fusion scales
// linearly. No assertions on time.
#include "cgraph/fusion/fusion.h"
#include "cgraph/graph/builder.h"
#include "cgraph/graph/hazards.h"
#include "cgraph/graph/order.h"
#include "cgraph/kernel/module_info.h"
#include "cgraph/kernel/opencl_compiler.h"
#include "cgraph/kernel/spirv.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

using namespace cgraph;
using Clock = std::chrono::steady_clock;

namespace {

const char *kSource = R"(
__kernel void step_f(__global const float *a, __global float *b) {
  size_t i = get_global_id(0);
  b[i] = a[i] * 0.5f + 1.0f;
}
__kernel void step_g(__global const float *b, __global float *a) {
  size_t i = get_global_id(0);
  a[i] = b[i] - 0.25f;
}
)";

[[noreturn]] void die(const std::string &what) {
  std::fprintf(stderr, "bench_fuse: %s\n", what.c_str());
  std::exit(1);
}

// N kernel nodes alternating step_f and step_g over 4096 floats, with their hazard edges.
Graph timeLoop(const CompileResult &cr, const std::vector<Kernel> &kernels, uint32_t n) {
  GraphBuilder b("timeloop");
  uint32_t module = b.addModule(makeKernelModule("timeloop.cl", cr, nullptr, false));
  uint32_t kf = kNone, kg = kNone;
  for (Kernel k : kernels) {
    k.module = module;
    uint32_t idx = b.addKernel(k);
    if (k.name == "step_f") kf = idx;
    if (k.name == "step_g") kg = idx;
  }
  if (kf == kNone || kg == kNone) die("kernels missing");
  Slot a, s;
  a.name = "a";
  a.size = 4096 * 4;
  s.name = "b";
  s.size = 4096 * 4;
  s.init = SlotInit::Transient;
  uint32_t sa = b.addSlot(a), sb = b.addSlot(s);
  for (uint32_t i = 0; i < n; ++i) {
    bool f = i % 2 == 0;
    b.addKernelNode((f ? "f" : "g") + std::to_string(i / 2), f ? kf : kg, range1D(4096, 64),
                    {Arg::slot(f ? sa : sb), Arg::slot(f ? sb : sa)});
  }
  Graph g = b.take();
  g.edges = inferHazardEdges(g);
  if (Error e = finalizeForFile(g)) die(e.message());
  return g;
}

} // namespace

int main(int argc, char **argv) {
  std::vector<uint32_t> sizes;
  fusion::FuseOptions o;
  o.autoFuse = true;
  o.scratch = {"b"};
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--nodes" && i + 1 < argc)
      sizes.push_back(uint32_t(std::strtoul(argv[++i], nullptr, 10)));
    else if (arg == "--max-group" && i + 1 < argc)
      o.maxGroupKernels = uint32_t(std::strtoul(argv[++i], nullptr, 10));
    else
      die("usage: bench_fuse [--nodes N]... [--max-group K]");
  }
  if (sizes.empty()) sizes = {1000, 10000, 100000};
  Expected<CompileResult> cr = compileOpenCL(kSource, "timeloop.cl", CompileOptions{});
  if (!cr) die(cr.error().message());
  Expected<std::vector<Kernel>> ks = reflectKernels(cr->spirv.data(), cr->spirv.size());
  if (!ks) die(ks.error().message());
  std::printf("cgfuse --auto on a time loop b = f(a); a = g(b) (b scratch), max %u kernels per "
              "group\n",
              o.maxGroupKernels);
  std::printf("%8s %8s %8s %10s %12s\n", "nodes", "edges", "groups", "total ms", "us per node");
  for (uint32_t n : sizes) {
    Graph g = timeLoop(*cr, *ks, n);
    size_t edges = g.edges.size();
    auto t0 = Clock::now();
    Expected<fusion::FuseReport> rep = fusion::fuseGraph(g, o);
    auto t1 = Clock::now();
    if (!rep) die(rep.error().message());
    double ms = std::chrono::duration<double, std::milli>(t1 - t0).count();
    std::printf("%8u %8zu %8zu %10.1f %12.2f\n", n, edges, rep->fused.size(), ms, 1000.0 * ms / n);
  }
  return 0;
}
