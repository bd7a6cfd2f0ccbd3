// What every backend must do the same way (issue 7), run on the cpu backend and on PoCL
// with real kernels: runtime-owned slot setup (every init kind, one implementation in
// lib/runtime), the stored partitions with host tasks and barriers between device work,
// replay and eager giving the same bytes, and the enqueue-time checks (overlapping
// bindings, parameter-driven nd-ranges, profiled replay where a device cannot time it).
#include "cl_test_util.h"
#include "transfer_exprs.h"

#include "cgraph/backends/cpu/cpu_backend.h"
#include "cgraph/expr.h"
#include "cgraph/format/reader.h"
#include "cgraph/format/writer.h"
#include "cgraph/graph/order.h"
#include "cgraph/runtime/npy.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <random>

using namespace cgraph;
using namespace cgraph::cltest;

namespace {

const char *kSource = R"CL(
__kernel void copy_u32(__global const uint *src, __global uint *dst) {
  size_t i = get_global_id(0);
  dst[i] = src[i];
}
__kernel void add_u32(__global const uint *a, __global const uint *b, __global uint *c) {
  size_t i = get_global_id(0);
  c[i] = a[i] + b[i];
}
__kernel void inc_u32(__global uint *a, uint by) {
  size_t i = get_global_id(0);
  a[i] += by;
}
)CL";

struct TempDir {
  std::filesystem::path path;
  TempDir() {
    std::random_device rd;
    path = std::filesystem::temp_directory_path() /
           ("cgraph-shared-" + std::to_string(rd()) + "-" + std::to_string(rd()));
    std::filesystem::create_directories(path);
    path = std::filesystem::canonical(path);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
};

struct Backends {
  std::unique_ptr<rt::Backend> cpu = cpu::makeCpuBackend();
  std::unique_ptr<rt::Backend> ocl = opencl::makeOpenCLBackend();
  std::vector<rt::Device *> devices() {
    Expected<rt::Device *> c = cpu->device(0);
    REQUIRE(c);
    return {*c, openPocl(*ocl)};
  }
};

Slot ownedSlot(std::string name, uint64_t size, SlotInit init) {
  Slot s;
  s.name = std::move(name);
  s.size = size;
  s.init = init;
  return s;
}

// Runs `g` on `dev` in `mode` with `out` (slot `outSlot`, `outBytes` bytes) bound and
// the other external slots given; returns the bytes of `out`.
std::vector<uint8_t> runOnce(rt::Device &dev, const Graph &g, rt::ExecMode mode, uint32_t outSlot,
                             uint64_t outBytes, const rt::HostPolicy &host,
                             const std::vector<std::pair<uint32_t, std::vector<uint32_t>>> &inputs = {}) {
  rt::FinalizeOptions fo;
  fo.mode = mode;
  fo.host = host;
  auto exe = dev.finalize(g, fo);
  INFO(dev.info().backend << ": " << (exe ? std::string() : exe.error().message()));
  REQUIRE(exe);
  std::vector<std::unique_ptr<rt::Buffer>> keep;
  rt::BindingTable table;
  table.slots.resize(g.slots.size());
  auto out = alloc(dev, outBytes);
  table.slots[outSlot].buffer = out.get();
  for (const auto &[slot, values] : inputs) {
    keep.push_back(alloc(dev, values.size() * 4));
    writeAll(dev, *keep.back(), values);
    table.slots[slot].buffer = keep.back().get();
  }
  auto ev = (*exe)->enqueue(table, {});
  INFO(dev.info().backend << ": " << (ev ? std::string() : ev.error().message()));
  REQUIRE(ev);
  Error e = (*ev)->wait();
  INFO(dev.info().backend << ": " << e.message());
  REQUIRE(!e);
  return readAll<uint8_t>(dev, *out);
}

} // namespace

