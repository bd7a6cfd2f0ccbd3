// Shared cgrun plumbing: registry, graph loading, slot sizes and types, buffers.
#include "common.h"

#include "cgraph/expr.h"

#include "cgraph/backends/cpu/cpu_backend.h"
#include "cgraph/format/reader.h"
#include "cgraph/graph/hazards.h"
#include "cgraph/runtime/slot_init.h"
#ifdef CGRUN_HAVE_OPENCL
#include "cgraph/backends/opencl/opencl_backend.h"
#endif
#ifdef CGRUN_HAVE_CUDA
#include "cgraph/backends/cuda/cuda_backend.h"
#endif
#ifdef CGRUN_HAVE_HIP
#include "cgraph/backends/hip/hip_backend.h"
#endif
#ifdef CGRUN_HAVE_LEVEL_ZERO
#include "cgraph/backends/level_zero/level_zero_backend.h"
#endif

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <new>

namespace cgraph::cgrun {

void note(const std::string &line) {
  std::fprintf(stderr, "%s\n", line.c_str());
  std::fflush(stderr);
}

int fail(const Error &e) {
  note("cgrun: error: " + e.message());
  return 1;
}

bool progressEnabled(const CommonOptions &o) { return !o.json && isatty(2) != 0; }

rt::FinalizeOptions finalizeOptions(const CommonOptions &o, const rt::HostPolicy &policy) {
  rt::FinalizeOptions fo;
  fo.host = policy;
  fo.planMemory = !o.noMemoryPlan;
  fo.collectiveTimeout = o.collectiveTimeout;
  if (progressEnabled(o))
    fo.progress = [](const char *phase, uint64_t done, uint64_t total) {
      if (done >= total)
        std::fprintf(stderr, "\r\033[K");
      else
        std::fprintf(stderr, "\rcgrun: finalize: %s %llu/%llu", phase, (unsigned long long)done,
                     (unsigned long long)total);
      std::fflush(stderr);
    };
  return fo;
}

bool isFloat(ScalarType t) { return t == ScalarType::F16 || t == ScalarType::F32 || t == ScalarType::F64; }

double msSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

uint64_t nsBetween(std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b) {
  return uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(b - a).count());
}

std::unique_ptr<rt::Registry> makeRegistry(bool checkBounds) {
  auto r = std::make_unique<rt::Registry>();
  cpu::CpuOptions cpuOptions;
  cpuOptions.checkBounds = checkBounds;
  r->add(cpu::makeCpuBackend(cpuOptions));
#ifdef CGRUN_HAVE_OPENCL
  r->add(opencl::makeOpenCLBackend());
#endif
#ifdef CGRUN_HAVE_CUDA
  r->add(cuda::makeCudaBackend());
#endif
#ifdef CGRUN_HAVE_HIP
  r->add(hip::makeHipBackend());
#endif
#ifdef CGRUN_HAVE_LEVEL_ZERO
  r->add(level_zero::makeLevelZeroBackend());
#endif
  return r;
}

std::vector<std::string> splitList(const std::string &text) {
  std::vector<std::string> out;
  size_t start = 0;
  for (;;) {
    const size_t comma = text.find(',', start);
    out.push_back(text.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) return out;
    start = comma + 1;
  }
}

int usage(const std::string &msg) {
  std::fprintf(stderr, "cgrun: error: %s\n", msg.c_str());
  return 2;
}

std::string deviceSpec(const std::string &backend, const std::string &device) {
  if (device.empty()) return backend.empty() ? "cpu" : backend;
  if (device.find_first_not_of("0123456789") == std::string::npos)
    return (backend.empty() ? std::string("cpu") : backend) + ":" + device;
  return device;
}

Error checkDeviceOption(const std::string &backend, const std::string &device) {
  auto index = [](const std::string &t) { return !t.empty() && t.find_first_not_of("0123456789") == std::string::npos; };
  auto registry = makeRegistry();
  const size_t colon = device.find(':');
  const std::string name = device.substr(0, colon);
  if (index(device) || (registry->find(name) && (colon == std::string::npos || index(device.substr(colon + 1)))))
    return Error::success();
  const std::string b = backend.empty() ? "cpu" : backend.substr(0, backend.find(':'));
  std::string known;
  for (const auto &k : registry->backends()) known += std::string(known.empty() ? "" : ", ") + k->name();
  std::string count = "backend '" + b + "' is not compiled in";
  if (rt::Backend *be = registry->find(b)) {
    const size_t n = be->probe().devices.size();
    count = b + " has " + std::to_string(n) + " device" + (n == 1 ? "" : "s") +
            (n ? " (0 to " + std::to_string(n - 1) + ")" : "");
  }
  return makeError("--device " + device + ": not a device; give an index (" + count +
                   ") or a spec BACKEND[:INDEX] such as cpu, cpu:0, opencl:1 (backends: " + known + ")");
}

