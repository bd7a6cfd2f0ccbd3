// Types shared by the HIP backend's source files. Not installed.
#pragma once

#include "cgraph/codegen/amdgcn.h"
#include "cgraph/backends/hip/hip_backend.h"
#include "hip_api.h"

#include "cgraph/backends/gpu_common/driver.h"
#include "cgraph/cache/kernel_cache.h"
#include "cgraph/runtime/wait_once_event.h"

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace cgraph::hip {

using codegen::amdgcnLoweringVersion;
using codegen::amdgcnTargetFor;
using codegen::lowerSpirvToAmdgcn;

class HipDevice;

class HipBuffer final : public rt::Buffer {
public:
  HipBuffer(HipDevice &device, void *ptr, uint64_t size)
      : device_(&device), ptr_(ptr), size_(size) {}
  ~HipBuffer() override;
  uint64_t size() const override { return size_; }
  const rt::Device *device() const override;
  uint64_t address() const { return uint64_t(reinterpret_cast<uintptr_t>(ptr_)); }
  void *ptr() const { return ptr_; }

private:
  HipDevice *device_;
  void *ptr_;
  uint64_t size_;
};

// A loaded hipModule_t; shared by the device's cache and executables.
struct LoadedModule {
  const HipApi *api = nullptr;
  int device = 0;
  hipModule_t module = nullptr;
  ~LoadedModule();
  Expected<hipFunction_t> function(const std::string &name) const;
};

struct AtomicCounters : gpu::ReplayCounters {
  std::atomic<uint64_t> lowerings{0};
};

class HipDevice;
// The gpu::Driver over `device`'s HIP table and stream (driver.cpp).
std::unique_ptr<gpu::Driver> makeHipDriver(HipDevice &device);

class HipDevice final : public rt::Device {
public:
  static Expected<std::unique_ptr<HipDevice>> open(const HipApi &api, int ordinal,
                                                   const HipBackendOptions &opts);
  ~HipDevice() override;

  const rt::DeviceInfo &info() const override { return info_; }
  Expected<std::unique_ptr<rt::Buffer>> allocate(uint64_t bytes, uint32_t alignment) override;
  Error write(rt::Buffer &dst, uint64_t offset, const void *src, uint64_t bytes) override;
  Error read(rt::Buffer &src, uint64_t offset, void *dst, uint64_t bytes) override;

  const HipApi &api() const { return *api_; }
  hipStream_t stream() const { return stream_; }
  Error makeCurrent() const;
  const std::string &gfx() const { return gfx_; }
  AtomicCounters &counters() { return counters_; }
  // The shared executable's driver interface over this device (lives as long as it).
  gpu::Driver &driver() { return *driver_; }
  // The module of `m` (its SPIR-V lowered for gfx(), through the cache).
  Expected<std::shared_ptr<const LoadedModule>> loadModule(const KernelModule &m, bool useCache);
  // The fill and copy kernels (table ABI), built once per device.
  Expected<std::shared_ptr<const LoadedModule>> builtinModule();


protected:
  Expected<std::unique_ptr<rt::Executable>> finalizeFlat(FlatGraph flat, const rt::FinalizeOptions &opts) override;

private:
  HipDevice(const HipApi &api, const HipBackendOptions &opts) : api_(&api), opts_(opts) {}
  Expected<std::shared_ptr<const LoadedModule>>
  moduleFromImage(const std::vector<uint8_t> &image) const;
  const HipApi *api_;
  HipBackendOptions opts_;
  rt::DeviceInfo info_;
  int ordinal_ = 0;
  std::string gfx_;
  hipStream_t stream_ = nullptr;
  AtomicCounters counters_;
  std::mutex mutex_;
  std::unique_ptr<cache::KernelCache<LoadedModule>> modules_;
  std::shared_ptr<const LoadedModule> builtins_;
  std::unique_ptr<gpu::Driver> driver_;
};

// A submission's completion: `done` recorded on the stream after its last work.
class HipEvent final : public rt::WaitOnceEvent {
public:
  HipEvent(const HipDevice &dev, hipEvent_t done) : dev_(&dev), done_(done) {}
  ~HipEvent() override;
  bool isComplete() const override;

private:
  Error waitOnce() override;

  const HipDevice *dev_;
  hipEvent_t done_;
};

// The DeviceInfo of device `ordinal` (device.cpp).
Expected<rt::DeviceInfo> describeHipDevice(const HipApi &api, int ordinal);

Expected<std::unique_ptr<rt::Executable>> makeExecutable(HipDevice &device, const Graph *original, Graph flattened,
                                                         const rt::FinalizeOptions &opts);

} // namespace cgraph::hip
