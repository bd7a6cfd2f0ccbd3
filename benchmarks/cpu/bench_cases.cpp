// bench_cases [-n ITERATIONS] DIR...: every `// cgtest:` case of the kernel test files
// in DIR (tests/cpu/kernels, tests/opencl/kernels), cgraph's cpu backend next to PoCL
// (through the opencl backend), in one process, one table. Each case is one graph of one
// kernel node with the case's own range and deterministic inputs (the manifest's
// generators, tests/opencl/kernel_manifest.h): the test sizes, so small launches.
// Per case: the node's time (profiled replay on cpu, OpenCL event start/end on PoCL;
// median over the iterations) and cpu/pocl. A case that does not build or run on one
// side (PoCL 3.1 lacks mem_fence and half_ builtins) prints "-" there.
#include "bench_common.h"

#include "cgraph/graph/builder.h"
#include "cgraph/kernel/module_info.h"
#include "cgraph/kernel/opencl_compiler.h"
#include "cgraph/kernel/spirv.h"
#include "kernel_manifest.h"

#include <algorithm>
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

// Median node time in us, or a negative value when the case fails on `dev`.
double measure(rt::Device &dev, const Graph &g, const cltest::ManifestCase &c, int iters) {
  rt::FinalizeOptions fo;
  fo.mode = rt::ExecMode::Replay;
  auto exe = dev.finalize(g, fo);
  if (!exe) return -1;
  std::vector<std::unique_ptr<rt::Buffer>> bufs;
  rt::BindingTable t;
  uint64_t seed = std::hash<std::string>()(c.label());
  for (size_t i = 0; i < c.args.size(); ++i) {
    if (c.args[i].kind != cltest::ManifestArg::Buffer) continue;
    std::vector<uint8_t> in = cltest::makeInput(c.args[i], seed + i);
    auto buf = dev.allocate(std::max<size_t>(in.size(), 4), 64);
    if (!buf) return -1;
    if (Error e = dev.write(**buf, 0, in.data(), in.size())) return -1;
    t.slots.push_back({buf->get(), 0, 0});
    bufs.push_back(std::move(*buf));
  }
  rt::SubmitOptions so;
  so.profile = true;
  std::vector<double> us;
  for (int i = 0; i <= iters; ++i) { // the first run warms up (PoCL builds at first launch)
    auto ev = (*exe)->enqueue(t, {}, so);
    if (!ev) return -1;
    if (Error e = (*ev)->wait()) return -1;
    const auto timings = (*ev)->nodeTimings();
    if (timings.empty()) return -1;
    if (i) us.push_back(double(timings[0].endNs - timings[0].startNs) / 1e3);
  }
  return bench::stat(us);
}

} // namespace

int main(int argc, char **argv) {
  int iters = 11;
  const std::vector<std::string> dirs = bench::parseArgs(argc, argv, "bench_cases", "DIR", &iters);
  bench::CpuAndPocl devs = bench::openCpuAndPocl("bench_cases");
  rt::Device *pocl = devs.pocl;
  std::printf("%s of %d runs; one node per case, its time in us\n", bench::statName(), iters);
  std::printf("%-44s %10s %10s %9s\n", "case", "cpu", "pocl", "cpu/pocl");
  double worst = 0;
  std::string worstCase;
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
        double cu = measure(*devs.cpu, *g, c, iters);
        double pu = pocl ? measure(*pocl, *g, c, iters) : -1;
        std::string label = p.filename().string() + " " + c.kernel;
        char cb[32], pb[32], rb[32];
        std::snprintf(cb, sizeof cb, cu < 0 ? "-" : "%.1f", cu);
        std::snprintf(pb, sizeof pb, pu < 0 ? "-" : "%.1f", pu);
        std::snprintf(rb, sizeof rb, cu < 0 || pu <= 0 ? "-" : "%.2f", cu / pu);
        std::printf("%-44s %10s %10s %9s\n", label.c_str(), cb, pb, rb);
        if (cu >= 0 && pu > 0 && cu / pu > worst) {
          worst = cu / pu;
          worstCase = label;
        }
      }
    }
  }
  if (!worstCase.empty()) std::printf("highest cpu/pocl: %.2f (%s)\n", worst, worstCase.c_str());
  return 0;
}
