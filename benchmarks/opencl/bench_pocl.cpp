// PoCL through the OpenCL backend, next to the CPU backend when it is linked:
//   1. 1000-node chain of axpy(4096): eager (clEnqueueNDRangeKernel per node) vs
//      command-buffer replay, per node;
//   2. axpy over 16M floats (GB/s, 3 x 4 bytes per element) and a 512x512 matmul
//      (GFLOP/s);
//   3. cold finalize: PoCL's clBuildProgram (through finalize, our cache off) vs the CPU
//      backend's finalize, same source;
//   4. --chain N (default 20000): an N-node axpy(4096) chain replayed through the opencl
//      backend in both replay strategies (command buffers, pre-resolved node list) next
//      to the same work on PoCL directly (OpenCL calls from this program, no cgraph in
//      between): clEnqueueNDRangeKernel per node, and one command buffer of N commands
//      (with and without a sync-point chain); per node, same process, all variants
//      round-robin (one run of each per repetition, best of the repetitions), and the
//      ratio of each replay to PoCL's direct eager loop.
// PoCL's own kernel cache is off (POCL_KERNEL_CACHE=0) unless --warm is given.
// Usage: bench_pocl [--warm] [--reps N] [--chain N] [--only-chain]
#include "cgraph/backends/opencl/opencl_backend.h"
#include "cgraph/graph/builder.h"
#include "cgraph/kernel/module_info.h"
#include "cgraph/kernel/opencl_compiler.h"
#include "cgraph/kernel/spirv.h"

#ifdef CGRAPH_HAVE_CPU_BACKEND
#include "cgraph/backends/cpu/cpu_backend.h"
#endif

#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <CL/cl_ext.h>
#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

using namespace cgraph;
using Clock = std::chrono::steady_clock;

namespace {

const char *kSource = R"(
__kernel void axpy(__global float *y, __global const float *x, float a) {
  size_t i = get_global_id(0);
  y[i] = a * x[i] + y[i];
}
__kernel void matmul(__global float *c, __global const float *a, __global const float *b, int n) {
  size_t col = get_global_id(0), row = get_global_id(1);
  float acc = 0.0f;
  for (int k = 0; k < n; ++k) acc += a[row * n + k] * b[k * n + col];
  c[row * n + col] = acc;
}
)";

[[noreturn]] void die(const std::string &what, const Error &e) {
  std::fprintf(stderr, "bench_pocl: %s: %s\n", what.c_str(), e.message().c_str());
  std::exit(1);
}

struct Built {
  GraphBuilder b;
  uint32_t axpy = kNone, matmul = kNone;
};

void addModule(Built &bt) {
  auto r = compileOpenCL(kSource, "bench.cl", CompileOptions{});
  if (!r) die("compile", r.error());
  const std::string source = kSource;
  uint32_t mod = bt.b.addModule(makeKernelModule("bench.cl", *r, &source, false));
  auto ks = reflectKernels(r->spirv.data(), r->spirv.size());
  if (!ks) die("reflect", ks.error());
  for (Kernel k : *ks) {
    k.module = mod;
    std::string n = k.name;
    uint32_t i = bt.b.addKernel(std::move(k));
    if (n == "axpy") bt.axpy = i;
    if (n == "matmul") bt.matmul = i;
  }
}

Slot ext(const char *name, uint64_t bytes) {
  Slot s;
  s.name = name;
  s.size = bytes;
  return s;
}

