// Discovery: drivers and devices through the driver table (dlopen'ed loader or a fake).
#include "internal.h"

#include "cgraph/runtime/listed_backend.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

namespace cgraph::level_zero {

namespace {

std::string vendorName(uint32_t id) {
  if (id == 0x8086) return "Intel";
  char buf[32];
  std::snprintf(buf, sizeof buf, "vendor 0x%04x", id);
  return buf;
}

class LevelZeroBackend final : public rt::ListedDeviceBackend<LevelZeroBackend, LevelZeroDevice> {
public:
  explicit LevelZeroBackend(LevelZeroBackendOptions opts) : opts_(opts) {}
  const char *name() const override { return "level_zero"; }

  // rt::ListedDeviceBackend's driver hooks.
  Expected<const ZeDriverTable *> loadApi() const {
    if (opts_.driverTable) return opts_.driverTable;
    return loadZeDriverTable();
  }
  Expected<std::vector<Found>> enumerate(const ZeDriverTable &ze) { return enumerateDevices(ze); }
  Expected<std::pair<rt::DeviceInfo, DeviceProps>> describe(const ZeDriverTable &ze, const Found &f) {
    return describeDevice(ze, f);
  }
  Expected<std::unique_ptr<LevelZeroDevice>> open(const ZeDriverTable &ze,
                                                  const std::pair<rt::DeviceInfo, DeviceProps> &d) {
    return LevelZeroDevice::open(ze, d.first, d.second, opts_);
  }

private:
  LevelZeroBackendOptions opts_;
};

} // namespace

Expected<std::vector<Found>> enumerateDevices(const ZeDriverTable &ze) {
  // zeInit is reference counted by the loader and may be called more than once. The
  // loader answers ZE_RESULT_ERROR_UNINITIALIZED when it finds no driver at all.
  ze_result_t rc = ze.zeInit(0);
  if (rc == ZE_RESULT_ERROR_UNINITIALIZED || rc == ZE_RESULT_ERROR_DEPENDENCY_UNAVAILABLE)
    return makeError("no Level Zero device (zeInit: " + zeResultName(rc) + ": no driver found)");
  if (rc != ZE_RESULT_SUCCESS) return zeError("zeInit", rc);
  uint32_t nd = 0;
  CGRAPH_ZE_CHECK("zeDriverGet", ze.zeDriverGet(&nd, nullptr));
  if (nd == 0) return makeError("no Level Zero device (no driver)");
  std::vector<ze_driver_handle_t> drivers(nd);
  CGRAPH_ZE_CHECK("zeDriverGet", ze.zeDriverGet(&nd, drivers.data()));
  drivers.resize(nd);
  std::vector<Found> out;
  for (ze_driver_handle_t drv : drivers) {
    uint32_t n = 0;
    CGRAPH_ZE_CHECK("zeDeviceGet", ze.zeDeviceGet(drv, &n, nullptr));
    if (n == 0) continue;
    std::vector<ze_device_handle_t> devs(n);
    CGRAPH_ZE_CHECK("zeDeviceGet", ze.zeDeviceGet(drv, &n, devs.data()));
    devs.resize(n);
    for (ze_device_handle_t d : devs)
      out.push_back({drv, d});
  }
  if (out.empty())
    return makeError("no Level Zero device (" + std::to_string(nd) + " driver(s), no device)");
  return out;
}

Expected<std::pair<rt::DeviceInfo, DeviceProps>> describeDevice(const ZeDriverTable &ze,
                                                                const Found &f) {
  rt::DeviceInfo info;
  DeviceProps props;
  props.driver = f.driver;
  props.device = f.device;

  ze_device_properties_t dp{};
  dp.stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES;
  CGRAPH_ZE_CHECK("zeDeviceGetProperties", ze.zeDeviceGetProperties(f.device, &dp));
  ze_device_compute_properties_t cp{};
  cp.stype = ZE_STRUCTURE_TYPE_DEVICE_COMPUTE_PROPERTIES;
  CGRAPH_ZE_CHECK("zeDeviceGetComputeProperties", ze.zeDeviceGetComputeProperties(f.device, &cp));
  ze_device_module_properties_t mp{};
  mp.stype = ZE_STRUCTURE_TYPE_DEVICE_MODULE_PROPERTIES;
  CGRAPH_ZE_CHECK("zeDeviceGetModuleProperties", ze.zeDeviceGetModuleProperties(f.device, &mp));
  ze_driver_properties_t drp{};
  drp.stype = ZE_STRUCTURE_TYPE_DRIVER_PROPERTIES;
  CGRAPH_ZE_CHECK("zeDriverGetProperties", ze.zeDriverGetProperties(f.driver, &drp));
  ze_api_version_t apiVersion{};
  CGRAPH_ZE_CHECK("zeDriverGetApiVersion", ze.zeDriverGetApiVersion(f.driver, &apiVersion));

  uint32_t nMem = 0;
  CGRAPH_ZE_CHECK("zeDeviceGetMemoryProperties",
                  ze.zeDeviceGetMemoryProperties(f.device, &nMem, nullptr));
  std::vector<ze_device_memory_properties_t> mem(nMem);
  for (auto &m : mem)
    m.stype = ZE_STRUCTURE_TYPE_DEVICE_MEMORY_PROPERTIES;
  if (nMem)
    CGRAPH_ZE_CHECK("zeDeviceGetMemoryProperties",
                    ze.zeDeviceGetMemoryProperties(f.device, &nMem, mem.data()));

  uint32_t nGroups = 0;
  CGRAPH_ZE_CHECK("zeDeviceGetCommandQueueGroupProperties",
                  ze.zeDeviceGetCommandQueueGroupProperties(f.device, &nGroups, nullptr));
  std::vector<ze_command_queue_group_properties_t> groups(nGroups);
  for (auto &g : groups)
    g.stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_GROUP_PROPERTIES;
  if (nGroups)
    CGRAPH_ZE_CHECK("zeDeviceGetCommandQueueGroupProperties",
                    ze.zeDeviceGetCommandQueueGroupProperties(f.device, &nGroups, groups.data()));
  bool compute = false;
  for (uint32_t g = 0; g < nGroups && !compute; ++g)
    if (groups[g].flags & ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COMPUTE) {
      compute = true;
      props.computeOrdinal = g;
      props.maxFillPatternSize = groups[g].maxMemoryFillPatternSize;
    }
  if (!compute)
    return makeError(std::string("level_zero device '") + dp.name +
                     "' has no compute command queue group");

  uint32_t nExt = 0;
  CGRAPH_ZE_CHECK("zeDriverGetExtensionProperties",
                  ze.zeDriverGetExtensionProperties(f.driver, &nExt, nullptr));
  std::vector<ze_driver_extension_properties_t> exts(nExt);
  if (nExt)
    CGRAPH_ZE_CHECK("zeDriverGetExtensionProperties",
                    ze.zeDriverGetExtensionProperties(f.driver, &nExt, exts.data()));
  for (uint32_t i = 0; i < nExt; ++i) {
    const char *name = exts[i].name;
    if (!std::strcmp(name, ZE_GLOBAL_OFFSET_EXP_NAME))
      props.globalOffset = ze.zeKernelSetGlobalOffsetExp != nullptr;
    // The mutable command list extension's name; its types are not in API 1.4's headers.
    if (!std::strcmp(name, "ZE_experimental_mutable_command_list")) props.mutableCommandList = true;
  }
  props.timerResolutionNs = dp.timerResolution ? dp.timerResolution : 1;
  props.kernelTimestampValidBits = dp.kernelTimestampValidBits ? dp.kernelTimestampValidBits : 64;
  props.maxGroupSize[0] = cp.maxGroupSizeX;
  props.maxGroupSize[1] = cp.maxGroupSizeY;
  props.maxGroupSize[2] = cp.maxGroupSizeZ;

  info.backend = "level_zero";
  info.name = std::string(dp.name, strnlen(dp.name, sizeof dp.name));
  info.vendor = vendorName(dp.vendorId);
  info.driverVersion = "Level Zero API " + std::to_string(ZE_MAJOR_VERSION(apiVersion)) + "." +
                       std::to_string(ZE_MINOR_VERSION(apiVersion)) + " / driver " +
                       std::to_string(drp.driverVersion) + " / device 0x" + [&] {
                         char b[16];
                         std::snprintf(b, sizeof b, "%04x", dp.deviceId);
                         return std::string(b);
                       }();
  // Regular command lists per binding set; a driver's mutable command lists are noted
  // but not used (API 1.4's headers do not declare them).
  info.replay = props.mutableCommandList
                    ? "command-list (driver reports mutable command lists; not used)"
                    : "command-list";
  info.update = "re-record";
  rt::Capabilities &c = info.caps;
  c.nativeCommandBuffer = true; // regular command lists, recorded once per binding set
  c.rebindWithoutRerecord = false;
  c.updatableParams = false;
  c.storedExpressions = true; // expression values key the recordings like parameters
  c.nodeUpdate = true;        // recordings are dropped and made again
  c.inOrder = false;          // inside a list, only the graph's edges order commands
  c.concurrentNodes = true;
  c.profiling = true;       // kernel timestamps
  c.profilingReplay = true; // a profiled recording per binding set (command_buffer.cpp)
  c.hostPointerBuffers = false;
  c.kernelForms = {FormKind::SpirV};
  c.computeUnits = dp.numSlices * dp.numSubslicesPerSlice * dp.numEUsPerSubslice;
  for (const auto &m : mem)
    c.globalMemoryBytes += m.totalSize;
  c.maxWorkGroupSize = cp.maxTotalGroupSize;
  c.nonUniformWorkGroups = false;
  return std::make_pair(std::move(info), props);
}

std::unique_ptr<rt::Backend> makeLevelZeroBackend() {
  return makeLevelZeroBackend({});
}

std::unique_ptr<rt::Backend> makeLevelZeroBackend(const LevelZeroBackendOptions &opts) {
  return std::make_unique<LevelZeroBackend>(opts);
}

} // namespace cgraph::level_zero
