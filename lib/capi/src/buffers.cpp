// Device memory the library allocates (for devices where host memory cannot be bound).
#include "internal.h"

using namespace cgraph;
using capi::fail;
using capi::guard;
using capi::nullArgument;

extern "C" {

cgraph_status cgraph_buffer_alloc(cgraph_device device, uint64_t bytes, cgraph_buffer *out) {
  return guard([&] {
    if (!out) return nullArgument("out");
    *out = nullptr;
    if (!device) return nullArgument("device");
    Expected<std::unique_ptr<rt::Buffer>> b = device->device->allocate(bytes);
    if (!b) return fail(b.error());
    auto h = std::make_unique<cgraph_buffer_s>();
    h->buffer = std::move(*b);
    h->device = device->device;
    *out = h.release();
    return CGRAPH_OK;
  });
}

uint64_t cgraph_buffer_size(cgraph_buffer buffer) {
  return buffer ? buffer->buffer->size() : 0;
}

cgraph_status cgraph_buffer_write(cgraph_buffer buffer, uint64_t offset, const void *src,
                                  uint64_t bytes) {
  return guard([&] {
    if (!buffer) return nullArgument("buffer");
    if (!src && bytes) return nullArgument("src");
    return fail(buffer->device->write(*buffer->buffer, offset, src, bytes));
  });
}

cgraph_status cgraph_buffer_read(cgraph_buffer buffer, uint64_t offset, void *dst, uint64_t bytes) {
  return guard([&] {
    if (!buffer) return nullArgument("buffer");
    if (!dst && bytes) return nullArgument("dst");
    return fail(buffer->device->read(*buffer->buffer, offset, dst, bytes));
  });
}

void cgraph_buffer_release(cgraph_buffer buffer) {
  delete buffer;
}

} // extern "C"