uint64_t f32(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

Graph axpyChain(uint32_t nodes, uint64_t n) {
  Built bt;
  addModule(bt);
  uint32_t y = bt.b.addSlot(ext("y", n * 4)), x = bt.b.addSlot(ext("x", n * 4));
  uint32_t prev = kNone;
  for (uint32_t i = 0; i < nodes; ++i) {
    uint32_t nd = bt.b.addKernelNode("axpy" + std::to_string(i), bt.axpy, range1D(n, n >= 256 ? 256 : 0),
                                     {Arg::slot(y), Arg::slot(x), Arg::scalar(ScalarType::F32, f32(0.5f))});
    if (prev != kNone) bt.b.addEdge(prev, nd);
    prev = nd;
  }
  return bt.b.take();
}

Graph matmulGraph(uint32_t n) {
  Built bt;
  addModule(bt);
  uint32_t c = bt.b.addSlot(ext("c", n * n * 4)), a = bt.b.addSlot(ext("a", n * n * 4)),
           b = bt.b.addSlot(ext("b", n * n * 4));
  bt.b.addKernelNode("matmul", bt.matmul, range2D(n, n, 16, 16),
                     {Arg::slot(c), Arg::slot(a), Arg::slot(b), Arg::scalar(ScalarType::I32, n)});
  return bt.b.take();
}

struct Timing {
  double minUs = 0, medUs = 0, finalizeMs = 0, firstUs = 0;
};

// Finalizes `g`, binds fresh buffers, runs `reps` times (after one warm-up); host time per
// submission from enqueue to wait().
Timing measure(rt::Device &d, const Graph &g, rt::ExecMode mode, int reps) {
  rt::FinalizeOptions fo;
  fo.mode = mode;
  fo.useCache = false;
  auto t0 = Clock::now();
  auto exe = d.finalize(g, fo);
  Timing t;
  t.finalizeMs = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  if (!exe) die(d.info().backend + " finalize", exe.error());
  std::vector<std::unique_ptr<rt::Buffer>> bufs;
  rt::BindingTable table;
  for (const Slot &s : g.slots) {
    auto b = d.allocate(s.size, 64);
    if (!b) die("allocate", b.error());
    std::vector<float> init(s.size / 4, 1.0f);
    if (Error e = d.write(**b, 0, init.data(), s.size)) die("write", e);
    table.slots.push_back({b->get()});
    bufs.push_back(std::move(*b));
  }
  std::vector<double> us;
  for (int i = 0; i <= reps; ++i) {
    auto s = Clock::now();
    auto ev = (*exe)->enqueue(table, {});
    if (!ev) die("enqueue", ev.error());
    if (Error e = (*ev)->wait()) die("wait", e);
    double el = std::chrono::duration<double, std::micro>(Clock::now() - s).count();
    if (i == 0) t.firstUs = el;
    if (i > 0) us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - s).count());
  }
  std::sort(us.begin(), us.end());
  t.minUs = us.front();
  t.medUs = us[us.size() / 2];
  return t;
}

rt::Device *open(rt::Backend &b) {
  rt::BackendProbe p = b.probe();
  if (!p.available) {
    std::fprintf(stderr, "bench_pocl: %s unavailable: %s\n", b.name(), p.reason.c_str());
    return nullptr;
  }
  auto d = b.device(0);
  if (!d) die(b.name(), d.error());
  return *d;
}

// ---- PoCL directly: the same ICD loader the opencl backend opened (dlopen returns its
// handle, so PoCL stays loaded the way the backend loaded it).
struct Direct {
  void *lib = nullptr;
#define CL_FN(name) decltype(&::name) name = nullptr
  CL_FN(clGetPlatformIDs);
  CL_FN(clGetDeviceIDs);
  CL_FN(clCreateContext);
  CL_FN(clCreateCommandQueueWithProperties);
  CL_FN(clCreateProgramWithSource);
  CL_FN(clBuildProgram);
  CL_FN(clCreateKernel);
  CL_FN(clCreateBuffer);
  CL_FN(clSetKernelArg);
  CL_FN(clEnqueueNDRangeKernel);
  CL_FN(clFinish);
  CL_FN(clReleaseKernel);
  CL_FN(clReleaseProgram);
  CL_FN(clReleaseMemObject);
  CL_FN(clReleaseCommandQueue);
  CL_FN(clReleaseContext);
  CL_FN(clGetExtensionFunctionAddressForPlatform);
#undef CL_FN
  clCreateCommandBufferKHR_fn createCb = nullptr;
  clCommandNDRangeKernelKHR_fn ndrange = nullptr;
  clFinalizeCommandBufferKHR_fn finalizeCb = nullptr;
  clEnqueueCommandBufferKHR_fn enqueueCb = nullptr;
  clReleaseCommandBufferKHR_fn releaseCb = nullptr;

