// bench_cases [-n ITERATIONS] DIR...: every `// cgtest:` case of the kernel test files
// in DIR (tests/cpu/kernels, tests/opencl/kernels), cgraph's cpu backend next to PoCL
// (through the opencl backend), in one process, one table. Each case is one graph of one
// kernel node with the case's own range and deterministic inputs (the manifest's
// generators, tests/opencl/kernel_manifest.h): the test sizes, so small launches.
// Per case, two measures (median over the iterations, or the minimum with --min):
//   wall: enqueue + wait of the one-node graph's replay on the host clock, the same
//         measure on both sides (it includes each side's submission cost);
//   node: the node's own time from profiling: on cpu the host clock around the node
//         inside the run, on PoCL the OpenCL event's start/end, which leaves PoCL's
//         submission out (tiny launches look slower on cpu by that alone).
// and cpu/pocl for each. A case that does not build or run on one
// side (PoCL 3.1 lacks mem_fence and half_ builtins) prints "-" there.
#include "bench_common.h"

#include "cgraph/graph/builder.h"
#include "cgraph/kernel/module_info.h"
#include "cgraph/kernel/opencl_compiler.h"
#include "cgraph/kernel/spirv.h"
#include "kernel_manifest.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

using namespace cgraph;
namespace fs = std::filesystem;

namespace {

[[noreturn]] void die(const std::string &what) { bench::die("bench_cases", what); }

Expected<Graph> caseGraph(const std::string &source, const cltest::ManifestCase &c) {
  const std::string file = fs::path(c.file).filename().string();
  Expected<CompileResult> r = compileOpenCL(source, file, CompileOptions{});
  if (!r) return r.error();
  GraphBuilder b(c.label());
  uint32_t mod = b.addModule(makeKernelModule(file, *r, &source, false));
  Expected<std::vector<Kernel>> ks = reflectKernels(r->spirv.data(), r->spirv.size());
  if (!ks) return ks.error();
  uint32_t k = kNone;
  for (Kernel kern : *ks) {
    kern.module = mod;
    std::string name = kern.name;
    uint32_t idx = b.addKernel(std::move(kern));
    if (name == c.kernel) k = idx;
  }
  if (k == kNone) return makeError("no kernel '" + c.kernel + "'");
  std::vector<Arg> args;
  for (const cltest::ManifestArg &a : c.args) {
    switch (a.kind) {
    case cltest::ManifestArg::Buffer: {
      Slot s;
      s.name = a.name;
      s.size = a.count * scalarSize(a.type);
      s.init = SlotInit::External;
      args.push_back(Arg::slot(b.addSlot(s)));
      break;
    }
    case cltest::ManifestArg::Scalar: args.push_back(Arg::scalar(a.type, a.bits)); break;
    case cltest::ManifestArg::Local: args.push_back(Arg::localMem(a.bytes)); break;
    }
  }
  NDRange nr;
  nr.dims = c.dims;
  for (uint32_t d = 0; d < 3; ++d) {
    nr.global[d].value = c.global[d];
    nr.local[d].value = c.local[d];
    nr.offset[d].value = c.offset[d];
  }
  b.addKernelNode(c.kernel, k, nr, args);
  return b.take();
}

struct Times {
  double wall = -1, node = -1; // us; negative when the case fails on the device
};

// Wall and node times (see the top), or negative values when the case fails on `dev`.
Times measure(rt::Device &dev, const Graph &g, const cltest::ManifestCase &c, int iters) {
  rt::FinalizeOptions fo;
  fo.mode = rt::ExecMode::Replay;
  auto exe = dev.finalize(g, fo);
  if (!exe) return {};
  std::vector<std::unique_ptr<rt::Buffer>> bufs;
  rt::BindingTable t;
  uint64_t seed = std::hash<std::string>()(c.label());
  for (size_t i = 0; i < c.args.size(); ++i) {
    if (c.args[i].kind != cltest::ManifestArg::Buffer) continue;
    std::vector<uint8_t> in = cltest::makeInput(c.args[i], seed + i);
    auto buf = dev.allocate(std::max<size_t>(in.size(), 4), 64);
    if (!buf) return {};
    if (Error e = dev.write(**buf, 0, in.data(), in.size())) return {};
    t.slots.push_back({buf->get(), 0, 0});
    bufs.push_back(std::move(*buf));
  }
  rt::SubmitOptions so;
  so.profile = true;
  std::vector<double> us, wall;
  for (int i = 0; i <= iters; ++i) { // the first run warms up (PoCL builds at first launch)
    auto ev = (*exe)->enqueue(t, {}, so);
    if (!ev) return {};
    if (Error e = (*ev)->wait()) return {};
    const auto timings = (*ev)->nodeTimings();
    if (timings.empty()) return {};
    if (i) us.push_back(double(timings[0].endNs - timings[0].startNs) / 1e3);
  }
  for (int i = 0; i <= iters; ++i) { // without profiling
    auto t0 = std::chrono::steady_clock::now();
    auto ev = (*exe)->enqueue(t, {}, {});
    if (!ev) return {};
    if (Error e = (*ev)->wait()) return {};
    if (i) wall.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
  }
  return {bench::stat(wall), bench::stat(us)};
}

} // namespace

