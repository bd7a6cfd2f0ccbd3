// Barriers with local memory (barrier regions; the same cases run as work-item fibers in
// cpu_barrier_fibers_tests) and 1-3D ranges with and without local
// size and with global offsets.
#include "../common/temp_dir.h"
#include "cpu_test_util.h"

#include <algorithm>
#include <fstream>
#include <iterator>
#include <numeric>
#include <random>
#include <regex>
#include <string>

using namespace cgtest;

TEST_CASE("cpu barriers: work-group reduction, static __local array", "[cpu][barrier]") {
  const size_t n = 64 * 40;
  std::vector<float> in(n);
  for (size_t i = 0; i < n; ++i)
    in[i] = float(i % 17) - 8.0f;
  // reqd_work_group_size(64): no local size given, the backend must use 64.
  auto out =
      as<float>(runOne("barriers.cl", "reduce_static", range1D(n), {buf(in), zeros(40 * 4)})[1]);
  for (size_t g = 0; g < 40; ++g) {
    float want = 0;
    for (size_t i = 0; i < 64; ++i)
      want += in[g * 64 + i];
    REQUIRE(out[g] == want);
  }
}

TEST_CASE("cpu barriers: reduction with a __local pointer argument", "[cpu][barrier]") {
  for (size_t wg : {1u, 16u, 128u, 256u}) {
    const size_t groups = 33, n = wg * groups;
    std::vector<int> in(n);
    for (size_t i = 0; i < n; ++i)
      in[i] = int(i * 2654435761u % 1000) - 500;
    auto out = as<int>(runOne("barriers.cl", "reduce_arg", range1D(n, wg),
                              {buf(in), zeros(groups * 4), localMem(wg * 4)})[1]);
    for (size_t g = 0; g < groups; ++g) {
      INFO("wg " << wg << " group " << g);
      REQUIRE(out[g] == std::accumulate(in.begin() + g * wg, in.begin() + (g + 1) * wg, 0));
    }
  }
}

TEST_CASE("cpu barriers: local-memory transpose, 2D groups", "[cpu][barrier]") {
  const int w = 64, h = 40;
  std::vector<float> in(w * h);
  for (int i = 0; i < w * h; ++i)
    in[i] = float(i);
  auto out = as<float>(runOne(
      "barriers.cl", "transpose", range2D(w, h, 8, 8),
      {buf(in), zeros(w * h * 4), scalar(ScalarType::I32, w), scalar(ScalarType::I32, h)})[1]);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x)
      REQUIRE(out[x * h + y] == in[y * w + x]);
}

TEST_CASE("cpu barriers: values live across barriers in a loop", "[cpu][barrier]") {
  for (size_t wg : {1u, 8u, 64u, 256u}) {
    const size_t n = 1024;
    std::vector<float> in(n);
    for (size_t i = 0; i < n; ++i)
      in[i] = float(int(i * 37 % 101) - 50) * 0.25f;
    auto out = as<float>(runOne("barriers.cl", "private_across", range1D(n, wg),
                                {buf(in), zeros(n * 4), localMem(wg * 4)})[1]);
    for (size_t g = 0; g < n; ++g) {
      const size_t base = g / wg * wg, size = std::min(wg, n - base), l = g - base;
      const float nb = in[base + (l + 1) % size];
      float acc = 0;
      for (int step = 0; step < 8; ++step)
        acc += (l % 3 == 0 ? 2.0f : 1.0f) * (nb * float(step + 1));
      INFO("wg " << wg << " item " << g);
      REQUIRE(out[g] == ((l % 2) ? acc : -acc));
    }
  }
}

TEST_CASE("cpu barriers: a large private array live across a barrier", "[cpu][barrier]") {
  const size_t n = 256;
  std::vector<int> in(n);
  for (size_t i = 0; i < n; ++i)
    in[i] = int(i) * 3 - 100;
  auto out =
      as<int>(runOne("barriers.cl", "big_private", range1D(n, 64), {buf(in), zeros(n * 4)})[1]);
  for (size_t g = 0; g < n; ++g) {
    int want = 0;
    for (int i = 0; i < 8192; i += 64)
      want += in[g] + int((size_t(i) + g) % 8192);
    REQUIRE(out[g] == want);
  }
}

