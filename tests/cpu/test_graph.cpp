// Graph-level behaviour: copy / rect copy / fill / host nodes, independent nodes,
// rebinding per replay, eager == replay, binding errors, profiling, parameters.
#include "cpu_test_util.h"

#include <numeric>
#include <tuple>

using namespace cgtest;

namespace {

Graph chainGraph(uint32_t n, uint32_t nodes, uint32_t *x, uint32_t *y) {
  GraphBuilder b("chain");
  auto k = addKernels(b, "basic.cl");
  *x = addSlot(b, "x", n * 4);
  *y = addSlot(b, "y", n * 4);
  uint32_t prev = kNone;
  for (uint32_t i = 0; i < nodes; ++i) {
    uint32_t id = b.addKernelNode("axpy" + std::to_string(i), k["axpy"], range1D(n),
                                  {Arg::scalar(ScalarType::F32, f32(0.5f)), Arg::slot(*x), Arg::slot(*y)});
    if (prev != kNone) b.addEdge(prev, id);
    prev = id;
  }
  return b.take();
}

} // namespace

TEST_CASE("cpu graph: copy, rect copy and fill nodes", "[cpu][graph]") {
  GraphBuilder b("copies");
  uint32_t a = addSlot(b, "a", 256), c = addSlot(b, "c", 256), r = addSlot(b, "r", 256);
  FillOp f;
  f.slot = a;
  f.offset = 0;
  f.bytes = 128;
  f.pattern = {1, 2, 3, 4};
  uint32_t nf = b.addFill("fill", f);
  CopyOp cp;
  cp.srcSlot = a;
  cp.dstSlot = c;
  cp.srcOffset = 4;
  cp.dstOffset = 100;
  cp.bytes = 64;
  uint32_t nc = b.addCopy("copy", cp);
  CopyOp rc; // 4 rows of 8 bytes from a (pitch 16) into r (pitch 32, offset 3)
  rc.srcSlot = a;
  rc.dstSlot = r;
  rc.dstOffset = 3;
  rc.region[0] = 8;
  rc.region[1] = 4;
  rc.region[2] = 2;
  rc.srcRowPitch = 16;
  rc.srcSlicePitch = 64;
  rc.dstRowPitch = 32;
  rc.dstSlicePitch = 128;
  uint32_t nr = b.addCopyRect("rect", rc);
  b.addEdge(nf, nc);
  b.addEdge(nf, nr);
  Graph g = b.take();
  auto exe = finalizeOrFail(g);
  Buffers bufs(g);
  std::vector<uint8_t> init(256);
  std::iota(init.begin(), init.end(), 0);
  bufs.set(a, init);
  runOrFail(*exe, bufs.table);
  std::vector<uint8_t> wantA = init;
  for (int i = 0; i < 128; ++i) wantA[i] = uint8_t(1 + i % 4);
  REQUIRE(bufs.get<uint8_t>(a) == wantA);
  auto cc = bufs.get<uint8_t>(c);
  for (int i = 0; i < 64; ++i) REQUIRE(cc[100 + i] == wantA[4 + i]);
  REQUIRE(cc[99] == 0);
  REQUIRE(cc[164] == 0);
  auto rr = bufs.get<uint8_t>(r);
  for (int z = 0; z < 2; ++z)
    for (int y = 0; y < 4; ++y)
      for (int x = 0; x < 8; ++x) REQUIRE(rr[3 + z * 128 + y * 32 + x] == wantA[z * 64 + y * 16 + x]);
  REQUIRE(rr[3 + 8] == 0);
}

