// bench_cuda [--json FILE] [--handwritten handwritten.cu]: the CUDA backend's figures,
// one run, side by side:
//   1. chains of 1000 / 10000 empty kernels and axpy(4096): cgraph replay vs eager vs
//      the hand-written CUDA graph (handwritten.cu, built with nvcc here at run time);
//      device time per node (submit..wait / nodes) and host submit time;
//   2. rebinding all 16 slots every submission on a 1000-node graph vs plain replay vs
//      cuGraphExecKernelNodeSetParams on every kernel node per submission, 11 rounds
//      of the three in turn;
//   3. finalize of the 1000-node axpy chain, cold (no cache) and warm (cache).
//   4. kernel quality: axpy and a copy over 64M floats and the stencil example's
//      jacobi_step on a 4096^2 grid, cgraph's PTX (20 runs in one graph) vs the
//      same kernels written in CUDA C++ and built with nvcc -O3 (handwritten.cu), as
//      us per launch and effective GB/s (bytes read + written / time).
// Prints a table, and Google Benchmark's JSON shape with --json.
#include "cgraph/backends/cuda/cuda_backend.h"
#include "cgraph/format/reader.h"
#include "cgraph/format/writer.h"
#include "cgraph/graph/builder.h"
#include "cgraph/graph/order.h"
#include "cgraph/kernel/module_info.h"
#include "cgraph/kernel/opencl_compiler.h"
#include "cgraph/kernel/spirv.h"

#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <string>
#include <vector>

using namespace cgraph;
using Clock = std::chrono::steady_clock;

namespace {

double usSince(Clock::time_point t) { return std::chrono::duration<double, std::micro>(Clock::now() - t).count(); }

// The median of per-submission host times (a few submissions stall on the driver's
// queue or a page fault; the mean of 20 moved by 20-30% between runs).
double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

// Alternated measurements drift together (the host's speed changes from one stretch of
// time to the next): the fair comparison is the median of each round's ratio a[i] / b[i].
double pairedRatio(const std::vector<double> &a, const std::vector<double> &b) {
  std::vector<double> r;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i)
    if (b[i] > 0) r.push_back(a[i] / b[i]);
  return median(r);
}

struct Row {
  std::string name;
  double perNodeUs = 0; // device time per node (or per item named)
  double hostUs = 0;    // host time of one submission
  double gbps = 0;      // kernel quality rows: effective bandwidth
};
std::vector<Row> rows;

[[noreturn]] void die(const std::string &m) {
  std::fprintf(stderr, "bench_cuda: error: %s\n", m.c_str());
  std::exit(1);
}

const char *kSource = R"CL(
__kernel void empty_kernel() {}
__kernel void axpy(__global float *y, __global const float *x, float a) {
  size_t i = get_global_id(0);
  y[i] = mad(a, x[i], y[i]);
}
__kernel void copy_f32(__global float *restrict y, __global const float *restrict x) {
  size_t i = get_global_id(0);
  y[i] = x[i];
}
// examples/stencil/kernels/jacobi.cl
__kernel void jacobi_step(__global float *restrict out, __global const float *restrict in,
                          __global const float *restrict f, uint n, float h2) {
  size_t x = get_global_id(0);
  size_t y = get_global_id(1);
  if (x >= n || y >= n) return;
  size_t i = y * n + x;
  if (x == 0 || y == 0 || x == n - 1 || y == n - 1) {
    out[i] = in[i];
    return;
  }
  out[i] = 0.25f * (in[i - 1] + in[i + 1] + in[i - n] + in[i + n] + h2 * f[i]);
}
)CL";

std::map<std::string, uint32_t> addKernels(GraphBuilder &b) {
  auto r = compileOpenCL(kSource, "bench.cl", CompileOptions{});
  if (!r) die(r.error().message());
  std::string src = kSource;
  uint32_t mod = b.addModule(makeKernelModule("bench.cl", *r, &src, false));
  auto ks = reflectKernels(r->spirv.data(), r->spirv.size());
  if (!ks) die(ks.error().message());
  std::map<std::string, uint32_t> out;
  for (Kernel k : *ks) {
    k.module = mod;
    std::string n = k.name;
    out[n] = b.addKernel(std::move(k));
  }
  return out;
}

