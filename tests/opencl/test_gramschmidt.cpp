// Regression test for issue 7's Gram-Schmidt QR: a graph of 3 kernels per column
// (examples/gramschmidt/kernels/gramschmidt.cl), replayed and run eagerly on the cpu
// backend and on PoCL, checked against independent C++ references.
//
// The bug: PoCL's results through the SPIR path differed from the same kernels built
// from source by PoCL (and from the cpu backend) in the last bit of every multiply-add;
// modified Gram-Schmidt carries such differences from column to column, and at
// 2048x2048 they had grown to a relative error of 450. Cause: clang contracts
// `a * b + c` into llvm.fmuladd, SPIR-V spells that as OpenCL.std `mad`, and PoCL's mad()
// rounds the product before the add. spirvToSpirBitcode now lowers mad() to
// llvm.fmuladd. The checks below fail without that (update.0 already differs in one ulp).
#include "cl_test_util.h"

#include "cgraph/graph/hazards.h"
#include "cgraph/graph/order.h"

#ifdef CGRAPH_HAVE_CPU_BACKEND
#include "cgraph/backends/cpu/cpu_backend.h"
#endif

#include <cmath>
#include <fstream>
#include <sstream>

using namespace cgraph;
using namespace cgraph::cltest;

namespace {

constexpr int kN = 96; // m = n: 288 nodes, a second per run on PoCL

std::string kernelSource() {
  std::ifstream f(CGRAPH_GRAMSCHMIDT_KERNELS);
  std::stringstream ss;
  ss << f.rdbuf();
  REQUIRE(!ss.str().empty());
  return ss.str();
}

Graph qrGraph() {
  GraphBuilder b("gramschmidt");
  const std::string src = kernelSource();
  const uint32_t norm = addKernelSource(b, src, "gramschmidt.cl", "gs_norm");
  const uint32_t scale = b.graph().findKernel("gs_scale");
  const uint32_t update = b.graph().findKernel("gs_update");
  const uint64_t bytes = uint64_t(kN) * kN * 4;
  const uint32_t a = b.addSlot(externalSlot("a", bytes));
  const uint32_t r = b.addSlot(externalSlot("r", bytes));
  const uint32_t q = b.addSlot(externalSlot("q", bytes));
  auto i32 = [](int v) { return Arg::scalar(ScalarType::I32, uint32_t(v)); };
  for (int k = 0; k < kN; ++k) {
    const std::string s = "." + std::to_string(k);
    b.addKernelNode("norm" + s, norm, range1D(1),
                    {Arg::slot(a), Arg::slot(r), i32(k), i32(kN), i32(kN)});
    b.addKernelNode("scale" + s, scale, range1D(kN),
                    {Arg::slot(a), Arg::slot(r), Arg::slot(q), i32(k), i32(kN), i32(kN)});
    b.addKernelNode("update" + s, update, range1D(kN),
                    {Arg::slot(a), Arg::slot(r), Arg::slot(q), i32(k), i32(kN), i32(kN)});
  }
  Graph g = b.take();
  g.edges = inferHazardEdges(g);
  Error e = finalizeForFile(g);
  INFO(e.message());
  REQUIRE_FALSE(e);
  return g;
}

// Uniform [0, 1) plus 1 on the diagonal: well conditioned, so that the double-precision
// reference bounds every correct float result tightly.
std::vector<float> input() {
  std::vector<float> a(size_t(kN) * kN);
  uint64_t x = 0x9E3779B97F4A7C15ull;
  for (size_t i = 0; i < a.size(); ++i) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    a[i] = float(x >> 40) / float(1 << 24);
  }
  for (int i = 0; i < kN; ++i)
    a[size_t(i) * kN + i] += 1.0f;
  return a;
}

struct QR {
  std::vector<float> a, r, q;
};

// The kernels' arithmetic in C++, in their order, every `x * y + z` fused: what clang
// makes of the source (contraction on) on an FMA machine.
QR referenceFused(std::vector<float> a) {
  QR out{{}, std::vector<float>(a.size(), 0.0f), std::vector<float>(a.size(), 0.0f)};
  const int n = kN, m = kN;
  for (int k = 0; k < n; ++k) {
    float sum = 0.0f;
    for (int i = 0; i < m; ++i)
      sum = std::fma(a[i * n + k], a[i * n + k], sum);
    out.r[k * n + k] = std::sqrt(sum);
    for (int i = 0; i < m; ++i)
      out.q[i * n + k] = a[i * n + k] / out.r[k * n + k];
    for (int j = k + 1; j < n; ++j) {
      float dot = 0.0f;
      for (int i = 0; i < m; ++i)
        dot = std::fma(out.q[i * n + k], a[i * n + j], dot);
      out.r[k * n + j] = dot;
      for (int i = 0; i < m; ++i)
        a[i * n + j] = std::fma(-out.q[i * n + k], dot, a[i * n + j]);
    }
  }
  out.a = std::move(a);
  return out;
}

