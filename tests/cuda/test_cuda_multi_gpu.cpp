// Several GPUs in one process: Device::copyFromDevice between two CUDA devices (a peer
// copy, checked byte for byte, in both directions and within one device, with offsets;
// range errors), and a graph placed on two GPUs (rt::finalizeMultiDevice, slots moved
// by peer copies) giving the bytes of one GPU. Needs two CUDA devices for most cases.
#include "cgraph/backends/cuda/cuda_backend.h"
#include "cgraph/graph/builder.h"
#include "cgraph/kernel/module_info.h"
#include "cgraph/kernel/opencl_compiler.h"
#include "cgraph/kernel/spirv.h"
#include "cgraph/runtime/multi_device.h"

#include <catch2/catch.hpp>

#include <cstring>

using namespace cgraph;

namespace {

rt::Backend &cudaBackend() {
  static std::unique_ptr<rt::Backend> b = cuda::makeCudaBackend();
  return *b;
}

rt::Device &device(uint32_t i) {
  auto d = cudaBackend().device(i);
  REQUIRE(d.ok());
  return **d;
}

bool twoGpus() {
  if (cudaBackend().probe().devices.size() >= 2) return true;
  WARN("one CUDA device: the two-GPU cases need two");
  return false;
}

std::unique_ptr<rt::Buffer> filled(rt::Device &d, const std::vector<uint8_t> &bytes) {
  auto b = d.allocate(bytes.size(), 256);
  REQUIRE(b.ok());
  REQUIRE_FALSE(d.write(**b, 0, bytes.data(), bytes.size()));
  return std::move(*b);
}

std::vector<uint8_t> contents(rt::Device &d, rt::Buffer &b) {
  std::vector<uint8_t> v(b.size());
  REQUIRE_FALSE(d.read(b, 0, v.data(), v.size()));
  return v;
}

constexpr const char *kSource = R"CL(
__kernel void scale(__global float *x, float a) { size_t i = get_global_id(0); x[i] = x[i] * a + 1.0f; }
__kernel void add(__global const float *x, __global const float *y, __global float *z) {
  size_t i = get_global_id(0); z[i] = x[i] + y[i];
}
)CL";

// x = 2x + 1 on device 0, y = 3y + 1 on device 1 (independent), z = x + y on device 0.
Graph placedGraph(uint32_t n) {
  GraphBuilder b("placed");
  auto slot = [&](const char *name) {
    Slot s;
    s.name = name;
    s.size = uint64_t(n) * 4;
    s.init = SlotInit::External;
    return b.addSlot(s);
  };
  uint32_t x = slot("x"), y = slot("y"), z = slot("z");
  auto compiled = compileOpenCL(kSource, "multi.cl", CompileOptions{});
  REQUIRE(compiled.ok());
  const uint32_t mod = b.addModule(makeKernelModule("multi.cl", *compiled, nullptr, false));
  auto kernels = reflectKernels(compiled->spirv.data(), compiled->spirv.size());
  REQUIRE(kernels.ok());
  uint32_t scale = kNone, add = kNone;
  for (Kernel k : *kernels) {
    k.module = mod;
    const std::string name = k.name;
    const uint32_t idx = b.addKernel(std::move(k));
    (name == "scale" ? scale : add) = idx;
  }
  NDRange r;
  r.dims = 1;
  r.global[0].value = n;
  uint32_t scaleX = b.addKernelNode("scale_x", scale, r, {Arg::slot(x), Arg::scalar(ScalarType::F32, 0x40000000)});
  uint32_t scaleY = b.addKernelNode("scale_y", scale, r, {Arg::slot(y), Arg::scalar(ScalarType::F32, 0x40400000)});
  uint32_t sum = b.addKernelNode("sum", add, r, {Arg::slot(x), Arg::slot(y), Arg::slot(z)});
  b.addEdge(scaleX, sum);
  b.addEdge(scaleY, sum);
  Graph g = b.take();
  g.nodes[scaleY].device = 1;
  return g;
}

} // namespace

