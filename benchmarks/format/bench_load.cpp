// Load speed and size of a large .cgf: N kernel nodes (3 args each) in a chain.
//   bench_format_load [NODES=100000] [RUNS=9]
// Prints bytes per node, write time and readCgf time (min / median over RUNS).
#include "cgraph/format/reader.h"
#include "cgraph/format/writer.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <vector>

using namespace cgraph;

namespace {

Graph makeChain(uint32_t n) {
  Graph g;
  g.name = "chain";
  KernelModule m;
  m.name = "axpy.cl";
  m.forms.resize(1);
  m.forms[0].bytes.assign(2048, 0x11);
  g.modules.push_back(m);
  Kernel k;
  k.name = "axpy";
  k.module = 0;
  k.params.resize(3);
  g.kernels.push_back(k);
  for (int i = 0; i < 64; ++i) {
    Slot s;
    s.name = "buf" + std::to_string(i);
    s.size = 1 << 20;
    g.slots.push_back(s);
  }
  Param p;
  p.name = "alpha";
  p.type = ScalarType::F32;
  g.params.push_back(p);
  g.nodes.resize(n);
  for (uint32_t i = 0; i < n; ++i) {
    Node &node = g.nodes[i];
    node.name = "k" + std::to_string(i);
    node.kind = NodeKind::Kernel;
    node.kernel = 0;
    node.range.global[0].value = 4096;
    node.range.local[0].value = 64;
    node.args = {Arg::slot(i % 64), Arg::slot((i + 1) % 64, 256), Arg::param(0)};
    if (i) g.edges.push_back({i - 1, i});
    g.order.push_back(i);
  }
  return g;
}

double ms(std::chrono::steady_clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

// CPU time of this thread: less disturbed than wall time on a shared, loaded machine.
double cpuMs() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

} // namespace

int main(int argc, char **argv) {
  uint32_t nodes = argc > 1 ? static_cast<uint32_t>(std::atoi(argv[1])) : 100000;
  int runs = argc > 2 ? std::atoi(argv[2]) : 9;
  Graph g = makeChain(nodes);

  std::vector<double> writes, loads, loadCpu;
  std::vector<uint8_t> bytes;
  for (int r = 0; r < runs; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    auto w = writeCgf(g);
    auto t1 = std::chrono::steady_clock::now();
    if (!w) {
      std::fprintf(stderr, "write failed: %s\n", w.error().message().c_str());
      return 1;
    }
    bytes = std::move(*w);
    writes.push_back(ms(t1 - t0));
  }
  size_t loadedNodes = 0;
  for (int r = 0; r < runs; ++r) {
    double c0 = cpuMs();
    auto t0 = std::chrono::steady_clock::now();
    auto back = readCgf(bytes.data(), bytes.size());
    auto t1 = std::chrono::steady_clock::now();
    loadCpu.push_back(cpuMs() - c0);
    if (!back) {
      std::fprintf(stderr, "read failed: %s\n", back.error().message().c_str());
      return 1;
    }
    loadedNodes = back->nodes.size();
    loads.push_back(ms(t1 - t0));
  }
  std::sort(writes.begin(), writes.end());
  std::sort(loads.begin(), loads.end());
  std::sort(loadCpu.begin(), loadCpu.end());
  std::printf("nodes          %u (loaded %zu)\n", nodes, loadedNodes);
  std::printf("file bytes     %zu\n", bytes.size());
  std::printf("bytes/node     %.1f\n", double(bytes.size()) / nodes);
  std::printf("write ms       min %.2f  median %.2f\n", writes.front(), writes[writes.size() / 2]);
  std::printf("load ms        min %.2f  median %.2f  (%d runs)\n", loads.front(), loads[loads.size() / 2], runs);
  std::printf("load cpu ms    min %.2f  median %.2f\n", loadCpu.front(), loadCpu[loadCpu.size() / 2]);
  return 0;
}