// Modified Gram-Schmidt in double: the numerical truth the float results approximate.
std::vector<std::vector<double>> referenceDouble(const std::vector<float> &in) {
  const int n = kN, m = kN;
  std::vector<double> a(in.begin(), in.end()), r(a.size(), 0.0), q(a.size(), 0.0);
  for (int k = 0; k < n; ++k) {
    double sum = 0;
    for (int i = 0; i < m; ++i)
      sum += a[i * n + k] * a[i * n + k];
    r[k * n + k] = std::sqrt(sum);
    for (int i = 0; i < m; ++i)
      q[i * n + k] = a[i * n + k] / r[k * n + k];
    for (int j = k + 1; j < n; ++j) {
      double dot = 0;
      for (int i = 0; i < m; ++i)
        dot += q[i * n + k] * a[i * n + j];
      r[k * n + j] = dot;
      for (int i = 0; i < m; ++i)
        a[i * n + j] -= q[i * n + k] * dot;
    }
  }
  return {r, q};
}

double relL2(const std::vector<float> &got, const std::vector<double> &ref) {
  double d = 0, n = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    d += (double(got[i]) - ref[i]) * (double(got[i]) - ref[i]);
    n += ref[i] * ref[i];
  }
  return std::sqrt(d / n);
}

// "" when equal bit for bit, else the first differing element.
std::string firstDifference(const char *slot, const std::vector<float> &got,
                            const std::vector<float> &want) {
  for (size_t i = 0; i < want.size(); ++i)
    if (std::memcmp(&got[i], &want[i], 4) != 0) {
      std::ostringstream os;
      os.precision(9);
      os << slot << "[" << i << "] (row " << i / kN << ", column " << i % kN << "): " << got[i]
         << " vs reference " << want[i];
      return os.str();
    }
  return "";
}

QR run(rt::Device &d, const Graph &g, rt::ExecMode mode, const std::vector<float> &a) {
  rt::FinalizeOptions fo;
  fo.mode = mode;
  fo.useCache = false; // no program binary from before a fix
  auto exe = d.finalize(g, fo);
  INFO((exe ? std::string() : exe.error().message()));
  REQUIRE(exe);
  const std::vector<float> zeros(a.size(), 0.0f);
  auto ba = alloc(d, a.size() * 4), br = alloc(d, a.size() * 4), bq = alloc(d, a.size() * 4);
  rt::BindingTable t;
  t.slots = {{ba.get()}, {br.get()}, {bq.get()}};
  // Twice from the same inputs: a replayed recording must give the same answer again.
  QR out;
  for (int rep = 0; rep < 2; ++rep) {
    writeAll(d, *ba, a);
    writeAll(d, *br, zeros);
    writeAll(d, *bq, zeros);
    runAndWait(**exe, t);
    QR now{readAll<float>(d, *ba), readAll<float>(d, *br), readAll<float>(d, *bq)};
    if (rep == 1) {
      CHECK(firstDifference("r (second run)", now.r, out.r) == "");
      CHECK(firstDifference("q (second run)", now.q, out.q) == "");
    }
    out = std::move(now);
  }
  return out;
}

void checkAgainstReferences(const char *what, const QR &got, const QR &fused,
                            const std::vector<std::vector<double>> &exact) {
  INFO(what);
  // Independent of how a backend rounds: the double-precision factorization.
  CHECK(relL2(got.r, exact[0]) < 1e-5);
  CHECK(relL2(got.q, exact[1]) < 1e-5);
  // Bit for bit with the fused C++ reference (and so with each other).
  CHECK(firstDifference("r", got.r, fused.r) == "");
  CHECK(firstDifference("q", got.q, fused.q) == "");
  CHECK(firstDifference("a", got.a, fused.a) == "");
}

} // namespace

TEST_CASE("gram-schmidt QR: PoCL replay and eager, SPIR and source paths, match the references",
          "[opencl][gramschmidt]") {
  const Graph g = qrGraph();
  REQUIRE(g.nodes.size() == size_t(3 * kN));
  const std::vector<float> a = input();
  const QR fused = referenceFused(a);
  const auto exact = referenceDouble(a);
  // The references agree with each other to float accuracy.
  REQUIRE(relL2(fused.r, exact[0]) < 1e-5);

  auto pocl = opencl::makeOpenCLBackend();
  rt::Device &pd = *openPocl(*pocl);
  checkAgainstReferences("pocl replay", run(pd, g, rt::ExecMode::Replay, a), fused, exact);
  checkAgainstReferences("pocl eager", run(pd, g, rt::ExecMode::Eager, a), fused, exact);

  // PoCL building the OpenCL C source itself: what the issue compared with.
  opencl::OpenCLBackendOptions so;
  so.forcePath = "source";
  auto poclSource = opencl::makeOpenCLBackend(so);
  rt::Device &sd = *openPocl(*poclSource);
  checkAgainstReferences("pocl from source, replay", run(sd, g, rt::ExecMode::Replay, a), fused,
                         exact);
}

#ifdef CGRAPH_HAVE_CPU_BACKEND
TEST_CASE("gram-schmidt QR: cpu replay and eager match the references",
          "[opencl][cpu][gramschmidt]") {
  const Graph g = qrGraph();
  const std::vector<float> a = input();
  const QR fused = referenceFused(a);
  const auto exact = referenceDouble(a);
  auto cpu = cpu::makeCpuBackend();
  auto dev = cpu->device(0);
  INFO((dev ? std::string() : dev.error().message()));
  REQUIRE(dev);
  checkAgainstReferences("cpu replay", run(**dev, g, rt::ExecMode::Replay, a), fused, exact);
  checkAgainstReferences("cpu eager", run(**dev, g, rt::ExecMode::Eager, a), fused, exact);
}
#endif