  bool load() {
    lib = dlopen("libOpenCL.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) return false;
#define CL_SYM(name) name = reinterpret_cast<decltype(name)>(dlsym(lib, #name)); if (!name) return false
    CL_SYM(clGetPlatformIDs); CL_SYM(clGetDeviceIDs); CL_SYM(clCreateContext);
    CL_SYM(clCreateCommandQueueWithProperties); CL_SYM(clCreateProgramWithSource); CL_SYM(clBuildProgram);
    CL_SYM(clCreateKernel); CL_SYM(clCreateBuffer); CL_SYM(clSetKernelArg); CL_SYM(clEnqueueNDRangeKernel);
    CL_SYM(clFinish); CL_SYM(clReleaseKernel); CL_SYM(clReleaseProgram); CL_SYM(clReleaseMemObject);
    CL_SYM(clReleaseCommandQueue); CL_SYM(clReleaseContext); CL_SYM(clGetExtensionFunctionAddressForPlatform);
#undef CL_SYM
    return true;
  }
};

void check(cl_int rc, const char *what) {
  if (rc != CL_SUCCESS) {
    std::fprintf(stderr, "bench_pocl: %s failed: %d\n", what, rc);
    std::exit(1);
  }
}

// PoCL driven directly for an N-node axpy(4096) chain, set up once: an eager loop
// (clSetKernelArg + clEnqueueNDRangeKernel per node, as an application would), and
// three command buffers of N commands: {sync-point chain, no sync points, sync-point
// chain with one cl_kernel per command (as the opencl backend records)}.
struct DirectChain {
  Direct d;
  uint32_t nodes = 0;
  cl_context ctx = nullptr;
  cl_command_queue q = nullptr;
  cl_command_queue qProf = nullptr; // CL_QUEUE_PROFILING_ENABLE, as the opencl backend's queue
  cl_program prog = nullptr;
  cl_kernel k = nullptr;
  cl_mem x = nullptr, y = nullptr;
  size_t n = 4096, local = 256;
  float a = 0.5f;
  cl_command_buffer_khr cbs[3] = {nullptr, nullptr, nullptr};
  std::vector<cl_kernel> perCommand;

  void setArgs(cl_kernel kc) {
    check(d.clSetKernelArg(kc, 0, sizeof(cl_mem), &y), "clSetKernelArg");
    check(d.clSetKernelArg(kc, 1, sizeof(cl_mem), &x), "clSetKernelArg");
    check(d.clSetKernelArg(kc, 2, sizeof(float), &a), "clSetKernelArg");
  }

