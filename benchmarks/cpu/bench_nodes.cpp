// bench_nodes [-n ITERATIONS] FILE.cgf...: every kernel of every graph, cgraph's cpu
// backend next to PoCL (through the opencl backend), in one process, one table.
//
// Per file:
//   - per kernel, two measures (sum over the top-level nodes that launch it; median
//     over the iterations, or the minimum with --min):
//       "wall": each node alone, as a one-node graph replayed with enqueue + wait around
//       it on the host clock, the same measure on both sides (transient slots become
//       external ones filled like the others, so the node reads defined data). It
//       includes each side's submission cost (a few us on cpu, more through the opencl
//       backend), which matters only for tiny launches;
//       "node": the node's time inside one run of the whole graph, from per-node
//       timestamps: the cpu backend's replay with profiling (host clock around each
//       node), PoCL's eager path with profiling (OpenCL event start/end: the kernel's
//       execution only). Not the same measure on the two sides: it favours PoCL by its
//       submission cost;
//     "cpu/pocl" < 1 means the cpu backend is faster;
//   - the whole graph per node, enqueue + wait, no profiling: eager and replay on
//     each backend, and replay / eager.
// External slots are filled with the float 0.5 (bytes 00 00 00 3f), parameters keep
// their defaults, runtime-owned slots their initializers.
#include "bench_common.h"

#include "cgraph/format/reader.h"
#include "cgraph/graph/order.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

using namespace cgraph;
using Clock = std::chrono::steady_clock;

namespace {

[[noreturn]] void die(const std::string &what) { bench::die("bench_nodes", what); }

struct Bound {
  std::vector<std::unique_ptr<rt::Buffer>> bufs;
  rt::BindingTable table;
};

Bound bind(rt::Device &dev, const Graph &g) {
  Bound b;
  for (const Slot &s : g.slots) {
    if (s.init != SlotInit::External) {
      b.table.slots.push_back({});
      continue;
    }
    auto buf = dev.allocate(s.size, std::max<uint32_t>(s.alignment, 64));
    if (!buf) die(buf.error().message());
    std::vector<uint8_t> init(s.size, 0);
    const float half = 0.5f;
    for (uint64_t i = 0; i + 4 <= s.size; i += 4) std::memcpy(&init[i], &half, 4);
    if (Error e = dev.write(**buf, 0, init.data(), s.size)) die(e.message());
    b.table.slots.push_back({buf->get(), 0, 0});
    b.bufs.push_back(std::move(*buf));
  }
  return b;
}

std::unique_ptr<rt::Executable> finalize(rt::Device &dev, const Graph &g, rt::ExecMode mode) {
  rt::FinalizeOptions o;
  o.mode = mode;
  auto exe = dev.finalize(g, o);
  if (!exe) die(exe.error().message());
  return std::move(*exe);
}

double runOnce(rt::Executable &exe, const rt::BindingTable &t, const rt::SubmitOptions &so = {},
               std::vector<rt::NodeTiming> *timings = nullptr) {
  auto t0 = Clock::now();
  auto ev = exe.enqueue(t, {}, so);
  if (!ev) die(ev.error().message());
  if (Error e = (*ev)->wait()) die(e.message());
  double s = std::chrono::duration<double>(Clock::now() - t0).count();
  if (timings) *timings = (*ev)->nodeTimings();
  return s;
}

// Node `n` of `g` alone: no edges, transient slots external (bind() fills them).
Graph oneNodeGraph(const Graph &g, uint32_t n) {
  Graph o = g;
  o.nodes = {g.nodes[n]};
  o.edges.clear();
  o.order.clear();
  o.partitions.clear();
  o.exprs.clear();
  for (const FieldExpr &e : g.exprs) {
    if (e.node == kNone) {
      o.exprs.push_back(e);
    } else if (e.node == n) {
      o.exprs.push_back(e);
      o.exprs.back().node = 0;
    }
  }
  for (Slot &s : o.slots)
    if (s.init == SlotInit::Transient) s.init = SlotInit::External;
  if (Error e = finalizeForFile(o)) die(e.message());
  return o;
}

// Per kernel name: the summed median (or minimum) enqueue + wait of its top-level nodes, each alone.
std::map<std::string, double> wallPerKernel(rt::Device &dev, const Graph &g, int iters) {
  std::map<std::string, double> out;
  for (uint32_t n = 0; n < g.nodes.size(); ++n) {
    if (g.nodes[n].kind != NodeKind::Kernel) continue;
    Graph one = oneNodeGraph(g, n);
    auto exe = finalize(dev, one, rt::ExecMode::Replay);
    Bound b = bind(dev, one);
    runOnce(*exe, b.table); // warm-up (PoCL compiles at first launch)
    runOnce(*exe, b.table);
    std::vector<double> t;
    for (int i = 0; i < iters; ++i) t.push_back(runOnce(*exe, b.table) * 1e6);
    out[g.kernels[g.nodes[n].kernel].name] += bench::stat(t);
  }
  return out;
}

struct Figures {
  bool ok = false;
  std::map<std::string, double> wallUs;   // per kernel name, its nodes alone
  std::map<std::string, double> kernelUs; // per kernel name, one run
  std::map<std::string, uint32_t> kernelNodes;
  double eagerUsPerNode = 0, replayUsPerNode = 0;
};

Figures measure(rt::Device &dev, const Graph &g, int iters, bool profiledReplay) {
  Figures f;
  auto replay = finalize(dev, g, rt::ExecMode::Replay);
  auto eager = finalize(dev, g, rt::ExecMode::Eager);
  Bound b = bind(dev, g);
  // Per-kernel times: profiled runs.
  rt::Executable &prof = profiledReplay ? *replay : *eager;
  rt::SubmitOptions so;
  so.profile = true;
  std::vector<rt::NodeTiming> t;
  runOnce(prof, b.table, so, &t); // warm-up (PoCL compiles at first launch)
  std::map<std::string, std::vector<double>> perKernel;
  for (int i = 0; i < iters; ++i) {
    runOnce(prof, b.table, so, &t);
    std::map<std::string, double> sum;
    for (const rt::NodeTiming &nt : t) {
      const Node &n = prof.graph().nodes[nt.node];
      if (n.kind != NodeKind::Kernel) continue;
      sum[prof.graph().kernels[n.kernel].name] += double(nt.endNs - nt.startNs) / 1e3;
    }
    for (auto &kv : sum) perKernel[kv.first].push_back(kv.second);
  }
  for (auto &kv : perKernel) f.kernelUs[kv.first] = bench::stat(kv.second);
  for (const Node &n : prof.graph().nodes)
    if (n.kind == NodeKind::Kernel) ++f.kernelNodes[prof.graph().kernels[n.kernel].name];
  // Whole graph, enqueue + wait.
  const double nodes = std::max<double>(1, double(g.nodes.size()));
  std::vector<double> te, tr;
  runOnce(*eager, b.table);
  runOnce(*replay, b.table);
  for (int i = 0; i < iters; ++i) {
    te.push_back(runOnce(*eager, b.table));
    tr.push_back(runOnce(*replay, b.table));
  }
  f.eagerUsPerNode = bench::stat(te) * 1e6 / nodes;
  f.replayUsPerNode = bench::stat(tr) * 1e6 / nodes;
  f.wallUs = wallPerKernel(dev, g, iters);
  f.ok = true;
  return f;
}

std::string baseName(const std::string &p) {
  size_t s = p.find_last_of('/');
  return s == std::string::npos ? p : p.substr(s + 1);
}

} // namespace

