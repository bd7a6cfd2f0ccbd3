// wrapHostMemory: a cpu Buffer over memory the caller owns (see cpu_backend.h).
#include "cgraph/backends/cpu/cpu_backend.h"

#include <new>

namespace cgraph::cpu {

namespace {

// The backend reaches buffer memory only through hostPointer(), so a buffer that
// merely points at the caller's memory runs like one the device allocated.
class HostMemoryBuffer : public rt::Buffer {
public:
  HostMemoryBuffer(const rt::Device *device, void *data, uint64_t size)
      : device_(device), data_(data), size_(size) {}
  uint64_t size() const override { return size_; }
  void *hostPointer() override { return data_; }
  const rt::Device *device() const override { return device_; }

private:
  const rt::Device *device_;
  void *data_;
  uint64_t size_;
};

} // namespace

Expected<std::unique_ptr<rt::Buffer>> wrapHostMemory(rt::Device &device, void *ptr,
                                                     uint64_t bytes) {
  if (device.info().backend != "cpu")
    return makeError(ErrorCode::Unsupported,
                     "device '" + device.info().name +
                         "' is not a cpu device; host memory can be bound only on cpu");
  if (!ptr && bytes)
    return makeError("host memory of " + std::to_string(bytes) + " bytes at a null address");
  auto *buffer = new (std::nothrow) HostMemoryBuffer(&device, ptr, bytes);
  if (!buffer) return makeError(ErrorCode::OutOfMemory, "out of memory for a buffer object");
  return std::unique_ptr<rt::Buffer>(buffer);
}

} // namespace cgraph::cpu
