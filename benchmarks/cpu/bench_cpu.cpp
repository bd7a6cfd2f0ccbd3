// bench_cpu [iterations]: figures for the CPU backend (and PoCL through the OpenCL
// backend when built in), on the kernels of tests/cpu/kernels/basic.cl:
//   - 1000-node chain of axpy(4096): eager, replay, replay with a new binding table
//     each iteration; microseconds per node (median of the iterations);
//   - axpy over 16M floats: GB/s (12 bytes per element);
//   - 512x512 matmul: GFLOP/s;
//   - cold finalize of basic.cl (compile + JIT).
#include "cgraph/backends/cpu/cpu_backend.h"
#include "cgraph/graph/builder.h"
#include "cgraph/kernel/module_info.h"
#include "cgraph/kernel/opencl_compiler.h"
#include "cgraph/kernel/spirv.h"
#ifdef CGRAPH_HAVE_OPENCL_BACKEND
#include "cgraph/backends/opencl/opencl_backend.h"
#endif

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>

using namespace cgraph;
using Clock = std::chrono::steady_clock;

namespace {

[[noreturn]] void die(const std::string &what) {
  std::fprintf(stderr, "bench_cpu: %s\n", what.c_str());
  std::exit(1);
}

std::map<std::string, uint32_t> addKernels(GraphBuilder &b) {
  std::ifstream in(std::string(CGRAPH_SOURCE_DIR) + "/tests/cpu/kernels/basic.cl");
  std::stringstream ss;
  ss << in.rdbuf();
  auto res = compileOpenCL(ss.str(), "basic.cl", CompileOptions{});
  if (!res) die(res.error().message());
  auto ks = reflectKernels(res->spirv.data(), res->spirv.size());
  if (!ks) die(ks.error().message());
  std::string src = ss.str();
  uint32_t m = b.addModule(makeKernelModule("basic.cl", *res, &src, true));
  std::map<std::string, uint32_t> out;
  for (Kernel k : *ks) {
    k.module = m;
    std::string n = k.name;
    out[n] = b.addKernel(std::move(k));
  }
  return out;
}

uint32_t slot(GraphBuilder &b, const char *name, uint64_t bytes) {
  Slot s;
  s.name = name;
  s.size = bytes;
  return b.addSlot(s);
}

uint64_t f32(float f) { uint32_t u; std::memcpy(&u, &f, 4); return u; }

double seconds(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); }

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

struct Bound {
  std::vector<std::unique_ptr<rt::Buffer>> bufs;
  rt::BindingTable table;
};

Bound bind(rt::Device &dev, const Graph &g, float value) {
  Bound b;
  for (const Slot &s : g.slots) {
    auto buf = dev.allocate(s.size, 64);
    if (!buf) die(buf.error().message());
    std::vector<float> init(s.size / 4, value);
    if (Error e = dev.write(**buf, 0, init.data(), s.size)) die(e.message());
    b.table.slots.push_back(rt::Binding{buf->get(), 0, 0});
    b.bufs.push_back(std::move(*buf));
  }
  return b;
}

std::unique_ptr<rt::Executable> finalize(rt::Device &dev, const Graph &g, rt::ExecMode mode, double *secs = nullptr) {
  rt::FinalizeOptions o;
  o.mode = mode;
  auto t0 = Clock::now();
  auto exe = dev.finalize(g, o);
  if (secs) *secs = seconds(t0, Clock::now());
  if (!exe) die(exe.error().message());
  return std::move(*exe);
}

double runOnce(rt::Executable &exe, const rt::BindingTable &t) {
  auto t0 = Clock::now();
  auto ev = exe.enqueue(t, {});
  if (!ev) die(ev.error().message());
  if (Error e = (*ev)->wait()) die(e.message());
  return seconds(t0, Clock::now());
}

struct Options {
  int iters = 11;
  std::string only; // "" = every section, else finalize | chain | axpy | matmul
  bool cpu = true, opencl = true;
  bool want(const char *section) const { return only.empty() || only == section; }
};

