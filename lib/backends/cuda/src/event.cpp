// Submission completion (a pooled event, or the done word the last graph writes) and
// per-node timestamps (event pairs recorded when profiling).
#include "internal.h"

#include <chrono>
#include <thread>

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

Error CudaEvent::waitOnce() {
  const CuApi &api = dev_->api();
  CGRAPH_RETURN_IF_ERROR(dev_->makeCurrent());
  if (CUresult rc = api.cuEventSynchronize(done_); rc != CUDA_SUCCESS)
    return cuError(api, "cuEventSynchronize", rc).withContext("cuda submission");
  if (check_) {
    Error e = check_();
    check_ = nullptr; // releases what it holds
    if (e) return e;
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
  return Error::success();
}

bool CudaEvent::isComplete() const {
  if (dev_->makeCurrent()) return true;
  return dev_->api().cuEventQuery(done_) != CUDA_ERROR_NOT_READY;
}

namespace {
inline void cpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}
} // namespace

Error WordEvent::waitOnce() {
  if (reached()) return Error::success(); // nothing can fail once the marker ran
  const CuApi &api = dev_->api();
  CGRAPH_RETURN_IF_ERROR(dev_->makeCurrent());
  using Clock = std::chrono::steady_clock;
  const auto t0 = Clock::now();
  for (uint32_t i = 1;; ++i) {
    if (reached()) return Error::success();
    if (i % 256 == 0) {
      const CUresult rc = api.cuStreamQuery(dev_->stream());
      if (rc == CUDA_SUCCESS) {
        // The stream is idle, so the marker ran: its store is visible by now, at
        // the latest after the fence settles.
        for (int k = 0; k < 1000 && !reached(); ++k) std::this_thread::sleep_for(std::chrono::microseconds(1));
        if (reached()) return Error::success();
        return makeError("cuda submission: the stream is idle but its done marker did not run (internal error)");
      }
      if (rc != CUDA_ERROR_NOT_READY) return cuError(api, "cuStreamQuery", rc).withContext("cuda submission");
    }
    const auto waited = Clock::now() - t0;
    if (waited < std::chrono::microseconds(20)) cpuRelax();
    else if (waited < std::chrono::milliseconds(2)) std::this_thread::yield();
    else std::this_thread::sleep_for(std::chrono::microseconds(20));
  }
}

bool WordEvent::isComplete() const {
  if (reached()) return true;
  if (dev_->makeCurrent()) return true; // wait() reports it
  return dev_->api().cuStreamQuery(dev_->stream()) != CUDA_ERROR_NOT_READY;
}

} // namespace cgraph::cuda
