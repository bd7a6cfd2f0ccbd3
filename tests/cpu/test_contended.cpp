// Kernels whose atomics all hit the same few words (JitKernel::contended, kernel_analysis.cpp's
// contendedAtomics) and how the launcher runs them (planLaunch: small launches on the
// calling thread): the classification of the suite's atomic kernels and of kernels
// written for the cases it must decline, and the results of contended kernels run on
// the calling thread, split over the pool, and on two threads at once. Also the 64-bit
// atomic min/max whose first read is a relaxed atomic load (builtins_atomic.h).
#include "cpu_test_util.h"

#include "internal.h"

#include "cgraph/kernel/module_info.h"
#include "cgraph/kernel/opencl_compiler.h"

#include <algorithm>
#include <fstream>
#include <sstream>
#include <thread>

using namespace cgtest;

namespace {

std::string kernelFile(const std::string &file) {
  const char *env = std::getenv("CGRAPH_TEST_SOURCE_DIR");
  std::ifstream in(std::string(env ? env : CGRAPH_SOURCE_DIR) + "/tests/cpu/kernels/" + file);
  REQUIRE(in.good());
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Compiles `source` (no cache) and resolves `names`. The compiler owns the JIT that holds
// the kernels' code: it must outlive every use of the returned module.
std::shared_ptr<const cpu::CompiledModule> compile(cpu::KernelCompiler &jit, const std::string &file,
                                                   const std::string &source,
                                                   const std::vector<std::string> &names) {
  auto res = compileOpenCL(source, file, CompileOptions{});
  INFO((res ? std::string() : res.error().message()));
  REQUIRE(res.ok());
  auto mod = jit.get(makeKernelModule(file, *res, nullptr, false), names, false);
  INFO((mod ? std::string() : mod.error().message()));
  REQUIRE(mod.ok());
  return *mod;
}

// The cases contendedAtomics must decline, and two it must take beyond the suite's.
const char *kContendedSource = R"CL(
// Contended: a compare-and-swap loop on one word (the only loop).
__kernel void cas_sum(__global int *sum, __global const int *in) {
  int v = in[get_global_id(0)];
  int old;
  do { old = atomic_or(&sum[0], 0); } while (atomic_cmpxchg(&sum[0], old, old + v) != old);
}
// Contended: the counter's index is a kernel argument (the same in every work-item).
__kernel void count_at(__global int *c, uint k) { atomic_inc(&c[k + 1]); }
// Not: the address depends on the work-group.
__kernel void per_group(__global int *c) { atomic_inc(&c[get_group_id(0)]); }
// Not: the address is picked by a branch on the work-item's id.
__kernel void branch_pick(__global int *c) {
  __global int *p;
  if (get_global_id(0) & 1) p = &c[0]; else p = &c[1];
  atomic_inc(p);
}
// Not: a loop of work besides the atomic (its length is the launch's business).
__kernel void loop_then_add(__global int *c, __global const int *in, int n) {
  int s = 0;
  for (int j = 0; j < n; ++j) s += in[j] * j;
  atomic_add(&c[0], s);
}
// Not: the index is loaded from memory (not followed, so not known to be uniform).
__kernel void indirect(__global int *c, __global const uint *idx) { atomic_inc(&c[idx[0]]); }
// Not: no atomics.
__kernel void plain(__global int *c) { c[get_global_id(0)] = 1; }
)CL";

cpu::Launch launch1D(uint64_t global, uint64_t local) {
  cpu::Launch l;
  l.global[0] = global;
  l.local[0] = local;
  return l;
}

#ifdef CGRAPH_CPU_TSAN
constexpr bool kInlineExpected = false; // TSan builds keep them on several threads
#else
constexpr bool kInlineExpected = true;
#endif

} // namespace

