// Proof that the ThreadSanitizer pass can fail (built and registered only in TSan builds,
// tests/cpu/CMakeLists.txt). Two kernel nodes scale the same slot range:
//   [race]    without an edge they form one parallel level, i.e. a real data race that
//             ctest requires TSan to report ("ThreadSanitizer: data race");
//   [ordered] with the edge the same program is race-free and must pass clean, so the
//             report above comes from the missing edge and nothing else.
#include "cpu_test_util.h"

using namespace cgtest;

namespace {

std::vector<int> runScaleTwice(bool ordered) {
  GraphBuilder b(ordered ? "ordered" : "racy");
  auto k = addKernels(b, "basic.cl");
  const uint32_t n = 256; // small: each launch runs on its node's thread
  uint32_t v = addSlot(b, "v", n * 4);
  uint32_t a = b.addKernelNode("times2", k["scale_int"], range1D(n), {Arg::slot(v), Arg::scalar(ScalarType::I32, 2)});
  uint32_t c = b.addKernelNode("times3", k["scale_int"], range1D(n), {Arg::slot(v), Arg::scalar(ScalarType::I32, 3)});
  if (ordered) b.addEdge(a, c);
  Graph g = b.take();
  auto exe = finalizeOrFail(g);
  Buffers bufs(g);
  std::vector<int> init(n);
  for (uint32_t i = 0; i < n; ++i) init[i] = int(i) + 1;
  bufs.set(v, init);
  runOrFail(*exe, bufs.table);
  return bufs.get<int>(v);
}

} // namespace

TEST_CASE("tsan: two unordered kernel nodes writing one slot are a reported race", "[race]") {
  std::vector<int> out = runScaleTwice(false);
  REQUIRE(out.size() == 256); // values depend on the interleaving; TSan's report is the check
}

TEST_CASE("tsan: the same nodes ordered by an edge are race-free", "[ordered]") {
  std::vector<int> out = runScaleTwice(true);
  for (int i = 0; i < 256; ++i) REQUIRE(out[i] == 6 * (i + 1));
}
