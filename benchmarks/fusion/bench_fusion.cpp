// bench_fusion [--elements N] [--runs R]: the 4-kernel elementwise chain of
// tests/fusion/data/kernels/chain.cl (scale, addc, square, addv; three transient
// intermediates) over N floats (default 64M) on the cpu backend, side by side:
//   memcpy       std::memcpy of one N-float buffer (the copy bandwidth of this machine)
//   unfused      4 kernel nodes, intermediates in global memory
//   fused        cgfuse's kernel without internalization (--no-internalize)
//   fused+priv   cgfuse's kernel with the intermediates promoted to private memory
// Each line: min and median of R runs after one warm-up, and the effective bandwidth
// counted as the minimal traffic of the computation (read x, write y: 2 * N * 4 bytes;
// for memcpy the bytes read plus written), so the columns compare directly.
#include "cgraph/backends/cpu/cpu_backend.h"
#include "cgraph/fusion/fusion.h"
#include "cgraph/graph/order.h"
#include "cgraph/kernel/module_info.h"
#include "cgraph/kernel/opencl_compiler.h"
#include "cgraph/kernel/spirv.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

using namespace cgraph;
using Clock = std::chrono::steady_clock;

namespace {

[[noreturn]] void die(const std::string &what) {
  std::fprintf(stderr, "bench_fusion: %s\n", what.c_str());
  std::exit(1);
}

uint64_t f32bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

Graph chainGraph(uint64_t n) {
  std::string path = std::string(CGRAPH_SOURCE_DIR) + "/tests/fusion/data/kernels/chain.cl";
  std::ifstream in(path);
  if (!in) die("cannot read " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  Expected<CompileResult> cr = compileOpenCL(ss.str(), "chain.cl", CompileOptions{});
  if (!cr) die(cr.error().message());
  Graph g;
  g.name = "chain4";
  g.modules.push_back(makeKernelModule("chain.cl", *cr, nullptr, false));
  Expected<std::vector<Kernel>> ks = reflectKernels(cr->spirv.data(), cr->spirv.size());
  if (!ks) die(ks.error().message());
  for (Kernel k : *ks) {
    k.module = 0;
    g.kernels.push_back(k);
  }
  auto slot = [&](const char *name, SlotInit init) {
    Slot s;
    s.name = name;
    s.size = n * 4;
    s.alignment = 64;
    s.init = init;
    g.slots.push_back(s);
    return uint32_t(g.slots.size() - 1);
  };
  uint32_t x = slot("x", SlotInit::External), y = slot("y", SlotInit::External);
  uint32_t t1 = slot("t1", SlotInit::Transient), t2 = slot("t2", SlotInit::Transient),
           t3 = slot("t3", SlotInit::Transient);
  auto node = [&](const char *name, const char *kernel, std::vector<Arg> args) {
    Node nd;
    nd.name = name;
    nd.kind = NodeKind::Kernel;
    nd.kernel = g.findKernel(kernel);
    nd.range.dims = 1;
    nd.range.global[0].value = n;
    nd.range.local[0].value = 256;
    nd.args = std::move(args);
    g.nodes.push_back(nd);
    if (g.nodes.size() > 1)
      g.edges.push_back({uint32_t(g.nodes.size() - 2), uint32_t(g.nodes.size() - 1)});
  };
  node("k1", "scale", {Arg::slot(t1), Arg::slot(x), Arg::scalar(ScalarType::F32, f32bits(2.0f))});
  node("k2", "addc", {Arg::slot(t2), Arg::slot(t1), Arg::scalar(ScalarType::F32, f32bits(0.5f))});
  node("k3", "square", {Arg::slot(t3), Arg::slot(t2)});
  node("k4", "addv", {Arg::slot(y), Arg::slot(t3), Arg::slot(x)});
  if (Error e = finalizeForFile(g)) die(e.message());
  return g;
}

struct Figures {
  double minMs, medMs;
};

Figures stats(std::vector<double> t) {
  std::sort(t.begin(), t.end());
  return {t.front(), t[t.size() / 2]};
}

} // namespace

int main(int argc, char **argv) {
  uint64_t n = uint64_t(64) << 20;
  int runs = 5;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--elements" && i + 1 < argc)
      n = std::strtoull(argv[++i], nullptr, 10);
    else if (a == "--runs" && i + 1 < argc)
      runs = std::max(1, std::atoi(argv[++i]));
    else
      die("usage: bench_fusion [--elements N] [--runs R]");
  }
  if (n == 0 || n % 256) die("--elements must be a positive multiple of 256");
  const double bytes = double(n) * 4;

