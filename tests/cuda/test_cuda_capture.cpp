// Submissions on a caller's stream that is being captured (rt::SubmitOptions::stream,
// cuStreamBeginCapture): the run is recorded into the caller's graph, which is then
// added as a child node of another graph (cuGraphAddChildGraphNode) and launched. Part of
// test_cuda_backend (needs a CUDA device); the driver is called through the backend's
// own table (cu_api.h).
#include "cgraph/backends/cuda/cuda_backend.h"
#include "cgraph/graph/builder.h"

#include "../common/device_compare.h"
#include "cu_api.h"

#include <catch2/catch.hpp>

#include <cstring>

using namespace cgraph;
using namespace cgraph::devtest;

namespace {

rt::Device &captureDevice() {
  static auto backend = cuda::makeCudaBackend();
  auto d = backend->device(0);
  INFO((d ? std::string() : d.error().message()));
  REQUIRE(d);
  return **d;
}

// d[i] += s[i] * k (addk) into external slot d, from an owned slot of ones, then a
// parameter-sized fill of its first `$n` words with 7 and a second addk.
Graph captureGraph() {
  GraphBuilder b("capture");
  auto k = addSource(b, kKernels, "capture.cl");
  const uint32_t n = 1024;
  std::vector<uint8_t> ones(4 * n, 0);
  for (uint32_t i = 0; i < n; ++i) ones[4 * i] = 1;
  uint32_t d = b.addSlot(slot("d", 4 * n));
  uint32_t s = b.addSlot(slot("s", 4 * n, SlotInit::Data, ones));
  Param p;
  p.name = "k";
  p.type = ScalarType::U32;
  p.defaultBits = 1;
  uint32_t pk = b.addParam(p);
  uint32_t a = b.addKernelNode("add0", k["addk"], range1D(n, 64), {Arg::slot(d), Arg::slot(s), Arg::param(pk)});
  uint32_t c = b.addKernelNode("add1", k["addk"], range1D(n, 64), {Arg::slot(d), Arg::slot(s), Arg::param(pk)});
  b.addEdge(a, c);
  return b.take();
}

rt::ParamValues paramBits(std::vector<uint64_t> bits) {
  rt::ParamValues p;
  p.bits = std::move(bits);
  return p;
}

std::vector<uint32_t> readWords(rt::Device &dev, rt::Buffer &buf, size_t n) {
  std::vector<uint32_t> w(n);
  REQUIRE_FALSE(dev.read(buf, 0, w.data(), 4 * n));
  return w;
}

// A stream of the caller's own in device 0's primary context (the one cgraph uses),
// made current on this thread; destroyed and the context released at scope exit.
struct CallerStream {
  const cuda::CuApi &cu;
  CUdevice dev = 0;
  CUstream stream = nullptr;
  explicit CallerStream(const cuda::CuApi &api) : cu(api) {
    CUcontext ctx = nullptr;
    REQUIRE(cu.cuDeviceGet(&dev, 0) == CUDA_SUCCESS);
    REQUIRE(cu.cuDevicePrimaryCtxRetain(&ctx, dev) == CUDA_SUCCESS);
    REQUIRE(cu.cuCtxSetCurrent(ctx) == CUDA_SUCCESS);
    REQUIRE(cu.cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING) == CUDA_SUCCESS);
  }
  ~CallerStream() {
    if (stream) cu.cuStreamDestroy(stream);
    cu.cuDevicePrimaryCtxRelease(dev);
  }
};

} // namespace

