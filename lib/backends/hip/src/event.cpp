// Completion events: a hipEvent recorded after a submission's last work.
#include "internal.h"

namespace cgraph::hip {

HipEvent::~HipEvent() {
  if (!waited()) (void)dev_->api().hipEventSynchronize(done_);
  (void)dev_->api().hipEventDestroy(done_);
}

Error HipEvent::waitOnce() {
  hipError_t rc = dev_->api().hipEventSynchronize(done_);
  if (rc != hipSuccess) return hipError(dev_->api(), "hipEventSynchronize", rc);
  return Error::success();
}

bool HipEvent::isComplete() const {
  return dev_->api().hipEventQuery(done_) != hipErrorNotReady;
}

} // namespace cgraph::hip