TEST_CASE("cpu graph: host task nodes run between kernels", "[cpu][graph][host]") {
  GraphBuilder b("host");
  auto k = addKernels(b, "basic.cl");
  uint32_t v = addSlot(b, "v", 64 * 4), w = addSlot(b, "w", 64 * 4);
  uint32_t k1 = b.addKernelNode("scale", k["scale_int"], range1D(64), {Arg::slot(v), Arg::scalar(ScalarType::I32, 3)});
  uint32_t h = b.addHost("cmp", HostOp{"compare", ""}, {Arg::slot(v), Arg::slot(w), Arg::string("i32")});
  b.addEdge(k1, h);
  Graph g = b.take();
  auto exe = finalizeOrFail(g);
  Buffers bufs(g);
  std::vector<int> vs(64), ws(64);
  for (int i = 0; i < 64; ++i) { vs[i] = i; ws[i] = 3 * i; }
  bufs.set(v, vs);
  bufs.set(w, ws);
  runOrFail(*exe, bufs.table); // the compare host task succeeds only after the kernel ran
  auto ev = exe->enqueue(bufs.table, {});
  REQUIRE(ev.ok());
  Error e = (*ev)->wait(); // v is now 9*i: compare fails and the error comes back
  REQUIRE(e);
  CHECK_THAT(e.message(), Catch::Contains("node 'cmp'"));
}

TEST_CASE("cpu graph: independent nodes, profiling timings for every node", "[cpu][graph]") {
  GraphBuilder b("fan");
  auto k = addKernels(b, "basic.cl");
  const uint32_t n = 1 << 16, width = 6;
  std::vector<uint32_t> slots;
  for (uint32_t i = 0; i < width; ++i) {
    slots.push_back(addSlot(b, "s" + std::to_string(i), n * 4));
    b.addKernelNode("k" + std::to_string(i), k["scale_int"], range1D(n), {Arg::slot(slots[i]), Arg::scalar(ScalarType::I32, i + 2)});
  }
  Graph g = b.take();
  auto exe = finalizeOrFail(g);
  Buffers bufs(g);
  std::vector<int> ones(n, 1);
  for (uint32_t s : slots) bufs.set(s, ones);
  std::vector<rt::NodeTiming> t;
  runOrFail(*exe, bufs.table, {}, true, &t);
  for (uint32_t i = 0; i < width; ++i) REQUIRE(bufs.get<int>(slots[i]) == std::vector<int>(n, int(i + 2)));
  REQUIRE(t.size() == width);
  std::vector<bool> seen(width, false);
  for (const rt::NodeTiming &x : t) {
    REQUIRE(x.node < width);
    REQUIRE(x.endNs >= x.startNs);
    seen[x.node] = true;
  }
  REQUIRE(std::all_of(seen.begin(), seen.end(), [](bool s) { return s; }));
}

TEST_CASE("cpu graph: replay with a new binding table each time, eager == replay", "[cpu][graph]") {
  const uint32_t n = 1000, nodes = 20;
  uint32_t x, y;
  Graph g = chainGraph(n, nodes, &x, &y);
  auto replay = finalizeOrFail(g);
  auto eager = finalizeOrFail(g, rt::ExecMode::Eager);
  REQUIRE(eager->mode() == rt::ExecMode::Eager);
  std::vector<float> xs(n);
  for (uint32_t i = 0; i < n; ++i) xs[i] = float(i % 13);
  for (int iter = 0; iter < 10; ++iter) {
    Buffers a(g), e(g);
    std::vector<float> ys(n, float(iter));
    a.set(x, xs); a.set(y, ys);
    e.set(x, xs); e.set(y, ys);
    runOrFail(*replay, a.table);
    runOrFail(*eager, e.table);
    auto ra = a.get<float>(y), re = e.get<float>(y);
    REQUIRE(ra == re);
    for (uint32_t i = 0; i < n; ++i) REQUIRE(ra[i] == float(iter) + float(nodes) * 0.5f * xs[i]);
  }
  // One buffer with two sub-ranges bound in turn.
  auto big = cpuDevice().allocate(4 * n * 4, 64);
  REQUIRE(big.ok());
  std::vector<float> all(4 * n, 1.0f);
  REQUIRE(!cpuDevice().write(**big, 0, all.data(), all.size() * 4));
  for (uint64_t part = 0; part < 2; ++part) {
    rt::BindingTable t;
    t.slots.resize(2);
    t.slots[x] = {big->get(), part * 2 * n * 4, n * 4};
    t.slots[y] = {big->get(), (part * 2 + 1) * n * 4, n * 4};
    runOrFail(*replay, t);
  }
  std::vector<float> back(4 * n);
  REQUIRE(!cpuDevice().read(**big, 0, back.data(), back.size() * 4));
  for (uint32_t i = 0; i < n; ++i) {
    REQUIRE(back[n + i] == 1.0f + nodes * 0.5f);
    REQUIRE(back[3 * n + i] == 1.0f + nodes * 0.5f);
    REQUIRE(back[i] == 1.0f);
  }
}