  // the copy bandwidth, same process, same buffer size
  std::vector<double> copyMs;
  {
    std::vector<float> a(n, 1.0f), b(n, 0.0f);
    for (int r = 0; r <= runs; ++r) {
      auto t0 = Clock::now();
      std::memcpy(b.data(), a.data(), n * 4);
      auto t1 = Clock::now();
      if (r) copyMs.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    }
    if (b[n - 1] != 1.0f) die("memcpy check failed");
  }

  auto backend = cpu::makeCpuBackend();
  auto dev = backend->device(0);
  if (!dev) die(dev.error().message());
  struct Variant {
    const char *name;
    bool fuse, internalize;
  } variants[] = {{"unfused", false, false}, {"fused", true, false}, {"fused+priv", true, true}};
  std::printf(
      "4-kernel elementwise chain, %llu floats (%.0f MiB per buffer), cpu backend, %d runs\n",
      (unsigned long long)n, bytes / (1 << 20), runs);
  Figures c = stats(copyMs);
  std::printf("%-12s %7s %9s %9s %12s\n", "what", "nodes", "min ms", "med ms", "GB/s (min)");
  std::printf("%-12s %7s %9.2f %9.2f %12.2f\n", "memcpy", "-", c.minMs, c.medMs,
              2 * bytes / c.minMs / 1e6);
  std::vector<float> reference;
  for (const Variant &v : variants) {
    Graph g = chainGraph(n);
    if (v.fuse) {
      fusion::FuseOptions o;
      o.groups.push_back(fusion::GroupRequest({"k1", "k2", "k3", "k4"}));
      o.internalize = v.internalize;
      o.scratch = {"t1", "t2", "t3"}; // the intermediates are scratch: they may leave
      Expected<fusion::FuseReport> rep = fusion::fuseGraph(g, o);
      if (!rep) die(rep.error().message());
      if (rep->fused.size() != 1) die(std::string(v.name) + ": the chain was not fused");
    }
    auto exe = (*dev)->finalize(g, rt::FinalizeOptions{});
    if (!exe) die(exe.error().message());
    std::vector<std::unique_ptr<rt::Buffer>> bufs;
    rt::BindingTable table;
    rt::Buffer *xb = nullptr, *yb = nullptr;
    for (const Slot &s : g.slots) {
      if (s.init != SlotInit::External) {
        table.slots.push_back({});
        continue;
      }
      auto b = (*dev)->allocate(s.size, 64);
      if (!b) die(b.error().message());
      table.slots.push_back({b->get(), 0, 0});
      if (s.name == "x") xb = b->get();
      if (s.name == "y") yb = b->get();
      bufs.push_back(std::move(*b));
    }
    if (!xb || !yb) die("x or y missing");
    std::vector<float> host(n);
    for (uint64_t i = 0; i < n; ++i)
      host[i] = float(i % 1000) * 0.001f;
    if (Error e = (*dev)->write(*xb, 0, host.data(), n * 4)) die(e.message());
    std::vector<double> t;
    for (int r = 0; r <= runs; ++r) {
      auto t0 = Clock::now();
      auto ev = (*exe)->enqueue(table, {}, {});
      if (!ev) die(ev.error().message());
      if (Error e = (*ev)->wait()) die(e.message());
      auto t1 = Clock::now();
      if (r) t.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    }
    if (Error e = (*dev)->read(*yb, 0, host.data(), n * 4)) die(e.message());
    if (reference.empty())
      reference = host;
    else if (std::memcmp(reference.data(), host.data(), n * 4) != 0)
      die(std::string(v.name) + ": result differs from the unfused graph");
    Figures f = stats(t);
    std::printf("%-12s %7zu %9.2f %9.2f %12.2f\n", v.name, g.nodes.size(), f.minMs, f.medMs,
                2 * bytes / f.minMs / 1e6);
  }
  std::printf("(GB/s = 2 x %.0f MiB / min time: the traffic of reading x and writing y once;"
              " every variant's y is checked bit-exact against the unfused one)\n",
              bytes / (1 << 20));
  return 0;
}
