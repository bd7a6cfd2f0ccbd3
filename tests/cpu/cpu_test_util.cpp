#include "cpu_test_util.h"

#include "cgraph/kernel/module_info.h"
#include "cgraph/kernel/opencl_compiler.h"
#include "cgraph/kernel/spirv.h"

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace cgtest {

rt::Device &cpuDevice() {
  // The persistent binary cache is the test's own (CGRAPH_CACHE_DIR, tests/catch_main.cpp).
  static std::unique_ptr<rt::Backend> backend = cpu::makeCpuBackend();
  static rt::Device *dev = [] {
    auto d = backend->device(0);
    REQUIRE(d.ok());
    return *d;
  }();
  return *dev;
}

std::map<std::string, uint32_t> addKernels(GraphBuilder &b, const std::string &file,
                                           const std::vector<std::string> &clangArgs) {
  // CGRAPH_TEST_SOURCE_DIR: the source tree when it is not where the build saw it (the
  // GPU bundle, scripts/gpu-bundle.sh).
  const char *env = std::getenv("CGRAPH_TEST_SOURCE_DIR");
  std::ifstream in(std::string(env ? env : CGRAPH_SOURCE_DIR) + "/tests/cpu/kernels/" + file);
  REQUIRE(in.good());
  std::stringstream ss;
  ss << in.rdbuf();
  return addKernelSource(b, ss.str(), file, clangArgs);
}

std::map<std::string, uint32_t> addKernelSource(GraphBuilder &b, const std::string &source,
                                                const std::string &file,
                                                const std::vector<std::string> &clangArgs) {
  CompileOptions opts;
  opts.extraArgs = clangArgs;
  auto res = compileOpenCL(source, file, opts);
  INFO((res ? std::string() : res.error().message()));
  REQUIRE(res.ok());
  auto kernels = reflectKernels(res->spirv.data(), res->spirv.size());
  INFO((kernels ? std::string() : kernels.error().message()));
  REQUIRE(kernels.ok());
  uint32_t m = b.addModule(makeKernelModule(file, *res, nullptr, false));
  std::map<std::string, uint32_t> out;
  for (Kernel k : *kernels) {
    k.module = m;
    std::string name = k.name;
    out[name] = b.addKernel(std::move(k));
  }
  return out;
}

uint32_t addSlot(GraphBuilder &b, const std::string &name, uint64_t bytes) {
  Slot s;
  s.name = name;
  s.size = bytes;
  return b.addSlot(s);
}

Buffers::Buffers(const Graph &g) {
  for (const Slot &s : g.slots) {
    if (s.init != SlotInit::External) {
      bufs.emplace_back();
      table.slots.emplace_back();
      continue;
    }
    auto buf = cpuDevice().allocate(s.size, 64);
    REQUIRE(buf.ok());
    std::memset((*buf)->hostPointer(), 0, s.size);
    table.slots.push_back(rt::Binding{buf->get(), 0, 0});
    bufs.push_back(std::move(*buf));
  }
}

std::unique_ptr<rt::Executable> finalizeOrFail(const Graph &g, rt::ExecMode mode) {
  rt::FinalizeOptions o;
  o.mode = mode;
  auto exe = cpuDevice().finalize(g, o);
  INFO((exe ? std::string() : exe.error().message()));
  REQUIRE(exe.ok());
  return std::move(*exe);
}

void runOrFail(rt::Executable &exe, const rt::BindingTable &t, const rt::ParamValues &p,
               bool profile, std::vector<rt::NodeTiming> *timings) {
  rt::SubmitOptions so;
  so.profile = profile;
  auto ev = exe.enqueue(t, p, so);
  INFO((ev ? std::string() : ev.error().message()));
  REQUIRE(ev.ok());
  Error e = (*ev)->wait();
  INFO(e.message());
  REQUIRE(!e);
  if (timings) *timings = (*ev)->nodeTimings();
}

template <typename F, typename I> static int64_t ulpT(F a, F b) {
  if (std::isnan(a) && std::isnan(b)) return 0;
  if (std::isnan(a) || std::isnan(b)) return INT64_MAX;
  if (a == b) return 0;
  I ia, ib;
  std::memcpy(&ia, &a, sizeof(F));
  std::memcpy(&ib, &b, sizeof(F));
  if (ia < 0) ia = std::numeric_limits<I>::min() - ia;
  if (ib < 0) ib = std::numeric_limits<I>::min() - ib;
  __int128 d = (__int128)ia - (__int128)ib;
  if (d < 0) d = -d;
  return d > INT64_MAX ? INT64_MAX : int64_t(d);
}
int64_t ulpDiff(float a, float b) {
  return ulpT<float, int32_t>(a, b);
}
int64_t ulpDiff(double a, double b) {
  return ulpT<double, int64_t>(a, b);
}

} // namespace cgtest

namespace cgtest {

std::vector<std::vector<uint8_t>> runOne(const std::string &file, const std::string &kernel,
                                         const NDRange &range, const std::vector<KArg> &args,
                                         const std::vector<std::string> &clangArgs) {
  GraphBuilder b(kernel);
  auto k = addKernels(b, file, clangArgs);
  REQUIRE(k.count(kernel));
  std::vector<Arg> nodeArgs;
  std::vector<uint32_t> slotOf(args.size(), kNone);
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i].kind == KArg::Buf) {
      slotOf[i] = addSlot(b, "arg" + std::to_string(i), args[i].data.size());
      nodeArgs.push_back(Arg::slot(slotOf[i]));
    } else {
      nodeArgs.push_back(args[i].arg);
    }
  }
  b.addKernelNode(kernel, k[kernel], range, nodeArgs);
  Graph g = b.take();
  auto exe = finalizeOrFail(g);
  Buffers bufs(g);
  for (size_t i = 0; i < args.size(); ++i)
    if (slotOf[i] != kNone) bufs.set(slotOf[i], args[i].data);
  runOrFail(*exe, bufs.table);
  std::vector<std::vector<uint8_t>> out(args.size());
  for (size_t i = 0; i < args.size(); ++i)
    if (slotOf[i] != kNone) out[i] = bufs.get<uint8_t>(slotOf[i]);
  return out;
}

} // namespace cgtest