// A private array indexed by the work-item's id and read after a barrier: its address
// `&priv[lid % 4]` depends only on parameters, so the cut hoists it into the setup block,
// where the array becomes a context array. The context pointer must come first (it was
// made at the end of setup: "Instruction does not dominate all uses").
TEST_CASE("cpu barriers: an id-indexed private array read after a barrier", "[cpu][barrier]") {
  const char *src = R"CL(
__kernel void priv_index(__global const int *in, __global int *out, __local int *tile) {
  size_t l = get_local_id(0), i = get_global_id(0);
  int priv[4];
  for (int k = 0; k < 4; ++k) priv[k] = in[i] * (k + 1);
  tile[l] = in[i];
  barrier(CLK_LOCAL_MEM_FENCE);
  out[i] = priv[l % 4] + tile[(l + 1) % get_local_size(0)];
}
)CL";
  const uint32_t n = 256, wg = 64;
  GraphBuilder b("priv_index");
  auto k = addKernelSource(b, src, "priv_index.cl");
  uint32_t sin = addSlot(b, "in", n * 4), sout = addSlot(b, "out", n * 4);
  b.addKernelNode("priv_index", k["priv_index"], range1D(n, wg),
                  {Arg::slot(sin), Arg::slot(sout), Arg::localMem(wg * 4)});
  Graph g = b.take();
  auto exe = finalizeOrFail(g);
  Buffers bufs(g);
  std::vector<int> in(n);
  for (uint32_t i = 0; i < n; ++i)
    in[i] = int(i * 7) - 300;
  bufs.set(sin, in);
  runOrFail(*exe, bufs.table);
  auto out = bufs.get<int>(sout);
  for (uint32_t i = 0; i < n; ++i) {
    const uint32_t l = i % wg, next = i - l + (l + 1) % wg;
    REQUIRE(out[i] == in[i] * int(l % 4 + 1) + in[next]);
  }
}

namespace {

// References for the kernels of barrier_phis.cl, one work-group `v` (its inputs, made
// its outputs) at a time.
void refPhiKernel(const std::string &kernel, std::vector<uint32_t> &v, uint32_t trips) {
  const size_t n = v.size();
  std::vector<uint32_t> x = v, t(n);
  if (kernel == "loop_result") {
    uint32_t s = 0;
    for (size_t k = 0; k < n; ++k)
      s += x[k] * uint32_t(k + 1);
    for (size_t l = 0; l < n; ++l)
      v[l] = s * 3u + (s ^ uint32_t((l + 1) % n));
  } else if (kernel == "cond_across") {
    for (size_t l = 0; l < n; ++l)
      v[l] = (l % 3 == 0 ? x[l] * 2u : x[l] ^ 0x55u) + x[(l + 1) % n];
  } else {
    const bool counter = kernel == "loop_counter";
    for (uint32_t it = 0; it < trips; ++it) {
      for (size_t l = 0; l < n; ++l)
        t[l] = counter ? x[l] + it : x[l];
      for (size_t l = 0; l < n; ++l)
        v[l] = ((l & 1) ? x[l] * 3u : x[l] + (counter ? 1u : it)) + t[(l + 1) % n];
      x = v;
    }
  }
}

} // namespace

// A phi (a loop's result or counter, a conditional operator's value) used after a
// barrier: the cut must carry it like any other value live across the barrier. At -O0
// only the cond_* kernels have such phis; at -O2 the loop_* ones have those of the fused
// graphs that showed the bugs (a NaN; "Instruction does not dominate all uses").
// Without the fix: cond_across -O0 and loop_result -O2 gave wrong results, cond_loop and
// loop_counter invalid IR (checked with one kernel per module; here the four share one,
// so an invalid one fails every section of its -O level).
TEST_CASE("cpu barriers: phis used after a barrier at -O0 and -O2", "[cpu][barrier]") {
  for (const char *opt : {"-O0", "-O2"})
    for (const std::string kernel : {"loop_result", "loop_counter", "cond_across", "cond_loop"})
      DYNAMIC_SECTION(kernel << " " << opt) {
        for (size_t wg : {1u, 3u, 16u, 64u}) {
          const size_t groups = 5, n = wg * groups;
          const uint32_t trips = 4;
          std::vector<uint32_t> in(n);
          for (size_t i = 0; i < n; ++i)
            in[i] = uint32_t(i * 2654435761u >> 7);
          std::vector<KArg> args{buf(in), zeros(n * 4),
                                 localMem(wg * 4 * (kernel == "cond_loop" ? 2 : 1))};
          if (kernel == "loop_counter" || kernel == "cond_loop")
            args.push_back(scalar(ScalarType::U32, trips));
          auto out =
              as<uint32_t>(runOne("barrier_phis.cl", kernel, range1D(n, wg), args, {opt})[1]);
          for (size_t g = 0; g < groups; ++g) {
            std::vector<uint32_t> want(in.begin() + g * wg, in.begin() + (g + 1) * wg);
            refPhiKernel(kernel, want, trips);
            for (size_t l = 0; l < wg; ++l) {
              INFO(kernel << " " << opt << " wg " << wg << " item " << g * wg + l);
              REQUIRE(out[g * wg + l] == want[l]);
            }
          }
        }
      }
}