TEST_CASE("cuda: peer copies between two GPUs", "[cuda][multi-gpu]") {
  std::vector<uint8_t> bytes(1 << 20);
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = uint8_t(i * 7 + 3);
  rt::Device &d0 = device(0);
  // Within one device.
  auto a = filled(d0, bytes), b = filled(d0, std::vector<uint8_t>(bytes.size(), 0));
  REQUIRE_FALSE(d0.copyFromDevice(d0, *a, 256, *b, 512, 4096));
  auto got = contents(d0, *b);
  CHECK(std::memcmp(got.data() + 512, bytes.data() + 256, 4096) == 0);
  CHECK(got[511] == 0);
  Error outside = d0.copyFromDevice(d0, *a, bytes.size() - 8, *b, 0, 16);
  REQUIRE(outside);
  CHECK(outside.message().find("outside the") != std::string::npos);
  if (!twoGpus()) return;
  rt::Device &d1 = device(1);
  auto c = filled(d1, std::vector<uint8_t>(bytes.size(), 0));
  REQUIRE_FALSE(d1.copyFromDevice(d0, *a, 0, *c, 0, bytes.size())); // 0 -> 1
  CHECK(contents(d1, *c) == bytes);
  auto e = filled(d0, std::vector<uint8_t>(bytes.size(), 0));
  REQUIRE_FALSE(d0.copyFromDevice(d1, *c, 1000, *e, 24, 65536)); // 1 -> 0
  got = contents(d0, *e);
  CHECK(std::memcmp(got.data() + 24, bytes.data() + 1000, 65536) == 0);
}

TEST_CASE("cuda: a graph placed on two GPUs equals one GPU", "[cuda][multi-gpu]") {
  if (!twoGpus()) return;
  constexpr uint32_t kN = 1 << 18;
  Graph g = placedGraph(kN);
  for (rt::ExecMode mode : {rt::ExecMode::Replay, rt::ExecMode::Eager}) {
    INFO((mode == rt::ExecMode::Replay ? "replay" : "eager"));
    std::vector<std::vector<float>> results;
    for (std::vector<rt::Device *> devs : {std::vector<rt::Device *>{&device(0)},
                                           std::vector<rt::Device *>{&device(0), &device(1)}}) {
      rt::FinalizeOptions fo;
      fo.mode = mode;
      auto exe = rt::finalizeMultiDevice(devs, g, fo);
      INFO((exe ? std::string() : exe.error().message()));
      REQUIRE(exe.ok());
      std::vector<float> x(kN), y(kN);
      for (uint32_t i = 0; i < kN; ++i) {
        x[i] = float(i % 1000);
        y[i] = float(i % 7);
      }
      auto toBytes = [](const std::vector<float> &v) {
        std::vector<uint8_t> out(v.size() * 4);
        std::memcpy(out.data(), v.data(), out.size());
        return out;
      };
      auto bx = filled(device(0), toBytes(x)), by = filled(device(0), toBytes(y)),
           bz = filled(device(0), std::vector<uint8_t>(kN * 4, 0));
      rt::BindingTable t;
      t.slots = {{bx.get(), 0, 0}, {by.get(), 0, 0}, {bz.get(), 0, 0}};
      auto ev = (*exe)->enqueue(t, rt::ParamValues{});
      REQUIRE(ev.ok());
      REQUIRE_FALSE((*ev)->wait());
      auto zb = contents(device(0), *bz);
      std::vector<float> z(kN);
      std::memcpy(z.data(), zb.data(), zb.size());
      for (uint32_t i = 0; i < kN; i += 997) CHECK(z[i] == (x[i] * 2 + 1) + (y[i] * 3 + 1));
      results.push_back(std::move(z));
    }
    CHECK(results[0] == results[1]);
  }
}
