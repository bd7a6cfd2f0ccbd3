// Types shared by the Level Zero backend's source files. Not installed.
#pragma once

#include "cgraph/backends/level_zero/level_zero_backend.h"
#include "cgraph/backends/level_zero/ze_driver_table.h"

#include "cgraph/cache/kernel_cache.h"
#include "cgraph/runtime/wait_once_event.h"

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace cgraph::level_zero {

// Evaluates `expr` once; on failure returns zeError(call, rc) from the caller.
#define CGRAPH_ZE_CHECK(call, expr)                                                                \
  do {                                                                                             \
    ze_result_t cgraphZeRc_ = (expr);                                                              \
    if (cgraphZeRc_ != ZE_RESULT_SUCCESS)                                                          \
      return ::cgraph::level_zero::zeError((call), cgraphZeRc_);                                   \
  } while (0)

// What the backend needs to know about a device beyond rt::DeviceInfo.
struct DeviceProps {
  ze_driver_handle_t driver = nullptr;
  ze_device_handle_t device = nullptr;
  uint32_t computeOrdinal = 0;     // command queue group with compute
  uint64_t maxFillPatternSize = 0; // of that group
  uint64_t timerResolutionNs = 1;  // kernel timestamp tick, ns (DEVICE_PROPERTIES)
  uint32_t kernelTimestampValidBits = 64;
  bool globalOffset = false;            // ZE_experimental_global_offset + entry point
  bool mutableCommandList = false;      // reported by the driver (not used: see the README)
  uint32_t maxGroupSize[3] = {0, 0, 0}; // per dimension
};

// Every device of every driver, in driver order (the flat index is the device index).
struct Found {
  ze_driver_handle_t driver;
  ze_device_handle_t device;
};
// zeInit + enumeration; "no Level Zero device (...)" when there is none.
Expected<std::vector<Found>> enumerateDevices(const ZeDriverTable &ze);
Expected<std::pair<rt::DeviceInfo, DeviceProps>> describeDevice(const ZeDriverTable &ze,
                                                                const Found &f);

class LevelZeroDevice;

class LevelZeroBuffer final : public rt::Buffer {
public:
  LevelZeroBuffer(LevelZeroDevice &device, void *ptr, uint64_t size);
  ~LevelZeroBuffer() override;
  uint64_t size() const override { return size_; }
  const rt::Device *device() const override;
  void *ptr() const { return ptr_; }

private:
  LevelZeroDevice *device_;
  void *ptr_;
  uint64_t size_;
};

// A module built from validated SPIR-V; destroyed with the executable that made it.
struct Module {
  const ZeDriverTable *ze = nullptr;
  ze_module_handle_t module = nullptr;
  ~Module();
};

class LevelZeroDevice final : public rt::Device {
public:
  static Expected<std::unique_ptr<LevelZeroDevice>> open(const ZeDriverTable &ze,
                                                         rt::DeviceInfo info, DeviceProps props,
                                                         const LevelZeroBackendOptions &opts);
  ~LevelZeroDevice() override;

  const rt::DeviceInfo &info() const override { return info_; }
  Expected<std::unique_ptr<rt::Buffer>> allocate(uint64_t bytes, uint32_t alignment) override;
  Error write(rt::Buffer &dst, uint64_t offset, const void *src, uint64_t bytes) override;
  Error read(rt::Buffer &src, uint64_t offset, void *dst, uint64_t bytes) override;

  const ZeDriverTable &ze() const { return *ze_; }
  const DeviceProps &props() const { return props_; }
  const LevelZeroBackendOptions &options() const { return opts_; }
  ze_context_handle_t context() const { return context_; }
  ze_command_queue_handle_t queue() const { return queue_; }
  // The synchronous immediate command list (transfers, eager mode, host task staging).
  // Callers hold immediateMutex() while they use it.
  ze_command_list_handle_t immediate() const { return immediate_; }
  std::mutex &immediateMutex() { return immediateMutex_; }
  // Host <-> device copies through the immediate list; the caller holds the mutex.
  Error copyLocked(void *dst, const void *src, uint64_t bytes, const char *what);

  // kernel_compiler.cpp: validates `m`'s SPIR-V form (lib/kernel), then the module
  // through lib/cache's KernelCache when `useCache` (memory, then the device's native
  // binary on disk, else zeModuleCreate from the SPIR-V, whose native binary is kept);
  // a build failure returns the driver's build log. A cached binary the driver refuses
  // is a miss and a rebuild.
  Expected<std::shared_ptr<const Module>> buildModule(const KernelModule &m, bool useCache);


protected:
  Expected<std::unique_ptr<rt::Executable>> finalizeFlat(FlatGraph flat, const rt::FinalizeOptions &opts) override;

private:
  LevelZeroDevice(const ZeDriverTable &ze, rt::DeviceInfo info, DeviceProps props,
                  const LevelZeroBackendOptions &opts);
  const ZeDriverTable *ze_;
  rt::DeviceInfo info_;
  DeviceProps props_;
  LevelZeroBackendOptions opts_;
  ze_context_handle_t context_ = nullptr;
  ze_command_queue_handle_t queue_ = nullptr;
  ze_command_list_handle_t immediate_ = nullptr;
  std::mutex immediateMutex_;
  using ModuleCache = cache::KernelCache<Module>;
  Expected<std::shared_ptr<Module>> createModule(const KernelModule &m, ze_module_format_t format,
                                                 const uint8_t *bytes, size_t size);
  std::once_flag cacheOnce_;
  std::unique_ptr<ModuleCache> modules_; // created on first cached build (reads the environment)
};

// A submission's completion (event.cpp): a fence of the last execution on the queue
// (null when everything already ran synchronously), the per-node timings when
// profiling, or the failure of work done before the fence.
class LevelZeroEvent final : public rt::WaitOnceEvent {
public:
  // `onComplete` (optional) runs once, in the first wait() after the fence signalled
  // (or at once when there is no fence); it supplies the per-node timings, and its
  // error becomes the event's.
  using Completion = std::function<Expected<std::vector<rt::NodeTiming>>()>;
  LevelZeroEvent(const ZeDriverTable &ze, ze_fence_handle_t fence,
                 std::vector<rt::NodeTiming> timings, Completion onComplete = {});
  ~LevelZeroEvent() override;
  bool isComplete() const override;

private:
  Error waitOnce() override;

  const ZeDriverTable *ze_;
  ze_fence_handle_t fence_;
  Completion onComplete_;
};

// Finalizes `flattened` (validated, subgraphs inlined) for `device` (command_buffer.cpp).
Expected<std::unique_ptr<rt::Executable>> makeExecutable(LevelZeroDevice &device, Graph flattened,
                                                         const rt::FinalizeOptions &opts);

} // namespace cgraph::level_zero
