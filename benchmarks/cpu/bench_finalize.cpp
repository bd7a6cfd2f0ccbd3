// bench_finalize [--backend cpu|opencl] FILE.cgf...: one process, one backend; for each
// file prints the time to finalize the graph (compile every kernel module, build the
// schedule) and the time of its first run (zeroed external buffers, default params).
// PoCL compiles lazily, so its cold cost is finalize + first run; ours is all in
// finalize. The cache state is the environment's: CGRAPH_CACHE_PERSISTENT,
// CGRAPH_CACHE_DIR, POCL_KERNEL_CACHE (finalize_examples.sh sets them per run).
// Output, one line per file: `<file> <backend> finalize_ms=<x> first_run_ms=<y>`.
#include "cgraph/backends/cpu/cpu_backend.h"
#include "cgraph/format/reader.h"
#ifdef CGRAPH_HAVE_OPENCL_BACKEND
#include "cgraph/backends/opencl/opencl_backend.h"
#endif

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

using namespace cgraph;
using Clock = std::chrono::steady_clock;

namespace {

[[noreturn]] void die(const std::string &what) {
  std::fprintf(stderr, "bench_finalize: %s\n", what.c_str());
  std::exit(1);
}

double ms(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double, std::milli>(b - a).count(); }

} // namespace

int main(int argc, char **argv) {
  std::string backendName = "cpu";
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--backend" && i + 1 < argc) backendName = argv[++i];
    else files.push_back(a);
  }
  if (files.empty()) die("usage: bench_finalize [--backend cpu|opencl] FILE.cgf...");
  std::unique_ptr<rt::Backend> backend;
  if (backendName == "cpu") backend = cpu::makeCpuBackend();
#ifdef CGRAPH_HAVE_OPENCL_BACKEND
  else if (backendName == "opencl") backend = opencl::makeOpenCLBackend();
#endif
  else die("unknown or unbuilt backend '" + backendName + "'");
  rt::BackendProbe p = backend->probe();
  if (!p.available) die(backendName + ": " + p.reason);
  auto dev = backend->device(0);
  if (!dev) die(dev.error().message());
  for (const std::string &file : files) {
    auto g = readCgfFile(file);
    if (!g) die(g.error().message());
    auto t0 = Clock::now();
    auto exe = (*dev)->finalize(*g, rt::FinalizeOptions{});
    auto t1 = Clock::now();
    if (!exe) die(file + ": " + exe.error().message());
    std::vector<std::unique_ptr<rt::Buffer>> bufs;
    rt::BindingTable table;
    for (const Slot &s : g->slots) {
      if (s.init != SlotInit::External) {
        table.slots.push_back({});
        continue;
      }
      auto b = (*dev)->allocate(s.size, std::max<uint32_t>(s.alignment, 64));
      if (!b) die(b.error().message());
      std::vector<uint8_t> zeros(s.size, 0);
      if (Error e = (*dev)->write(**b, 0, zeros.data(), s.size)) die(e.message());
      table.slots.push_back({b->get(), 0, 0});
      bufs.push_back(std::move(*b));
    }
    auto t2 = Clock::now();
    auto ev = (*exe)->enqueue(table, {}, {});
    if (!ev) die(file + ": " + ev.error().message());
    if (Error e = (*ev)->wait()) die(file + ": " + e.message());
    auto t3 = Clock::now();
    std::printf("%s %s finalize_ms=%.1f first_run_ms=%.1f\n", file.c_str(), backendName.c_str(), ms(t0, t1), ms(t2, t3));
  }
  return 0;
}