Slot ext(std::string name, uint64_t bytes) {
  Slot s;
  s.name = std::move(name);
  s.size = bytes;
  return s;
}

uint64_t f32(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

// A chain of `n` kernels over `slots` slot pairs (axpy) or of empty kernels.
Graph chain(uint32_t n, bool axpy, uint32_t slots) {
  GraphBuilder b(axpy ? "axpy-chain" : "empty-chain");
  auto k = addKernels(b);
  std::vector<uint32_t> s;
  for (uint32_t i = 0; i < std::max<uint32_t>(1, slots); ++i) s.push_back(b.addSlot(ext("s" + std::to_string(i), 4096 * 4)));
  uint32_t prev = kNone;
  for (uint32_t i = 0; i < n; ++i) {
    uint32_t id;
    if (axpy)
      id = b.addKernelNode("n" + std::to_string(i), k["axpy"], range1D(4096, 256),
                           {Arg::slot(s[(i + 1) % s.size()]), Arg::slot(s[i % s.size()]), Arg::scalar(ScalarType::F32, f32(0.5f))});
    else
      id = b.addKernelNode("n" + std::to_string(i), k["empty_kernel"], range1D(1, 1), {});
    if (prev != kNone) b.addEdge(prev, id);
    prev = id;
  }
  return b.take();
}

struct Bound {
  std::vector<std::unique_ptr<rt::Buffer>> bufs;
  rt::BindingTable table;
};

Bound bind(rt::Device &d, const Graph &g) {
  Bound b;
  for (size_t i = 0; i < g.slots.size(); ++i) {
    auto buf = d.allocate(g.slots[i].size, 64);
    if (!buf) die(buf.error().message());
    std::vector<uint8_t> zero(g.slots[i].size, 0);
    if (Error e = d.write(**buf, 0, zero.data(), zero.size())) die(e.message());
    b.table.slots.push_back({buf->get()});
    b.bufs.push_back(std::move(*buf));
  }
  return b;
}

void submitWait(rt::Executable &exe, const rt::BindingTable &t, double *hostUs) {
  auto t0 = Clock::now();
  auto ev = exe.enqueue(t, {});
  if (hostUs) *hostUs += usSince(t0);
  if (!ev) die(ev.error().message());
  if (Error e = (*ev)->wait()) die(e.message());
}

// `suffix` names the device's configuration in the rows; `eager` adds the eager rows.
void chainBench(rt::Device &d, uint32_t n, bool axpy, const std::string &suffix = "", bool eager = true) {
  Graph g = chain(n, axpy, axpy ? 2 : 0);
  const std::string tag = std::string(axpy ? "axpy4096" : "empty") + "_" + std::to_string(n) + suffix;
  Bound b = bind(d, g);
  for (rt::ExecMode mode : {rt::ExecMode::Replay, rt::ExecMode::Eager}) {
    if (mode == rt::ExecMode::Eager && !eager) continue;
    rt::FinalizeOptions fo;
    fo.mode = mode;
    auto exe = d.finalize(g, fo);
    if (!exe) die(exe.error().message());
    submitWait(**exe, b.table, nullptr); // warm-up
    const int reps = mode == rt::ExecMode::Eager ? (n >= 10000 ? 5 : 20) : (n >= 10000 ? 20 : 50);
    std::vector<double> host;
    auto t0 = Clock::now();
    std::vector<rt::EventPtr> evs;
    for (int r = 0; r < reps; ++r) {
      auto h0 = Clock::now();
      auto ev = (*exe)->enqueue(b.table, {});
      host.push_back(usSince(h0));
      if (!ev) die(ev.error().message());
      evs.push_back(*ev);
    }
    for (auto &e : evs)
      if (Error err = e->wait()) die(err.message());
    double total = usSince(t0);
    rows.push_back({std::string("cgraph_") + (mode == rt::ExecMode::Replay ? "replay_" : "eager_") + tag,
                    total / reps / n, median(host)});
    if (mode == rt::ExecMode::Replay) {
      // The same graphs launched bare (the table and cuGraphLaunch only): the driver's
      // share of the host time above; the rest is the runtime's (validation, event).
      std::vector<double> bare;
      for (int r = 0; r < reps; ++r) {
        auto h0 = Clock::now();
        if (Error e = cuda::launchGraphsOnly(**exe)) die(e.message());
        bare.push_back(usSince(h0));
      }
      submitWait(**exe, b.table, nullptr);
      rows.push_back({std::string("cgraph_replay_graph_launch_only_") + tag, 0, median(bare)});
    }
  }
}

// Rebinding all 16 slots every submission against plain replay (the same table) and
// against updating every kernel node (cuGraphExecKernelNodeSetParams), `rounds` rounds
// of the three in turn: host figures move by a microsecond from one stretch of time to
// the next on these hosts, so each row is the median over rounds of each round's
// median, and the line printed compares them.
void rebindBench(rt::Device &d, const std::string &suffix = "", int rounds = 11) {
  Graph g = chain(1000, true, 16);
  Bound a = bind(d, g), b = bind(d, g);
  auto exe = d.finalize(g, {});
  if (!exe) die(exe.error().message());
  const int reps = 25;
  std::map<std::string, std::vector<double>> host, device;
  auto measure = [&](const std::string &name, bool alternate, bool updateNodes) {
    submitWait(**exe, a.table, nullptr);
    std::vector<double> h;
    auto t0 = Clock::now();
    for (int r = 0; r < reps; ++r) {
      const rt::BindingTable &t = (alternate && (r & 1)) ? b.table : a.table;
      auto h0 = Clock::now();
      if (updateNodes)
        if (Error e = cuda::updateEveryKernelNode(**exe)) die(e.message());
      auto ev = (*exe)->enqueue(t, {});
      h.push_back(usSince(h0));
      if (!ev) die(ev.error().message());
      if (Error e = (*ev)->wait()) die(e.message());
    }
    device[name].push_back(usSince(t0) / reps / 1000);
    host[name].push_back(median(h));
  };
  const std::string plain = "rebind16_plain_replay_1000" + suffix,
                    fresh = "rebind16_new_table_every_submission_1000" + suffix,
                    setp = "rebind16_setparams_every_node_1000" + suffix;
  for (int round = 0; round < rounds; ++round) {
    measure(plain, false, false);
    measure(fresh, true, false);
    if (suffix.empty()) measure(setp, false, true);
  }
  for (const std::string &name : {plain, fresh, setp})
    if (host.count(name)) rows.push_back({name, median(device[name]), median(host[name])});
  const double p = median(host[plain]), f = median(host[fresh]), ratio = pairedRatio(host[fresh], host[plain]);
  rows.push_back({"rebind16_round_ratio_new_table_vs_plain_1000" + suffix, 0, ratio});
  std::printf("rebinding 16 slots%s: new table %.2f us, plain replay %.2f us, per-round ratio %.2fx", suffix.c_str(), f,
              p, ratio);
  if (host.count(setp)) {
    const double s = median(host[setp]);
    std::printf("; SetParams on every node %.1f us (new table: %.1f%% of it)", s, 100 * f / s);
  }
  std::printf("; host us per submission, median of %d rounds\n", rounds);
}

// One row per finalize phase, named prefix + the phase (spaces as '_') + suffix; returns
// their total in us.
double phaseRows(const std::string &prefix, const std::vector<rt::Executable::Phase> &phases,
                 const std::string &suffix) {
  double total = 0;
  for (const rt::Executable::Phase &ph : phases) {
    std::string name = ph.name;
    for (char &c : name)
      if (c == ' ') c = '_';
    rows.push_back({prefix + name + suffix, ph.us / 1000, ph.us});
    total += ph.us;
  }
  return total;
}

// Benchmark 3 as the issue words it: the 1000-node graph as cgc writes it (order and
// partitions stored), read from its file and finalized with a warm cache; the median
// of 5, each executable destroyed before the next.
void loadFinalizeBench(rt::Device &d, const std::string &suffix = "", bool withPhases = false) {
  Graph g = chain(1000, true, 2);
  if (Error e = finalizeForFile(g)) die(e.message());
  char path[] = "/tmp/cgraph-bench-XXXXXX";
  const int fd = mkstemp(path);
  if (fd < 0) die("mkstemp failed");
  close(fd);
  if (Error e = writeCgfFile(g, path)) die(e.message());
  rt::FinalizeOptions fo;
  (void)d.finalize(g, fo); // fill the caches
  struct Run {
    double total, read;
    std::vector<rt::Executable::Phase> phases;
  };
  std::vector<Run> runs;
  for (int r = 0; r < 5; ++r) {
    auto t0 = Clock::now();
    auto read = readCgfFile(path);
    if (!read) die(read.error().message());
    const double l = usSince(t0);
    auto one = d.finalizeOwned(std::move(*read), fo); // the read graph is not needed after: moved, not copied
    const double t = usSince(t0);
    if (!one) die(one.error().message());
    runs.push_back({t, l, (*one)->finalizePhases()});
  }
  std::remove(path);
  std::sort(runs.begin(), runs.end(), [](const Run &a, const Run &b) { return a.total < b.total; });
  const Run &m = runs[2]; // the median run, and its phases
  rows.push_back({"load_finalize_warm_file_axpy_1000" + suffix, m.total / 1000, m.total});
  rows.push_back({"load_finalize_warm_file_phase_read" + suffix, m.read / 1000, m.read});
  if (!withPhases) return;
  const double rest = m.total - m.read - phaseRows("load_finalize_warm_file_phase_", m.phases, suffix);
  rows.push_back({"load_finalize_warm_file_phase_rest" + suffix, rest / 1000, rest});
}

void finalizeBench(rt::Device &d, const std::string &suffix = "") {
  Graph g = chain(1000, true, 2);
  for (bool cache : {false, true}) {
    rt::FinalizeOptions fo;
    fo.useCache = cache;
    if (cache) (void)d.finalize(g, fo); // fill the caches
    // Warm: the median of 5 finalizes (the hand-written capture + instantiate is the
    // median of 5 too), its phases below; cold: one (the module cache is then warm).
    // Each executable is destroyed before the next finalize, as the hand-written side
    // destroys its graphs.
    std::vector<std::pair<double, std::vector<rt::Executable::Phase>>> runs;
    for (int r = 0; r < (cache ? 5 : 1); ++r) {
      auto t0 = Clock::now();
      auto one = d.finalize(g, fo);
      const double t = usSince(t0);
      if (!one) die(one.error().message());
      runs.emplace_back(t, (*one)->finalizePhases());
    }
    std::sort(runs.begin(), runs.end(), [](const auto &a, const auto &b) { return a.first < b.first; });
    const double us = runs[runs.size() / 2].first;
    rows.push_back({std::string(cache ? "finalize_warm_axpy_1000" : "finalize_cold_axpy_1000") + suffix, us / 1000, us});
    // Where the time went (the rest: before and after the executable's phases).
    const double phases = phaseRows(std::string(cache ? "finalize_warm" : "finalize_cold") + "_phase_",
                                    runs[runs.size() / 2].second, suffix);
    rows.push_back({std::string(cache ? "finalize_warm" : "finalize_cold") + "_phase_before_executable" + suffix, (us - phases) / 1000, us - phases});
  }
}

// Benchmark 4: a graph of kPerGraph runs of one kernel (a chain: each after the
// previous, as launches on one stream are), replayed kGraphs times; us per run. The
// graph launch and its table load are spread over kPerGraph runs, as the hand-written
// side's launch overhead is over its 20 back-to-back launches.
void qualityBench(rt::Device &d, const std::string &suffix = "") {
  const uint64_t n = 64ull << 20, grid = 4096;
  constexpr int kPerGraph = 20, kGraphs = 5;
  for (int which = 0; which < 5; ++which) {
    GraphBuilder b("quality");
    auto k = addKernels(b);
    std::string name;
    double bytes = 0;
    std::function<uint32_t(const std::string &)> add;
    if (which >= 3) {
      // A copy node: between binding-table slots it runs as the table-reading copy
      // kernel (rebinds for free); between runtime-owned slots as a memcpy node (DMA).
      Slot ys = ext("y", n * 4), xs = ext("x", n * 4);
      if (which == 4) ys.init = xs.init = SlotInit::Transient;
      uint32_t y = b.addSlot(ys), x = b.addSlot(xs);
      CopyOp c;
      c.srcSlot = x;
      c.dstSlot = y;
      c.bytes = n * 4;
      add = [&b, c](const std::string &nm) { return b.addCopy(nm, c); };
      name = which == 3 ? "quality_copy_node_table_slots_64M" : "quality_copy_node_owned_slots_64M";
      bytes = 8.0 * n;
    } else if (which < 2) {
      uint32_t y = b.addSlot(ext("y", n * 4)), x = b.addSlot(ext("x", n * 4));
      if (which == 0)
        add = [&, y, x](const std::string &nm) {
          return b.addKernelNode(nm, k["axpy"], range1D(n, 256),
                                 {Arg::slot(y), Arg::slot(x), Arg::scalar(ScalarType::F32, f32(0.5f))});
        };
      else
        add = [&, y, x](const std::string &nm) {
          return b.addKernelNode(nm, k["copy_f32"], range1D(n, 256), {Arg::slot(y), Arg::slot(x)});
        };
      name = which == 0 ? "quality_axpy_64M" : "quality_copy_64M";
      bytes = which == 0 ? 12.0 * n : 8.0 * n;
    } else {
      const uint64_t pts = grid * grid;
      uint32_t o = b.addSlot(ext("out", pts * 4)), i = b.addSlot(ext("in", pts * 4)), f = b.addSlot(ext("f", pts * 4));
      NDRange r;
      r.dims = 2;
      r.global[0].value = grid;
      r.global[1].value = grid;
      r.local[0].value = 32;
      r.local[1].value = 8;
      add = [&, r, o, i, f](const std::string &nm) {
        return b.addKernelNode(nm, k["jacobi_step"], r,
                               {Arg::slot(o), Arg::slot(i), Arg::slot(f), Arg::scalar(ScalarType::U32, grid),
                                Arg::scalar(ScalarType::F32, f32(1e-4f))});
      };
      name = "quality_jacobi_4096x4096";
      bytes = 12.0 * double(pts); // in (once, cached neighbours), f, out
    }
    uint32_t prev = kNone;
    for (int j = 0; j < kPerGraph; ++j) {
      const uint32_t node = add("run" + std::to_string(j));
      if (prev != kNone) b.addEdge(prev, node);
      prev = node;
    }
    Graph g = b.take();
    rt::FinalizeOptions fo;
    auto exe = d.finalize(g, fo);
    if (!exe) die(exe.error().message());
    Bound bd = bind(d, g);
    submitWait(**exe, bd.table, nullptr);
    auto t0 = Clock::now();
    for (int r = 0; r < kGraphs; ++r) {
      auto ev = (*exe)->enqueue(bd.table, {});
      if (!ev) die(ev.error().message());
      if (r == kGraphs - 1)
        if (Error e = (*ev)->wait()) die(e.message());
    }
    const double us = usSince(t0) / (kGraphs * kPerGraph);
    rows.push_back({name + suffix, us, 0, bytes / us / 1e3});
  }
}

// The hand-written graph built as a library (handwritten.cu, CGRAPH_HW_LIBRARY) and
// called in this process, alternating with cgraph's rows: host-submit and
// finalize figures of the two sides moved by up to 1 us / 1 ms between runs of
// separate processes, so the ratios come from rounds of one process. Rows:
// ab_{cgraph,handwritten}_{submit,finalize}_..._roundN, then the medians over rounds.
void alternated(const std::string &cu, rt::Device &d, int rounds) {
  const std::string so = "/tmp/cgraph_bench_handwritten.so";
  const std::string cmd = "nvcc -O3 -arch=native -shared -Xcompiler -fPIC -DCGRAPH_HW_LIBRARY -o " + so + " '" + cu + "' 2>&1";
  if (std::system(cmd.c_str()) != 0) {
    std::fprintf(stderr, "bench_cuda: nvcc failed; no alternated hand-written figures\n");
    return;
  }
  void *lib = dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    std::fprintf(stderr, "bench_cuda: %s\n", dlerror());
    return;
  }
  using HwGraph = int (*)(int, int, int, double *, double *, double *);
  auto hw = reinterpret_cast<HwGraph>(dlsym(lib, "cgraph_hw_graph"));
  if (!hw) die("handwritten library: no cgraph_hw_graph");
  std::map<std::string, std::vector<double>> host, build;
  for (int r = 1; r <= rounds; ++r)
    for (bool axpy : {false, true}) {
      const std::string k = axpy ? "axpy4096_1000" : "empty_1000", rs = "_round" + std::to_string(r);
      // cgraph: replay host submit (chainBench's row), then load + finalize of the file.
      const size_t at = rows.size();
      chainBench(d, 1000, axpy, rs, false);
      host["cgraph_" + k].push_back(rows[at].hostUs);
      rows.resize(at);
      rows.push_back({"ab_cgraph_submit_" + k + rs, 0, host["cgraph_" + k].back()});
      if (axpy) {
        const size_t before = rows.size();
        loadFinalizeBench(d, rs, true); // its phases stay in the rows
        build["cgraph_" + k].push_back(rows[before].hostUs);
        rows.push_back({"ab_cgraph_load_finalize_" + k + rs, build["cgraph_" + k].back() / 1000,
                        build["cgraph_" + k].back()});
      }
      double b = 0, h = 0, pn = 0;
      if (hw(axpy ? 1 : 0, 1000, 50, &b, &h, &pn)) die("handwritten library failed");
      host["handwritten_" + k].push_back(h);
      build["handwritten_" + k].push_back(b);
      rows.push_back({"ab_handwritten_submit_" + k + rs, pn, h});
      if (axpy) rows.push_back({"ab_handwritten_capture_instantiate_" + k + rs, b / 1000, b});
    }
  for (const char *k : {"empty_1000", "axpy4096_1000"}) {
    const std::vector<double> &cv = host[std::string("cgraph_") + k], &wv = host[std::string("handwritten_") + k];
    const double c = median(cv), w = median(wv), ratio = pairedRatio(cv, wv);
    rows.push_back({std::string("ab_median_cgraph_submit_") + k, 0, c});
    rows.push_back({std::string("ab_median_handwritten_submit_") + k, 0, w});
    rows.push_back({std::string("ab_median_round_ratio_submit_") + k, 0, ratio});
    std::printf("alternated host submit %s: cgraph %.2f us, hand-written %.2f us; per-round ratio %.2fx (median of "
                "%d rounds)\n",
                k, c, w, ratio, rounds);
  }
  const std::vector<double> &cv = build["cgraph_axpy4096_1000"], &wv = build["handwritten_axpy4096_1000"];
  const double c = median(cv), w = median(wv), ratio = pairedRatio(cv, wv);
  rows.push_back({"ab_median_cgraph_load_finalize_axpy4096_1000", c / 1000, c});
  rows.push_back({"ab_median_handwritten_capture_instantiate_axpy4096_1000", w / 1000, w});
  rows.push_back({"ab_median_round_ratio_load_finalize_axpy4096_1000", 0, ratio});
  std::printf("alternated load+finalize vs capture+instantiate axpy4096_1000: %.0f vs %.0f us; per-round ratio %.2fx "
              "(median of %d rounds)\n",
              c, w, ratio, rounds);
}

