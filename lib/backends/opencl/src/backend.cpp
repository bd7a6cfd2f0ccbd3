// Discovery: platforms and devices through the dlopen'ed ICD loader.
#include "internal.h"

#include "cgraph/runtime/env_options.h"
#include "cgraph/runtime/listed_backend.h"

#include <algorithm>
#include <cstring>
#include <optional>

namespace cgraph::opencl {

namespace {

std::string deviceString(const ClApi &api, cl_device_id d, cl_device_info what) {
  size_t n = 0;
  if (api.clGetDeviceInfo(d, what, 0, nullptr, &n) != CL_SUCCESS || n == 0) return {};
  std::string s(n, '\0');
  if (api.clGetDeviceInfo(d, what, n, s.data(), nullptr) != CL_SUCCESS) return {};
  while (!s.empty() && s.back() == '\0') s.pop_back();
  return s;
}

std::string platformString(const ClApi &api, cl_platform_id p, cl_platform_info what) {
  size_t n = 0;
  if (api.clGetPlatformInfo(p, what, 0, nullptr, &n) != CL_SUCCESS || n == 0) return {};
  std::string s(n, '\0');
  if (api.clGetPlatformInfo(p, what, n, s.data(), nullptr) != CL_SUCCESS) return {};
  while (!s.empty() && s.back() == '\0') s.pop_back();
  return s;
}

template <class T> T deviceValue(const ClApi &api, cl_device_id d, cl_device_info what) {
  T v{};
  if (api.clGetDeviceInfo(d, what, sizeof(T), &v, nullptr) != CL_SUCCESS) return T{};
  return v;
}

bool hasExtension(const std::string &list, const char *ext) {
  size_t pos = 0, n = std::strlen(ext);
  while ((pos = list.find(ext, pos)) != std::string::npos) {
    bool startOk = pos == 0 || list[pos - 1] == ' ';
    bool endOk = pos + n == list.size() || list[pos + n] == ' ';
    if (startOk && endOk) return true;
    pos += n;
  }
  return false;
}

struct Found {
  cl_platform_id platform;
  cl_device_id device;
};

// Every device of every platform, in platform order; the flat index is the device index.
Expected<std::vector<Found>> enumerate(const ClApi &api) {
  cl_uint np = 0;
  cl_int rc = api.clGetPlatformIDs(0, nullptr, &np);
  // The ICD loader answers CL_PLATFORM_NOT_FOUND_KHR when no vendor ICD is registered.
  if (rc == CL_PLATFORM_NOT_FOUND_KHR || (rc == CL_SUCCESS && np == 0))
    return makeError("no OpenCL platform (no ICD in /etc/OpenCL/vendors)");
  if (rc != CL_SUCCESS) return clError("clGetPlatformIDs", rc);
  std::vector<cl_platform_id> platforms(np);
  CGRAPH_CL_CHECK("clGetPlatformIDs", api.clGetPlatformIDs(np, platforms.data(), nullptr));
  std::vector<Found> out;
  for (cl_platform_id p : platforms) {
    cl_uint nd = 0;
    rc = api.clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 0, nullptr, &nd);
    if (rc == CL_DEVICE_NOT_FOUND || nd == 0) continue;
    if (rc != CL_SUCCESS) return clError("clGetDeviceIDs", rc);
    std::vector<cl_device_id> devs(nd);
    CGRAPH_CL_CHECK("clGetDeviceIDs", api.clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, nd, devs.data(), nullptr));
    for (cl_device_id d : devs) out.push_back({p, d});
  }
  if (out.empty()) return makeError("no OpenCL device on " + std::to_string(np) + " platform(s)");
  return out;
}

class OpenCLBackend final : public rt::ListedDeviceBackend<OpenCLBackend, OpenCLDevice> {
public:
  explicit OpenCLBackend(OpenCLBackendOptions opts) : opts_(std::move(opts)) {}
  const char *name() const override { return "opencl"; }

  // rt::ListedDeviceBackend's driver hooks.
  Expected<const ClApi *> loadApi() { return loadClApi(); }
  Expected<std::vector<Found>> enumerate(const ClApi &api) { return cgraph::opencl::enumerate(api); }
  Expected<std::pair<rt::DeviceInfo, DeviceProps>> describe(const ClApi &api, const Found &f) {
    return describeDevice(api, f.platform, f.device, opts_);
  }
  Expected<std::unique_ptr<OpenCLDevice>> open(const ClApi &api,
                                               const std::pair<rt::DeviceInfo, DeviceProps> &d) {
    return OpenCLDevice::open(api, d.first, d.second, opts_);
  }

private:
  OpenCLBackendOptions opts_;
};

} // namespace