TEST_CASE("runtime-owned slots start the same on every backend", "[opencl][cpu][slots]") {
  TempDir dir;
  // File slots: a .npy file (its header must not reach the slot) and a raw file with
  // more bytes than the slot (the rest is ignored).
  std::vector<float> npyValues(16);
  for (int i = 0; i < 16; ++i) npyValues[i] = 0.5f * float(i) - 3.0f;
  REQUIRE(!rt::writeNpyFile((dir.path / "in.npy").string(), ScalarType::F32, npyValues.data(), 64));
  std::vector<uint8_t> raw(80);
  for (size_t i = 0; i < raw.size(); ++i) raw[i] = uint8_t(200 - i);
  {
    std::ofstream f(dir.path / "raw.bin", std::ios::binary);
    f.write(reinterpret_cast<const char *>(raw.data()), std::streamsize(raw.size()));
  }

  GraphBuilder b("slots");
  Slot data = ownedSlot("data", 64, SlotInit::Data);
  for (int i = 0; i < 64; ++i) data.data.push_back(uint8_t(i * 3 + 1));
  Slot fill = ownedSlot("fill", 64, SlotInit::Fill);
  fill.data = {7, 8, 9}; // 64 is not a multiple of 3: a partial last copy
  Slot npy = ownedSlot("npy", 64, SlotInit::File);
  npy.path = "in.npy";
  Slot rawSlot = ownedSlot("raw", 64, SlotInit::File);
  rawSlot.path = "raw.bin";
  Slot transient = ownedSlot("transient", 64, SlotInit::Transient);
  const uint32_t sData = b.addSlot(data), sFill = b.addSlot(fill), sNpy = b.addSlot(npy),
                 sRaw = b.addSlot(rawSlot), sTr = b.addSlot(transient);
  const uint32_t sOut = b.addSlot(externalSlot("out", 5 * 64));
  const uint32_t kCopy = addKernelSource(b, kSource, "shared.cl", "copy_u32");
  b.addCopy("c_data", copyOp(sData, 0, sOut, 0, 64));
  b.addCopy("c_fill", copyOp(sFill, 0, sOut, 64, 64));
  b.addKernelNode("k_npy", kCopy, range1D(16), {Arg::slot(sNpy), Arg::slot(sOut, 128)});
  b.addCopy("c_raw", copyOp(sRaw, 0, sOut, 192, 64));
  b.addKernelNode("k_transient", kCopy, range1D(16), {Arg::slot(sTr), Arg::slot(sOut, 256)});
  Graph g = b.take();
  REQUIRE(!finalizeForFile(g));

  std::vector<uint8_t> expected(5 * 64);
  for (int i = 0; i < 64; ++i) expected[i] = uint8_t(i * 3 + 1);
  for (int i = 0; i < 64; ++i) expected[64 + i] = uint8_t(7 + i % 3);
  std::memcpy(&expected[128], npyValues.data(), 64);
  std::memcpy(&expected[192], raw.data(), 64);
  // transient: zeros

  rt::HostPolicy host;
  host.baseDir = dir.path.string();
  host.allowedDirs = {dir.path.string()};
  Backends be;
  for (rt::Device *dev : be.devices())
    for (rt::ExecMode mode : {rt::ExecMode::Replay, rt::ExecMode::Eager}) {
      INFO(dev->info().backend << (mode == rt::ExecMode::Replay ? " replay" : " eager"));
      CHECK(runOnce(*dev, g, mode, sOut, 5 * 64, host) == expected);
    }

  SECTION("a short file is an error naming the slot, on every backend") {
    Graph bad = g;
    bad.slots[sRaw].size = 96; // the raw file has 80 bytes
    for (rt::Device *dev : be.devices()) {
      rt::FinalizeOptions fo;
      fo.host = host;
      auto exe = dev->finalize(bad, fo);
      REQUIRE_FALSE(exe);
      CHECK(exe.error().message().find("slot 'raw'") != std::string::npos);
      CHECK(exe.error().message().find("80 bytes") != std::string::npos);
    }
  }
}

