// A host-memory Device whose Executable records what the validation layer hands to
// submit(): the runtime's own checks run for real; nothing executes.
#pragma once

#include "cgraph/runtime/runtime.h"

#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

namespace cgraph::rt::test {

class HostBuffer : public Buffer {
public:
  HostBuffer(const Device *dev, uint64_t size) : dev_(dev), bytes_(size) {}
  uint64_t size() const override { return bytes_.size(); }
  void *hostPointer() override { return bytes_.data(); }
  const Device *device() const override { return dev_; }

private:
  const Device *dev_;
  std::vector<uint8_t> bytes_;
};

class DoneEvent : public Event {
public:
  Error wait() override { return Error::success(); }
  bool isComplete() const override { return true; }
  const std::vector<NodeTiming> &nodeTimings() const override { return timings_; }

private:
  std::vector<NodeTiming> timings_;
};

class RecordingExecutable : public Executable {
public:
  RecordingExecutable(Device &d, Graph g) : Executable(d, std::move(g), ExecMode::Replay) {}
  std::vector<ResolvedSlot> lastSlots;
  std::vector<uint64_t> lastParams;
  int submits = 0;
  uint64_t needSize(uint32_t s) const { return needs_[s].minSize; }

protected:
  Expected<EventPtr> submit(const std::vector<ResolvedSlot> &slots,
                            const std::vector<uint64_t> &params, const SubmitOptions &) override {
    lastSlots = slots;
    lastParams = params;
    ++submits;
    return EventPtr(std::make_shared<DoneEvent>());
  }
};

class RecordingDevice : public Device {
public:
  explicit RecordingDevice(std::string name = "recording", bool storedExpressions = false) {
    info_.backend = "test";
    info_.name = std::move(name);
    info_.caps.hostPointerBuffers = true;
    info_.caps.storedExpressions = storedExpressions;
  }
  const DeviceInfo &info() const override { return info_; }
  Expected<std::unique_ptr<Buffer>> allocate(uint64_t bytes, uint32_t = 64) override {
    return std::unique_ptr<Buffer>(new HostBuffer(this, bytes));
  }
  Error write(Buffer &dst, uint64_t offset, const void *src, uint64_t bytes) override {
    if (offset > dst.size() || bytes > dst.size() - offset) return makeError("write out of range");
    std::memcpy(static_cast<uint8_t *>(dst.hostPointer()) + offset, src, bytes);
    return Error::success();
  }
  Error read(Buffer &src, uint64_t offset, void *dst, uint64_t bytes) override {
    if (offset > src.size() || bytes > src.size() - offset) return makeError("read out of range");
    std::memcpy(dst, static_cast<uint8_t *>(src.hostPointer()) + offset, bytes);
    return Error::success();
  }
protected:
  Expected<std::unique_ptr<Executable>> finalizeFlat(FlatGraph flat, const FinalizeOptions &) override {
    return std::unique_ptr<Executable>(new RecordingExecutable(*this, std::move(flat.graph)));
  }

private:
  DeviceInfo info_;
};

class RecordingBackend : public Backend {
public:
  const char *name() const override { return "test"; }
  BackendProbe probe() override {
    BackendProbe p;
    p.backend = "test";
    p.available = true;
    p.devices = {dev0_.info(), dev1_.info()};
    return p;
  }
  Expected<Device *> device(uint32_t index) override {
    if (index == 0) return static_cast<Device *>(&dev0_);
    if (index == 1) return static_cast<Device *>(&dev1_);
    return makeError("no device " + std::to_string(index) + " (2 devices)");
  }

private:
  RecordingDevice dev0_{"dev0"}, dev1_{"dev1"};
};

} // namespace cgraph::rt::test