Expected<Graph> loadGraph(const std::string &path) { return readCgfFile(path); }

rt::HostPolicy hostPolicy(const CommonOptions &o) {
  namespace fs = std::filesystem;
  rt::HostPolicy p;
  std::error_code ec;
  fs::path dir = fs::absolute(fs::path(o.file), ec).parent_path();
  p.baseDir = dir.string();
  if (o.allowDirs.empty()) {
    p.allowedDirs = {dir.string()};
    const std::string cwd = fs::current_path(ec).string();
    if (cwd != dir.string()) p.allowedDirs.push_back(cwd);
  } else {
    p.allowedDirs = o.allowDirs;
  }
  p.allowPlugins = o.allowPlugins;
  return p;
}

std::vector<uint64_t> slotBytes(const Graph &g) {
  std::vector<SlotRequirement> reqs = slotRequirements(g);
  std::vector<uint64_t> out(g.slots.size());
  for (size_t i = 0; i < g.slots.size(); ++i)
    out[i] = std::max(g.slots[i].size, i < reqs.size() ? reqs[i].minSize : 0);
  return out;
}

void sizeSlotsForParams(Graph &g, const std::vector<rt::ParamValues> &paramSets) {
  for (const FieldExpr &fe : g.exprs) {
    if (fe.field != ExprField::SlotSize || fe.arg >= g.slots.size()) continue;
    auto prog = expr::decode(fe.code.data(), fe.code.size(), uint32_t(g.params.size()));
    if (!prog) continue;
    bool any = false;
    uint64_t most = 0;
    for (const rt::ParamValues &pv : paramSets) {
      std::vector<int64_t> values(g.params.size());
      for (size_t p = 0; p < g.params.size(); ++p)
        values[p] = expr::integerValue(g.params[p].type,
                                       p < pv.bits.size() ? pv.bits[p] : g.params[p].defaultBits);
      Expected<int64_t> v = expr::evaluate(*prog, values);
      if (!v || *v < 1) continue;
      most = std::max(most, uint64_t(*v));
      any = true;
    }
    if (any) g.slots[fe.arg].size = most;
  }
}


ScalarType slotType(const Graph &g, uint32_t slot) {
  std::vector<ScalarType> types = slotKernelTypes(g, slot);
  if (!types.empty()) return types[0];
  return slot < g.slots.size() && g.slots[slot].size % 4 == 0 ? ScalarType::F32 : ScalarType::U8;
}

uint64_t hostMemoryBytes() {
  const long pages = sysconf(_SC_PHYS_PAGES), pageSize = sysconf(_SC_PAGE_SIZE);
  return pages > 0 && pageSize > 0 ? uint64_t(pages) * uint64_t(pageSize) : 0;
}

Expected<uint32_t> findSlotArg(const Graph &g, const std::string &name, const std::string &option) {
  uint32_t s = g.findSlot(name);
  if (s != kNone) return s;
  std::string known;
  for (const Slot &sl : g.slots) known += (known.empty() ? "" : ", ") + sl.name;
  return makeError(option + ": graph has no slot '" + name + "' (slots: " + known + ")");
}

Expected<rt::ParamValues> parseParams(const Graph &g, const CommonOptions &o) {
  rt::ParamValues v;
  for (const std::string &p : o.params) {
    size_t eq = p.find('=');
    if (eq == std::string::npos)
      return makeError("--param " + p + ": expected name=value");
    Error e = v.set(g, p.substr(0, eq), p.substr(eq + 1));
    if (e) return e.withContext("--param " + p);
  }
  return v;
}

