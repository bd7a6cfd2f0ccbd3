// Discovery: devices through the dlopen'ed HIP runtime (gpu_common's DeviceListBackend
// lists and opens them; probe() says why there is none).
#include "internal.h"

#include "cgraph/backends/gpu_common/device_list_backend.h"

namespace cgraph::hip {

namespace {

class HipBackend final : public gpu::ApiBackend<HipApi> {
public:
  HipBackend(const HipApi *api, HipBackendOptions opts) : api_(api), opts_(opts) {}
  const char *name() const override { return "hip"; }

protected:
  Expected<const HipApi *> table() const override {
    if (api_) return api_;
    return loadHipApi();
  }
  Expected<int> countOn(const HipApi &api) override {
    int n = 0;
    CGRAPH_HIP_CHECK(api, "hipGetDeviceCount", api.hipGetDeviceCount(&n));
    if (n == 0) return makeError("no HIP device");
    return n;
  }
  Expected<rt::DeviceInfo> describeOn(const HipApi &api, int ordinal) override { return describeHipDevice(api, ordinal); }
  Expected<std::unique_ptr<rt::Device>> openOn(const HipApi &api, int ordinal) override {
    return gpu::asDevice(HipDevice::open(api, ordinal, opts_));
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
