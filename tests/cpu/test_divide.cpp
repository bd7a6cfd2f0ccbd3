// Integer division by zero and the signed minimum divided by -1 on the cpu backend: the
// results are undefined in OpenCL, but the kernel must not trap (x86's div raises
// SIGFPE, which would end the whole process). Every lane with a valid divisor still gets
// the exact quotient and remainder. Scalars of each width and signedness, int4 vectors,
// divisors from memory and from a scalar argument (the division-run path, guards.h
// XDivision).
#include "cpu_test_util.h"

#include "internal.h"

#include "../common/temp_dir.h"

#include "cgraph/kernel/opencl_compiler.h"

#include <climits>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include <unistd.h>

using namespace cgtest;

namespace {

const char *kDivideSource = R"CL(
__kernel void div_int(__global const int *a, __global const int *b, __global int *q, __global int *r) {
  size_t i = get_global_id(0);
  q[i] = a[i] / b[i];
  r[i] = a[i] % b[i];
}
__kernel void div_uint(__global const uint *a, __global const uint *b, __global uint *q, __global uint *r) {
  size_t i = get_global_id(0);
  q[i] = a[i] / b[i];
  r[i] = a[i] % b[i];
}
__kernel void div_long(__global const long *a, __global const long *b, __global long *q, __global long *r) {
  size_t i = get_global_id(0);
  q[i] = a[i] / b[i];
  r[i] = a[i] % b[i];
}
__kernel void div_int4(__global const int4 *a, __global const int4 *b, __global int4 *q, __global int4 *r) {
  size_t i = get_global_id(0);
  q[i] = a[i] / b[i];
  r[i] = a[i] % b[i];
}
// A divisor from a scalar argument: the same in every work-item.
__kernel void div_by_arg(__global const int *a, __global int *q, __global int *r, int d) {
  size_t i = get_global_id(0);
  q[i] = a[i] / d;
  r[i] = a[i] % d;
}
// An x-affine dividend over a uniform divisor: the division-run path.
__kernel void rows(__global uint *q, __global uint *r, uint cols) {
  uint i = get_global_id(0);
  q[i] = i / cols;
  r[i] = i % cols;
}
)CL";

struct Outs {
  std::vector<uint8_t> q, r;
};

// One launch of `kernel` over `n` work-items with arguments (a, b, q, r).
template <typename T>
Outs run4(const std::string &kernel, const std::vector<T> &a, const std::vector<T> &b, size_t n,
          const std::vector<std::string> &clangArgs) {
  GraphBuilder gb(kernel);
  auto k = addKernelSource(gb, kDivideSource, "divide.cl", clangArgs);
  REQUIRE(k.count(kernel));
  const uint64_t bytes = a.size() * sizeof(T);
  uint32_t sa = addSlot(gb, "a", bytes), sb = addSlot(gb, "b", bytes), sq = addSlot(gb, "q", bytes),
           sr = addSlot(gb, "r", bytes);
  gb.addKernelNode(kernel, k[kernel], range1D(n),
                   {Arg::slot(sa), Arg::slot(sb), Arg::slot(sq), Arg::slot(sr)});
  Graph g = gb.take();
  auto exe = finalizeOrFail(g);
  Buffers bufs(g);
  bufs.set(sa, a);
  bufs.set(sb, b);
  runOrFail(*exe, bufs.table);
  return {bufs.get<uint8_t>(sq), bufs.get<uint8_t>(sr)};
}

// Lanes whose divisor is valid get C++'s quotient and remainder; the others any value.
template <typename T> void checkLanes(const std::vector<T> &a, const std::vector<T> &b, const Outs &o) {
  auto q = as<T>(o.q), r = as<T>(o.r);
  REQUIRE(q.size() == a.size());
  for (size_t i = 0; i < a.size(); ++i) {
    if (b[i] == 0) continue;
    if constexpr (std::is_signed_v<T>)
      if (b[i] == T(-1) && a[i] == std::numeric_limits<T>::min()) continue;
    INFO(i << ": " << +a[i] << " / " << +b[i]);
    CHECK(q[i] == T(a[i] / b[i]));
    CHECK(r[i] == T(a[i] % b[i]));
  }
}

// `lanes`: elements per work-item (4 for int4).
template <typename T>
void divisionCase(const std::string &kernel, const std::vector<std::string> &clangArgs, size_t lanes = 1) {
  const T mn = std::numeric_limits<T>::min();
  std::vector<T> a, b;
  const T as_[] = {T(7), T(100), mn, T(-9), T(0), T(123456), mn, T(5)};
  const T bs_[] = {T(2), T(0), T(-1), T(0), T(0), T(-1), T(3), T(7)};
  for (int rep = 0; rep < 32; ++rep)
    for (int j = 0; j < 8; ++j) {
      a.push_back(T(as_[j] + (std::is_signed_v<T> && as_[j] == mn ? 0 : rep)));
      b.push_back(bs_[j]);
    }
  Outs o = run4<T>(kernel, a, b, a.size() / lanes, clangArgs);
  checkLanes(a, b, o);
}

} // namespace

