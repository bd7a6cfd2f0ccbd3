// `cgrun --list-devices`: every backend compiled in, what it found or why not.
#include "common.h"

#include <cstdio>

namespace cgraph::cgrun {

namespace {
// Backends the project has folders for; listed when this binary was built without them.
const char *const kKnownBackends[] = {"cpu", "opencl", "cuda", "hip", "level_zero"};

std::string capsLine(const rt::Capabilities &c) {
  std::string forms;
  for (FormKind k : c.kernelForms) forms += std::string(forms.empty() ? "" : ",") + formKindName(k);
  std::string s;
  auto flag = [&](bool v, const char *name) {
    if (v) s += std::string(s.empty() ? "" : " ") + name;
  };
  flag(c.nativeCommandBuffer, "command-buffer");
  flag(c.rebindWithoutRerecord, "rebind");
  flag(c.updatableParams, "update-params");
  flag(c.inOrder, "in-order");
  flag(c.concurrentNodes, "concurrent-nodes");
  flag(c.profiling, "profiling");
  flag(c.profilingReplay, "profiling-replay");
  flag(c.hostPointerBuffers, "host-pointers");
  return s + "; forms: " + (forms.empty() ? "-" : forms) + "; compute units: " +
         std::to_string(c.computeUnits) + "; memory: " + std::to_string(c.globalMemoryBytes >> 20) +
         " MiB; max work-group: " + std::to_string(c.maxWorkGroupSize);
}
} // namespace

int listDevices(bool json) {
  auto registry = makeRegistry();
  nlohmann::json jb = nlohmann::json::array();
  for (const auto &b : registry->backends()) {
    rt::BackendProbe p = b->probe();
    nlohmann::json devs = nlohmann::json::array();
    for (const rt::DeviceInfo &d : p.devices) devs.push_back(deviceJson(d));
    jb.push_back({{"backend", b->name()}, {"compiled_in", true}, {"available", p.available},
                  {"reason", p.reason}, {"devices", devs}});
    if (json) continue;
    if (!p.available) {
      std::printf("%s: unavailable: %s\n", b->name(), p.reason.c_str());
      continue;
    }
    std::printf("%s: %zu device%s\n", b->name(), p.devices.size(), p.devices.size() == 1 ? "" : "s");
    for (size_t i = 0; i < p.devices.size(); ++i) {
      const rt::DeviceInfo &d = p.devices[i];
      std::printf("  %s:%zu  %s (%s%s%s)\n", b->name(), i, d.name.c_str(), d.vendor.c_str(),
                  d.driverVersion.empty() ? "" : ", ", d.driverVersion.c_str());
      std::printf("      %s\n", capsLine(d.caps).c_str());
      if (!d.replay.empty()) std::printf("      replay: %s\n", d.replay.c_str());
      std::printf("      update: %s\n",
                  d.caps.nodeUpdate ? (d.update + " (arguments, nd-range, enable/disable, whole graph)").c_str()
                                    : "none (updates are refused)");
    }
  }
  for (const char *name : kKnownBackends) {
    if (registry->find(name)) continue;
    jb.push_back({{"backend", name}, {"compiled_in", false}, {"available", false},
                  {"reason", "not compiled into this cgrun"}, {"devices", nlohmann::json::array()}});
    if (!json) std::printf("%s: not compiled into this cgrun\n", name);
  }
  if (json) std::printf("%s\n", nlohmann::json({{"backends", jb}}).dump(2).c_str());
  return 0;
}

} // namespace cgraph::cgrun