  bool setup(uint32_t count) {
    nodes = count;
    if (!d.load()) {
      std::fprintf(stderr, "bench_pocl: cannot load libOpenCL.so.1 for the direct side\n");
      return false;
    }
    cl_platform_id plats[8];
    cl_uint np = 0;
    check(d.clGetPlatformIDs(8, plats, &np), "clGetPlatformIDs");
    cl_platform_id plat = nullptr;
    cl_device_id dev = nullptr;
    for (cl_uint i = 0; i < np && !dev; ++i)
      if (d.clGetDeviceIDs(plats[i], CL_DEVICE_TYPE_ALL, 1, &dev, nullptr) == CL_SUCCESS) plat = plats[i];
    if (!dev) return false;
    cl_int rc = CL_SUCCESS;
    ctx = d.clCreateContext(nullptr, 1, &dev, nullptr, nullptr, &rc);
    check(rc, "clCreateContext");
    q = d.clCreateCommandQueueWithProperties(ctx, dev, nullptr, &rc);
    check(rc, "clCreateCommandQueueWithProperties");
    cl_queue_properties qp[] = {CL_QUEUE_PROPERTIES, CL_QUEUE_PROFILING_ENABLE, 0};
    qProf = d.clCreateCommandQueueWithProperties(ctx, dev, qp, &rc);
    check(rc, "clCreateCommandQueueWithProperties");
    const char *src = kSource;
    prog = d.clCreateProgramWithSource(ctx, 1, &src, nullptr, &rc);
    check(rc, "clCreateProgramWithSource");
    check(d.clBuildProgram(prog, 1, &dev, "", nullptr, nullptr), "clBuildProgram");
    k = d.clCreateKernel(prog, "axpy", &rc);
    check(rc, "clCreateKernel");
    std::vector<float> ones(n, 1.0f);
    y = d.clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, n * 4, ones.data(), &rc);
    check(rc, "clCreateBuffer");
    x = d.clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, n * 4, ones.data(), &rc);
    check(rc, "clCreateBuffer");
    auto fn = [&](const char *name) { return d.clGetExtensionFunctionAddressForPlatform(plat, name); };
    d.createCb = reinterpret_cast<clCreateCommandBufferKHR_fn>(fn("clCreateCommandBufferKHR"));
    d.ndrange = reinterpret_cast<clCommandNDRangeKernelKHR_fn>(fn("clCommandNDRangeKernelKHR"));
    d.finalizeCb = reinterpret_cast<clFinalizeCommandBufferKHR_fn>(fn("clFinalizeCommandBufferKHR"));
    d.enqueueCb = reinterpret_cast<clEnqueueCommandBufferKHR_fn>(fn("clEnqueueCommandBufferKHR"));
    d.releaseCb = reinterpret_cast<clReleaseCommandBufferKHR_fn>(fn("clReleaseCommandBufferKHR"));
    if (!d.createCb || !d.ndrange || !d.finalizeCb || !d.enqueueCb || !d.releaseCb) return true;
    setArgs(k);
    for (int variant = 0; variant < 3; ++variant) {
      const bool chained = variant != 1, kernelPerCommand = variant == 2;
      cl_command_buffer_khr cb = d.createCb(1, &q, nullptr, &rc);
      check(rc, "clCreateCommandBufferKHR");
      cl_sync_point_khr prev = 0;
      for (uint32_t i = 0; i < nodes; ++i) {
        cl_sync_point_khr sp = 0;
        cl_kernel kc = k;
        if (kernelPerCommand) {
          kc = d.clCreateKernel(prog, "axpy", &rc);
          check(rc, "clCreateKernel");
          perCommand.push_back(kc);
          setArgs(kc);
        }
        check(d.ndrange(cb, nullptr, nullptr, kc, 1, nullptr, &n, &local, (chained && i) ? 1 : 0,
                        (chained && i) ? &prev : nullptr, &sp, nullptr),
              "clCommandNDRangeKernelKHR");
        prev = sp;
      }
      check(d.finalizeCb(cb), "clFinalizeCommandBufferKHR");
      cbs[variant] = cb;
    }
    return true;
  }
  bool hasCommandBuffers() const { return cbs[0] != nullptr; }
  void runEager() {
    for (uint32_t i = 0; i < nodes; ++i) {
      setArgs(k);
      check(d.clEnqueueNDRangeKernel(q, k, 1, nullptr, &n, &local, 0, nullptr, nullptr), "clEnqueueNDRangeKernel");
    }
    check(d.clFinish(q), "clFinish");
  }
  // The tightest loop PoCL allows: arguments set once, only clEnqueueNDRangeKernel.
  void runEagerArgsOnce(bool profilingQueue) {
    cl_command_queue qq = profilingQueue ? qProf : q;
    setArgs(k);
    for (uint32_t i = 0; i < nodes; ++i)
      check(d.clEnqueueNDRangeKernel(qq, k, 1, nullptr, &n, &local, 0, nullptr, nullptr), "clEnqueueNDRangeKernel");
    check(d.clFinish(qq), "clFinish");
  }
  void runCommandBuffer(int variant) {
    check(d.enqueueCb(0, nullptr, cbs[variant], 0, nullptr, nullptr), "clEnqueueCommandBufferKHR");
    check(d.clFinish(q), "clFinish");
  }
  ~DirectChain() {
    for (cl_command_buffer_khr cb : cbs)
      if (cb) d.releaseCb(cb);
    for (cl_kernel kc : perCommand) d.clReleaseKernel(kc);
    if (x) d.clReleaseMemObject(x);
    if (y) d.clReleaseMemObject(y);
    if (k) d.clReleaseKernel(k);
    if (prog) d.clReleaseProgram(prog);
    if (q) d.clReleaseCommandQueue(q);
    if (qProf) d.clReleaseCommandQueue(qProf);
    if (ctx) d.clReleaseContext(ctx);
  }
};

