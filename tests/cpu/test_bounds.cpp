// Bounds-checked kernels on the cpu backend (CpuOptions::checkBounds): an access outside
// a buffer argument's binding (a slot smaller than the kernel's extent, an argument
// offset moved, an index out of range) fails the submission with an error naming the
// node, the kernel, the argument and the byte, and is not made: the memory around the
// binding stays as it was. Stores, loads, atomics, struct copies (llvm.memcpy),
// addresses made from integers, __local and private arrays are checked; kernels that stay in bounds give the same
// results as without checks, in replay and eager; checked kernels have their own cache
// key.
#include "cpu_test_util.h"

#include "internal.h"

#include "cgraph/kernel/module_info.h"
#include "cgraph/kernel/opencl_compiler.h"

#include <cstring>
#include <regex>

using namespace cgtest;

namespace {

rt::Device &checkedDevice() {
  static std::unique_ptr<rt::Backend> backend = [] {
    cpu::CpuOptions o;
    o.checkBounds = true;
    return cpu::makeCpuBackend(o);
  }();
  static rt::Device *dev = [] {
    auto d = backend->device(0);
    REQUIRE(d.ok());
    return *d;
  }();
  return *dev;
}

const char *kBoundsSource = R"CL(
__kernel void write_at(__global int *y, int idx, int v) {
  if (get_global_id(0) == 0) y[idx] = v;
}
__kernel void read_at(__global const int *x, __global int *out, int idx) {
  if (get_global_id(0) == 0) out[0] = x[idx];
}
__kernel void fill(__global int *y, int v) { y[get_global_id(0)] = v; }
__kernel void count_at(__global int *c, int idx) { atomic_inc(&c[idx]); }
typedef struct { int v[8]; } Block;
__kernel void copy_blocks(__global Block *dst, __global const Block *src) {
  dst[get_global_id(0)] = src[get_global_id(0)];
}
// Out of a __local allocation, a static __local array and a private array.
__kernel void local_at(__global int *out, __local int *tile, int idx) {
  tile[get_local_id(0)] = 1;
  barrier(CLK_LOCAL_MEM_FENCE);
  if (get_local_id(0) == 0) tile[idx] = 2;
  barrier(CLK_LOCAL_MEM_FENCE);
  out[get_global_id(0)] = tile[get_local_id(0)];
}
__kernel void static_local_at(__global int *out, int idx) {
  __local int s[8];
  s[get_local_id(0)] = 1;
  barrier(CLK_LOCAL_MEM_FENCE);
  if (get_local_id(0) == 0) s[idx] = 2;
  barrier(CLK_LOCAL_MEM_FENCE);
  out[get_global_id(0)] = s[get_local_id(0)];
}
__kernel void private_at(__global int *out, int idx) {
  int p[4];
  for (int k = 0; k < 4; ++k) p[k] = k;
  p[idx & 7] = 9;
  out[get_global_id(0)] = p[get_global_id(0) % 4];
}
// An address made from an integer: its origin is not followed.
__kernel void write_raw(__global int *y, ulong byteOffset, int v) {
  if (get_global_id(0) == 0) *(__global int *)((ulong)y + byteOffset) = v;
}
// In bounds: private arrays, __local memory, vectors, a pointer picked from two buffers.
__kernel void mixed(__global const float *a, __global const float *b, __global float4 *out,
                    __local float *tile, int pick) {
  size_t i = get_global_id(0), l = get_local_id(0);
  float priv[4];
  for (int k = 0; k < 4; ++k) priv[k] = a[i] * (float)(k + 1);
  tile[l] = b[i];
  barrier(CLK_LOCAL_MEM_FENCE);
  __global const float *p = pick ? a : b;
  out[i] = (float4)(priv[i % 4], tile[(l + 1) % get_local_size(0)], p[i], vload4(0, a + (i / 4) * 4).w);
}
)CL";

constexpr int32_t kSentinel = 0x5a5a5a5a;

struct Run {
  Graph g;
  std::vector<std::unique_ptr<rt::Buffer>> bufs;
  rt::BindingTable table;
};