void handwritten(const std::string &cu) {
  const std::string exe = "/tmp/cgraph_bench_handwritten";
  const std::string cmd = "nvcc -O3 -arch=native -o " + exe + " '" + cu + "' 2>&1";
  if (std::system(cmd.c_str()) != 0) {
    std::fprintf(stderr, "bench_cuda: nvcc failed; no hand-written figures\n");
    return;
  }
  FILE *p = popen(exe.c_str(), "r");
  if (!p) return;
  char line[512];
  while (std::fgets(line, sizeof(line), p)) {
    char name[256];
    double a = 0, b = 0;
    if (std::sscanf(line, "%255s %lf %lf", name, &a, &b) != 3) std::fprintf(stderr, "handwritten: %s", line);
    else if (std::string(name).rfind("handwritten_quality", 0) == 0) rows.push_back({name, a, 0, b});
    else rows.push_back({name, a, b});
  }
  pclose(p);
}

// What single driver calls cost the host on this machine (the pieces of a submission),
// through the driver library directly, with the device's context current.
void driverCallCosts(rt::Device &d) {
  void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!h) return;
  using CtxGet = int (*)(void **);
  using CtxSet = int (*)(void *);
  using StreamCreate = int (*)(void **, unsigned);
  using EventCreate = int (*)(void **, unsigned);
  using EventRecord = int (*)(void *, void *);
  using Sync = int (*)(void *);
  using HostAlloc = int (*)(void **, size_t);
  using HtoD = int (*)(unsigned long long, const void *, size_t, void *);
  using MemAlloc = int (*)(unsigned long long *, size_t);
  auto ctxGet = reinterpret_cast<CtxGet>(dlsym(h, "cuCtxGetCurrent"));
  auto ctxSet = reinterpret_cast<CtxSet>(dlsym(h, "cuCtxSetCurrent"));
  auto streamCreate = reinterpret_cast<StreamCreate>(dlsym(h, "cuStreamCreate"));
  auto eventCreate = reinterpret_cast<EventCreate>(dlsym(h, "cuEventCreate"));
  auto eventRecord = reinterpret_cast<EventRecord>(dlsym(h, "cuEventRecord"));
  auto streamSync = reinterpret_cast<Sync>(dlsym(h, "cuStreamSynchronize"));
  auto hostAlloc = reinterpret_cast<HostAlloc>(dlsym(h, "cuMemAllocHost_v2"));
  auto htod = reinterpret_cast<HtoD>(dlsym(h, "cuMemcpyHtoDAsync_v2"));
  auto memAlloc = reinterpret_cast<MemAlloc>(dlsym(h, "cuMemAlloc_v2"));
  if (!ctxGet || !ctxSet || !streamCreate || !eventCreate || !eventRecord || !streamSync || !hostAlloc || !htod ||
      !memAlloc)
    return;
  auto buf = d.allocate(4096, 256); // makes the device's context current on this thread
  if (!buf) return;
  void *ctx = nullptr, *stream = nullptr, *ev = nullptr, *pinned = nullptr;
  unsigned long long dst = 0;
  if (ctxGet(&ctx) || !ctx || streamCreate(&stream, 1) || eventCreate(&ev, 2) || hostAlloc(&pinned, 4096) ||
      memAlloc(&dst, 4096))
    return;
  const int reps = 2000;
  auto time = [&](const char *name, auto call) {
    call();
    auto t0 = Clock::now();
    for (int r = 0; r < reps; ++r) call();
    const double us = usSince(t0) / reps;
    streamSync(stream);
    rows.push_back({std::string("driver_call_") + name, us, us});
  };
  time("cuCtxGetCurrent", [&] { void *c; ctxGet(&c); });
  time("cuCtxSetCurrent_same", [&] { ctxSet(ctx); });
  time("cuEventRecord", [&] { eventRecord(ev, stream); });
  time("cuMemcpyHtoDAsync_128B_pinned", [&] { htod(dst, pinned, 128, stream); });
}

} // namespace

