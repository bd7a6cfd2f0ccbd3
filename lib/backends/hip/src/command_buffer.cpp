// The HIP executable: gpu_common's GraphExecutable (plans, table, one hipGraph per
// device partition, submission) over this backend's driver (driver.cpp). What is HIP's
// own: no per-node timestamps, and a completion event created per submission.
#include "internal.h"

#include "cgraph/backends/gpu_common/graph_executable.h"

namespace cgraph::hip {

namespace {

class HipExecutable final : public gpu::GraphExecutable {
public:
  HipExecutable(HipDevice &device, Graph flattened, const rt::FinalizeOptions &opts)
      : gpu::GraphExecutable(device, device.driver(), std::move(flattened), opts), dev_(&device) {}

protected:
  Error checkSubmit(const rt::SubmitOptions &opts) override {
    if (opts.profile) return makeError("hip: per-node timestamps are not supported");
    return Error::success();
  }
  bool ownEvent(const rt::Event &e) const override { return dynamic_cast<const HipEvent *>(&e) != nullptr; }
  Expected<rt::EventPtr> finishSubmission(const rt::SubmitOptions &) override {
    gpu::EventHandle done = nullptr;
    CGRAPH_RETURN_IF_ERROR(driver_->eventCreate(&done));
    if (Error e = driver_->eventRecord(done)) {
      driver_->eventDestroy(done);
      return e;
    }
    return rt::EventPtr(std::make_shared<HipEvent>(*dev_, hipEvent_t(done)));
  }

private:
  HipDevice *dev_;
};

} // namespace

Expected<std::unique_ptr<rt::Executable>> makeExecutable(HipDevice &device, const Graph *original, Graph flattened,
                                                         const rt::FinalizeOptions &opts) {
  auto exe = std::make_unique<HipExecutable>(device, std::move(flattened), opts);
  CGRAPH_RETURN_IF_ERROR(exe->prepare(opts, original));
  return std::unique_ptr<rt::Executable>(std::move(exe));
}

} // namespace cgraph::hip