TEST_CASE("cpu contended atomics: which kernels are classified contended", "[cpu][atomics][contended]") {
  cpu::KernelCompiler jit;
  auto a64 = compile(jit, "atomics64.cl", kernelFile("atomics64.cl"), {"atomics64", "atomics64_local"});
  // atomics64: 14 atomics on 12 words, a compare-and-swap loop among them.
  CHECK(a64->find("atomics64")->contended);
  CHECK(a64->find("atomics64")->heavy);
  // atomics64_local: __local atomics do not count, its one global atomic has a fixed address.
  CHECK(a64->find("atomics64_local")->contended);
  auto a32 = compile(jit, "atomics.cl", kernelFile("atomics.cl"), {"hist_global", "hist_local", "atomic_ops"});
  CHECK(a32->find("atomic_ops")->contended);
  // cas_add: a compare-and-swap add on one global word and one __local word.
  auto ext = compile(jit, "extras.cl", kernelFile("extras.cl"), {"cas_add"});
  CHECK(ext->find("cas_add")->contended);
  // Histograms: the bin comes from the work-item's data or its local id.
  CHECK_FALSE(a32->find("hist_global")->contended);
  CHECK_FALSE(a32->find("hist_local")->contended);
  auto own = compile(jit, "contended.cl", kContendedSource,
                     {"cas_sum", "count_at", "per_group", "branch_pick", "loop_then_add", "indirect", "plain"});
  CHECK(own->find("cas_sum")->contended);
  CHECK(own->find("count_at")->contended);
  CHECK_FALSE(own->find("per_group")->contended);
  CHECK_FALSE(own->find("branch_pick")->contended);
  CHECK_FALSE(own->find("loop_then_add")->contended);
  CHECK_FALSE(own->find("indirect")->contended);
  CHECK_FALSE(own->find("plain")->contended);
}

TEST_CASE("cpu contended atomics: small launches run on the calling thread", "[cpu][atomics][contended]") {
  cpu::KernelCompiler jit;
  auto mod = compile(jit, "atomics64.cl", kernelFile("atomics64.cl"), {"atomics64", "atomics64_local"});
  const cpu::JitKernel &k = *mod->find("atomics64");
  cpu::LaunchPlan p;
  cpu::planLaunch(k, 0, launch1D(512, 1), p);
  CHECK(p.inlineRun == kInlineExpected);
  cpu::planLaunch(k, 0, launch1D(256, 64), p);
  CHECK(p.inlineRun == kInlineExpected);
  // The same kernel, not marked: a heavy one, split over the pool (when it has threads).
  cpu::JitKernel unmarked = k;
  unmarked.contended = false;
  cpu::planLaunch(unmarked, 0, launch1D(512, 1), p);
  CHECK(p.inlineRun == (p.total <= 1));
  // Large launches are split whatever their atomics.
  cpu::planLaunch(k, 0, launch1D(1 << 20, 1), p);
  CHECK_FALSE(p.inlineRun);
  const cpu::JitKernel &local = *mod->find("atomics64_local");
  cpu::planLaunch(local, local.staticLocalBytes, launch1D(512, 128), p);
  CHECK(p.total == 4);
  CHECK(p.inlineRun == kInlineExpected);
}

TEST_CASE("cpu contended atomics: results on one thread, on the pool, and two launches at once",
          "[cpu][atomics][contended]") {
  cpu::KernelCompiler jit;
  auto mod = compile(jit, "contended.cl", kContendedSource, {"cas_sum", "count_at"});
  const cpu::JitKernel &cas = *mod->find("cas_sum");
  REQUIRE(cas.contended);
  for (uint64_t n : {uint64_t(512), uint64_t(1) << 17}) { // inline; over the pool
    CAPTURE(n);
    std::vector<int32_t> in(n);
    int32_t want = 0;
    for (uint64_t i = 0; i < n; ++i) want += in[i] = int32_t(i % 7) - 2;
    std::vector<int32_t> sum(1, 5);
    const uint64_t args[2] = {uint64_t(uintptr_t(sum.data())), uint64_t(uintptr_t(in.data()))};
    cpu::LaunchPlan p;
    cpu::planLaunch(cas, 0, launch1D(n, 64), p);
    CHECK(p.inlineRun == (n == 512 && kInlineExpected));
    REQUIRE(!cpu::runPlanned(cas, args, p));
    CHECK(sum[0] == 5 + want);
  }
  // Two small launches on one counter from two threads at once (two nodes of one replay
  // level): each runs on its own calling thread, the atomics keep every increment.
  const cpu::JitKernel &count = *mod->find("count_at");
  REQUIRE(count.contended);
  std::vector<int32_t> c(4, 0);
  const uint64_t args[2] = {uint64_t(uintptr_t(c.data())), 1}; // c[2]
  constexpr int kRuns = 200;
  bool failed[2] = {false, false};
  auto worker = [&](int t) {
    for (int r = 0; r < kRuns; ++r)
      if (cpu::runKernel(count, args, 0, launch1D(1000, 1))) failed[t] = true;
  };
  std::thread other(worker, 1);
  worker(0);
  other.join();
  CHECK_FALSE(failed[0]);
  CHECK_FALSE(failed[1]);
  CHECK(c == std::vector<int32_t>{0, 0, 2 * kRuns * 1000, 0});
}

