// What the cpu-vs-PoCL benchmark programs (bench_nodes, bench_cases) share: argument
// parsing (`[-n ITERATIONS] ARG...`), the cpu backend's device and PoCL's (through the
// opencl backend, where it is built and has a device), and the median.
// `--min` reports the minimum of the iterations instead of the median (steadier on a
// machine other work shares: interference only ever adds time).
// Failure: every error ends the program with "PROG: message" on stderr and exit 1.
#pragma once

#include "cgraph/backends/cpu/cpu_backend.h"
#ifdef CGRAPH_HAVE_OPENCL_BACKEND
#include "cgraph/backends/opencl/opencl_backend.h"
#endif

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

namespace cgraph::bench {

[[noreturn]] inline void die(const char *prog, const std::string &what) {
  std::fprintf(stderr, "%s: %s\n", prog, what.c_str());
  std::exit(1);
}

inline double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// The statistic the programs report: the median, or with --min the minimum.
inline bool &useMinimum() {
  static bool m = false;
  return m;
}
inline const char *statName() { return useMinimum() ? "minimum" : "median"; }
inline double stat(const std::vector<double> &v) {
  if (v.empty()) return 0;
  return useMinimum() ? *std::min_element(v.begin(), v.end()) : median(v);
}

// `[-n ITERATIONS] [--min] ARG...` (at least one ARG): the positional arguments; *iters
// keeps its default unless -n is given; --min sets useMinimum().
inline std::vector<std::string> parseArgs(int argc, char **argv, const char *prog, const char *what,
                                          int *iters) {
  std::vector<std::string> out;
  const std::string usage = std::string("usage: ") + prog + " [-n ITERATIONS] [--min] " + what + "...";
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "-n" && i + 1 < argc) *iters = std::max(1, std::atoi(argv[++i]));
    else if (a == "--min") useMinimum() = true;
    else if (!a.empty() && a[0] == '-') die(prog, "unknown option '" + a + "' (" + usage + ")");
    else out.push_back(a);
  }
  if (out.empty()) die(prog, usage);
  return out;
}

// The cpu device, and PoCL's when there is one (pocl null otherwise; the reason is
// printed). The backends own the devices.
struct CpuAndPocl {
  std::unique_ptr<rt::Backend> cpuBackend, oclBackend;
  rt::Device *cpu = nullptr;
  rt::Device *pocl = nullptr;
};

// PoCL's device through the opencl backend, into d.oclBackend / d.pocl; when there is
// none, d.pocl stays null and the reason is returned.
inline std::string openPocl(const char *prog, CpuAndPocl &d) {
#ifdef CGRAPH_HAVE_OPENCL_BACKEND
  d.oclBackend = opencl::makeOpenCLBackend();
  rt::BackendProbe p = d.oclBackend->probe();
  if (!p.available) return "opencl: not available (" + p.reason + ")";
  auto o = d.oclBackend->device(0);
  if (!o) die(prog, o.error().message());
  d.pocl = *o;
  return {};
#else
  (void)prog;
  (void)d;
  return "opencl backend not built";
#endif
}

// The cpu backend's device, into d.cpuBackend / d.cpu.
inline void openCpu(const char *prog, CpuAndPocl &d) {
  d.cpuBackend = cpu::makeCpuBackend();
  auto c = d.cpuBackend->device(0);
  if (!c) die(prog, c.error().message());
  d.cpu = *c;
}

inline CpuAndPocl openCpuAndPocl(const char *prog) {
  CpuAndPocl d;
  openCpu(prog, d);
  std::string why = openPocl(prog, d);
  if (!d.pocl) std::printf("%s; cpu figures only\n", why.c_str());
  return d;
}

} // namespace cgraph::bench
