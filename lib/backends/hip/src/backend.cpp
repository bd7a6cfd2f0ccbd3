// Discovery: devices through the dlopen'ed HIP runtime (rt::ListedDeviceBackend lists
// and opens them; probe() says why there is none).
#include "internal.h"

#include "cgraph/runtime/listed_backend.h"

namespace cgraph::hip {

namespace {

class HipBackend final : public rt::ListedDeviceBackend<HipBackend, HipDevice> {
public:
  HipBackend(const HipApi *api, HipBackendOptions opts) : api_(api), opts_(opts) {}
  const char *name() const override { return "hip"; }

  // rt::ListedDeviceBackend's driver hooks.
  Expected<const HipApi *> loadApi() {
    if (api_) return api_;
    return loadHipApi();
  }
  Expected<std::vector<int>> enumerate(const HipApi &api) {
    int n = 0;
    CGRAPH_HIP_CHECK(api, "hipGetDeviceCount", api.hipGetDeviceCount(&n));
    if (n == 0) return makeError("no HIP device");
    return rt::ordinals(n);
  }
  Expected<std::pair<rt::DeviceInfo, int>> describe(const HipApi &api, int ordinal) {
    auto info = describeHipDevice(api, ordinal);
    if (!info) return info.error();
    return std::make_pair(std::move(*info), ordinal);
  }
  Expected<std::unique_ptr<HipDevice>> open(const HipApi &api, const std::pair<rt::DeviceInfo, int> &d) {
    return HipDevice::open(api, d.second, opts_);
  }

private:
  const HipApi *api_; // null: the dlopen'ed runtime
  HipBackendOptions opts_;
};

} // namespace

std::unique_ptr<rt::Backend> makeHipBackend(const HipBackendOptions &opts) {
  return std::make_unique<HipBackend>(nullptr, opts);
}

std::unique_ptr<rt::Backend> makeHipBackendWithApi(const HipApi &api, const HipBackendOptions &opts) {
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