void bench(rt::Device &dev, const char *label, const Options &opt) {
  const int iters = opt.iters;
  std::printf("== %s: %s\n", label, dev.info().name.c_str());
  // Cold finalize: a fresh graph whose module is new to this device.
  if (opt.want("finalize")) {
    GraphBuilder b("cold");
    auto k = addKernels(b);
    uint32_t x = slot(b, "x", 1024 * 4), y = slot(b, "y", 1024 * 4);
    b.addKernelNode("axpy", k["axpy"], range1D(1024), {Arg::scalar(ScalarType::F32, f32(2.0f)), Arg::slot(x), Arg::slot(y)});
    double secs;
    finalize(dev, b.take(), rt::ExecMode::Replay, &secs);
    std::printf("  finalize basic.cl (cold compile)        %10.1f ms\n", secs * 1e3);
  }
  // Chain of 1000 axpy(4096).
  if (opt.want("chain")) {
    const uint32_t n = 4096, nodes = 1000;
    GraphBuilder b("chain");
    auto k = addKernels(b);
    uint32_t x = slot(b, "x", n * 4), y = slot(b, "y", n * 4);
    uint32_t prev = kNone;
    for (uint32_t i = 0; i < nodes; ++i) {
      uint32_t id = b.addKernelNode("axpy" + std::to_string(i), k["axpy"], range1D(n),
                                    {Arg::scalar(ScalarType::F32, f32(1e-3f)), Arg::slot(x), Arg::slot(y)});
      if (prev != kNone) b.addEdge(prev, id);
      prev = id;
    }
    Graph g = b.take();
    auto replay = finalize(dev, g, rt::ExecMode::Replay);
    auto eager = finalize(dev, g, rt::ExecMode::Eager);
    Bound b1 = bind(dev, g, 1.0f), b2 = bind(dev, g, 2.0f);
    std::vector<double> te, tr, tb;
    runOnce(*replay, b1.table);
    runOnce(*eager, b1.table);
    for (int i = 0; i < iters; ++i) {
      te.push_back(runOnce(*eager, b1.table));
      tr.push_back(runOnce(*replay, b1.table));
      tb.push_back(runOnce(*replay, (i & 1) ? b1.table : b2.table));
    }
    std::printf("  chain 1000 x axpy(4096) eager           %10.2f us/node\n", median(te) * 1e6 / nodes);
    std::printf("  chain 1000 x axpy(4096) replay          %10.2f us/node\n", median(tr) * 1e6 / nodes);
    std::printf("  chain 1000 x axpy(4096) replay+rebind   %10.2f us/node\n", median(tb) * 1e6 / nodes);
    // The same work as one node replayed 1000 times would be: kernel time alone.
    GraphBuilder b1n("one");
    auto k1 = addKernels(b1n);
    uint32_t x1 = slot(b1n, "x", n * 4), y1 = slot(b1n, "y", n * 4);
    b1n.addKernelNode("axpy", k1["axpy"], range1D(n), {Arg::scalar(ScalarType::F32, f32(1e-3f)), Arg::slot(x1), Arg::slot(y1)});
    Graph g1 = b1n.take();
    auto one = finalize(dev, g1, rt::ExecMode::Replay);
    Bound bo = bind(dev, g1, 1.0f);
    std::vector<double> t1;
    for (int i = 0; i < 200; ++i) t1.push_back(runOnce(*one, bo.table));
    std::printf("  single axpy(4096) node, enqueue+wait    %10.2f us\n", median(t1) * 1e6);
  }
  // Throughput: axpy over 16M floats, 512x512 matmul.
  if (opt.want("axpy")) {
    const uint32_t n = 16u << 20;
    GraphBuilder b("axpy16m");
    auto k = addKernels(b);
    uint32_t x = slot(b, "x", uint64_t(n) * 4), y = slot(b, "y", uint64_t(n) * 4);
    b.addKernelNode("axpy", k["axpy"], range1D(n), {Arg::scalar(ScalarType::F32, f32(1e-3f)), Arg::slot(x), Arg::slot(y)});
    Graph g = b.take();
    auto exe = finalize(dev, g, rt::ExecMode::Replay);
    Bound bb = bind(dev, g, 1.0f);
    runOnce(*exe, bb.table);
    std::vector<double> t;
    for (int i = 0; i < std::max(iters, 5); ++i) t.push_back(runOnce(*exe, bb.table));
    double s = median(t);
    std::printf("  axpy 16M floats                         %10.2f ms  %7.2f GB/s\n", s * 1e3, 12.0 * n / s / 1e9);
  }
  if (opt.want("matmul")) {
    const int n = 512;
    GraphBuilder b("matmul");
    auto k = addKernels(b);
    uint32_t a = slot(b, "a", n * n * 4), bm = slot(b, "b", n * n * 4), c = slot(b, "c", n * n * 4);
    b.addKernelNode("matmul", k["matmul"], range2D(n, n), {Arg::slot(a), Arg::slot(bm), Arg::slot(c), Arg::scalar(ScalarType::I32, n)});
    Graph g = b.take();
    auto exe = finalize(dev, g, rt::ExecMode::Replay);
    Bound bb = bind(dev, g, 0.5f);
    runOnce(*exe, bb.table);
    std::vector<double> t;
    for (int i = 0; i < std::max(iters, 5); ++i) t.push_back(runOnce(*exe, bb.table));
    double s = median(t);
    std::printf("  matmul 512x512                          %10.2f ms  %7.2f GFLOP/s\n", s * 1e3, 2.0 * n * n * n / s / 1e9);
  }
}

} // namespace

// bench_cpu [ITERATIONS] [--only finalize|chain|axpy|matmul] [--backend cpu|opencl]
int main(int argc, char **argv) {
  Options opt;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--only" && i + 1 < argc) opt.only = argv[++i];
    else if (a == "--backend" && i + 1 < argc) {
      std::string b = argv[++i];
      opt.cpu = b == "cpu";
      opt.opencl = b == "opencl";
    } else if (std::atoi(a.c_str()) > 0) opt.iters = std::atoi(a.c_str());
    else die("unknown argument '" + a + "' (ITERATIONS, --only SECTION, --backend cpu|opencl)");
  }
  if (opt.cpu) {
    auto cpuBackend = cpu::makeCpuBackend();
    auto dev = cpuBackend->device(0);
    if (!dev) die(dev.error().message());
    bench(**dev, "cgraph cpu", opt);
  }
  if (!opt.opencl) return 0;
#ifdef CGRAPH_HAVE_OPENCL_BACKEND
  auto ocl = opencl::makeOpenCLBackend();
  rt::BackendProbe p = ocl->probe();
  if (!p.available) {
    std::printf("== opencl: not available (%s)\n", p.reason.c_str());
    return 0;
  }
  auto od = ocl->device(0);
  if (!od) die(od.error().message());
  bench(**od, "opencl (PoCL)", opt);
#else
  std::printf("== opencl backend not built: PoCL figures come from benchmarks/opencl\n");
#endif
  return 0;
}
