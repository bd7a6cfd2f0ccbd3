// The process-wide registry of compiled-in backends and the device handles.
#include "internal.h"

#include "cgraph/backends/cpu/cpu_backend.h"
#ifdef CGRAPH_CAPI_HAVE_OPENCL
#include "cgraph/backends/opencl/opencl_backend.h"
#endif
#ifdef CGRAPH_CAPI_HAVE_CUDA
#include "cgraph/backends/cuda/cuda_backend.h"
#endif
#ifdef CGRAPH_CAPI_HAVE_HIP
#include "cgraph/backends/hip/hip_backend.h"
#endif
#ifdef CGRAPH_CAPI_HAVE_LEVEL_ZERO
#include "cgraph/backends/level_zero/level_zero_backend.h"
#endif

#include "cgraph/runtime/slot_init.h"

#include <mutex>

namespace cgraph::capi {

rt::Registry &registry() {
  // Never destroyed: backends own driver contexts and JIT state whose teardown order
  // against other static destructors at exit is not ours to decide.
  static rt::Registry *r = [] {
    auto *reg = new rt::Registry();
    reg->add(cpu::makeCpuBackend());
#ifdef CGRAPH_CAPI_HAVE_OPENCL
    reg->add(opencl::makeOpenCLBackend());
#endif
#ifdef CGRAPH_CAPI_HAVE_CUDA
    reg->add(cuda::makeCudaBackend());
#endif
#ifdef CGRAPH_CAPI_HAVE_HIP
    reg->add(hip::makeHipBackend());
#endif
#ifdef CGRAPH_CAPI_HAVE_LEVEL_ZERO
    reg->add(level_zero::makeLevelZeroBackend());
#endif
    return reg;
  }();
  return *r;
}

namespace {

// "backend:index" of every device an available backend reports, in registry order.
const std::vector<std::string> &deviceSpecs() {
  static const std::vector<std::string> specs = [] {
    std::vector<std::string> out;
    for (const auto &b : registry().backends()) {
      const rt::BackendProbe probe = b->probe();
      if (!probe.available) continue;
      for (size_t i = 0; i < probe.devices.size(); ++i)
        out.push_back(std::string(b->name()) + ":" + std::to_string(i));
    }
    return out;
  }();
  return specs;
}

// Serializes device opening: Registry::open is thread-safe per its contract, but the
// first open of a backend probes its driver, which is worth doing once.
std::mutex openMutex;

cgraph_status openSpec(const std::string &spec, cgraph_device *out) {
  std::string full = spec;
  if (full.find(':') == std::string::npos) full += ":0";
  Expected<rt::Device *> d = [&] {
    std::lock_guard<std::mutex> lock(openMutex);
    return registry().open(spec);
  }();
  if (!d) return fail(d.error());
  auto h = std::make_unique<cgraph_device_s>();
  h->device = *d;
  h->spec = full;
  *out = h.release();
  return CGRAPH_OK;
}

} // namespace

} // namespace cgraph::capi

using namespace cgraph;
using capi::fail;
using capi::guard;
using capi::nullArgument;

extern "C" {

uint32_t cgraph_device_count(void) {
  try {
    return uint32_t(capi::deviceSpecs().size());
  } catch (...) {
    return 0;
  }
}

cgraph_status cgraph_device_get(uint32_t index, cgraph_device *out) {
  return guard([&] {
    if (!out) return nullArgument("out");
    *out = nullptr;
    const auto &specs = capi::deviceSpecs();
    if (index >= specs.size())
      return fail(CGRAPH_ERROR_INVALID, "device index " + std::to_string(index) +
                                            " is out of range (" + std::to_string(specs.size()) +
                                            " devices)");
    return capi::openSpec(specs[index], out);
  });
}

cgraph_status cgraph_device_open(const char *spec, cgraph_device *out) {
  return guard([&] {
    if (!out) return nullArgument("out");
    *out = nullptr;
    if (!spec) return nullArgument("spec");
    return capi::openSpec(spec, out);
  });
}

void cgraph_device_release(cgraph_device device) {
  delete device;
}

cgraph_status cgraph_device_get_info(cgraph_device device, cgraph_device_info *out) {
  return guard([&] {
    if (!device) return nullArgument("device");
    if (!out) return nullArgument("out");
    const rt::DeviceInfo &i = device->device->info();
    *out = cgraph_device_info{i.backend.c_str(),    i.name.c_str(),           i.vendor.c_str(),
                              device->spec.c_str(), rt::deviceMemoryLimit(i), i.caps.computeUnits,
                              i.backend == "cpu"};
    return CGRAPH_OK;
  });
}

} // extern "C"
