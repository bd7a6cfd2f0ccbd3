// Device discovery shared by the cuda and hip backends (device_list_backend.h).
#include "cgraph/backends/gpu_common/device_list_backend.h"

#include <string>

namespace cgraph::gpu {

rt::BackendProbe DeviceListBackend::probe() {
  rt::BackendProbe p;
  p.backend = name();
  auto n = deviceCount();
  if (!n) {
    p.reason = n.error().message();
    return p;
  }
  for (int i = 0; i < *n; ++i) {
    auto d = describe(i);
    if (!d) {
      p.reason = d.error().message();
      return p;
    }
    p.devices.push_back(std::move(*d));
  }
  p.available = true;
  return p;
}

Expected<rt::Device *> DeviceListBackend::device(uint32_t index) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (index < devices_.size() && devices_[index]) return devices_[index].get();
  auto n = deviceCount();
  if (!n) return n.error();
  if (int(index) >= *n)
    return makeError(std::string(name()) + " device " + std::to_string(index) + " does not exist (" +
                     std::to_string(*n) + " found)");
  auto dev = open(int(index));
  if (!dev) return dev.error();
  if (devices_.size() <= index) devices_.resize(index + 1);
  devices_[index] = std::move(*dev);
  return devices_[index].get();
}

} // namespace cgraph::gpu
