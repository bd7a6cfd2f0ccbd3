// Submission completion and per-node timestamps (event pairs recorded when profiling).
#include "internal.h"

namespace cgraph::cuda {

CudaEvent::CudaEvent(const CudaDevice &dev, CUevent done, CUevent start,
                     std::vector<std::pair<uint32_t, std::pair<CUevent, CUevent>>> nodes,
                     std::function<Error()> check, bool pooled)
    : dev_(&dev), done_(done), start_(start), nodes_(std::move(nodes)), check_(std::move(check)), pooled_(pooled) {}

CudaEvent::~CudaEvent() {
  const CuApi &api = dev_->api();
  if (dev_->makeCurrent()) return;
  if (done_ && pooled_) dev_->returnEvent(done_);
  else if (done_) api.cuEventDestroy(done_);
  if (start_) api.cuEventDestroy(start_);
  for (auto &n : nodes_) {
    api.cuEventDestroy(n.second.first);
    api.cuEventDestroy(n.second.second);
  }
}

Error CudaEvent::wait() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (waited_) return result_;
  waited_ = true;
  const CuApi &api = dev_->api();
  result_ = dev_->makeCurrent();
  if (result_) return result_;
  CUresult rc = api.cuEventSynchronize(done_);
  if (rc != CUDA_SUCCESS) {
    result_ = cuError(api, "cuEventSynchronize", rc).withContext("cuda submission");
    return result_;
  }
  if (check_) {
    result_ = check_();
    check_ = nullptr; // releases what it holds
    if (result_) return result_;
  }
  for (auto &n : nodes_) {
    float a = 0, b = 0;
    rt::NodeTiming t;
    t.node = n.first;
    if (api.cuEventElapsedTime(&a, start_, n.second.first) == CUDA_SUCCESS &&
        api.cuEventElapsedTime(&b, start_, n.second.second) == CUDA_SUCCESS) {
      t.startNs = uint64_t(double(a) * 1e6);
      t.endNs = uint64_t(double(b) * 1e6);
    }
    timings_.push_back(t);
  }
  return result_;
}

bool CudaEvent::isComplete() const {
  if (dev_->makeCurrent()) return true;
  return dev_->api().cuEventQuery(done_) != CUDA_ERROR_NOT_READY;
}

} // namespace cgraph::cuda