TEST_CASE("stored partitions: host tasks and barriers between device work", "[opencl][cpu][partitions]") {
  TempDir dir;
  std::vector<uint32_t> fromFile(256);
  for (uint32_t i = 0; i < 256; ++i) fromFile[i] = 1000 + 3 * i;
  {
    std::ofstream f(dir.path / "b.bin", std::ios::binary);
    f.write(reinterpret_cast<const char *>(fromFile.data()), 1024);
  }
  // Branch 1: inc(a, 5) -> barrier -> inc(a, 7); branch 2: read_file(b) (a host task);
  // join: c = a + b; then inc(c, 1). Two roots, a host task in one of them.
  GraphBuilder b("parts");
  const uint32_t sA = b.addSlot(externalSlot("a", 1024));
  const uint32_t sB = b.addSlot(ownedSlot("b", 1024, SlotInit::Transient));
  const uint32_t sC = b.addSlot(externalSlot("c", 1024));
  const uint32_t kInc = addKernelSource(b, kSource, "shared.cl", "inc_u32");
  const uint32_t kAdd = kInc - 1; // add_u32 precedes inc_u32 in the module
  REQUIRE(b.graph().kernels[kAdd].name == "add_u32");
  const uint32_t n0 = b.addKernelNode("inc5", kInc, range1D(256), {Arg::slot(sA), Arg::scalar(ScalarType::U32, 5)});
  const uint32_t n1 = b.addBarrier("wait");
  const uint32_t n2 = b.addKernelNode("inc7", kInc, range1D(256), {Arg::slot(sA), Arg::scalar(ScalarType::U32, 7)});
  const uint32_t n3 = b.addHost("load_b", HostOp{"read_file", ""}, {Arg::slot(sB), Arg::string("b.bin")});
  const uint32_t n4 = b.addKernelNode("add", kAdd, range1D(256), {Arg::slot(sA), Arg::slot(sB), Arg::slot(sC)});
  const uint32_t n5 = b.addKernelNode("inc1", kInc, range1D(256), {Arg::slot(sC), Arg::scalar(ScalarType::U32, 1)});
  b.addEdge(n0, n1);
  b.addEdge(n1, n2);
  b.addEdge(n2, n4);
  b.addEdge(n3, n4);
  b.addEdge(n4, n5);
  Graph g = b.take();
  REQUIRE(!finalizeForFile(g));
  REQUIRE(g.partitions.size() == 3); // {inc5, wait, inc7}, {load_b}, {add, inc1}
  CHECK(g.partitions[2].deps == std::vector<uint32_t>{0, 1});

  std::vector<uint32_t> a(256), expected(256);
  for (uint32_t i = 0; i < 256; ++i) {
    a[i] = i * i;
    expected[i] = a[i] + 12 + fromFile[i] + 1;
  }
  std::vector<uint8_t> expectedBytes(1024);
  std::memcpy(expectedBytes.data(), expected.data(), 1024);
  rt::HostPolicy host;
  host.baseDir = dir.path.string();
  host.allowedDirs = {dir.path.string()};
  Backends be;
  for (rt::Device *dev : be.devices())
    for (rt::ExecMode mode : {rt::ExecMode::Replay, rt::ExecMode::Eager}) {
      INFO(dev->info().backend << (mode == rt::ExecMode::Replay ? " replay" : " eager"));
      CHECK(runOnce(*dev, g, mode, sC, 1024, host, {{sA, a}}) == expectedBytes);
    }
}

