// The probe() and device(index) of a backend over a driver that lists its devices
// (opencl, level_zero): load the driver's function table, enumerate the devices,
// describe each (DeviceInfo + the backend's own properties), open one on demand.
//
// Derived (CRTP) provides, all returning errors as values:
//   Expected<const Api *> loadApi();
//   Expected<std::vector<Found>> enumerate(const Api &);
//   Expected<Description> describe(const Api &, const Found &);  // .first is a DeviceInfo
//   Expected<std::unique_ptr<Dev>> open(const Api &, const Description &);
//
// Ownership: the backend owns the devices it opened; they live as long as it does.
// Thread-safety: device() is serialized by a mutex (each index is opened once); probe()
// takes no lock and opens nothing.
// Failure modes: probe() never fails: the first error becomes BackendProbe::reason
// (available stays false). device() returns the first error, or names the index and
// how many devices exist when it is out of range.
#pragma once

#include "cgraph/runtime/runtime.h"

#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace cgraph::rt {

// 0, 1, ..., n - 1: what enumerate() finds on a driver that numbers its devices.
inline std::vector<int> ordinals(int n) {
  std::vector<int> out;
  for (int i = 0; i < n; ++i) out.push_back(i);
  return out;
}

template <class Derived, class Dev>
class ListedDeviceBackend : public Backend {
public:
  BackendProbe probe() override {
    BackendProbe p;
    p.backend = name();
    auto api = self().loadApi();
    if (!api) {
      p.reason = api.error().message();
      return p;
    }
    auto found = self().enumerate(**api);
    if (!found) {
      p.reason = found.error().message();
      return p;
    }
    for (const auto &f : *found) {
      auto d = self().describe(**api, f);
      if (!d) {
        p.reason = d.error().message();
        return p;
      }
      p.devices.push_back(d->first);
    }
    p.available = true;
    return p;
  }

  Expected<Device *> device(uint32_t index) override {
    std::lock_guard<std::mutex> lock(mutex_);
    if (index < devices_.size() && devices_[index]) return devices_[index].get();
    auto api = self().loadApi();
    if (!api) return api.error();
    auto found = self().enumerate(**api);
    if (!found) return found.error();
    if (index >= found->size())
      return makeError(std::string(name()) + " device " + std::to_string(index) + " does not exist (" +
                       std::to_string(found->size()) + " found)");
    auto d = self().describe(**api, (*found)[index]);
    if (!d) return d.error();
    Expected<std::unique_ptr<Dev>> dev = self().open(**api, *d);
    if (!dev) return dev.error();
    if (devices_.size() <= index) devices_.resize(index + 1);
    devices_[index] = std::move(*dev);
    return devices_[index].get();
  }

private:
  Derived &self() { return static_cast<Derived &>(*this); }
  std::mutex mutex_;
  std::vector<std::unique_ptr<Dev>> devices_;
};

} // namespace cgraph::rt