namespace {

// Reference for kernels/basic.cl `ids`.
void checkIds(const std::vector<int> &out, uint32_t dims, const uint64_t g[3],
              const uint64_t *givenLocal, const uint64_t off[3]) {
  uint64_t total = g[0] * g[1] * g[2];
  // Runtime-chosen local size: read it back from the largest local id in each dimension
  // (every id below 100, see the packing in basic.cl), then check every item against it
  // exactly like a given one (partial trailing groups included).
  uint64_t chosen[3] = {1, 1, 1};
  if (!givenLocal) {
    for (uint64_t i = 0; i < total; ++i) {
      const int lid = out[8 * i + 3];
      chosen[0] = std::max<uint64_t>(chosen[0], uint64_t(lid % 100) + 1);
      chosen[1] = std::max<uint64_t>(chosen[1], uint64_t(lid / 100 % 100) + 1);
      chosen[2] = std::max<uint64_t>(chosen[2], uint64_t(lid / 10000) + 1);
    }
    for (int d = 0; d < 3; ++d)
      REQUIRE(chosen[d] <= g[d]);
  }
  const uint64_t *l = givenLocal ? givenLocal : chosen;
  for (uint64_t i = 0; i < total; ++i) {
    uint64_t gx = i % g[0], gy = (i / g[0]) % g[1], gz = i / (g[0] * g[1]);
    const int *o = &out[8 * i];
    INFO("dims " << dims << " item " << gx << "," << gy << "," << gz);
    REQUIRE(o[0] == int(gx + off[0]));
    REQUIRE(o[1] == int(gy + off[1]));
    REQUIRE(o[2] == int(gz + off[2]));
    REQUIRE(o[7] == int(dims));
    REQUIRE(o[3] == int(gx % l[0] + 100 * (gy % l[1]) + 10000 * (gz % l[2])));
    REQUIRE(o[4] == int(gx / l[0] + 100 * (gy / l[1]) + 10000 * (gz / l[2])));
    const uint64_t gid[3] = {gx, gy, gz};
    uint64_t size = 1, groups = 1;
    for (int d = 0; d < 3; ++d) {
      size *= std::min(l[d], g[d] - gid[d] / l[d] * l[d]); // actual size of this group
      groups *= (g[d] + l[d] - 1) / l[d];
    }
    REQUIRE(o[5] == int(size));
    REQUIRE(o[6] == int(groups));
  }
}

} // namespace

TEST_CASE("cpu ranges: 1-3D, with and without local size, with offsets", "[cpu][ranges]") {
  struct Case {
    uint32_t dims;
    uint64_t g[3], l[3], off[3];
  };
  const Case cases[] = {
      {1, {100, 1, 1}, {0, 0, 0}, {0, 0, 0}},  {1, {96, 1, 1}, {32, 1, 1}, {5, 0, 0}},
      {2, {16, 12, 1}, {0, 0, 0}, {0, 0, 0}},  {2, {16, 12, 1}, {4, 3, 1}, {7, 9, 0}},
      {3, {8, 6, 4}, {0, 0, 0}, {1, 2, 3}},    {3, {8, 6, 4}, {2, 3, 2}, {0, 0, 0}},
      {3, {8, 6, 4}, {4, 2, 2}, {10, 20, 30}},
  };
  for (const Case &c : cases) {
    NDRange r;
    r.dims = c.dims;
    for (int d = 0; d < 3; ++d) {
      r.global[d].value = c.g[d];
      r.local[d].value = c.l[0] ? c.l[d] : 0;
      r.offset[d].value = c.off[d];
    }
    uint64_t total = c.g[0] * c.g[1] * c.g[2];
    auto out = as<int>(runOne("basic.cl", "ids", r, {zeros(total * 32)})[0]);
    checkIds(out, c.dims, c.g, c.l[0] ? c.l : nullptr, c.off);
  }
}

