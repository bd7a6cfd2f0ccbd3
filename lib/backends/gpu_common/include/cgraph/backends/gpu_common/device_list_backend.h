// The rt::Backend of a GPU driver (cuda, hip): probe() lists every device the driver
// reports and says why there is none; device(i) opens device i once and keeps it. The
// backend supplies the driver-specific steps: count the devices (its error is the
// reason: "libcuda.so.1 not found", "no HIP device"), describe one, open one.
//
// Ownership: owns the devices it opened, for its own lifetime. Thread-safety: device()
// is safe to call concurrently (a mutex); probe() only reads the driver. Failure modes:
// probe() reports the first error as BackendProbe::reason; device() returns it, or
// "<backend> device 3 does not exist (1 found)".
#pragma once

#include "cgraph/error.h"
#include "cgraph/runtime/runtime.h"

#include <memory>
#include <mutex>
#include <vector>

namespace cgraph::gpu {

class DeviceListBackend : public rt::Backend {
public:
  rt::BackendProbe probe() override;
  Expected<rt::Device *> device(uint32_t index) override;

protected:
  // How many devices the driver has; an error where it has none or cannot be loaded.
  virtual Expected<int> deviceCount() = 0;
  virtual Expected<rt::DeviceInfo> describe(int ordinal) = 0;
  virtual Expected<std::unique_ptr<rt::Device>> open(int ordinal) = 0;

private:
  std::mutex mutex_;
  std::vector<std::unique_ptr<rt::Device>> devices_;
};

// A DeviceListBackend whose steps all need the driver's table `Api` first: table()
// loads it (its error is the probe's reason), the steps get it.
template <class Api> class ApiBackend : public DeviceListBackend {
protected:
  virtual Expected<const Api *> table() const = 0;
  virtual Expected<int> countOn(const Api &api) = 0;
  virtual Expected<rt::DeviceInfo> describeOn(const Api &api, int ordinal) = 0;
  virtual Expected<std::unique_ptr<rt::Device>> openOn(const Api &api, int ordinal) = 0;

  Expected<int> deviceCount() final {
    auto api = table();
    if (!api) return api.error();
    return countOn(**api);
  }
  Expected<rt::DeviceInfo> describe(int ordinal) final {
    auto api = table();
    if (!api) return api.error();
    return describeOn(**api, ordinal);
  }
  Expected<std::unique_ptr<rt::Device>> open(int ordinal) final {
    auto api = table();
    if (!api) return api.error();
    return openOn(**api, ordinal);
  }
};

// A device of a backend's own type as the rt::Device the list keeps.
template <class D> Expected<std::unique_ptr<rt::Device>> asDevice(Expected<std::unique_ptr<D>> d) {
  if (!d) return d.error();
  return std::unique_ptr<rt::Device>(std::move(*d));
}

} // namespace cgraph::gpu