// A finalized executable with bound buffers, submitted and waited for by run().
struct Prepared {
  std::unique_ptr<rt::Executable> exe;
  std::vector<std::unique_ptr<rt::Buffer>> bufs;
  rt::BindingTable table;
  Prepared(rt::Device &d, const Graph &g, rt::ExecMode mode) {
    rt::FinalizeOptions fo;
    fo.mode = mode;
    fo.useCache = false;
    auto e = d.finalize(g, fo);
    if (!e) die(d.info().backend + " finalize", e.error());
    exe = std::move(*e);
    for (const Slot &s : g.slots) {
      auto b = d.allocate(s.size, 64);
      if (!b) die("allocate", b.error());
      std::vector<float> init(s.size / 4, 1.0f);
      if (Error err = d.write(**b, 0, init.data(), s.size)) die("write", err);
      table.slots.push_back({b->get()});
      bufs.push_back(std::move(*b));
    }
  }
  void run() {
    auto ev = exe->enqueue(table, {});
    if (!ev) die("enqueue", ev.error());
    if (Error e = (*ev)->wait()) die("wait", e);
  }
};

} // namespace

int main(int argc, char **argv) {
  bool warm = false, onlyChain = false;
  int reps = 5;
  uint32_t longChain = 20000;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--warm")) warm = true;
    else if (!std::strcmp(argv[i], "--reps") && i + 1 < argc) reps = std::max(1, std::atoi(argv[++i]));
    else if (!std::strcmp(argv[i], "--chain") && i + 1 < argc) longChain = uint32_t(std::max(1, std::atoi(argv[++i])));
    else if (!std::strcmp(argv[i], "--only-chain")) onlyChain = true;
  }
  if (!warm) setenv("POCL_KERNEL_CACHE", "0", 1); // read by PoCL when it initializes

  struct Dev {
    const char *label;
    std::unique_ptr<rt::Backend> backend;
    rt::Device *device = nullptr;
  };
  std::vector<Dev> devs;
  devs.push_back({"pocl", opencl::makeOpenCLBackend()});
#ifdef CGRAPH_HAVE_CPU_BACKEND
  devs.push_back({"cgraph-cpu", cpu::makeCpuBackend()});