TEST_CASE("enqueue refuses what would make kernels misbehave", "[opencl][cpu][validation]") {
  GraphBuilder b("checks");
  const uint32_t sA = b.addSlot(externalSlot("a", 1024));
  const uint32_t sB = b.addSlot(externalSlot("b", 1024));
  const uint32_t sC = b.addSlot(externalSlot("c", 1024));
  Param n{"n", ScalarType::U32, 256};
  Param l{"l", ScalarType::U32, 64};
  const uint32_t pN = b.addParam(n), pL = b.addParam(l);
  const uint32_t kAdd = addKernelSource(b, kSource, "shared.cl", "add_u32");
  NDRange r = range1D(0);
  r.global[0] = paramDim(pN);
  r.local[0] = paramDim(pL);
  b.addKernelNode("add", kAdd, r, {Arg::slot(sA), Arg::slot(sB), Arg::slot(sC)});
  Graph g = b.take();
  REQUIRE(!finalizeForFile(g));

  Backends be;
  for (rt::Device *dev : be.devices()) {
    const std::string backend = dev->info().backend;
    INFO(backend);
    auto exe = dev->finalize(g, {});
    REQUIRE(exe);
    auto buf = alloc(*dev, 4096);
    rt::BindingTable t;
    t.slots = {{buf.get(), 0, 1024}, {buf.get(), 1024, 1024}, {buf.get(), 2048, 1024}};
    rt::ParamValues pv;
    pv.bits = {256, 64};
    {
      auto ev = (*exe)->enqueue(t, pv);
      REQUIRE(ev);
      REQUIRE(!(*ev)->wait());
    }
    // c overlaps b, and c is written.
    t.slots[2].offset = 1536;
    t.slots[2].length = 1024;
    auto ev = (*exe)->enqueue(t, pv);
    REQUIRE_FALSE(ev);
    CHECK(ev.error().message() ==
          "slot 'b' and slot 'c' are bound to overlapping ranges of one buffer ([1024, 2048) and "
          "[1536, 2560)) and one is written; hazards are tracked per slot, so bind disjoint ranges");
    // Two read-only slots may share bytes.
    t.slots[2] = {buf.get(), 2048, 1024};
    t.slots[1] = {buf.get(), 0, 1024};
    ev = (*exe)->enqueue(t, pv);
    REQUIRE(ev);
    REQUIRE(!(*ev)->wait());
    // Parameter-driven ranges.
    pv.bits = {0, 64};
    ev = (*exe)->enqueue(t, pv);
    REQUIRE_FALSE(ev);
    CHECK(ev.error().message() == "node 'add': global size in dimension 0 is 0");
    pv.bits = {256, 0};
    ev = (*exe)->enqueue(t, pv);
    REQUIRE_FALSE(ev);
    CHECK(ev.error().message() == "node 'add': local size in dimension 0 is 0");
    pv.bits = {256, uint64_t(dev->info().caps.maxWorkGroupSize) * 2};
    ev = (*exe)->enqueue(t, pv);
    REQUIRE_FALSE(ev);
    CHECK(ev.error().message().find("is larger than the device's maximum") != std::string::npos);
    pv.bits = {200, 64};
    ev = (*exe)->enqueue(t, pv);
    if (dev->info().caps.nonUniformWorkGroups) {
      REQUIRE(ev); // cpu: a trailing partial group
      REQUIRE(!(*ev)->wait());
    } else {
      REQUIRE_FALSE(ev);
      CHECK(ev.error().message() == "node 'add': local size 64 does not divide global size 200 in "
                                    "dimension 0 (the device needs uniform work-groups)");
    }
  }
}

TEST_CASE("a profiled replay is timed or refused, never run another way", "[opencl][cpu][profiling]") {
  GraphBuilder b("prof");
  const uint32_t sA = b.addSlot(externalSlot("a", 1024));
  const uint32_t kInc = addKernelSource(b, kSource, "shared.cl", "inc_u32");
  const uint32_t n0 = b.addKernelNode("i0", kInc, range1D(256), {Arg::slot(sA), Arg::scalar(ScalarType::U32, 1)});
  const uint32_t n1 = b.addKernelNode("i1", kInc, range1D(256), {Arg::slot(sA), Arg::scalar(ScalarType::U32, 2)});
  b.addEdge(n0, n1);
  Graph g = b.take();
  REQUIRE(!finalizeForFile(g));
  Backends be;
  for (rt::Device *dev : be.devices()) {
    INFO(dev->info().backend);
    auto exe = dev->finalize(g, {});
    REQUIRE(exe);
    auto buf = alloc(*dev, 1024);
    writeAll(*dev, *buf, std::vector<uint32_t>(256, 10));
    rt::BindingTable t;
    t.slots = {{buf.get(), 0, 0}};
    rt::SubmitOptions so;
    so.profile = true;
    auto ev = (*exe)->enqueue(t, {}, so);
    if (dev->info().caps.profilingReplay) {
      REQUIRE(ev);
      REQUIRE(!(*ev)->wait());
      REQUIRE((*ev)->nodeTimings().size() == 2);
      for (const rt::NodeTiming &nt : (*ev)->nodeTimings()) CHECK(nt.endNs > nt.startNs);
      CHECK(readAll<uint32_t>(*dev, *buf) == std::vector<uint32_t>(256, 13));
    } else {
      REQUIRE_FALSE(ev);
      CHECK(ev.error().message().find("per-node profiling is not available when replaying") != std::string::npos);
      CHECK(readAll<uint32_t>(*dev, *buf) == std::vector<uint32_t>(256, 10)); // nothing ran
    }
  }
}

