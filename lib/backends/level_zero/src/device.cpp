// Device: context, one compute queue, a synchronous immediate list, buffers, modules.
#include "internal.h"

#include "cgraph/graph/flatten.h"
#include "cgraph/runtime/communicator.h"
#include "cgraph/graph/validate.h"
#include "cgraph/runtime/staged.h"

namespace cgraph::level_zero {

LevelZeroBuffer::LevelZeroBuffer(LevelZeroDevice &device, void *ptr, uint64_t size)
    : device_(&device), ptr_(ptr), size_(size) {}

LevelZeroBuffer::~LevelZeroBuffer() {
  if (ptr_) device_->ze().zeMemFree(device_->context(), ptr_);
}

const rt::Device *LevelZeroBuffer::device() const {
  return device_;
}

Module::~Module() {
  if (module) ze->zeModuleDestroy(module);
}

LevelZeroDevice::LevelZeroDevice(const ZeDriverTable &ze, rt::DeviceInfo info, DeviceProps props,
                                 const LevelZeroBackendOptions &opts)
    : ze_(&ze), info_(std::move(info)), props_(props), opts_(opts) {}

LevelZeroDevice::~LevelZeroDevice() {
  modules_.reset(); // cached modules are destroyed before their context
  if (queue_) ze_->zeCommandQueueSynchronize(queue_, UINT64_MAX);
  if (immediate_) ze_->zeCommandListDestroy(immediate_);
  if (queue_) ze_->zeCommandQueueDestroy(queue_);
  if (context_) ze_->zeContextDestroy(context_);
}

Expected<std::unique_ptr<LevelZeroDevice>>
LevelZeroDevice::open(const ZeDriverTable &ze, rt::DeviceInfo info, DeviceProps props,
                      const LevelZeroBackendOptions &opts) {
  std::unique_ptr<LevelZeroDevice> d(new LevelZeroDevice(ze, std::move(info), props, opts));
  const std::string where = "level_zero device '" + d->info_.name + "'";
  ze_context_desc_t cd{};
  cd.stype = ZE_STRUCTURE_TYPE_CONTEXT_DESC;
  ze_result_t rc = ze.zeContextCreate(props.driver, &cd, &d->context_);
  if (rc != ZE_RESULT_SUCCESS) return zeError("zeContextCreate", rc).withContext(where);
  // One asynchronous queue on the compute group: recorded lists execute there.
  ze_command_queue_desc_t qd{};
  qd.stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC;
  qd.ordinal = props.computeOrdinal;
  qd.index = 0;
  qd.mode = ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS;
  qd.priority = ZE_COMMAND_QUEUE_PRIORITY_NORMAL;
  rc = ze.zeCommandQueueCreate(d->context_, props.device, &qd, &d->queue_);
  if (rc != ZE_RESULT_SUCCESS) return zeError("zeCommandQueueCreate", rc).withContext(where);
  // A synchronous immediate list: every append returns when the command is done
  // (transfers, eager mode, host task staging).
  ze_command_queue_desc_t id = qd;
  id.mode = ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS;
  rc = ze.zeCommandListCreateImmediate(d->context_, props.device, &id, &d->immediate_);
  if (rc != ZE_RESULT_SUCCESS)
    return zeError("zeCommandListCreateImmediate", rc).withContext(where);
  return d;
}

Expected<std::unique_ptr<rt::Buffer>> LevelZeroDevice::allocate(uint64_t bytes,
                                                                uint32_t alignment) {
  if (bytes == 0) return makeError("level_zero: cannot allocate a 0-byte buffer");
  if (alignment == 0 || (alignment & (alignment - 1)) != 0)
    return makeError("level_zero: alignment " + std::to_string(alignment) +
                     " is not a power of two");
  ze_device_mem_alloc_desc_t md{};
  md.stype = ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC;
  md.ordinal = 0;
  void *ptr = nullptr;
  ze_result_t rc = ze_->zeMemAllocDevice(context_, &md, size_t(bytes),
                                         std::max<size_t>(alignment, 64), props_.device, &ptr);
  if (rc != ZE_RESULT_SUCCESS)
    return zeError("zeMemAllocDevice", rc)
        .withContext("level_zero: allocating " + std::to_string(bytes) + " bytes");
  return std::unique_ptr<rt::Buffer>(new LevelZeroBuffer(*this, ptr, bytes));
}

static Error checkRange(const char *what, const rt::Buffer &b, uint64_t offset, uint64_t bytes) {
  if (offset > b.size() || bytes > b.size() - offset)
    return makeError(std::string("level_zero: ") + what + " of [" + std::to_string(offset) + ", +" +
                     std::to_string(bytes) + ") is outside the " + std::to_string(b.size()) +
                     "-byte buffer");
  return Error::success();
}

Error LevelZeroDevice::copyLocked(void *dst, const void *src, uint64_t bytes, const char *what) {
  ze_result_t rc =
      ze_->zeCommandListAppendMemoryCopy(immediate_, dst, src, size_t(bytes), nullptr, 0, nullptr);
  if (rc != ZE_RESULT_SUCCESS)
    return zeError("zeCommandListAppendMemoryCopy", rc).withContext(what);
  return Error::success();
}

Error LevelZeroDevice::write(rt::Buffer &dst, uint64_t offset, const void *src, uint64_t bytes) {
  auto *b = dynamic_cast<LevelZeroBuffer *>(&dst);
  if (!b || b->device() != this)
    return makeError("level_zero: write to a buffer of another device");
  CGRAPH_RETURN_IF_ERROR(checkRange("write", dst, offset, bytes));
  if (bytes == 0) return Error::success();
  std::lock_guard<std::mutex> lock(immediateMutex_);
  return copyLocked(static_cast<char *>(b->ptr()) + offset, src, bytes, "level_zero: write");
}

Error LevelZeroDevice::read(rt::Buffer &src, uint64_t offset, void *dst, uint64_t bytes) {
  auto *b = dynamic_cast<LevelZeroBuffer *>(&src);
  if (!b || b->device() != this)
    return makeError("level_zero: read from a buffer of another device");
  CGRAPH_RETURN_IF_ERROR(checkRange("read", src, offset, bytes));
  if (bytes == 0) return Error::success();
  std::lock_guard<std::mutex> lock(immediateMutex_);
  return copyLocked(dst, static_cast<const char *>(b->ptr()) + offset, bytes, "level_zero: read");
}

Expected<std::unique_ptr<rt::Executable>> LevelZeroDevice::finalizeFlat(FlatGraph flat, const rt::FinalizeOptions &opts) {
  return makeExecutable(*this, std::move(flat.graph), opts);
}

} // namespace cgraph::level_zero
