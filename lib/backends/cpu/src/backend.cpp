// The CPU backend: always available, one device (the host).
#include "cgraph/backends/cpu/cpu_backend.h"

#include "device.h"

#include "cgraph/runtime/listed_backend.h"

#include <llvm/ADT/StringRef.h>
#include <llvm/Support/Host.h>

#include <fstream>
#include <mutex>
#include <thread>

#include <sys/sysinfo.h>

namespace cgraph::cpu {

rt::DeviceInfo hostDeviceInfo() {
  rt::DeviceInfo d;
  d.backend = "cpu";
  std::string model;
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);)
    if (line.rfind("model name", 0) == 0) {
      size_t c = line.find(':');
      if (c != std::string::npos) model = line.substr(c + 2);
      break;
    }
  d.name = model.empty() ? llvm::sys::getHostCPUName().str() : model;
  d.vendor = "cgraph";
  d.driverVersion = "cgraph-cpu llvm-14 " + llvm::sys::getHostCPUName().str();
  d.update = "direct";
  rt::Capabilities &c = d.caps;
  c.nativeCommandBuffer = true;
  c.rebindWithoutRerecord = true;
  c.updatableParams = true;
  c.inOrder = false;
  c.concurrentNodes = true;
  c.profiling = true;
  c.profilingReplay = true;
  c.hostPointerBuffers = true;
  c.kernelForms = {FormKind::SpirV};
  c.computeUnits = std::max(1u, std::thread::hardware_concurrency());
  struct sysinfo si {};
  if (sysinfo(&si) == 0) c.globalMemoryBytes = uint64_t(si.totalram) * si.mem_unit;
  c.maxWorkGroupSize = 16384;
  c.nonUniformWorkGroups = true; // a trailing partial group runs its actual size
  c.storedExpressions = true; // rt::Executable evaluates them; ranges and scalar args read params
  c.nodeUpdate = true;        // the prepared node is rebuilt; the next submission reads it
  return d;
}

namespace {

// One device, the host (rt::ListedDeviceBackend, as every backend lists its devices).
class CpuBackend final : public rt::ListedDeviceBackend<CpuBackend, CpuDevice> {
public:
  explicit CpuBackend(Expected<CpuOptions> options) : options_(std::move(options)) {}
  const char *name() const override { return "cpu"; }

  // rt::ListedDeviceBackend's hooks: the resolved options stand for a driver (an error
  // names the bad variable).
  Expected<const CpuOptions *> loadApi() {
    if (!options_) return options_.error();
    return &*options_;
  }
  Expected<std::vector<int>> enumerate(const CpuOptions &) { return std::vector<int>{0}; }
  Expected<std::pair<rt::DeviceInfo, int>> describe(const CpuOptions &, int) {
    return std::make_pair(hostDeviceInfo(), 0);
  }
  Expected<std::unique_ptr<CpuDevice>> open(const CpuOptions &options, const std::pair<rt::DeviceInfo, int> &) {
    return std::make_unique<CpuDevice>(options);
  }

private:
  Expected<CpuOptions> options_;
};

} // namespace

Expected<CpuOptions> resolveOptions(const CpuOptions &options) {
  CpuOptions o = options;
  CGRAPH_RETURN_IF_ERROR(rt::env::fillFlag(o.barrierFibers, "CGRAPH_CPU_FIBERS"));
  CGRAPH_RETURN_IF_ERROR(rt::env::fillText(o.dumpDir, "CGRAPH_CPU_DUMP_DIR"));
  if (!o.barrierFibers) o.barrierFibers = false;
  return o;
}

std::unique_ptr<rt::Backend> makeCpuBackend() { return makeCpuBackend(CpuOptions{}); }

std::unique_ptr<rt::Backend> makeCpuBackend(const CpuOptions &options) {
  return std::make_unique<CpuBackend>(resolveOptions(options));
}

} // namespace cgraph::cpu