// Stored parameter expressions (.cgf 2.0): a range and a scalar argument computed per
// submission; PoCL re-records per distinct shape (recordings are keyed by every
// parameter value), the cpu evaluates at enqueue; both give the same results, and both
// refuse a value that empties the range before anything runs.
TEST_CASE("stored expressions run alike on every backend", "[opencl][cpu][expr]") {
  GraphBuilder b("exprs");
  const uint32_t sA = b.addSlot(externalSlot("a", 1024));
  b.addParam(Param{"n", ScalarType::I32, 4});
  const uint32_t kInc = addKernelSource(b, kSource, "shared.cl", "inc_u32");
  const uint32_t node =
      b.addKernelNode("inc", kInc, range1D(8), {Arg::slot(sA), Arg::scalar(ScalarType::U32, 5)});
  Graph g = b.take();
  exprtest::addExpr(g, node, ExprField::Global0, 0, "$n * 2");
  exprtest::addExpr(g, node, ExprField::ScalarArg, 1, "$n + 1");
  REQUIRE(!finalizeForFile(g));
  Backends be;
  for (rt::Device *dev : be.devices()) {
    INFO(dev->info().backend);
    REQUIRE(dev->info().caps.storedExpressions);
    for (rt::ExecMode mode : {rt::ExecMode::Replay, rt::ExecMode::Eager}) {
      rt::FinalizeOptions fo;
      fo.mode = mode;
      auto exe = dev->finalize(g, fo);
      INFO((exe ? std::string() : exe.error().message()));
      REQUIRE(exe);
      auto buf = alloc(*dev, 1024);
      rt::BindingTable t;
      t.slots.resize(1);
      t.slots[0].buffer = buf.get();
      for (int n : {4, 16, 4, 100, 16}) {
        INFO("n = " << n);
        writeAll(*dev, *buf, std::vector<uint32_t>(256, 0));
        rt::ParamValues pv;
        pv.bits.assign(1, uint64_t(n));
        auto ev = (*exe)->enqueue(t, pv);
        INFO((ev ? std::string() : ev.error().message()));
        REQUIRE(ev);
        REQUIRE(!(*ev)->wait());
        std::vector<uint32_t> want(256, 0);
        for (int i = 0; i < 2 * n; ++i)
          want[i] = uint32_t(n + 1);
        CHECK(readAll<uint32_t>(*dev, *buf) == want);
      }
      writeAll(*dev, *buf, std::vector<uint32_t>(256, 0));
      rt::ParamValues zero;
      zero.bits.assign(1, 0);
      auto ev = (*exe)->enqueue(t, zero);
      REQUIRE_FALSE(ev);
      CHECK(ev.error().message() == "node 'inc': global[0] = $n * 2 is 0; it must be at least 1");
      CHECK(readAll<uint32_t>(*dev, *buf) == std::vector<uint32_t>(256, 0));
    }
  }
}