TEST_CASE("cpu 64-bit atomic min/max: global and local, one word for every work-item",
          "[cpu][atomics][contended]") {
  // Their compare-and-swap loops start from a relaxed atomic load (builtins_atomic.h,
  // builtin_library.cpp's lowerAtomicPeeks); a stale start only costs a round.
  const char *source = R"CL(
#pragma OPENCL EXTENSION cl_khr_int64_extended_atomics : enable
__kernel void minmax64(__global long *g, __global ulong *u, __global long *out) {
  __local long l[2];
  __local ulong lu;
  long v = ((long)get_global_id(0) - 100) * 3000000007L;
  if (get_local_id(0) == 0) { l[0] = 0; l[1] = 0; lu = 0; }
  barrier(CLK_LOCAL_MEM_FENCE);
  atom_min(&g[0], v);
  atom_max(&g[1], v);
  atom_min(&u[0], (ulong)v);
  atom_max(&u[1], (ulong)v);
  atom_min(&l[0], v);
  atom_max(&l[1], v);
  atom_max(&lu, (ulong)v);
  barrier(CLK_LOCAL_MEM_FENCE);
  if (get_local_id(0) == 0) {
    out[3 * get_group_id(0)] = l[0];
    out[3 * get_group_id(0) + 1] = l[1];
    out[3 * get_group_id(0) + 2] = (long)lu;
  }
}
)CL";
  cpu::KernelCompiler jit;
  auto mod = compile(jit, "minmax64.cl", source, {"minmax64"});
  const cpu::JitKernel &k = *mod->find("minmax64");
  CHECK(k.contended); // its __local atomics do not count, its global ones hit 4 words
  for (uint64_t n : {uint64_t(256), uint64_t(1) << 16}) { // inline; over the pool
    CAPTURE(n);
    const uint64_t local = 64, groups = n / local;
    std::vector<int64_t> g = {0, 0}, out(3 * groups, 1);
    std::vector<uint64_t> u = {~uint64_t(0), 0};
    const uint64_t args[3] = {uint64_t(uintptr_t(g.data())), uint64_t(uintptr_t(u.data())),
                              uint64_t(uintptr_t(out.data()))};
    REQUIRE(!cpu::runKernel(k, args, k.staticLocalBytes, launch1D(n, local)));
    auto val = [](uint64_t i) { return (int64_t(i) - 100) * int64_t(3000000007); };
    int64_t gmin = 0, gmax = 0;
    uint64_t umin = ~uint64_t(0), umax = 0;
    for (uint64_t i = 0; i < n; ++i) {
      gmin = std::min(gmin, val(i));
      gmax = std::max(gmax, val(i));
      umin = std::min(umin, uint64_t(val(i)));
      umax = std::max(umax, uint64_t(val(i)));
    }
    CHECK(g == std::vector<int64_t>{gmin, gmax});
    CHECK(u == std::vector<uint64_t>{umin, umax});
    for (uint64_t grp = 0; grp < groups; ++grp) {
      CAPTURE(grp);
      int64_t lmin = 0, lmax = 0;
      uint64_t lumax = 0;
      for (uint64_t i = grp * local; i < (grp + 1) * local; ++i) {
        lmin = std::min(lmin, val(i));
        lmax = std::max(lmax, val(i));
        lumax = std::max(lumax, uint64_t(val(i)));
      }
      CHECK(out[3 * grp] == lmin);
      CHECK(out[3 * grp + 1] == lmax);
      CHECK(uint64_t(out[3 * grp + 2]) == lumax);
    }
  }
}

// ---- Launches planned for the pool: timed, and run inline where that is faster ------