// One node `name` of `kernel` over `global` work-items (`local`: 0 = backend's choice);
// every slot's buffer is `slack` bytes larger than its binding and filled with
// kSentinel, so a write past the binding would show.
Run makeRun(const std::string &kernel, const std::string &name, uint64_t global, uint64_t local,
            const std::vector<uint64_t> &slotBytes, const std::vector<Arg> &args, rt::Device &dev,
            uint64_t slack = 4096) {
  GraphBuilder b(kernel);
  auto k = addKernelSource(b, kBoundsSource, "bounds.cl");
  REQUIRE(k.count(kernel));
  for (size_t s = 0; s < slotBytes.size(); ++s)
    addSlot(b, "s" + std::to_string(s), slotBytes[s]);
  b.addKernelNode(name, k[kernel], range1D(global, local), args);
  Run r{b.take(), {}, {}};
  for (uint64_t bytes : slotBytes) {
    auto buf = dev.allocate(bytes + slack, 64);
    REQUIRE(buf.ok());
    auto *p = static_cast<int32_t *>((*buf)->hostPointer());
    for (uint64_t i = 0; i < (bytes + slack) / 4; ++i)
      p[i] = kSentinel;
    r.table.slots.push_back(rt::Binding{buf->get(), 0, bytes});
    r.bufs.push_back(std::move(*buf));
  }
  return r;
}

// The submission's error ("" when it succeeded).
std::string submit(Run &r, rt::Device &dev, rt::ExecMode mode = rt::ExecMode::Replay) {
  rt::FinalizeOptions fo;
  fo.mode = mode;
  auto exe = dev.finalize(r.g, fo);
  INFO((exe ? std::string() : exe.error().message()));
  REQUIRE(exe.ok());
  auto ev = (*exe)->enqueue(r.table, {});
  INFO((ev ? std::string() : ev.error().message()));
  REQUIRE(ev.ok());
  Error e = (*ev)->wait();
  return e ? e.message() : std::string();
}

const int32_t *words(const Run &r, size_t slot) {
  return static_cast<const int32_t *>(r.bufs[slot]->hostPointer());
}

// Every word of slot `slot`'s buffer from byte `from` on is still kSentinel.
bool intactFrom(const Run &r, size_t slot, uint64_t from) {
  const uint64_t n = r.bufs[slot]->size() / 4;
  for (uint64_t i = from / 4; i < n; ++i)
    if (words(r, slot)[i] != kSentinel) return false;
  return true;
}

uint64_t u32(int32_t v) { return uint32_t(v); }

} // namespace

TEST_CASE("cpu bounds: an out-of-bounds write is reported and not made", "[cpu][bounds]") {
  for (rt::ExecMode mode : {rt::ExecMode::Replay, rt::ExecMode::Eager}) {
    Run r = makeRun("write_at", "k2", 64, 0, {4096},
                    {Arg::slot(0), Arg::scalar(ScalarType::I32, 1024), Arg::scalar(ScalarType::I32, 7)},
                    checkedDevice());
    CHECK(submit(r, checkedDevice(), mode) ==
          "node 'k2' (kernel 'write_at'): argument 0 ('y'): access at byte 4096 outside its "
          "4096-byte binding (4-byte write)");
    CHECK(intactFrom(r, 0, 0));
  }
  // Below the binding: a negative byte index.
  Run r = makeRun("write_at", "below", 1, 0, {4096},
                  {Arg::slot(0), Arg::scalar(ScalarType::I32, u32(-2)), Arg::scalar(ScalarType::I32, 7)},
                  checkedDevice());
  CHECK(submit(r, checkedDevice()) ==
        "node 'below' (kernel 'write_at'): argument 0 ('y'): access at byte -8 outside its "
        "4096-byte binding (4-byte write)");
  CHECK(intactFrom(r, 0, 0));
}

TEST_CASE("cpu bounds: an out-of-bounds read is reported", "[cpu][bounds]") {
  Run r = makeRun("read_at", "rd", 1, 0, {4096, 64},
                  {Arg::slot(0), Arg::slot(1), Arg::scalar(ScalarType::I32, 5000)}, checkedDevice());
  CHECK(submit(r, checkedDevice()) ==
        "node 'rd' (kernel 'read_at'): argument 0 ('x'): access at byte 20000 outside its "
        "4096-byte binding (4-byte read)");
  CHECK(intactFrom(r, 0, 0));
  CHECK(intactFrom(r, 1, 64)); // past `out`'s binding
}

