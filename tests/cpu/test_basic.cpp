#include "cpu_test_util.h"

using namespace cgtest;

TEST_CASE("cpu: one axpy node replays", "[cpu]") {
  GraphBuilder b("axpy");
  auto k = addKernels(b, "basic.cl");
  const uint32_t n = 4096;
  uint32_t x = addSlot(b, "x", n * 4), y = addSlot(b, "y", n * 4);
  b.addKernelNode("axpy", k["axpy"], range1D(n), {Arg::scalar(ScalarType::F32, f32(2.0f)), Arg::slot(x), Arg::slot(y)});
  Graph g = b.take();
  auto exe = finalizeOrFail(g);
  Buffers bufs(g);
  std::vector<float> xs(n), ys(n);
  for (uint32_t i = 0; i < n; ++i) { xs[i] = float(i); ys[i] = 1.0f; }
  bufs.set(x, xs);
  bufs.set(y, ys);
  runOrFail(*exe, bufs.table);
  auto out = bufs.get<float>(y);
  for (uint32_t i = 0; i < n; ++i) REQUIRE(out[i] == 2.0f * float(i) + 1.0f);
  runOrFail(*exe, bufs.table);
  out = bufs.get<float>(y);
  for (uint32_t i = 0; i < n; ++i) REQUIRE(out[i] == 4.0f * float(i) + 1.0f);
}