int main(int argc, char **argv) {
  std::string json, cu, only;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--json" && i + 1 < argc) json = argv[++i];
    else if (a == "--handwritten" && i + 1 < argc) cu = argv[++i];
    else if (a == "--only" && i + 1 < argc) only = argv[++i];
    else
      die("usage: bench_cuda [--json FILE] [--handwritten handwritten.cu] [--only SECTION,...]\n"
          "sections: chain full_edges driver rebind param_loader done_word finalize quality alternated "
          "(default: all; the hand-written reference runs whenever --handwritten is given)");
  }
  // --only: the sections to run, comma-separated (names as in the usage line).
  auto want = [&only](const char *section) {
    if (only.empty()) return true;
    const std::string s = "," + only + ",";
    return s.find("," + std::string(section) + ",") != std::string::npos;
  };
  auto backend = cuda::makeCudaBackend();
  auto dev = backend->device(0);
  if (!dev) die(dev.error().message());
  rt::Device &d = **dev;
  std::printf("device: %s (%s)\n", d.info().name.c_str(), d.info().driverVersion.c_str());
  {
    // One untimed pass of the first benchmark: the hand-written side launches its
    // graphs after thousands of eager launches in its process, and the first rows of
    // this one ran colder than later ones (4.3 vs 2.2 us per submission).
    const size_t keep = rows.size();
    chainBench(d, 1000, false);
    rows.resize(keep);
  }
  if (want("chain"))
    for (uint32_t n : {1000u, 10000u})
      for (bool axpy : {false, true}) chainBench(d, n, axpy);
  if (want("full_edges")) {
    // The same replays with every edge a full dependency (no programmatic edges).
    cuda::CudaBackendOptions full;
    full.programmaticEdges = false;
    auto fullBackend = cuda::makeCudaBackend(full);
    auto fd = fullBackend->device(0);
    if (!fd) die(fd.error().message());
    for (uint32_t n : {1000u, 10000u})
      for (bool axpy : {false, true}) chainBench(**fd, n, axpy, "_full_edges", false);
    qualityBench(**fd, "_full_edges");
    finalizeBench(**fd, "_full_edges");
  }
  if (want("driver")) driverCallCosts(d);
  if (want("rebind")) rebindBench(d);
  if (want("param_loader")) {
    // The parameter loader instead of the ring (CudaBackendOptions::tableRing).
    cuda::CudaBackendOptions po;
    po.tableRing = false;
    auto pb = cuda::makeCudaBackend(po);
    auto pd = pb->device(0);
    if (!pd) die(pd.error().message());
    chainBench(**pd, 1000, false, "_param_loader", false);
    chainBench(**pd, 1000, true, "_param_loader", false);
    rebindBench(**pd, "_param_loader", 3);
    // Host submit of the two loaders alternated (the first rows of the process run on
    // a colder host than later ones).
    for (int round = 1; round <= 3; ++round) {
      chainBench(d, 1000, false, "_ring_ab" + std::to_string(round), false);
      chainBench(**pd, 1000, false, "_param_loader_ab" + std::to_string(round), false);
    }
  }
  if (want("done_word")) {
    // Completion by a recorded event per submission instead of the done word
    // (CudaBackendOptions::completionWord), alternated with the default.
    cuda::CudaBackendOptions eo;
    eo.completionWord = false;
    auto eb = cuda::makeCudaBackend(eo);
    auto ed = eb->device(0);
    if (!ed) die(ed.error().message());
    for (int round = 1; round <= 3; ++round)
      for (bool axpy : {false, true}) {
        chainBench(d, 1000, axpy, "_done_word_ab" + std::to_string(round), false);
        chainBench(**ed, 1000, axpy, "_event_ab" + std::to_string(round), false);
      }
  }
  if (want("finalize")) {
    finalizeBench(d);
    loadFinalizeBench(d, "", true);
    // Small pinned blocks from cuMemAllocHost per finalize instead of the pool
    // (CudaBackendOptions::pinnedPool), alternated with the default.
    cuda::CudaBackendOptions no;
    no.pinnedPool = false;
    auto nb = cuda::makeCudaBackend(no);
    auto nd = nb->device(0);
    if (!nd) die(nd.error().message());
    for (int round = 1; round <= 2; ++round) {
      loadFinalizeBench(**nd, "_no_pinned_pool_ab" + std::to_string(round));
      loadFinalizeBench(d, "_pinned_pool_ab" + std::to_string(round));
    }
  }
  if (want("quality")) qualityBench(d);
  if (!cu.empty()) {
    if (want("alternated")) alternated(cu, d, 11);
    handwritten(cu);
  }
  std::printf("%-48s %16s %16s\n", "benchmark", "us/node (device)", "us host/submit");
  for (const Row &r : rows)
    if (r.gbps == 0) std::printf("%-48s %16.4f %16.2f\n", r.name.c_str(), r.perNodeUs, r.hostUs);
  std::printf("\n%-48s %16s %16s\n", "kernel quality", "us/launch", "GB/s");
  for (const Row &r : rows)
    if (r.gbps != 0) std::printf("%-48s %16.2f %16.1f\n", r.name.c_str(), r.perNodeUs, r.gbps);
  if (!json.empty()) {
    std::ofstream o(json);
    o << "{\n  \"context\": {\"device\": \"" << d.info().name << "\", \"driver\": \"" << d.info().driverVersion
      << "\"},\n  \"benchmarks\": [\n";
    for (size_t i = 0; i < rows.size(); ++i)
      o << "    {\"name\": \"" << rows[i].name << "\", \"run_type\": \"iteration\", \"iterations\": 1, \"real_time\": "
        << rows[i].perNodeUs << ", \"cpu_time\": " << rows[i].hostUs << ", \"time_unit\": \"us\""
        << (rows[i].gbps != 0 ? ", \"bytes_per_second\": " + std::to_string(rows[i].gbps * 1e9) : std::string()) << "}"
        << (i + 1 < rows.size() ? ",\n" : "\n");
    o << "  ]\n}\n";
  }
  return 0;
}
