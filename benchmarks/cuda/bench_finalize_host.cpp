// bench_finalize_host FILE.cgf [RUNS=200]: the host side of a GPU finalize, on any
// machine. Reads FILE (readCgfFile) and finalizes it through gpu_common's
// GraphExecutable over a driver whose every call returns at once (no GPU, no vendor
// library): what remains is cgraph's own work (read, validate + flatten, plans, the
// graph-building loop, the executable's bookkeeping), the part of bench_cuda's
// finalize rows that a CPU profiler can look at here (perf record this program).
// Prints the mean read and finalize times, finalizePhases() and heap allocations per
// run. Not a test: nothing runs, and the driver's own time is left out.
#include "cgraph/backends/gpu_common/graph_executable.h"
#include "cgraph/format/reader.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <new>
#include <string>
#include <vector>

using namespace cgraph;
using namespace cgraph::gpu;

namespace {
std::atomic<uint64_t> gNews{0};
} // namespace

void *operator new(size_t n) {
  gNews.fetch_add(1, std::memory_order_relaxed);
  if (void *p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void operator delete(void *p) noexcept { std::free(p); }
void operator delete(void *p, size_t) noexcept { std::free(p); }

namespace {

struct HostBuffer : rt::Buffer {
  std::vector<uint8_t> bytes;
  explicit HostBuffer(size_t n) : bytes(n) {}
  uint64_t size() const override { return bytes.size(); }
};

// Every call succeeds at once; handles are distinct fake pointers. Ring loader, done
// marker and programmatic edges on, as the cuda driver has them on an H100.
class NullDriver final : public Driver {
public:
  const char *apiName() const override { return "null"; }
  uint64_t maxSharedMemory() const override { return 48 * 1024; }
  size_t stagingSlots() const override { return 4; }
  ReplayCounters &counters() override { return counters_; }
  uint64_t address(const rt::Buffer &b) const override { return reinterpret_cast<uint64_t>(&b); }
  Error makeCurrent() override { return Error::success(); }
  Expected<ModuleRef> loadModule(const KernelModule &, bool) override { return ModuleRef(std::make_shared<int>(1)); }
  Expected<ModuleRef> builtinModule() override { return ModuleRef(std::make_shared<int>(2)); }
  Expected<FunctionHandle> function(const ModuleRef &, const std::string &) override { return handle(); }
  Error graphCreate(GraphHandle *g) override { return give(g); }
  void graphDestroy(GraphHandle) override {}
  Error addKernelNode(GraphNodeHandle *n, GraphHandle, const std::vector<GraphNodeHandle> &, Launch &) override {
    return give(n);
  }
  Error addMemcpyNode(GraphNodeHandle *n, GraphHandle, const std::vector<GraphNodeHandle> &, const Copy3D &) override {
    return give(n);
  }
  Error addMemsetNode(GraphNodeHandle *n, GraphHandle, const std::vector<GraphNodeHandle> &, const Memset &,
                      uint64_t) override {
    return give(n);
  }
  Error addEmptyNode(GraphNodeHandle *n, GraphHandle, const std::vector<GraphNodeHandle> &) override { return give(n); }
  Error addChildGraphNode(GraphNodeHandle *n, GraphHandle, const std::vector<GraphNodeHandle> &, GraphHandle) override {
    return give(n);
  }
  Error instantiate(GraphExecHandle *e, GraphHandle) override { return give(e); }
  void execDestroy(GraphExecHandle) override {}
  Error graphLaunch(GraphExecHandle) override { return Error::success(); }
  Error execKernelNodeSetParams(GraphExecHandle, GraphNodeHandle, Launch &) override { return Error::success(); }
  Error launchKernel(Launch &) override { return Error::success(); }
  Error memcpy3D(const Copy3D &) override { return Error::success(); }
  Error memset(const Memset &) override { return Error::success(); }
  Error copyToDevice(uint64_t, const void *, size_t) override { return Error::success(); }
  Error copyToHost(void *, uint64_t, size_t) override { return Error::success(); }
  Error streamSynchronize() override { return Error::success(); }
  Error hostAlloc(void **p, size_t bytes) override {
    *p = std::calloc(1, bytes);
    return *p ? Error::success() : makeError("out of host memory");
  }
  void hostFree(void *p) override { std::free(p); }
  Error eventCreate(EventHandle *e) override { return give(e); }
  Error eventRecord(EventHandle) override { return Error::success(); }
  Error eventSynchronize(EventHandle) override { return Error::success(); }
  void eventDestroy(EventHandle) override {}

private:
  void *handle() { return reinterpret_cast<void *>(next_ += 64); }
  Error give(void **h) {
    *h = handle();
    return Error::success();
  }
  ReplayCounters counters_;
  uintptr_t next_ = 0x10000;
};

class NullExecutable final : public GraphExecutable {
public:
  using GraphExecutable::GraphExecutable;

private:
  Error checkSubmit(const rt::SubmitOptions &) override { return makeError("bench_finalize_host does not submit"); }
  bool ownEvent(const rt::Event &) const override { return false; }
  Expected<rt::EventPtr> finishSubmission(const rt::SubmitOptions &) override {
    return makeError("bench_finalize_host does not submit");
  }
};

class NullDevice final : public rt::Device {
public:
  const rt::DeviceInfo &info() const override { return info_; }
  Expected<std::unique_ptr<rt::Buffer>> allocate(uint64_t bytes, uint32_t) override {
    return std::unique_ptr<rt::Buffer>(new HostBuffer(bytes));
  }
  Error write(rt::Buffer &, uint64_t, const void *, uint64_t) override { return Error::success(); }
  Error read(rt::Buffer &, uint64_t, void *, uint64_t) override { return Error::success(); }
  // As cuda's: rt::Device::finalize validated and flattened it; the executable's prepare.
  Expected<std::unique_ptr<rt::Executable>> finalizeFlat(FlatGraph flat, const rt::FinalizeOptions &o) override {
    auto exe = std::make_unique<NullExecutable>(*this, driver_, std::move(flat.graph), o);
    CGRAPH_RETURN_IF_ERROR(exe->prepare(o, flat.original, flat.flattenUs));
    return std::unique_ptr<rt::Executable>(std::move(exe));
  }

private:
  rt::DeviceInfo info_;
  NullDriver driver_;
};

using Clock = std::chrono::steady_clock;
double usSince(Clock::time_point t) { return std::chrono::duration<double, std::micro>(Clock::now() - t).count(); }

} // namespace

int main(int argc, char **argv) {
  if (argc < 2 || argc > 3) {
    std::fprintf(stderr, "usage: bench_finalize_host FILE.cgf [RUNS=200]\n");
    return 2;
  }
  const int runs = argc > 2 ? std::atoi(argv[2]) : 200;
  if (runs < 1) {
    std::fprintf(stderr, "bench_finalize_host: RUNS must be at least 1\n");
    return 2;
  }
  NullDevice dev;
  double readUs = 0, finalizeUs = 0;
  uint64_t readNews = 0, finalizeNews = 0;
  std::vector<std::string> names;
  std::vector<double> phases;
  for (int r = 0; r < runs; ++r) {
    const uint64_t n0 = gNews.load();
    const auto t0 = Clock::now();
    auto g = readCgfFile(argv[1]);
    if (!g) {
      std::fprintf(stderr, "bench_finalize_host: %s\n", g.error().message().c_str());
      return 1;
    }
    readUs += usSince(t0);
    const uint64_t n1 = gNews.load();
    const auto t1 = Clock::now();
    auto exe = dev.finalizeOwned(std::move(*g), {});
    finalizeUs += usSince(t1);
    finalizeNews += gNews.load() - n1;
    readNews += n1 - n0;
    if (!exe) {
      std::fprintf(stderr, "bench_finalize_host: %s\n", exe.error().message().c_str());
      return 1;
    }
    const auto &ph = (*exe)->finalizePhases();
    names.resize(ph.size());
    phases.resize(ph.size(), 0);
    for (size_t i = 0; i < ph.size(); ++i) {
      names[i] = ph[i].name;
      phases[i] += ph[i].us;
    }
  }
  std::printf("%s, %d runs, mean us (null driver: cgraph's own work only)\n", argv[1], runs);
  std::printf("  %-36s %9.1f  (%lu allocations)\n", "read", readUs / runs, (unsigned long)(readNews / runs));
  std::printf("  %-36s %9.1f  (%lu allocations)\n", "finalize", finalizeUs / runs,
              (unsigned long)(finalizeNews / runs));
  for (size_t i = 0; i < names.size(); ++i) std::printf("    %-34s %9.1f\n", names[i].c_str(), phases[i] / runs);
  return 0;
}