#endif
  for (Dev &d : devs) d.device = open(*d.backend);
  if (!devs[0].device) return 1;
  std::printf("pocl device: %s (%s)\n", devs[0].device->info().name.c_str(),
              devs[0].device->info().driverVersion.c_str());
  std::printf("PoCL kernel cache: %s; %d repetitions, min / median host time per submission\n\n",
              warm ? "on (warm figures)" : "off (POCL_KERNEL_CACHE=0, cold figures)", reps);

  {
    // The long chain: the backend's replay next to PoCL driven directly.
    Graph lc = axpyChain(longChain, 4096);
    // Both replay strategies, each on its own backend instance (the strategy is chosen
    // per device when it is opened).
    using R = opencl::OpenCLBackendOptions::Replay;
    opencl::OpenCLBackendOptions cbo, pro;
    cbo.replay = R::CommandBuffer;
    pro.replay = R::PreResolved;
    auto cbBackend = opencl::makeOpenCLBackend(cbo), prBackend = opencl::makeOpenCLBackend(pro);
    rt::Device *cbDev = open(*cbBackend), *prDev = open(*prBackend);
    if (!cbDev || !prDev) return 1;
    Prepared eager(*devs[0].device, lc, rt::ExecMode::Eager);
    Prepared cbReplay(*cbDev, lc, rt::ExecMode::Replay);
    Prepared prReplay(*prDev, lc, rt::ExecMode::Replay);
    DirectChain direct;
    const bool haveDirect = direct.setup(longChain);
    // Round robin: every repetition runs each variant once, so a burst of load from
    // other processes on this shared machine hits all of them alike; the first round
    // is a warm-up (recordings, PoCL's work-group functions). Best per node of `reps`.
    const char *names[] = {"cgraph eager", "cgraph replay command-buffer", "cgraph replay pre-resolved",
                           "PoCL direct eager", "PoCL direct command buffer (sync-point chain)",
                           "PoCL direct command buffer (no sync points)",
                           "PoCL direct command buffer (sync-point chain, a cl_kernel per command)",
                           "PoCL direct eager, arguments set once (no clSetKernelArg per node)",
                           "PoCL direct eager, arguments set once, profiling queue (as ours)"};
    const int kVariants = 9;
    std::vector<double> best(kVariants, 1e300);
    // The eager loops first, command buffers last: PoCL frees a finished command
    // buffer's per-command events in the background, which would slow whatever runs
    // right after one.
    const int order[kVariants] = {0, 2, 3, 7, 8, 1, 4, 5, 6};
    for (int rep = 0; rep <= reps; ++rep) {
      for (int v : order) {
        if (v >= 3 && !haveDirect) continue;
        if (v >= 4 && v <= 6 && !direct.hasCommandBuffers()) continue;
        auto t0 = Clock::now();
        switch (v) {
        case 0: eager.run(); break;
        case 1: cbReplay.run(); break;
        case 2: prReplay.run(); break;
        case 3: direct.runEager(); break;
        case 7: direct.runEagerArgsOnce(false); break;
        case 8: direct.runEagerArgsOnce(true); break;
        default: direct.runCommandBuffer(v - 4); break;
        }
        double us = std::chrono::duration<double, std::micro>(Clock::now() - t0).count() / longChain;
        if (rep > 0) best[v] = std::min(best[v], us);
      }
    }
    std::printf("%u x axpy(4096) chain, per node, best of %d round-robin repetitions (default replay on "
                "this device: %s):\n",
                longChain, reps, devs[0].device->info().replay.c_str());
    for (int v = 0; v < kVariants; ++v)
      if (best[v] < 1e300) std::printf("  %-72s %8.2f us/node\n", names[v], best[v]);
    if (haveDirect)
      std::printf("  replay / PoCL direct eager: command-buffer %.2fx, pre-resolved %.2fx "
                  "(against its arguments-set-once loop: %.2fx, %.2fx)\n",
                  best[1] / best[3], best[2] / best[3], best[1] / best[7], best[2] / best[7]);
    if (haveDirect && direct.hasCommandBuffers())
      std::printf("  replay / PoCL direct command buffer (sync-point chain): command-buffer %.2fx, "
                  "pre-resolved %.2fx\n",
                  best[1] / best[4], best[2] / best[4]);
    std::printf("\n");
    if (onlyChain) return 0;
  }

  const uint32_t kChain = 1000;
  Graph chain = axpyChain(kChain, 4096);
  std::printf("1000 x axpy(4096) chain, per node (opencl replay: %s):\n", devs[0].device->info().replay.c_str());
  for (Dev &d : devs) {
    if (!d.device) continue;
    Timing e = measure(*d.device, chain, rt::ExecMode::Eager, reps);
    Timing r = measure(*d.device, chain, rt::ExecMode::Replay, reps);
    std::printf("  %-11s eager  %8.2f us/node (median %8.2f)   replay %8.2f us/node (median %8.2f)\n",
                d.label, e.minUs / kChain, e.medUs / kChain, r.minUs / kChain, r.medUs / kChain);
  }

  const uint64_t kBig = 16u << 20;
  Graph big = axpyChain(1, kBig);
  Graph mm = matmulGraph(512);
  std::printf("\nthroughput (replay, best of %d):\n", reps);
  std::vector<std::pair<const char *, double>> finalizeMs;
  std::vector<double> firstMs;
  for (Dev &d : devs) {
    if (!d.device) continue;
    Timing a = measure(*d.device, big, rt::ExecMode::Replay, reps);
    Timing m = measure(*d.device, mm, rt::ExecMode::Replay, reps);
    std::printf("  %-11s axpy 16M floats %8.2f GB/s (%8.1f us)   matmul 512 %8.2f GFLOP/s (%8.1f us)\n",
                d.label, 3.0 * 4 * kBig / (a.minUs * 1e3), a.minUs,
                2.0 * 512 * 512 * 512 / (m.minUs * 1e3), m.minUs);
    finalizeMs.push_back({d.label, m.finalizeMs});
    firstMs.push_back(m.firstUs / 1e3);
  }
  std::printf("\nfinalize of the 2-kernel module (our in-memory cache off):\n");
  for (size_t i = 0; i < finalizeMs.size(); ++i) {
    auto &f = finalizeMs[i];
    // PoCL generates the work-group function at the first launch of a kernel, so the
    // first submission carries the rest of its compile time.
    std::printf("  %-11s %9.1f ms, first matmul submission %9.1f ms%s\n", f.first, f.second, firstMs[i],
                std::strcmp(f.first, "pocl") == 0 ? (warm ? "  (clBuildProgram, PoCL cache on)" : "  (clBuildProgram, cold)") : "");
  }
  return 0;
}