TEST_CASE("cpu launch tuning: a small launch of a heavy kernel settles on the faster way, results unchanged",
          "[cpu][tune]") {
  cpu::KernelCompiler jit;
  auto mod = compile(jit, "barrier_phis.cl", kernelFile("barrier_phis.cl"), {"loop_result"});
  const cpu::JitKernel &k = *mod->find("loop_result");
  REQUIRE(k.heavy);
  constexpr uint64_t kN = 256, kLocal = 64;
  cpu::LaunchPlan p;
  cpu::planLaunch(k, kLocal * 4, launch1D(kN, kLocal), p);
  CHECK(p.total == 4);
  REQUIRE_FALSE(p.inlineRun); // a heavy kernel's groups are planned for the pool
  std::vector<uint32_t> in(kN), out(kN);
  // Every run is right, whichever way it ran: two on the pool, two on the calling
  // thread (where the pool's were short), then the faster way.
  for (uint32_t run = 0; run < 8; ++run) {
    CAPTURE(run);
    for (uint32_t i = 0; i < kN; ++i) in[i] = i * 2654435761u + run;
    std::fill(out.begin(), out.end(), 0u);
    const uint64_t args[3] = {uint64_t(uintptr_t(in.data())), uint64_t(uintptr_t(out.data())), 0};
    REQUIRE_FALSE(cpu::runPlanned(k, args, p));
    for (uint64_t g = 0; g < kN; g += kLocal) {
      uint32_t s[kLocal];
      for (uint64_t l = 0; l < kLocal; ++l) {
        s[l] = 0;
        for (uint64_t j = 0; j < kLocal; ++j) s[l] += in[g + j] * uint32_t(j + 1);
      }
      for (uint64_t l = 0; l < kLocal; ++l)
        REQUIRE(out[g + l] == s[l] * 3u + (s[(l + 1) % kLocal] ^ uint32_t((l + 1) % kLocal)));
    }
    using Tune = cpu::LaunchPlan::Tune;
#ifdef CGRAPH_CPU_TSAN
    CHECK(p.tune == Tune::Pool); // TSan builds keep the pool (its race checks need it)
#else
    if (run == 1) CHECK(p.tune != Tune::Pool);  // the pool's two runs are in
    if (run >= 3) CHECK(p.tune == Tune::Decided);
    if (run >= 3 && p.poolBestNs <= 20000) CHECK(p.inlineBestNs != ~uint64_t(0)); // inline was tried
#endif
  }
  // A new plan starts over.
  cpu::planLaunch(k, kLocal * 4, launch1D(kN, kLocal), p);
  CHECK(p.tune == cpu::LaunchPlan::Tune::Pool);
  CHECK(p.tuneRuns == 0);
}

TEST_CASE("cpu launch tuning: a long launch stays on the pool without a run on one thread", "[cpu][tune]") {
  cpu::KernelCompiler jit;
  auto mod = compile(jit, "contended.cl", kContendedSource, {"loop_then_add"});
  const cpu::JitKernel &k = *mod->find("loop_then_add");
  REQUIRE(k.heavy);
  // 2^16 work-items of a 256-trip loop: 16M multiply-adds, far above the 20 us up to
  // which inline runs are tried, on any machine (and not long in sanitizer builds).
  constexpr uint64_t kN = uint64_t(1) << 16;
  std::vector<int32_t> in(256, 1), c(1, 0);
  const uint64_t args[3] = {uint64_t(uintptr_t(c.data())), uint64_t(uintptr_t(in.data())), 256};
  cpu::LaunchPlan p;
  cpu::planLaunch(k, 0, launch1D(kN, 64), p);
  REQUIRE_FALSE(p.inlineRun);
  uint32_t want = 0; // each work-item adds sum(j * 1); the int counter wraps as uint32 does
  for (uint32_t j = 0; j < 256; ++j) want += j;
  for (uint32_t run = 0; run < 3; ++run) {
    REQUIRE_FALSE(cpu::runPlanned(k, args, p));
    CHECK(uint32_t(c[0]) == (run + 1) * uint32_t(kN) * want);
  }
  CHECK(p.inlineBestNs == ~uint64_t(0)); // never run on one thread
#ifndef CGRAPH_CPU_TSAN
  CHECK(p.tune == cpu::LaunchPlan::Tune::Decided);
  CHECK(p.poolBestNs > 20000);
#endif
}
