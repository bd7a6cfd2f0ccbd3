// Discovery: devices through the dlopen'ed HIP runtime; probe() says why there is none.
#include "internal.h"

namespace cgraph::hip {

namespace {

Expected<int> deviceCount(const HipApi &api) {
  int n = 0;
  CGRAPH_HIP_CHECK(api, "hipGetDeviceCount", api.hipGetDeviceCount(&n));
  if (n == 0) return makeError("no HIP device");
  return n;
}

class HipBackend final : public rt::Backend {
public:
  HipBackend(const HipApi *api, HipBackendOptions opts) : api_(api), opts_(opts) {}
  const char *name() const override { return "hip"; }

  rt::BackendProbe probe() override {
    rt::BackendProbe p;
    p.backend = "hip";
    auto api = table();
    if (!api) {
      p.reason = api.error().message();
      return p;
    }
    auto n = deviceCount(**api);
    if (!n) {
      p.reason = n.error().message();
      return p;
    }
    for (int i = 0; i < *n; ++i) {
      auto d = describeHipDevice(**api, i);
      if (!d) {
        p.reason = d.error().message();
        return p;
      }
      p.devices.push_back(std::move(*d));
    }
    p.available = true;
    return p;
  }

  Expected<rt::Device *> device(uint32_t index) override {
    std::lock_guard<std::mutex> lock(mutex_);
    if (index < devices_.size() && devices_[index]) return devices_[index].get();
    auto api = table();
    if (!api) return api.error();
    auto n = deviceCount(**api);
    if (!n) return n.error();
    if (int(index) >= *n)
      return makeError("hip device " + std::to_string(index) + " does not exist (" +
                       std::to_string(*n) + " found)");
    auto dev = HipDevice::open(**api, int(index), opts_);
    if (!dev) return dev.error();
    if (devices_.size() <= index) devices_.resize(index + 1);
    devices_[index] = std::move(*dev);
    return devices_[index].get();
  }

private:
  Expected<const HipApi *> table() const {
    if (api_) return api_;
    return loadHipApi();
  }
  const HipApi *api_; // null: the dlopen'ed runtime
  HipBackendOptions opts_;
  std::mutex mutex_;
  std::vector<std::unique_ptr<HipDevice>> devices_;
};

} // namespace

std::unique_ptr<rt::Backend> makeHipBackend(const HipBackendOptions &opts) {
  return std::make_unique<HipBackend>(nullptr, opts);
}

std::unique_ptr<rt::Backend> makeHipBackendWithApi(const HipApi &api,
                                                   const HipBackendOptions &opts) {
  return std::make_unique<HipBackend>(&api, opts);
}

HipCounters counters(const rt::Device &device) {
  HipCounters c;
  auto *d = dynamic_cast<const HipDevice *>(&device);
  if (!d) return c;
  auto &a = const_cast<HipDevice *>(d)->counters();
  c.lowerings = a.lowerings;
  c.graphsInstantiated = a.graphsInstantiated;
  c.tableUploads = a.tableUploads;
  c.nodeUpdates = a.nodeUpdates;
  return c;
}

} // namespace cgraph::hip
