// Stored parameter expressions on the cpu backend (issue 12): one .cgf file, written and
// read back, run at several parameter values; nd-ranges and scalar arguments come from
// expressions over `$n`, checked against a C++ reference; bad values are refused at
// enqueue, naming the node and field, before anything runs.
#include "cpu_test_util.h"

#include "cgraph/expr.h"
#include "cgraph/format/reader.h"
#include "cgraph/format/writer.h"

#include <cmath>

using namespace cgtest;

namespace {

void addExpr(Graph &g, uint32_t node, ExprField field, uint32_t arg, const std::string &text) {
  auto p = expr::parse(text);
  INFO(text);
  REQUIRE(p.ok());
  std::vector<uint32_t> paramOf;
  for (const std::string &n : p->names) {
    REQUIRE(g.findParam(n) != kNone);
    paramOf.push_back(g.findParam(n));
  }
  auto m = expr::remapVariables(*p, paramOf);
  REQUIRE(m.ok());
  FieldExpr e;
  e.node = node;
  e.field = field;
  e.arg = arg;
  e.code = expr::encode(*m);
  g.exprs.push_back(e);
}

// Through the file format, as a runtime would get it.
Graph viaFile(const Graph &g) {
  auto bytes = writeCgf(g);
  INFO((bytes ? std::string() : bytes.error().message()));
  REQUIRE(bytes.ok());
  CHECK((*bytes)[8] == 2); // format 2.0: a 1.0 reader refuses it
  auto back = readCgf(bytes->data(), bytes->size());
  INFO((back ? std::string() : back.error().message()));
  REQUIRE(back.ok());
  return std::move(*back);
}

rt::ParamValues values(std::vector<uint64_t> bits) {
  rt::ParamValues p;
  p.bits = std::move(bits);
  return p;
}

constexpr int kMaxN = 24;

std::vector<float> luMatrix(int n) {
  std::vector<float> a(size_t(kMaxN) * kMaxN, 0.f);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j)
      a[size_t(i) * n + j] = i == j ? float(n + 2) : float((i * 7 + j * 3) % 11) / 11.f - 0.5f;
  return a;
}

void luReference(std::vector<float> &a, int n) {
  for (int k = 0; k + 1 < n; ++k)
    for (int i = k + 1; i < n; ++i) {
      float l = a[size_t(i) * n + k] / a[size_t(k) * n + k];
      a[size_t(i) * n + k] = l;
      for (int j = k + 1; j < n; ++j)
        a[size_t(i) * n + j] -= l * a[size_t(k) * n + j];
    }
}

// The shrinking-range shape of an LU decomposition: step k runs over the n - k - 1 rows
// below the pivot, rounded up to work-groups of 8; one graph of kMaxN - 1 steps serves
// every n <= kMaxN.
Graph luGraph() {
  GraphBuilder b("lu");
  auto k = addKernels(b, "expr.cl");
  uint32_t a = addSlot(b, "a", kMaxN * kMaxN * 4);
  uint32_t pn = b.addParam(Param{"n", ScalarType::I32, kMaxN});
  std::vector<std::pair<uint32_t, int>> steps;
  for (int s = 0; s + 1 < kMaxN; ++s) {
    uint32_t node = b.addKernelNode("lu_update." + std::to_string(s), k["lu_step"], range1D(8, 8),
                                    {Arg::slot(a), Arg::scalar(ScalarType::I32, uint64_t(s)),
                                     Arg::param(pn), Arg::scalar(ScalarType::I32, 0)});
    if (s > 0) b.addEdge(node - 1, node);
    steps.push_back({node, s});
  }
  Graph g = b.take();
  for (auto [node, s] : steps) {
    const std::string ks = std::to_string(s);
    addExpr(g, node, ExprField::Global0, 0, "align_up(max($n - " + ks + " - 1, 1), 8)");
    addExpr(g, node, ExprField::ScalarArg, 3, "$n - " + ks + " - 1");
  }
  return viaFile(g);
}

Graph shapeGraph() {
  GraphBuilder b("shape");
  auto k = addKernels(b, "expr.cl");
  uint32_t out = addSlot(b, "out", 4096 * 4);
  b.addParam(Param{"n", ScalarType::I32, 8});
  uint32_t node = b.addKernelNode("shape", k["shape"], range1D(1, 1),
                                  {Arg::slot(out), Arg::scalar(ScalarType::I32, 0)});
  Graph g = b.take();
  addExpr(g, node, ExprField::Global0, 0, "$n * 2");
  addExpr(g, node, ExprField::Local0, 0, "min($n, 32768)");
  addExpr(g, node, ExprField::Offset0, 0, "$n - 3");
  addExpr(g, node, ExprField::ScalarArg, 1, "($n % 25) * 100000000");
  return viaFile(g);
}

} // namespace