TEST_CASE("cpu graph: a too-small binding is an error naming the slot", "[cpu][graph]") {
  uint32_t x, y;
  Graph g = chainGraph(256, 2, &x, &y);
  auto exe = finalizeOrFail(g);
  Buffers bufs(g);
  auto small = cpuDevice().allocate(100, 64);
  REQUIRE(small.ok());
  bufs.table.slots[y].buffer = small->get();
  auto ev = exe->enqueue(bufs.table, {});
  REQUIRE(!ev.ok());
  CHECK_THAT(ev.error().message(), Catch::Contains("slot 'y'"));
}

TEST_CASE("cpu graph: range and scalar from parameters; events chain", "[cpu][graph][params]") {
  GraphBuilder b("params");
  auto k = addKernels(b, "basic.cl");
  uint32_t v = addSlot(b, "v", 128 * 4);
  Param count{"count", ScalarType::U32, 64};
  Param factor{"factor", ScalarType::I32, 2};
  uint32_t pc = b.addParam(count), pf = b.addParam(factor);
  NDRange r = range1D(64);
  r.global[0] = paramDim(pc);
  b.addKernelNode("scale", k["scale_int"], r, {Arg::slot(v), Arg::param(pf)});
  Graph g = b.take();
  auto exe = finalizeOrFail(g);
  Buffers bufs(g);
  bufs.set(v, std::vector<int>(128, 1));
  rt::ParamValues p;
  p.bits = {100, 5};
  auto e1 = exe->enqueue(bufs.table, p);
  REQUIRE(e1.ok());
  rt::SubmitOptions so;
  so.waitFor = {*e1};
  auto e2 = exe->enqueue(bufs.table, {}, so); // defaults: 64 items times 2
  REQUIRE(e2.ok());
  REQUIRE(!(*e2)->wait());
  REQUIRE((*e1)->isComplete());
  auto out = bufs.get<int>(v);
  for (int i = 0; i < 128; ++i) REQUIRE(out[i] == (i < 64 ? 10 : i < 100 ? 5 : 1));
}

TEST_CASE("cpu graph: finalize reports each kernel module once as it is compiled", "[cpu][graph][progress]") {
  GraphBuilder b("two-modules");
  auto k1 = addKernelSource(b, "__kernel void one(__global float *x) { x[get_global_id(0)] += 1.0f; }", "one.cl");
  auto k2 = addKernelSource(b, "__kernel void two(__global float *x) { x[get_global_id(0)] *= 2.0f; }", "two.cl");
  const uint32_t x = addSlot(b, "x", 64 * 4);
  const uint32_t a = b.addKernelNode("a", k1["one"], range1D(64), {Arg::slot(x)});
  const uint32_t c = b.addKernelNode("c", k2["two"], range1D(64), {Arg::slot(x)});
  const uint32_t d = b.addKernelNode("d", k1["one"], range1D(64), {Arg::slot(x)});
  b.addEdge(a, c);
  b.addEdge(c, d);
  const Graph g = b.take();
  std::vector<std::tuple<std::string, uint64_t, uint64_t>> calls;
  rt::FinalizeOptions fo;
  fo.progress = [&](const char *phase, uint64_t done, uint64_t total) { calls.emplace_back(phase, done, total); };
  auto exe = cpuDevice().finalize(g, fo);
  REQUIRE(exe);
  using Call = std::tuple<std::string, uint64_t, uint64_t>;
  CHECK(calls == std::vector<Call>{Call{"compiling kernels", 1, 2}, Call{"compiling kernels", 2, 2}});
  // The callback is not kept past finalize: runs and updates call nothing.
  calls.clear();
  std::vector<float> v(64, 1.0f);
  auto buf = cpuDevice().allocate(64 * 4, 64);
  REQUIRE(buf);
  REQUIRE_FALSE(cpuDevice().write(**buf, 0, v.data(), 64 * 4));
  rt::BindingTable t;
  t.slots.resize(1);
  t.slots[0].buffer = buf->get();
  runOrFail(**exe, t);
  CHECK(calls.empty());
}