TEST_CASE("cpu bounds: a slot smaller than the launch stops it without writing past it",
          "[cpu][bounds]") {
  // 4096 work-items write one int each into a 1024-int binding, in many groups.
  Run r = makeRun("fill", "fill", 4096, 64, {4096}, {Arg::slot(0), Arg::scalar(ScalarType::I32, 3)},
                  checkedDevice(), 16384);
  const std::string err = submit(r, checkedDevice());
  std::smatch m;
  REQUIRE(std::regex_match(err, m, std::regex("node 'fill' \\(kernel 'fill'\\): argument 0 \\('y'\\): access at "
                                              "byte ([0-9]+) outside its 4096-byte binding \\(4-byte write\\)")));
  const uint64_t at = std::stoull(m[1]);
  CHECK(at >= 4096);
  CHECK(at % 4 == 0);
  CHECK(intactFrom(r, 0, 4096));
}

TEST_CASE("cpu bounds: an argument offset shrinks its binding", "[cpu][bounds]") {
  // The slot is 4096 bytes; the argument starts 2048 bytes into it.
  Run r = makeRun("fill", "shifted", 1024, 0, {4096}, {Arg::slot(0, 2048), Arg::scalar(ScalarType::I32, 3)},
                  checkedDevice());
  const std::string err = submit(r, checkedDevice());
  CHECK(err.find("node 'shifted' (kernel 'fill'): argument 0 ('y'): access at byte ") == 0);
  CHECK(err.find(" outside its 2048-byte binding (4-byte write)") != std::string::npos);
  CHECK(intactFrom(r, 0, 4096));
}

TEST_CASE("cpu bounds: atomics, struct copies and integer-made addresses are checked", "[cpu][bounds]") {
  {
    Run r = makeRun("count_at", "cnt", 16, 0, {256}, {Arg::slot(0), Arg::scalar(ScalarType::I32, 64)},
                    checkedDevice());
    CHECK(submit(r, checkedDevice()) ==
          "node 'cnt' (kernel 'count_at'): argument 0 ('c'): access at byte 256 outside its "
          "256-byte binding (4-byte write)");
    CHECK(intactFrom(r, 0, 0));
  }
  {
    // 8 blocks of 32 bytes from a source binding of 7.
    Run r = makeRun("copy_blocks", "cp", 8, 0, {256, 224}, {Arg::slot(0), Arg::slot(1)}, checkedDevice());
    // The source's bytes past its binding differ from the destination's.
    auto *src = static_cast<int32_t *>(r.bufs[1]->hostPointer());
    for (int i = 56; i < 64; ++i)
      src[i] = 0x11111111;
    const std::string err = submit(r, checkedDevice());
    CHECK(err == "node 'cp' (kernel 'copy_blocks'): argument 1 ('src'): access at byte 224 outside its "
                 "224-byte binding (32-byte read)");
    // The destination's block 7 was not written (its source was out of bounds).
    for (int i = 0; i < 8; ++i)
      CHECK(words(r, 0)[7 * 8 + i] == kSentinel);
    CHECK(intactFrom(r, 0, 256));
  }
  {
    Run r = makeRun("write_raw", "raw", 1, 0, {4096},
                    {Arg::slot(0), Arg::scalar(ScalarType::U64, 4096), Arg::scalar(ScalarType::I32, 9)},
                    checkedDevice());
    const std::string err = submit(r, checkedDevice());
    CHECK(err.find("node 'raw' (kernel 'write_raw'): access at address 0x") == 0);
    CHECK(err.find("outside every buffer argument's binding (4-byte write)") != std::string::npos);
    CHECK(intactFrom(r, 0, 0));
    // In bounds through the same integer path: made.
    Run ok = makeRun("write_raw", "raw", 1, 0, {4096},
                     {Arg::slot(0), Arg::scalar(ScalarType::U64, 4092), Arg::scalar(ScalarType::I32, 9)},
                     checkedDevice());
    CHECK(submit(ok, checkedDevice()).empty());
    CHECK(words(ok, 0)[1023] == 9);
  }
}