Expected<std::pair<rt::DeviceInfo, DeviceProps>> describeDevice(const ClApi &api,
                                                                cl_platform_id platform,
                                                                cl_device_id device,
                                                                const OpenCLBackendOptions &opts) {
  rt::DeviceInfo info;
  DeviceProps props;
  props.platform = platform;
  props.device = device;
  info.backend = "opencl";
  info.name = deviceString(api, device, CL_DEVICE_NAME);
  info.vendor = deviceString(api, device, CL_DEVICE_VENDOR);
  info.driverVersion = platformString(api, platform, CL_PLATFORM_NAME) + " " +
                       platformString(api, platform, CL_PLATFORM_VERSION) + " / driver " +
                       deviceString(api, device, CL_DRIVER_VERSION);
  const std::string exts = deviceString(api, device, CL_DEVICE_EXTENSIONS);
  const std::string il = deviceString(api, device, CL_DEVICE_IL_VERSION);
  props.il = (il.find("SPIR-V") != std::string::npos || hasExtension(exts, "cl_khr_il_program")) &&
             api.clCreateProgramWithIL != nullptr;
  props.spir = hasExtension(exts, "cl_khr_spir");
  props.compiler = deviceValue<cl_bool>(api, device, CL_DEVICE_COMPILER_AVAILABLE) == CL_TRUE;
  props.commandBuffer = hasExtension(exts, "cl_khr_command_buffer") &&
                        loadCommandBufferApi(api, platform).complete();
  if (props.commandBuffer) {
    auto caps = deviceValue<cl_device_command_buffer_capabilities_khr>(
        api, device, CL_DEVICE_COMMAND_BUFFER_CAPABILITIES_KHR);
    props.simultaneousUse = (caps & CL_COMMAND_BUFFER_CAPABILITY_SIMULTANEOUS_USE_KHR) != 0;
  }
  // The replay strategy (the rule is in opencl_backend.h): an explicit option, else
  // the environment, else command buffers except on PoCL's CPU device, whose command
  // buffers cost more per node than its eager enqueue (bench_pocl --only-chain).
  using Replay = OpenCLBackendOptions::Replay;
  std::optional<Replay> given;
  if (opts.replay != Replay::Auto) given = opts.replay;
  CGRAPH_RETURN_IF_ERROR(rt::env::fillChoice(given, "CGRAPH_OPENCL_REPLAY",
                                             {{"command-buffer", Replay::CommandBuffer},
                                              {"pre-resolved", Replay::PreResolved}}));
  Replay want = given.value_or(Replay::Auto);
  if (want == Replay::Auto) {
    const bool pocl = platformString(api, platform, CL_PLATFORM_NAME).find("Portable Computing Language") !=
                      std::string::npos;
    const bool cpu = (deviceValue<cl_device_type>(api, device, CL_DEVICE_TYPE) & CL_DEVICE_TYPE_CPU) != 0;
    want = pocl && cpu ? Replay::PreResolved : Replay::CommandBuffer;
  }
  props.preResolved = want == Replay::PreResolved || !props.commandBuffer || opts.disableCommandBuffers;
  info.replay = props.preResolved ? "pre-resolved" : "command-buffer";
  info.update = "re-record";
  cl_command_queue_properties qp =
      deviceValue<cl_command_queue_properties>(api, device, CL_DEVICE_QUEUE_PROPERTIES);
  props.queueProfiling = (qp & CL_QUEUE_PROFILING_ENABLE) != 0;
  cl_uint alignBits = deviceValue<cl_uint>(api, device, CL_DEVICE_MEM_BASE_ADDR_ALIGN);
  props.baseAddrAlign = std::max<cl_uint>(1, alignBits / 8);
  info.caps.bindingOffsetAlignment = props.baseAddrAlign;

  rt::Capabilities &c = info.caps;
  c.nativeCommandBuffer = !props.preResolved; // replay runs a driver-level recording
  // No mutable dispatch is used: a new binding set or parameter value is a new recording.
  c.rebindWithoutRerecord = false;
  c.updatableParams = false;
  // Stored expressions are evaluated by rt::Executable and reach submit() as extra
  // parameter values; recordings are keyed by every parameter value, so each distinct
  // shape is recorded once and kept like a binding set.
  c.storedExpressions = true;
  c.nodeUpdate = true; // recordings are dropped and made again on the next submission
  c.inOrder = true;
  c.concurrentNodes = false;
  c.profiling = props.queueProfiling;
  // Command buffers give no per-command events; a pre-resolved replay has one per node
  // when asked.
  c.profilingReplay = props.queueProfiling && props.preResolved;
  c.hostPointerBuffers = false;
  if (props.il) c.kernelForms.push_back(FormKind::SpirV);
  if (props.spir) {
    if (!props.il) c.kernelForms.push_back(FormKind::SpirV); // converted to spir64 bitcode
    c.kernelForms.push_back(FormKind::LLVMBitcode);
  }
  if (props.compiler) c.kernelForms.push_back(FormKind::OpenCLC);
  c.computeUnits = deviceValue<cl_uint>(api, device, CL_DEVICE_MAX_COMPUTE_UNITS);
  c.globalMemoryBytes = deviceValue<cl_ulong>(api, device, CL_DEVICE_GLOBAL_MEM_SIZE);
  c.maxWorkGroupSize = deviceValue<size_t>(api, device, CL_DEVICE_MAX_WORK_GROUP_SIZE);
  return std::make_pair(std::move(info), props);
}

std::unique_ptr<rt::Backend> makeOpenCLBackend() { return makeOpenCLBackend({}); }

std::unique_ptr<rt::Backend> makeOpenCLBackend(const OpenCLBackendOptions &opts) {
  return std::make_unique<OpenCLBackend>(opts);
}

} // namespace cgraph::opencl
