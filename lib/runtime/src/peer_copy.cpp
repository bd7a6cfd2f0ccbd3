// rt::Device::copyFromDevice's default (runtime.h): a direct copy between two buffers
// the host can address; every other pair has no direct path here.
#include "cgraph/runtime/runtime.h"

#include <cstring>

namespace cgraph::rt {

Error Device::copyFromDevice(Device &, Buffer &src, uint64_t srcOffset, Buffer &dst, uint64_t dstOffset,
                             uint64_t bytes) {
  void *from = src.hostPointer(), *to = dst.hostPointer();
  if (!from || !to) return makeError(ErrorCode::Unsupported, "no direct copy between these devices");
  if (srcOffset > src.size() || bytes > src.size() - srcOffset || dstOffset > dst.size() ||
      bytes > dst.size() - dstOffset)
    return makeError("copy of " + std::to_string(bytes) + " bytes outside a buffer (source offset " +
                     std::to_string(srcOffset) + " of " + std::to_string(src.size()) + ", destination offset " +
                     std::to_string(dstOffset) + " of " + std::to_string(dst.size()) + ")");
  if (bytes) std::memmove(static_cast<char *>(to) + dstOffset, static_cast<const char *>(from) + srcOffset, bytes);
  return Error::success();
}

} // namespace cgraph::rt