int main(int argc, char **argv) {
  int iters = 11;
  const std::vector<std::string> dirs = bench::parseArgs(argc, argv, "bench_cases", "DIR", &iters);
  bench::CpuAndPocl devs = bench::openCpuAndPocl("bench_cases");
  rt::Device *pocl = devs.pocl;
  std::printf("%s of %d runs; one node per case, its time in us\n", bench::statName(), iters);
  std::printf("%-44s %9s %9s %6s %9s %9s %6s\n", "case", "cpu wall", "pocl wall", "ratio", "cpu node",
              "pocl node", "ratio");
  double worst = 0, worstNode = 0;
  std::string worstCase, worstNodeCase;
  int above = 0, aboveNode = 0, both = 0;
  for (const std::string &dir : dirs) {
    std::vector<fs::path> files;
    for (const auto &e : fs::directory_iterator(dir))
      if (e.path().extension() == ".cl") files.push_back(e.path());
    std::sort(files.begin(), files.end());
    for (const fs::path &p : files) {
      std::ifstream f(p);
      std::stringstream ss;
      ss << f.rdbuf();
      auto cases = cltest::parseManifest(ss.str(), p.string());
      if (!cases) die(cases.error().message());
      for (const cltest::ManifestCase &c : *cases) {
        auto g = caseGraph(ss.str(), c);
        if (!g) die(c.label() + ": " + g.error().message());
        Times cu = measure(*devs.cpu, *g, c, iters);
        Times pu = pocl ? measure(*pocl, *g, c, iters) : Times{};
        std::string label = p.filename().string() + " " + c.kernel;
        auto num = [](char *b, size_t n, double v) { std::snprintf(b, n, v < 0 ? "-" : "%.1f", v); };
        auto ratio = [](char *b, size_t n, double a, double d) {
          std::snprintf(b, n, a < 0 || d <= 0 ? "-" : "%.2f", a / d);
        };
        char cw[32], pw[32], rw[32], cn[32], pn[32], rn[32];
        num(cw, sizeof cw, cu.wall);
        num(pw, sizeof pw, pu.wall);
        ratio(rw, sizeof rw, cu.wall, pu.wall);
        num(cn, sizeof cn, cu.node);
        num(pn, sizeof pn, pu.node);
        ratio(rn, sizeof rn, cu.node, pu.node);
        std::printf("%-44s %9s %9s %6s %9s %9s %6s\n", label.c_str(), cw, pw, rw, cn, pn, rn);
        if (cu.wall >= 0 && pu.wall > 0) {
          ++both;
          if (cu.wall > pu.wall) ++above;
          if (cu.node > pu.node) ++aboveNode;
          if (cu.wall / pu.wall > worst) {
            worst = cu.wall / pu.wall;
            worstCase = label;
          }
          if (cu.node / pu.node > worstNode) {
            worstNode = cu.node / pu.node;
            worstNodeCase = label;
          }
        }
      }
    }
  }
  if (!worstCase.empty()) {
    std::printf("cases above PoCL: wall %d of %d, node %d of %d\n", above, both, aboveNode, both);
    std::printf("highest cpu/pocl: wall %.2f (%s), node %.2f (%s)\n", worst, worstCase.c_str(), worstNode,
                worstNodeCase.c_str());
  }
  return 0;
}