TEST_CASE("cuda: a submission on a capturing stream is recorded into the caller's graph, usable as a child graph",
          "[cuda][capture]") {
  auto api = cuda::loadCuApi();
  REQUIRE(api);
  const cuda::CuApi &cu = **api;
  rt::Device &dev = captureDevice();
  const uint64_t edgesBefore = cuda::counters(dev).programmaticEdges;
  auto exe = dev.finalize(captureGraph(), rt::FinalizeOptions{});
  INFO((exe ? std::string() : exe.error().message()));
  REQUIRE(exe);
  // The replay graph's programmatic edges (add0 -> add1 where the device has them).
  const uint64_t ownEdges = cuda::counters(dev).programmaticEdges - edgesBefore;
  auto buf = dev.allocate(4 * 1024, 64);
  REQUIRE(buf);
  std::vector<uint32_t> zeros(1024, 0);
  REQUIRE_FALSE(dev.write(**buf, 0, zeros.data(), 4 * 1024));
  rt::BindingTable t;
  t.slots.resize(2);
  t.slots[0].buffer = buf->get();

  CallerStream caller(cu);
  CUstream s = caller.stream;

  // Recorded with k = 3: each replay of the caller's graph adds 2 * 3 to every word.
  REQUIRE(cu.cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL) == CUDA_SUCCESS);
  rt::SubmitOptions so;
  so.stream = s;
  auto ev = (*exe)->enqueue(t, paramBits({3}), so);
  INFO((ev ? std::string() : ev.error().message()));
  CUgraph captured = nullptr;
  REQUIRE(cu.cuStreamEndCapture(s, &captured) == CUDA_SUCCESS);
  REQUIRE(ev);
  CHECK((*ev)->isComplete());
  CHECK_FALSE((*ev)->wait());
  CHECK(readWords(dev, **buf, 1024) == zeros); // nothing ran at capture
  // The recorded launches carry the programmatic edges of cgraph's own graph (and one
  // from the table loader into the first kernel), none where the device has none.
  const uint64_t capturedEdges = cuda::counters(dev).programmaticEdges - edgesBefore - ownEdges;
  if (ownEdges == 0)
    CHECK(capturedEdges == 0);
  else
    CHECK(capturedEdges >= ownEdges);

  // The captured graph as a child node of the caller's own graph, launched twice.
  CUgraph outer = nullptr;
  CUgraphNode child = nullptr;
  CUgraphExec outerExec = nullptr;
  REQUIRE(cu.cuGraphCreate(&outer, 0) == CUDA_SUCCESS);
  REQUIRE(cu.cuGraphAddChildGraphNode(&child, outer, nullptr, 0, captured) == CUDA_SUCCESS);
  REQUIRE(cu.cuGraphInstantiate(&outerExec, outer, 0) == CUDA_SUCCESS);
  REQUIRE(cu.cuGraphLaunch(outerExec, s) == CUDA_SUCCESS);
  REQUIRE(cu.cuGraphLaunch(outerExec, s) == CUDA_SUCCESS);
  REQUIRE(cu.cuStreamSynchronize(s) == CUDA_SUCCESS);
  std::vector<uint32_t> want(1024, 12);
  CHECK(readWords(dev, **buf, 1024) == want);

  // The executable's own submissions keep their own values (k = 1: + 2), and the
  // caller's graph keeps the recorded ones (k = 3: + 6) when launched after them.
  auto own = (*exe)->enqueue(t, paramBits({1}));
  REQUIRE(own);
  REQUIRE_FALSE((*own)->wait());
  want.assign(1024, 14);
  CHECK(readWords(dev, **buf, 1024) == want);
  REQUIRE(cu.cuGraphLaunch(outerExec, s) == CUDA_SUCCESS);
  REQUIRE(cu.cuStreamSynchronize(s) == CUDA_SUCCESS);
  want.assign(1024, 20);
  CHECK(readWords(dev, **buf, 1024) == want);
  auto again = (*exe)->enqueue(t, paramBits({1}));
  REQUIRE(again);
  REQUIRE_FALSE((*again)->wait());
  want.assign(1024, 22);
  CHECK(readWords(dev, **buf, 1024) == want);

  cu.cuGraphExecDestroy(outerExec);
  cu.cuGraphDestroy(outer);
  cu.cuGraphDestroy(captured);
}

TEST_CASE("cuda: a graph with a host task is refused on a capturing stream, and the capture stays valid",
          "[cuda][capture]") {
  auto api = cuda::loadCuApi();
  REQUIRE(api);
  const cuda::CuApi &cu = **api;
  rt::Device &dev = captureDevice();
  GraphBuilder b("capture-host");
  auto k = addSource(b, kKernels, "capture-host.cl");
  uint32_t d = b.addSlot(slot("d", 4 * 64));
  b.addKernelNode("mark", k["mark"], range1D(64), {Arg::slot(d), Arg::scalar(ScalarType::U32, 1)});
  HostOp op;
  op.op = "checksum";
  b.addHost("sum", op, {Arg::slot(d)});
  auto exe = dev.finalize(b.take(), rt::FinalizeOptions{});
  REQUIRE(exe);
  auto buf = dev.allocate(4 * 64, 64);
  REQUIRE(buf);
  rt::BindingTable t;
  t.slots.resize(1);
  t.slots[0].buffer = buf->get();
  CallerStream caller(cu);
  CUstream s = caller.stream;
  REQUIRE(cu.cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL) == CUDA_SUCCESS);
  rt::SubmitOptions so;
  so.stream = s;
  auto ev = (*exe)->enqueue(t, rt::ParamValues{}, so);
  REQUIRE_FALSE(ev);
  CHECK(ev.error().code() == ErrorCode::Unsupported);
  CHECK(ev.error().message().find("node 'sum'") != std::string::npos);
  CHECK(ev.error().message().find("host task") != std::string::npos);
  CUgraph captured = nullptr;
  CHECK(cu.cuStreamEndCapture(s, &captured) == CUDA_SUCCESS); // nothing recorded, nothing broken
  if (captured) cu.cuGraphDestroy(captured);
}