TEST_CASE("cpu bounds: __local and private memory are checked", "[cpu][bounds]") {
  {
    Run r = makeRun("local_at", "loc", 8, 8, {32},
                    {Arg::slot(0), Arg::localMem(32), Arg::scalar(ScalarType::I32, 8)}, checkedDevice());
    CHECK(submit(r, checkedDevice()) ==
          "node 'loc' (kernel 'local_at'): argument 1 ('tile'): access at byte 32 outside its "
          "32-byte __local allocation (4-byte write)");
  }
  {
    Run r = makeRun("static_local_at", "sloc", 8, 8, {32}, {Arg::slot(0), Arg::scalar(ScalarType::I32, 8)},
                    checkedDevice());
    CHECK(submit(r, checkedDevice()) ==
          "node 'sloc' (kernel 'static_local_at'): access at byte 32 outside the work-group's 32-byte "
          "__local memory (4-byte write)");
  }
  {
    Run r = makeRun("private_at", "priv", 4, 0, {16}, {Arg::slot(0), Arg::scalar(ScalarType::I32, 5)},
                    checkedDevice());
    CHECK(submit(r, checkedDevice()) ==
          "node 'priv' (kernel 'private_at'): access at byte 20 outside its 16-byte private or "
          "program-scope variable (4-byte write)");
  }
  // In bounds: the same kernels run and give their values.
  Run r = makeRun("private_at", "priv", 4, 0, {16}, {Arg::slot(0), Arg::scalar(ScalarType::I32, 2)},
                  checkedDevice());
  CHECK(submit(r, checkedDevice()).empty());
  CHECK(std::vector<int32_t>(words(r, 0), words(r, 0) + 4) == std::vector<int32_t>{0, 1, 9, 3});
  Run l = makeRun("local_at", "loc", 8, 8, {32}, {Arg::slot(0), Arg::localMem(32), Arg::scalar(ScalarType::I32, 3)},
                  checkedDevice());
  CHECK(submit(l, checkedDevice()).empty());
  CHECK(std::vector<int32_t>(words(l, 0), words(l, 0) + 8) == std::vector<int32_t>{1, 1, 1, 2, 1, 1, 1, 1});
}

TEST_CASE("cpu bounds: in-bounds kernels give the same results with and without checks", "[cpu][bounds]") {
  const uint64_t n = 256;
  for (rt::ExecMode mode : {rt::ExecMode::Replay, rt::ExecMode::Eager}) {
    for (int pick : {0, 1}) {
      std::vector<std::vector<int32_t>> outs;
      for (rt::Device *dev : {&cpuDevice(), &checkedDevice()}) {
        Run r = makeRun("mixed", "mixed", n, 64, {n * 4, n * 4, n * 16},
                        {Arg::slot(0), Arg::slot(1), Arg::slot(2), Arg::localMem(64 * 4),
                         Arg::scalar(ScalarType::I32, uint64_t(pick))},
                        *dev, 64);
        auto *a = static_cast<float *>(r.bufs[0]->hostPointer());
        auto *b = static_cast<float *>(r.bufs[1]->hostPointer());
        for (uint64_t i = 0; i < n; ++i) {
          a[i] = float(i) * 0.5f + 1.0f;
          b[i] = float(i % 13) - 6.0f;
        }
        CHECK(submit(r, *dev, mode).empty());
        CHECK(intactFrom(r, 2, n * 16));
        outs.emplace_back(words(r, 2), words(r, 2) + n * 4);
      }
      CHECK(outs[0] == outs[1]);
      // And right: lane 2 is the picked buffer's element.
      auto *f = reinterpret_cast<const float *>(outs[1].data());
      CHECK(f[4 * 5 + 2] == (pick ? 5 * 0.5f + 1.0f : float(5 % 13) - 6.0f));
    }
  }
}

TEST_CASE("cpu bounds: checked kernels are cached apart from unchecked ones", "[cpu][bounds]") {
  auto res = compileOpenCL(kBoundsSource, "bounds.cl", CompileOptions{});
  REQUIRE(res.ok());
  KernelModule mod = makeKernelModule("bounds.cl", *res, nullptr, false);
  cpu::KernelCompiler jit;
  for (bool checked : {false, true, false, true}) {
    auto m = jit.get(mod, {"fill"}, true, checked);
    INFO((m ? std::string() : m.error().message()));
    REQUIRE(m.ok());
    REQUIRE((*m)->find("fill"));
    CHECK((*m)->find("fill")->checked == checked);
  }
  CHECK(jit.memoryHits() == 2);
}