TEST_CASE("cpu: integer division by zero and INT_MIN / -1 do not trap", "[cpu][divide]") {
  // (-O2 IR is not tried: clang -O2 splits `a / b` and `a % b` with a `freeze`, which
  // the SPIR-V translator of lib/kernel cannot write.)
  {
    const std::vector<std::string> args;
    divisionCase<int32_t>("div_int", args);
    divisionCase<uint32_t>("div_uint", args);
    divisionCase<int64_t>("div_long", args);
    // int4: 64 vectors, the lanes as above.
    divisionCase<int32_t>("div_int4", args, 4);
  }
}

TEST_CASE("cpu: division by a zero scalar argument does not trap", "[cpu][divide]") {
  {
    const std::vector<std::string> args;
    for (int32_t d : {0, -1, 3}) {
      INFO("d = " << d);
      GraphBuilder gb("div_by_arg");
      auto k = addKernelSource(gb, kDivideSource, "divide.cl", args);
      const uint32_t n = 1024;
      uint32_t sa = addSlot(gb, "a", n * 4), sq = addSlot(gb, "q", n * 4), sr = addSlot(gb, "r", n * 4);
      gb.addKernelNode("div_by_arg", k["div_by_arg"], range1D(n),
                       {Arg::slot(sa), Arg::slot(sq), Arg::slot(sr), Arg::scalar(ScalarType::I32, uint32_t(d))});
      Graph g = gb.take();
      auto exe = finalizeOrFail(g);
      Buffers bufs(g);
      std::vector<int32_t> a(n);
      for (uint32_t i = 0; i < n; ++i) a[i] = i == 5 ? INT_MIN : int32_t(i * 37) - 500;
      bufs.set(sa, a);
      runOrFail(*exe, bufs.table);
      auto q = bufs.get<int32_t>(sq), r = bufs.get<int32_t>(sr);
      if (d == 0) continue; // any value
      for (uint32_t i = 0; i < n; ++i) {
        if (d == -1 && a[i] == INT_MIN) continue;
        REQUIRE(q[i] == a[i] / d);
        REQUIRE(r[i] == a[i] % d);
      }
    }
  }
}

TEST_CASE("cpu: division runs still apply with guarded divisors, and a zero divisor does not trap",
          "[cpu][divide]") {
  for (uint32_t cols : {0u, 1u, 7u, 64u}) {
    INFO("cols = " << cols);
    GraphBuilder gb("rows");
    auto k = addKernelSource(gb, kDivideSource, "divide.cl");
    const uint32_t n = 1000;
    uint32_t sq = addSlot(gb, "q", n * 4), sr = addSlot(gb, "r", n * 4);
    gb.addKernelNode("rows", k["rows"], range1D(n, 250),
                     {Arg::slot(sq), Arg::slot(sr), Arg::scalar(ScalarType::U32, cols)});
    Graph g = gb.take();
    auto exe = finalizeOrFail(g);
    Buffers bufs(g);
    runOrFail(*exe, bufs.table);
    auto q = bufs.get<uint32_t>(sq), r = bufs.get<uint32_t>(sr);
    if (cols == 0) continue;
    for (uint32_t i = 0; i < n; ++i) {
      REQUIRE(q[i] == i / cols);
      REQUIRE(r[i] == i % cols);
    }
  }
  // The lowered wrapper still cuts the x loop into runs of one quotient (emitDivisionRuns
  // names its loop "x.seg"): the guard keeps the divisor group-uniform.
  cgraph::test::TempDir tmp("cgraph-divide");
  const std::string dir = tmp.str();
  auto res = compileOpenCL(kDivideSource, "divide.cl", CompileOptions{});
  REQUIRE(res.ok());
  auto obj = cpu::lowerToObject(res->spirv.data(), res->spirv.size(), "divide_runs", nullptr, false, &dir);
  INFO((obj ? std::string() : obj.error().message()));
  REQUIRE(obj.ok());
  std::ifstream in(dir + "/divide_runs.ll");
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string ir = ss.str();
  const size_t rowsAt = ir.find("@cgk.rows.wg(");
  REQUIRE(rowsAt != std::string::npos);
  const size_t next = ir.find("\ndefine ", rowsAt + 1);
  CHECK(ir.substr(rowsAt, next - rowsAt).find("x.seg") != std::string::npos);
}