Expected<Bound> bindContents(rt::Device &dev, const Graph &g,
                             const std::vector<std::vector<uint8_t>> &contents) {
  Bound b;
  b.buffers.resize(g.slots.size());
  b.table.slots.resize(g.slots.size());
  b.table.overrideInternal = true; // only slots with contents are bound at all
  std::vector<uint64_t> bytes = slotBytes(g);
  for (uint32_t s = 0; s < g.slots.size(); ++s) {
    const bool external = g.slots[s].init == SlotInit::External;
    if (!external && contents[s].empty()) continue;
    const uint64_t size = std::max<uint64_t>(bytes[s], 1);
    CGRAPH_RETURN_IF_ERROR(rt::checkSlotFits(dev.info(), g.slots[s].name, size));
    Expected<std::unique_ptr<rt::Buffer>> buf = makeError("");
    try {
      buf = dev.allocate(size, std::max<uint32_t>(g.slots[s].alignment, 64));
    } catch (const std::bad_alloc &) {
      buf = makeError("out of memory");
    }
    if (!buf) return buf.error().withContext(slotLabel(g, s) + ": allocating " + std::to_string(size) + " bytes");
    b.buffers[s] = std::move(*buf);
    b.table.slots[s] = rt::Binding{b.buffers[s].get(), 0, 0};
  }
  CGRAPH_RETURN_IF_ERROR(uploadContents(dev, b, contents));
  return b;
}

Error uploadContents(rt::Device &dev, Bound &b, const std::vector<std::vector<uint8_t>> &contents) {
  for (size_t s = 0; s < b.buffers.size(); ++s) {
    if (!b.buffers[s] || contents[s].empty()) continue;
    Error e = dev.write(*b.buffers[s], 0, contents[s].data(), contents[s].size());
    if (e) return e.withContext("uploading slot #" + std::to_string(s));
  }
  return Error::success();
}

Expected<std::vector<uint8_t>> readSlot(rt::Device &dev, Bound &b, uint32_t slot, uint64_t offset,
                                        uint64_t bytes) {
  if (slot >= b.buffers.size() || !b.buffers[slot])
    return makeError("slot #" + std::to_string(slot) + " is not bound");
  std::vector<uint8_t> out(static_cast<size_t>(bytes));
  Error e = dev.read(*b.buffers[slot], offset, out.data(), bytes);
  if (e) return e;
  return out;
}

nlohmann::json deviceJson(const rt::DeviceInfo &d) {
  nlohmann::json forms = nlohmann::json::array();
  for (FormKind k : d.caps.kernelForms) forms.push_back(formKindName(k));
  return {{"backend", d.backend},
          {"name", d.name},
          {"vendor", d.vendor},
          {"driver_version", d.driverVersion},
          {"replay", d.replay},
          {"update", d.caps.nodeUpdate ? d.update : std::string("none")},
          {"capabilities",
           {{"native_command_buffer", d.caps.nativeCommandBuffer},
            {"rebind_without_rerecord", d.caps.rebindWithoutRerecord},
            {"updatable_params", d.caps.updatableParams},
            {"in_order", d.caps.inOrder},
            {"concurrent_nodes", d.caps.concurrentNodes},
            {"profiling", d.caps.profiling},
            {"profiling_replay", d.caps.profilingReplay},
            {"host_pointer_buffers", d.caps.hostPointerBuffers},
            {"kernel_forms", forms},
            {"compute_units", d.caps.computeUnits},
            {"global_memory_bytes", d.caps.globalMemoryBytes},
            {"max_work_group_size", d.caps.maxWorkGroupSize}}}};
}


std::string memoryLine(const rt::Executable &exe) {
  const MemoryPlan &p = exe.memoryPlan();
  std::string line = "memory: " + std::to_string(exe.ownedBytes()) + " bytes runtime-owned; plan: ";
  if (p.slots == 0) return line + "none (" + p.skipped + ")";
  return line + std::to_string(p.slots) + " transient slots share one arena, " +
         std::to_string(p.bytesBefore) + " -> " + std::to_string(p.bytesAfter) + " bytes";
}

nlohmann::json memoryJson(const rt::Executable &exe) {
  const MemoryPlan &p = exe.memoryPlan();
  nlohmann::json j = {{"owned_bytes", exe.ownedBytes()},
                      {"plan_slots", p.slots},
                      {"plan_bytes_before", p.bytesBefore},
                      {"plan_bytes_after", p.bytesAfter}};
  if (!p.skipped.empty()) j["plan_skipped"] = p.skipped;
  return j;
}

} // namespace cgraph::cgrun