// Copy and fill offsets and sizes, a host task's integer argument and slot sizes as
// expressions over `$n` (.cgf 2.2): evaluated per submission on both backends, in
// replay and eager, from one file; a runtime-owned slot of expression size grows when
// a submission needs more (Fill init: the pattern over the new size) and is reused when
// it needs less; a 0-byte fill does nothing; ranges past a slot's size for this
// submission and too-small bindings are refused before anything runs.
TEST_CASE("copy, fill, host task and slot size expressions run alike on every backend",
          "[opencl][cpu][expr]") {
  exprtest::TransferExprs tx = exprtest::transferExprsGraph();
  Graph g = std::move(tx.graph);
  const uint32_t sSrc = tx.src, sDst = tx.dst;
  REQUIRE(!finalizeForFile(g));
  // Through the file, as cgrun gets it: 2.2 with flag bit 2.
  auto bytes = writeCgf(g);
  REQUIRE(bytes);
  CHECK((*bytes)[8] == 2);
  CHECK((*bytes)[10] == 2);
  auto back = readCgf(bytes->data(), bytes->size());
  INFO((back ? std::string() : back.error().message()));
  REQUIRE(back);
  g = std::move(*back);

  Backends be;
  for (rt::Device *dev : be.devices()) {
    for (rt::ExecMode mode : {rt::ExecMode::Replay, rt::ExecMode::Eager}) {
      INFO(dev->info().backend << (mode == rt::ExecMode::Replay ? " replay" : " eager"));
      std::vector<std::string> lines;
      rt::FinalizeOptions fo;
      fo.mode = mode;
      fo.host.output = [&](const std::string &line) { lines.push_back(line); };
      auto exe = dev->finalize(g, fo);
      INFO((exe ? std::string() : exe.error().message()));
      REQUIRE(exe);
      auto src = alloc(*dev, 1024), dst = alloc(*dev, 1024);
      std::vector<uint32_t> srcValues(256);
      for (uint32_t i = 0; i < 256; ++i)
        srcValues[i] = 100 + i;
      writeAll(*dev, *src, srcValues);
      rt::BindingTable t;
      t.slots.resize(g.slots.size());
      t.slots[sSrc].buffer = src.get();
      t.slots[sDst].buffer = dst.get();
      for (int n : {4, 16, 2, 16, 40, 9}) {
        INFO("n = " << n);
        writeAll(*dev, *dst, std::vector<uint32_t>(256, 1));
        lines.clear();
        rt::ParamValues pv;
        pv.bits.assign(1, uint64_t(n));
        auto ev = (*exe)->enqueue(t, pv);
        INFO((ev ? std::string() : ev.error().message()));
        REQUIRE(ev);
        Error e = (*ev)->wait();
        INFO(e.message());
        REQUIRE(!e);
        std::vector<uint32_t> want(256, 1);
        for (int i = 0; i < n; ++i) {
          want[i] = 9;
          want[n + i] = 100 + i;
          want[2 * n + i] = 7;
        }
        for (int i = 0; i < n - 8; ++i)
          want[3 * n + i] = 5;
        CHECK(readAll<uint32_t>(*dev, *dst) == want);
        // print(dst, u32, $n + 1): n + 1 values after "print dst:".
        std::string line = "print dst:";
        for (int i = 0; i <= n; ++i)
          line += " " + std::to_string(want[i]);
        REQUIRE(lines.size() == 1);
        CHECK(lines[0] == line + " ... (256 x u32)");
      }
      // Refused before anything runs, naming the node or slot and the field.
      writeAll(*dev, *dst, std::vector<uint32_t>(256, 1));
      auto refused = [&](int n) {
        rt::ParamValues pv;
        pv.bits.assign(1, uint64_t(n));
        auto ev = (*exe)->enqueue(t, pv);
        REQUIRE_FALSE(ev);
        return ev.error().message();
      };
      CHECK(refused(100) == "node 'copyD': dst offset 800 (= $n * 8) + bytes 400 (= $n * 4) is "
                            "past the end of slot 'dst' (1024 bytes in this submission)");
      CHECK(refused(0) == "slot 'src': size = $n * 4 is 0; it must be at least 1");
      CHECK(refused(-3) == "node 'copyA': dst offset = $n * 4 is -12; it must not be negative");
      auto small = alloc(*dev, 32);
      t.slots[sSrc].buffer = small.get();
      CHECK(refused(16) == "slot 'src': bound range is 32 bytes, the graph needs at least 64 "
                           "(size = $n * 4 in this submission)");
      t.slots[sSrc].buffer = src.get();
      CHECK(readAll<uint32_t>(*dev, *dst) == std::vector<uint32_t>(256, 1));
    }
  }
}
