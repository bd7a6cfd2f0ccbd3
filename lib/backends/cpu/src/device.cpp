#include "device.h"

#include "cgraph/graph/flatten.h"
#include "cgraph/graph/validate.h"
#include "cgraph/runtime/communicator.h"
#include "cgraph/runtime/staged.h"

#include <cstdlib>
#include <cstring>
#include <new>

namespace cgraph::cpu {

CpuBuffer::~CpuBuffer() { std::free(data_); }

CpuDevice::CpuDevice(const CpuOptions &options)
    : options_(options), info_(hostDeviceInfo()), compiler_(options_.dumpDir, options_.cache, *options_.barrierFibers) {}

Expected<std::unique_ptr<rt::Buffer>> CpuDevice::allocate(uint64_t bytes, uint32_t alignment) {
  if (alignment < 64) alignment = 64;
  if (alignment & (alignment - 1))
    return makeError("buffer alignment " + std::to_string(alignment) + " is not a power of two");
  // Rounded up so that vector loads past a kernel's last element stay in the block.
  uint64_t rounded = (std::max<uint64_t>(bytes, 1) + alignment - 1) / alignment * alignment;
  void *p = std::aligned_alloc(alignment, rounded);
  if (!p) return makeError("cannot allocate a buffer of " + std::to_string(bytes) + " bytes");
  return std::unique_ptr<rt::Buffer>(new CpuBuffer(this, static_cast<char *>(p), bytes));
}

static Error checkRange(rt::Buffer &b, uint64_t offset, uint64_t bytes, const char *what) {
  if (offset > b.size() || bytes > b.size() - offset)
    return makeError(std::string(what) + " of " + std::to_string(bytes) + " bytes at offset " +
                     std::to_string(offset) + " exceeds the " + std::to_string(b.size()) + "-byte buffer");
  if (!b.hostPointer()) return makeError(std::string(what) + ": buffer is not a cpu buffer");
  return Error::success();
}

Error CpuDevice::write(rt::Buffer &dst, uint64_t offset, const void *src, uint64_t bytes) {
  CGRAPH_RETURN_IF_ERROR(checkRange(dst, offset, bytes, "write"));
  if (bytes) std::memcpy(static_cast<char *>(dst.hostPointer()) + offset, src, bytes);
  return Error::success();
}

Error CpuDevice::read(rt::Buffer &src, uint64_t offset, void *dst, uint64_t bytes) {
  CGRAPH_RETURN_IF_ERROR(checkRange(src, offset, bytes, "read"));
  if (bytes) std::memcpy(dst, static_cast<char *>(src.hostPointer()) + offset, bytes);
  return Error::success();
}

Expected<std::unique_ptr<rt::Executable>> CpuDevice::finalizeFlat(FlatGraph flat, const rt::FinalizeOptions &opts) {
  return makeExecutable(*this, std::move(flat.graph), opts);
}

} // namespace cgraph::cpu
