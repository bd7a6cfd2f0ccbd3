// Interoperation with other users of the device: the caller's device memory bound as a
// buffer without a copy (cuda_backend.h: wrapDeviceMemory).
#include "internal.h"

#include "cgraph/backends/cuda/cuda_backend.h"

#include <cstdio>

namespace cgraph::cuda {

namespace {
std::string hex(uint64_t v) {
  char b[24];
  std::snprintf(b, sizeof b, "0x%llx", static_cast<unsigned long long>(v));
  return b;
}
} // namespace

Expected<std::unique_ptr<rt::Buffer>> wrapDeviceMemory(rt::Device &device, uint64_t address, uint64_t bytes) {
  auto *d = dynamic_cast<CudaDevice *>(&device);
  if (!d) return makeError(ErrorCode::Unsupported, "device '" + device.info().name + "' is not a cuda device");
  if (!address && bytes) return makeError("device address is null");
  const CuApi &api = d->api();
  if (bytes && api.cuMemGetAddressRange) {
    CGRAPH_RETURN_IF_ERROR(d->makeCurrent());
    CUdeviceptr base = 0;
    size_t size = 0;
    if (api.cuMemGetAddressRange(&base, &size, CUdeviceptr(address)) != CUDA_SUCCESS)
      return makeError("address " + hex(address) + " is not device memory of '" + device.info().name + "'");
    if (address - base > size || bytes > size - (address - base))
      return makeError(std::to_string(bytes) + " bytes at " + hex(address) + " run past the end of its allocation (" +
                       std::to_string(size) + " bytes at " + hex(base) + ")");
  }
  return std::unique_ptr<rt::Buffer>(new CudaBuffer(*d, CUdeviceptr(address), bytes, false));
}

} // namespace cgraph::cuda