TEST_CASE("cpu kernels: scalar arguments of every width, matmul", "[cpu]") {
  float f = 1.25f;
  double d = -2.5;
  uint64_t fb = f32(f), db = f64(d);
  auto out = as<int64_t>(
      runOne("basic.cl", "scalars", range1D(1),
             {zeros(80), scalar(ScalarType::I8, uint8_t(-5)), scalar(ScalarType::U8, 250),
              scalar(ScalarType::I16, uint16_t(-300)), scalar(ScalarType::U16, 60000),
              scalar(ScalarType::I32, uint32_t(-70000)), scalar(ScalarType::U32, 4000000000u),
              scalar(ScalarType::I64, uint64_t(-5000000000ll)), scalar(ScalarType::U64, 7),
              scalar(ScalarType::F32, fb), scalar(ScalarType::F64, db)})[0]);
  const int64_t want[10] = {-5,           250,           -300, 60000, -70000,
                            4000000000ll, -5000000000ll, 7,    1250,  -2500};
  for (int i = 0; i < 10; ++i)
    REQUIRE(out[i] == want[i]);

  const int n = 48;
  std::vector<float> a(n * n), b(n * n);
  std::mt19937 rng(3);
  for (auto &v : a)
    v = float(rng() % 7) - 3;
  for (auto &v : b)
    v = float(rng() % 5) - 2;
  auto c = as<float>(runOne("basic.cl", "matmul", range2D(n, n),
                            {buf(a), buf(b), zeros(n * n * 4), scalar(ScalarType::I32, n)})[2]);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      float s = 0;
      for (int k = 0; k < n; ++k)
        s += a[i * n + k] * b[k * n + j];
      REQUIRE(c[i * n + j] == s);
    }
}

