// Completion of one submission: the last command's cl_event on the in-order queue.
#include "internal.h"

#include <algorithm>
#include <array>

namespace cgraph::opencl {

OpenCLEvent::OpenCLEvent(const ClApi &api, cl_event last,
                         std::vector<std::pair<uint32_t, cl_event>> profiled)
    : api_(&api), last_(last), profiled_(std::move(profiled)) {}

OpenCLEvent::~OpenCLEvent() {
  for (auto &p : profiled_) api_->clReleaseEvent(p.second);
  if (last_) api_->clReleaseEvent(last_);
}

bool OpenCLEvent::isComplete() const {
  cl_int status = CL_COMPLETE;
  if (api_->clGetEventInfo(last_, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof(status), &status,
                           nullptr) != CL_SUCCESS)
    return true; // a failed query means the event is unusable; wait() reports it
  return status == CL_COMPLETE || status < 0;
}

Error OpenCLEvent::waitOnce() {
  cl_int rc = api_->clWaitForEvents(1, &last_);
  cl_int status = CL_COMPLETE;
  api_->clGetEventInfo(last_, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof(status), &status, nullptr);
  if (status < 0) return makeError("opencl: the submission failed on the device: " + clErrorName(status));
  if (rc != CL_SUCCESS) return clError("clWaitForEvents", rc);
  if (!profiled_.empty()) {
    // Device timestamps, relative to when the first node was queued.
    cl_ulong base = ~cl_ulong(0);
    std::vector<std::array<cl_ulong, 3>> raw(profiled_.size());
    for (size_t i = 0; i < profiled_.size(); ++i) {
      cl_event e = profiled_[i].second;
      cl_int a = api_->clGetEventProfilingInfo(e, CL_PROFILING_COMMAND_QUEUED, sizeof(cl_ulong), &raw[i][0], nullptr);
      cl_int b = api_->clGetEventProfilingInfo(e, CL_PROFILING_COMMAND_START, sizeof(cl_ulong), &raw[i][1], nullptr);
      cl_int c = api_->clGetEventProfilingInfo(e, CL_PROFILING_COMMAND_END, sizeof(cl_ulong), &raw[i][2], nullptr);
      if (a != CL_SUCCESS || b != CL_SUCCESS || c != CL_SUCCESS)
        return clError("clGetEventProfilingInfo", a != CL_SUCCESS ? a : b != CL_SUCCESS ? b : c);
      base = std::min(base, raw[i][0]);
    }
    timings_.reserve(profiled_.size());
    for (size_t i = 0; i < profiled_.size(); ++i) {
      rt::NodeTiming t;
      t.node = profiled_[i].first;
      t.startNs = raw[i][1] >= base ? raw[i][1] - base : 0;
      t.endNs = raw[i][2] >= base ? raw[i][2] - base : t.startNs;
      timings_.push_back(t);
    }
  }
  return Error::success();
}

} // namespace cgraph::opencl