TEST_CASE("cpu exprs: one LU graph runs at several n, ranges from expressions",
          "[cpu][graph][expr]") {
  Graph g = luGraph();
  REQUIRE(g.exprs.size() == 2 * (kMaxN - 1));
  auto exe = finalizeOrFail(g);
  Buffers bufs(g);
  for (int n : {kMaxN, 5, 16, 2, 1, 13}) {
    INFO("n = " << n);
    std::vector<float> a = luMatrix(n);
    bufs.set(0, a);
    runOrFail(*exe, bufs.table, values({uint64_t(n)}));
    luReference(a, n);
    std::vector<float> got = bufs.get<float>(0);
    for (size_t i = 0; i < a.size(); ++i) {
      INFO("element " << i);
      REQUIRE(std::fabs(got[i] - a[i]) <= 1e-5f * std::max(1.f, std::fabs(a[i])));
    }
  }
}

TEST_CASE("cpu exprs: global, local, offset and a scalar argument per submission",
          "[cpu][graph][expr]") {
  Graph g = shapeGraph();
  for (rt::ExecMode mode : {rt::ExecMode::Replay, rt::ExecMode::Eager}) {
    auto exe = finalizeOrFail(g, mode);
    Buffers bufs(g);
    for (int n : {3, 8, 5, 100}) {
      INFO("n = " << n << (mode == rt::ExecMode::Eager ? " eager" : " replay"));
      bufs.set(0, std::vector<int>(4096, 0));
      runOrFail(*exe, bufs.table, values({uint64_t(n)}));
      std::vector<int> out = bufs.get<int>(0);
      CHECK(out[0] == 2 * n);
      CHECK(out[1] == n);
      CHECK(out[2] == n - 3);
      CHECK(out[3] == (n % 25) * 100000);
      for (int i = 0; i < 4000; ++i) {
        const bool in = i >= n - 3 && i < n - 3 + 2 * n;
        if (out[6 + i] != (in ? 1 : 0))
          FAIL("work-item " << i << " ran " << out[6 + i] << " times");
      }
    }
    // Defaults (n = 8) when no values are given.
    bufs.set(0, std::vector<int>(4096, 0));
    runOrFail(*exe, bufs.table);
    CHECK(bufs.get<int>(0)[0] == 16);
  }
}

TEST_CASE("cpu exprs: bad values are refused at enqueue with the node and field",
          "[cpu][graph][expr]") {
  Graph g = shapeGraph();
  auto exe = finalizeOrFail(g);
  Buffers bufs(g);
  bufs.set(0, std::vector<int>(4096, 0));
  auto refused = [&](int n) {
    auto ev = exe->enqueue(bufs.table, values({uint64_t(uint32_t(n))}));
    REQUIRE_FALSE(ev.ok());
    return ev.error().message();
  };
  CHECK(refused(0) == "node 'shape': global[0] = $n * 2 is 0; it must be at least 1");
  CHECK(refused(-4) == "node 'shape': global[0] = $n * 2 is -8; it must be at least 1");
  CHECK(refused(2) == "node 'shape': offset[0] = $n - 3 is -1; it must not be negative");
  CHECK(refused(24) ==
        "node 'shape': arg 1 = $n % 25 * 100000000 is 2400000000, which does not fit its type i32");
  CHECK(refused(20000) == "node 'shape': work-group of 20000 work-items is larger than the "
                          "device's maximum of 16384");
  // Nothing ran.
  std::vector<int> out = bufs.get<int>(0);
  for (int v : out)
    REQUIRE(v == 0);
  // A good value still runs afterwards.
  runOrFail(*exe, bufs.table, values({4}));
  CHECK(bufs.get<int>(0)[0] == 8);

  // Overflow inside the expression at run time.
  Graph h = g;
  h.exprs[0].code = [] {
    auto p = expr::parse("$n * 4611686018427387904");
    REQUIRE(p.ok());
    return expr::encode(*expr::remapVariables(*p, {0}));
  }();
  auto exe2 = finalizeOrFail(h);
  auto ev = exe2->enqueue(bufs.table, values({4}));
  REQUIRE_FALSE(ev.ok());
  CHECK(ev.error().message() == "node 'shape': global[0] = $n * 4611686018427387904: integer "
                                "overflow in 4 * 4611686018427387904");
}
