// CPU device, buffer, event and executable types shared by the backend's .cpp files.
#pragma once

#include "internal.h"

#include "cgraph/backends/cpu/cpu_backend.h"
#include "cgraph/runtime/runtime.h"
#include "cgraph/runtime/wait_once_event.h"

#include <condition_variable>
#include <atomic>
#include <mutex>

namespace cgraph::cpu {

class CpuBuffer : public rt::Buffer {
public:
  CpuBuffer(rt::Device *device, char *data, uint64_t size) : device_(device), data_(data), size_(size) {}
  ~CpuBuffer() override;
  uint64_t size() const override { return size_; }
  void *hostPointer() override { return data_; }
  const rt::Device *device() const override { return device_; }
  char *data() { return data_; }

private:
  rt::Device *device_;
  char *data_;
  uint64_t size_;
};

// Completed by the thread that ran the submission (complete()).
class CpuEvent : public rt::WaitOnceEvent {
public:
  bool isComplete() const override;
  void complete(Error error, std::vector<rt::NodeTiming> timings);

private:
  Error waitOnce() override;

  mutable std::mutex mutex_;
  std::condition_variable cv_;
  bool done_ = false;
  std::atomic<bool> ready_{false}; // done_, readable without the lock (waitOnce() and isComplete() fast path)
  Error error_;
};

class CpuDevice : public rt::Device {
public:
  // `options` as resolveOptions() filled them (every optional flag holds a value).
  explicit CpuDevice(const CpuOptions &options);
  const rt::DeviceInfo &info() const override { return info_; }
  Expected<std::unique_ptr<rt::Buffer>> allocate(uint64_t bytes, uint32_t alignment) override;
  Error write(rt::Buffer &dst, uint64_t offset, const void *src, uint64_t bytes) override;
  Error read(rt::Buffer &src, uint64_t offset, void *dst, uint64_t bytes) override;
  // Collective nodes: host steps through the caller's communicator.
  CollectiveSupport collectiveSupport() const override { return CollectiveSupport::Host; }
  KernelCompiler &compiler() { return compiler_; }
  const CpuOptions &options() const { return options_; }

protected:
  Expected<std::unique_ptr<rt::Executable>> finalizeFlat(FlatGraph flat, const rt::FinalizeOptions &opts) override;

private:
  CpuOptions options_;
  rt::DeviceInfo info_;
  KernelCompiler compiler_;
};

rt::DeviceInfo hostDeviceInfo();

// command_buffer.cpp
Expected<std::unique_ptr<rt::Executable>> makeExecutable(CpuDevice &device, Graph flat,
                                                         const rt::FinalizeOptions &opts);

} // namespace cgraph::cpu