// Private arrays in a kernel with barriers. `part` is filled and summed between two
// barriers: no value of it crosses one, so it stays an alloca of its region (registers
// once optimized) instead of a per-work-item context array. `keep` is written before a
// barrier and read after it, and `loop` is carried around a loop that holds a barrier:
// both must stay context arrays. The dumped IR says how many bytes of context each
// work-item has.
TEST_CASE("cpu barriers: private arrays that no barrier separates stay in registers", "[cpu][barrier]") {
  const char *src = R"CL(
__kernel void private_regions(__global const float *in, __global float *out, __local float *tile) {
  const int l = get_local_id(0), i = get_global_id(0), n = get_local_size(0);
  float keep[4];
  for (int k = 0; k < 4; ++k) keep[k] = in[i] * (float)(k + 1);
  tile[l] = in[i];
  barrier(CLK_LOCAL_MEM_FENCE);
  float part[8];
  for (int k = 0; k < 8; ++k) part[k] = tile[(l + k) % n];
  float s = 0.0f;
  for (int k = 0; k < 8; ++k) s += part[k] * (float)(k + 1);
  barrier(CLK_LOCAL_MEM_FENCE);
  float loop[2] = {0.0f, 0.0f};
  for (int it = 0; it < 3; ++it) {
    loop[it & 1] += tile[(l + it) % n];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  out[i] = s + keep[l % 4] + loop[0] - loop[1];
}
)CL";
  cgraph::test::TempDir dump("cgraph-region-arrays"), cache("cgraph-region-arrays-cache");
  cpu::CpuOptions o;
  o.dumpDir = dump.str();
  o.cache.dir = cache.str();
  o.barrierFibers = false; // the cut at barriers, also in cpu_barrier_fibers_tests
  auto backend = cpu::makeCpuBackend(o);
  auto dev = backend->device(0);
  REQUIRE(dev.ok());
  const uint32_t n = 256, wg = 64;
  GraphBuilder b("private_regions");
  auto k = addKernelSource(b, src, "private_regions.cl");
  const uint32_t sin = addSlot(b, "in", n * 4), sout = addSlot(b, "out", n * 4);
  b.addKernelNode("private_regions", k["private_regions"], range1D(n, wg),
                  {Arg::slot(sin), Arg::slot(sout), Arg::localMem(wg * 4)});
  Graph g = b.take();
  auto exe = (*dev)->finalize(g, rt::FinalizeOptions{});
  REQUIRE(exe.ok());
  std::vector<float> in(n), out(n);
  for (uint32_t i = 0; i < n; ++i)
    in[i] = float(int(i * 13 % 29) - 14) * 0.5f;
  auto bin = (*dev)->allocate(n * 4, 64), bout = (*dev)->allocate(n * 4, 64);
  REQUIRE((bin.ok() && bout.ok()));
  REQUIRE(!(*dev)->write(**bin, 0, in.data(), n * 4));
  rt::BindingTable t;
  t.slots = {rt::Binding{bin->get(), 0, n * 4}, rt::Binding{bout->get(), 0, n * 4}};
  auto ev = (*exe)->enqueue(t, {});
  REQUIRE(ev.ok());
  REQUIRE(!(*ev)->wait());
  REQUIRE(!(*dev)->read(**bout, 0, out.data(), n * 4));
  for (uint32_t i = 0; i < n; ++i) {
    const uint32_t l = i % wg, base = i - l;
    float s = 0.0f;
    for (uint32_t kk = 0; kk < 8; ++kk)
      s += in[base + (l + kk) % wg] * float(kk + 1);
    float loop[2] = {0.0f, 0.0f};
    for (uint32_t it = 0; it < 3; ++it)
      loop[it & 1] += in[base + (l + it) % wg];
    INFO("item " << i);
    REQUIRE(out[i] == s + in[i] * float(l % 4 + 1) + loop[0] - loop[1]);
  }
  std::ifstream f(dump.str("private_regions.cl.ll"));
  REQUIRE(f.good());
  const std::string ir((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  // cgk.<kernel>.info's fifth field: the context bytes per work-item. keep (16 bytes),
  // loop (8) and one float live across the second barrier (s): 28. With part, 60.
  const std::string info = "@cgk.private_regions.info = ";
  const size_t at = ir.find(info);
  REQUIRE(at != std::string::npos);
  std::smatch fields;
  const std::string line = ir.substr(at, ir.find('\n', at) - at);
  REQUIRE(std::regex_search(line, fields, std::regex(R"(\[i64 (\d+), i64 (\d+), i64 (\d+), i64 (\d+), i64 (\d+),)")));
  CHECK(fields[5].str() == "28");
}

// A tree reduction whose steps are strided loops over more sums than work-items
// (linear.cl's shape): each step's loop is rotated, so its first test guards the x
// loop, which then runs only the work-items with a share. Every count of sums below,
// at and above the group size, and a group size that is not a power of two.
TEST_CASE("cpu barriers: strided steps of a tree reduction", "[cpu][barrier]") {
  const char *src = R"CL(
__kernel void strided_tree(__global const int *in, __global int *out, __local int *red, int active) {
  const int lid = get_local_id(0), n = get_local_size(0), g = get_group_id(0);
  for (int a = 0; a < active; ++a) red[a * n + lid] = in[(g * active + a) * n + lid];
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int w = n; w > 1; w = (w + 1) / 2) { // w sums left per accumulator
    const int s = (w + 1) / 2, m = w - s;
    for (int idx = lid; idx < active * m; idx += n) {
      const int a = idx / m, e = idx % m;
      red[a * n + e] += red[a * n + e + s];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  for (int a = lid; a < active; a += n) out[g * active + a] = red[a * n];
}
)CL";
  for (uint32_t wg : {64u, 48u, 7u})
    for (int active : {1, 3, 32, 100}) {
      const uint32_t groups = 3, n = groups * wg;
      GraphBuilder b("strided_tree");
      auto k = addKernelSource(b, src, "strided_tree.cl");
      const uint32_t sin = addSlot(b, "in", uint64_t(n) * active * 4), sout = addSlot(b, "out", groups * active * 4);
      b.addKernelNode("strided_tree", k["strided_tree"], range1D(n, wg),
                      {Arg::slot(sin), Arg::slot(sout), Arg::localMem(uint64_t(wg) * active * 4),
                       Arg::scalar(ScalarType::I32, uint64_t(active))});
      Graph g = b.take();
      auto exe = finalizeOrFail(g);
      Buffers bufs(g);
      std::vector<int> in(size_t(n) * active);
      for (size_t i = 0; i < in.size(); ++i)
        in[i] = int(i * 7919 % 1000) - 500;
      bufs.set(sin, in);
      runOrFail(*exe, bufs.table);
      auto out = bufs.get<int>(sout);
      for (uint32_t gi = 0; gi < groups; ++gi)
        for (int a = 0; a < active; ++a) {
          int want = 0;
          for (uint32_t l = 0; l < wg; ++l)
            want += in[(size_t(gi) * active + a) * wg + l];
          INFO("wg " << wg << " active " << active << " group " << gi << " sum " << a);
          REQUIRE(out[size_t(gi) * active + a] == want);
        }
    }
}