int main(int argc, char **argv) {
  int iters = 11;
  const std::vector<std::string> files = bench::parseArgs(argc, argv, "bench_nodes", "FILE.cgf", &iters);
  bench::CpuAndPocl devs = bench::openCpuAndPocl("bench_nodes");
  rt::Device *pocl = devs.pocl;
  std::printf("%s of %d runs; times in us; wall = the kernel's nodes alone, enqueue + wait on the host\n"
              "clock on both sides; node = their time in one run of the graph (cpu: host clock around\n"
              "the node, pocl: OpenCL event start/end)\n",
              bench::statName(), iters);
  std::printf("%-16s %-20s %5s %10s %10s %6s %10s %10s %6s\n", "graph", "kernel", "nodes", "cpu wall", "pocl wall",
              "ratio", "cpu node", "pocl node", "ratio");
  for (const std::string &file : files) {
    auto g = readCgfFile(file);
    if (!g) die(g.error().message());
    const std::string name = baseName(file);
    Figures c = measure(*devs.cpu, *g, iters, true);
    Figures o;
    if (pocl) o = measure(*pocl, *g, iters, false);
    for (auto &kv : c.kernelUs) {
      double pu = o.ok ? o.kernelUs[kv.first] : 0;
      double cw = c.wallUs.count(kv.first) ? c.wallUs[kv.first] : 0;
      double pw = o.ok && o.wallUs.count(kv.first) ? o.wallUs[kv.first] : 0;
      std::printf("%-16s %-20s %5u %10.1f %10.1f %6.2f %10.1f %10.1f %6.2f\n", name.c_str(), kv.first.c_str(),
                  c.kernelNodes[kv.first], cw, pw, pw > 0 ? cw / pw : 0.0, kv.second, pu, pu > 0 ? kv.second / pu : 0.0);
    }
    std::printf("%-16s %-20s %5zu  us/node, enqueue+wait:  cpu eager %.3f replay %.3f (replay/eager %.2f)", name.c_str(),
                "(whole graph)", g->nodes.size(), c.eagerUsPerNode, c.replayUsPerNode,
                c.replayUsPerNode / c.eagerUsPerNode);
    if (o.ok)
      std::printf(" | pocl eager %.3f replay %.3f (%.2f)", o.eagerUsPerNode, o.replayUsPerNode,
                  o.replayUsPerNode / o.eagerUsPerNode);
    std::printf("\n");
  }
  return 0;
}
