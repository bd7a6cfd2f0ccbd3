// The recording fake of the Level Zero driver table (ze_fake.h).
#include "ze_fake.h"

#include "cgraph/kernel/spirv.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>

namespace cgraph::level_zero::fake {

namespace {

enum class Kind { Driver, Device, Context, Queue, List, Pool, Event, Fence, Module, Kernel, Log };
const char *kindName(Kind k) {
  switch (k) {
  case Kind::Driver:
    return "driver";
  case Kind::Device:
    return "device";
  case Kind::Context:
    return "ctx";
  case Kind::Queue:
    return "queue";
  case Kind::List:
    return "list";
  case Kind::Pool:
    return "pool";
  case Kind::Event:
    return "ev";
  case Kind::Fence:
    return "fence";
  case Kind::Module:
    return "module";
  case Kind::Kernel:
    return "kernel";
  case Kind::Log:
    return "log";
  }
  return "?";
}

struct Obj {
  Kind kind = Kind::Driver;
  uint32_t id = 0;
  bool alive = true;
  virtual ~Obj() = default;
  Obj() = default;
  explicit Obj(Kind k) : kind(k) {}
};

struct Event;

struct Cmd {
  enum Type { Launch, Copy, Fill, Barrier, Reset } type = Barrier;
  std::string kernel;        // Launch
  char *dst = nullptr;       // Copy, Fill
  const char *src = nullptr; // Copy
  size_t bytes = 0;          // Copy, Fill (Copy region: rows of `bytes`)
  size_t rows = 1, slices = 1, srcPitch = 0, dstPitch = 0, srcSlice = 0,
         dstSlice = 0;          // region copies
  std::vector<uint8_t> pattern; // Fill
  Event *signal = nullptr;
  std::vector<Event *> waits;
  Event *reset = nullptr; // Reset
};

struct Pool : Obj {
  Pool() : Obj(Kind::Pool) {}
  uint32_t count = 0;
  bool timestamps = false;
  std::vector<bool> used;
};

struct Event : Obj {
  Event() : Obj(Kind::Event) {}
  Pool *pool = nullptr;
  uint32_t index = 0;
  bool signalled = false;
  uint64_t start = 0, end = 0;
};

struct List : Obj {
  List() : Obj(Kind::List) {}
  bool immediate = false;
  bool closed = false;
  std::vector<Cmd> cmds;
};

struct Fence : Obj {
  Fence() : Obj(Kind::Fence) {}
  bool submitted = false;
};

struct Module : Obj {
  Module() : Obj(Kind::Module) {}
  std::vector<Kernel> kernels;
  std::vector<uint8_t> spirv;
};

// The fake's "native binary": a tag, then the SPIR-V it was built from.
const char kNativeTag[8] = {'F', 'A', 'K', 'E', 'Z', 'E', '1', 0};

struct KernelObj : Obj {
  KernelObj() : Obj(Kind::Kernel) {}
  std::string name;
  std::vector<KernelParam> params;
  std::vector<bool> set;
  std::vector<std::string> argText;
  uint32_t group[3] = {0, 0, 0};
  uint32_t offset[3] = {0, 0, 0};
};

struct Log : Obj {
  Log() : Obj(Kind::Log) {}
  std::string text;
};

struct Alloc {
  size_t size = 0;
  uint32_t id = 0;
  bool alive = true;
  std::unique_ptr<uint8_t[]> bytes;
};

struct State {
  std::mutex mutex;
  FakeConfig cfg;
  ZeDriverTable table;
  std::vector<std::unique_ptr<Obj>> objects; // never freed before the next install()
  std::map<const void *, Obj *> handles;
  std::map<uint32_t, uint32_t> nextId; // per Kind
  std::map<uintptr_t, Alloc> allocs;   // by base address
  uint32_t nextAlloc = 0;
  std::vector<std::string> calls, violations;
  std::map<std::string, uint64_t> kernelRuns;
  uint64_t listExecutions = 0;
  uint64_t clock = 1000;
  bool failed = false;
  bool initialized = false;
};

State &st() {
  static State s;
  return s;
}

template <class T> T *make(Kind k) {
  State &s = st();
  auto o = std::make_unique<T>();
  o->kind = k;
  o->id = s.nextId[uint32_t(k)]++;
  T *p = o.get();
  s.handles[p] = p;
  s.objects.push_back(std::move(o));
  return p;
}

std::string name(const void *h) {
  auto it = st().handles.find(h);
  if (!h) return "null";
  if (it == st().handles.end()) return "unknown-handle";
  return std::string(kindName(it->second->kind)) + "#" + std::to_string(it->second->id);
}

void violation(const std::string &what) {
  st().violations.push_back(what);
}

// The live object `h` of kind `k`, or null (a violation recorded, naming `call`).
template <class T = Obj> T *get(const void *h, Kind k, const char *call) {
  auto it = st().handles.find(h);
  if (!h || it == st().handles.end() || it->second->kind != k) {
    violation(std::string(call) + ": " + (h ? "not a " : "null ") + kindName(k) + " handle");
    return nullptr;
  }
  if (!it->second->alive) {
    violation(std::string(call) + ": " + name(h) + " used after it was destroyed");
    return nullptr;
  }
  return static_cast<T *>(it->second);
}

bool injected(const char *call) {
  State &s = st();
  if (!s.failed && s.cfg.failCall == call) {
    s.failed = true;
    s.calls.push_back(std::string(call) + " -> injected " + zeResultName(s.cfg.failResult));
    return true;
  }
  return false;
}

bool stypeOk(ze_structure_type_t got, ze_structure_type_t want, const char *call) {
  if (got == want) return true;
  violation(std::string(call) + ": descriptor stype " + std::to_string(int(got)) + ", expected " +
            std::to_string(int(want)));
  return false;
}

// The live allocation holding [p, p + n), or null.
Alloc *findAlloc(const void *p, size_t n, uintptr_t *base = nullptr) {
  State &s = st();
  const uintptr_t a = reinterpret_cast<uintptr_t>(p);
  auto it = s.allocs.upper_bound(a);
  if (it == s.allocs.begin()) return nullptr;
  --it;
  if (!it->second.alive || a + n > it->first + it->second.size || a < it->first) return nullptr;
  if (base) *base = it->first;
  return &it->second;
}

std::string ptrName(const void *p) {
  uintptr_t base = 0;
  Alloc *a = findAlloc(p, 0, &base);
  if (!a) return "host";
  return "mem#" + std::to_string(a->id) + "+" +
         std::to_string(reinterpret_cast<uintptr_t>(p) - base);
}

bool deviceRange(const void *p, size_t n, const char *call, const char *what) {
  if (findAlloc(p, n)) return true;
  violation(std::string(call) + ": " + what + " [" + ptrName(p) + ", +" + std::to_string(n) +
            ") is not inside a live device allocation");
  return false;
}

std::string eventList(Event *signal, uint32_t n, ze_event_handle_t *w) {
  std::string s = ", signal " + name(signal) + ", wait [";
  for (uint32_t i = 0; i < n; ++i)
    s += (i ? " " : "") + name(w[i]);
  return s + "]";
}

// Checks the list and events of an append; fills cmd.signal and cmd.waits.
bool appendCommon(const char *call, ze_command_list_handle_t hList, ze_event_handle_t sig,
                  uint32_t n, ze_event_handle_t *w, List *&list, Cmd &cmd) {
  list = get<List>(hList, Kind::List, call);
  if (!list) return false;
  if (list->closed) {
    violation(std::string(call) + ": " + name(hList) + " is closed");
    return false;
  }
  if (n && !w) {
    violation(std::string(call) + ": numWaitEvents without phWaitEvents");
    return false;
  }
  if (sig) {
    cmd.signal = get<Event>(sig, Kind::Event, call);
    if (!cmd.signal) return false;
  }
  for (uint32_t i = 0; i < n; ++i) {
    Event *e = get<Event>(w[i], Kind::Event, call);
    if (!e) return false;
    cmd.waits.push_back(e);
  }
  return true;
}

void runCmd(const Cmd &c, const std::string &where) {
  State &s = st();
  for (Event *e : c.waits)
    if (!e->signalled)
      violation(where + " waits for " + name(e) +
                ", which nothing signalled before it (it would hang)");
  switch (c.type) {
  case Cmd::Launch:
    ++s.kernelRuns[c.kernel];
    break;
  case Cmd::Copy:
    for (size_t z = 0; z < c.slices; ++z)
      for (size_t y = 0; y < c.rows; ++y)
        std::memmove(c.dst + z * c.dstSlice + y * c.dstPitch,
                     c.src + z * c.srcSlice + y * c.srcPitch, c.bytes);
    break;
  case Cmd::Fill:
    for (size_t i = 0; i < c.bytes; ++i)
      c.dst[i] = char(c.pattern[i % c.pattern.size()]);
    break;
  case Cmd::Reset:
    c.reset->signalled = false;
    break;
  case Cmd::Barrier:
    break;
  }
  if (c.signal) {
    if (c.signal->signalled)
      violation(where + " signals " + name(c.signal) + ", already signalled (no reset)");
    c.signal->signalled = true;
    c.signal->start = s.clock;
    s.clock += 100;
    c.signal->end = s.clock;
  }
}

ze_result_t finishAppend(List *list, Cmd cmd, const std::string &line) {
  st().calls.push_back(line);
  if (list->immediate)
    runCmd(cmd, name(list) + " (immediate) " + line.substr(0, line.find('(')));
  else
    list->cmds.push_back(std::move(cmd));
  return ZE_RESULT_SUCCESS;
}

#define LOCK std::lock_guard<std::mutex> lock_(st().mutex)
#define INJECT(call)                                                                               \
  if (injected(call)) return st().cfg.failResult

// ---- driver, device ----------------------------------------------------------------

ze_result_t fInit(ze_init_flags_t flags) {
  LOCK;
  st().calls.push_back("zeInit(" + std::to_string(flags) + ")");
  if (st().cfg.initResult == ZE_RESULT_SUCCESS) st().initialized = true;
  return st().cfg.initResult;
}

Obj *gDriver = nullptr;
std::vector<Obj *> gDevices;

ze_result_t fDriverGet(uint32_t *count, ze_driver_handle_t *drivers) {
  LOCK;
  if (!st().initialized) return ZE_RESULT_ERROR_UNINITIALIZED;
  if (!count) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (drivers && *count >= 1) drivers[0] = reinterpret_cast<ze_driver_handle_t>(gDriver);
  *count = 1;
  return ZE_RESULT_SUCCESS;
}

ze_result_t fDriverGetProperties(ze_driver_handle_t d, ze_driver_properties_t *p) {
  LOCK;
  if (!get(d, Kind::Driver, "zeDriverGetProperties") || !p)
    return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!stypeOk(p->stype, ZE_STRUCTURE_TYPE_DRIVER_PROPERTIES, "zeDriverGetProperties"))
    return ZE_RESULT_ERROR_INVALID_ENUMERATION;
  p->driverVersion = 0x01030000;
  return ZE_RESULT_SUCCESS;
}

ze_result_t fDriverGetApiVersion(ze_driver_handle_t d, ze_api_version_t *v) {
  LOCK;
  if (!get(d, Kind::Driver, "zeDriverGetApiVersion") || !v)
    return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  *v = ZE_API_VERSION_1_4;
  return ZE_RESULT_SUCCESS;
}

ze_result_t fDriverGetExtensionProperties(ze_driver_handle_t d, uint32_t *count,
                                          ze_driver_extension_properties_t *p) {
  LOCK;
  if (!get(d, Kind::Driver, "zeDriverGetExtensionProperties") || !count)
    return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  std::vector<std::string> names = {"ZE_extension_float_atomics"};
  if (st().cfg.globalOffsetExtension) names.push_back(ZE_GLOBAL_OFFSET_EXP_NAME);
  if (st().cfg.mutableCommandListExtension) names.push_back("ZE_experimental_mutable_command_list");
  if (p)
    for (uint32_t i = 0; i < std::min<uint32_t>(*count, uint32_t(names.size())); ++i) {
      std::snprintf(p[i].name, sizeof p[i].name, "%s", names[i].c_str());
      p[i].version = 0x10000;
    }
  *count = uint32_t(names.size());
  return ZE_RESULT_SUCCESS;
}

ze_result_t fDeviceGet(ze_driver_handle_t d, uint32_t *count, ze_device_handle_t *devs) {
  LOCK;
  if (!get(d, Kind::Driver, "zeDeviceGet") || !count) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (devs)
    for (uint32_t i = 0; i < std::min<uint32_t>(*count, uint32_t(gDevices.size())); ++i)
      devs[i] = reinterpret_cast<ze_device_handle_t>(gDevices[i]);
  *count = uint32_t(gDevices.size());
  return ZE_RESULT_SUCCESS;
}

ze_result_t fDeviceGetProperties(ze_device_handle_t d, ze_device_properties_t *p) {
  LOCK;
  Obj *o = get(d, Kind::Device, "zeDeviceGetProperties");
  if (!o || !p) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!stypeOk(p->stype, ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES, "zeDeviceGetProperties"))
    return ZE_RESULT_ERROR_INVALID_ENUMERATION;
  p->type = ZE_DEVICE_TYPE_GPU;
  p->vendorId = 0x8086;
  p->deviceId = 0x0bd5;
  p->numSlices = 1;
  p->numSubslicesPerSlice = 4;
  p->numEUsPerSubslice = 8;
  p->timerResolution = 2; // ns per tick
  p->kernelTimestampValidBits = 32;
  std::snprintf(p->name, sizeof p->name, "Fake Level Zero GPU %u", o->id);
  return ZE_RESULT_SUCCESS;
}

ze_result_t fDeviceGetComputeProperties(ze_device_handle_t d, ze_device_compute_properties_t *p) {
  LOCK;
  if (!get(d, Kind::Device, "zeDeviceGetComputeProperties") || !p)
    return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!stypeOk(p->stype, ZE_STRUCTURE_TYPE_DEVICE_COMPUTE_PROPERTIES,
               "zeDeviceGetComputeProperties"))
    return ZE_RESULT_ERROR_INVALID_ENUMERATION;
  const uint32_t g = st().cfg.maxGroupSize;
  p->maxTotalGroupSize = g;
  p->maxGroupSizeX = g;
  p->maxGroupSizeY = g;
  p->maxGroupSizeZ = std::max(1u, g / 4);
  p->maxGroupCountX = p->maxGroupCountY = p->maxGroupCountZ = 0xFFFFFFFFu;
  p->maxSharedLocalMemory = 65536;
  return ZE_RESULT_SUCCESS;
}

ze_result_t fDeviceGetModuleProperties(ze_device_handle_t d, ze_device_module_properties_t *p) {
  LOCK;
  if (!get(d, Kind::Device, "zeDeviceGetModuleProperties") || !p)
    return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!stypeOk(p->stype, ZE_STRUCTURE_TYPE_DEVICE_MODULE_PROPERTIES, "zeDeviceGetModuleProperties"))
    return ZE_RESULT_ERROR_INVALID_ENUMERATION;
  p->spirvVersionSupported = ZE_MAKE_VERSION(1, 2);
  return ZE_RESULT_SUCCESS;
}

ze_result_t fDeviceGetMemoryProperties(ze_device_handle_t d, uint32_t *count,
                                       ze_device_memory_properties_t *p) {
  LOCK;
  if (!get(d, Kind::Device, "zeDeviceGetMemoryProperties") || !count)
    return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (p && *count >= 1) {
    if (!stypeOk(p[0].stype, ZE_STRUCTURE_TYPE_DEVICE_MEMORY_PROPERTIES,
                 "zeDeviceGetMemoryProperties"))
      return ZE_RESULT_ERROR_INVALID_ENUMERATION;
    p[0].totalSize = uint64_t(1) << 30;
  }
  *count = 1;
  return ZE_RESULT_SUCCESS;
}

// Group 0 copies only; group 1 computes (the backend must find it).
ze_result_t fDeviceGetCommandQueueGroupProperties(ze_device_handle_t d, uint32_t *count,
                                                  ze_command_queue_group_properties_t *p) {
  LOCK;
  if (!get(d, Kind::Device, "zeDeviceGetCommandQueueGroupProperties") || !count)
    return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (p)
    for (uint32_t i = 0; i < std::min<uint32_t>(*count, 2); ++i) {
      if (!stypeOk(p[i].stype, ZE_STRUCTURE_TYPE_COMMAND_QUEUE_GROUP_PROPERTIES,
                   "zeDeviceGetCommandQueueGroupProperties"))
        return ZE_RESULT_ERROR_INVALID_ENUMERATION;
      p[i].flags = i == 0 ? ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COPY
                          : ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COMPUTE |
                                ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COPY;
      p[i].maxMemoryFillPatternSize = i == 0 ? 4 : st().cfg.maxFillPatternSize;
      p[i].numQueues = 1;
    }
  *count = 2;
  return ZE_RESULT_SUCCESS;
}

// ---- context, queue, lists -----------------------------------------------------------

ze_result_t fContextCreate(ze_driver_handle_t d, const ze_context_desc_t *desc,
                           ze_context_handle_t *out) {
  LOCK;
  INJECT("zeContextCreate");
  if (!get(d, Kind::Driver, "zeContextCreate") || !desc || !out)
    return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!stypeOk(desc->stype, ZE_STRUCTURE_TYPE_CONTEXT_DESC, "zeContextCreate"))
    return ZE_RESULT_ERROR_INVALID_ENUMERATION;
  *out = reinterpret_cast<ze_context_handle_t>(make<Obj>(Kind::Context));
  st().calls.push_back("zeContextCreate -> " + name(*out));
  return ZE_RESULT_SUCCESS;
}

ze_result_t destroy(const void *h, Kind k, const char *call) {
  Obj *o = get(h, k, call);
  if (!o) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  o->alive = false;
  st().calls.push_back(std::string(call) + "(" + name(h) + ")");
  return ZE_RESULT_SUCCESS;
}

ze_result_t fContextDestroy(ze_context_handle_t h) {
  LOCK;
  return destroy(h, Kind::Context, "zeContextDestroy");
}

bool computeOrdinal(uint32_t ordinal, const char *call) {
  if (ordinal == 1) return true;
  violation(std::string(call) + ": ordinal " + std::to_string(ordinal) +
            " is not a compute queue group");
  return false;
}

ze_result_t fCommandQueueCreate(ze_context_handle_t c, ze_device_handle_t d,
                                const ze_command_queue_desc_t *desc,
                                ze_command_queue_handle_t *out) {
  LOCK;
  INJECT("zeCommandQueueCreate");
  const char *call = "zeCommandQueueCreate";
  if (!get(c, Kind::Context, call) || !get(d, Kind::Device, call) || !desc || !out)
    return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!stypeOk(desc->stype, ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC, call))
    return ZE_RESULT_ERROR_INVALID_ENUMERATION;
  if (!computeOrdinal(desc->ordinal, call)) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  *out = reinterpret_cast<ze_command_queue_handle_t>(make<Obj>(Kind::Queue));
  st().calls.push_back(std::string(call) + "(ordinal " + std::to_string(desc->ordinal) + ", " +
                       (desc->mode == ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS ? "sync" : "async") +
                       ") -> " + name(*out));
  return ZE_RESULT_SUCCESS;
}

ze_result_t fCommandQueueDestroy(ze_command_queue_handle_t h) {
  LOCK;
  return destroy(h, Kind::Queue, "zeCommandQueueDestroy");
}

ze_result_t fCommandQueueExecuteCommandLists(ze_command_queue_handle_t q, uint32_t n,
                                             ze_command_list_handle_t *lists, ze_fence_handle_t f) {
  LOCK;
  INJECT("zeCommandQueueExecuteCommandLists");
  const char *call = "zeCommandQueueExecuteCommandLists";
  if (!get(q, Kind::Queue, call) || !n || !lists) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  Fence *fence = nullptr;
  if (f) {
    fence = get<Fence>(f, Kind::Fence, call);
    if (!fence) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    if (fence->submitted)
      violation(std::string(call) + ": " + name(f) + " reused without zeFenceReset");
  }
  std::string line = std::string(call) + "([";
  for (uint32_t i = 0; i < n; ++i)
    line += (i ? " " : "") + name(lists[i]);
  st().calls.push_back(line + "], " + name(f) + ")");
  for (uint32_t i = 0; i < n; ++i) {
    List *l = get<List>(lists[i], Kind::List, call);
    if (!l) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    if (l->immediate || !l->closed) {
      violation(std::string(call) + ": " + name(l) +
                (l->immediate ? " is immediate" : " is not closed"));
      return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    }
    ++st().listExecutions;
    for (size_t c = 0; c < l->cmds.size(); ++c)
      runCmd(l->cmds[c], name(l) + " command " + std::to_string(c));
  }
  if (fence) fence->submitted = true;
  return ZE_RESULT_SUCCESS;
}

ze_result_t fCommandQueueSynchronize(ze_command_queue_handle_t q, uint64_t) {
  LOCK;
  if (!get(q, Kind::Queue, "zeCommandQueueSynchronize")) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  st().calls.push_back("zeCommandQueueSynchronize(" + name(q) + ")");
  return ZE_RESULT_SUCCESS;
}

ze_result_t fCommandListCreate(ze_context_handle_t c, ze_device_handle_t d,
                               const ze_command_list_desc_t *desc, ze_command_list_handle_t *out) {
  LOCK;
  INJECT("zeCommandListCreate");
  const char *call = "zeCommandListCreate";
  if (!get(c, Kind::Context, call) || !get(d, Kind::Device, call) || !desc || !out)
    return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!stypeOk(desc->stype, ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC, call))
    return ZE_RESULT_ERROR_INVALID_ENUMERATION;
  if (!computeOrdinal(desc->commandQueueGroupOrdinal, call))
    return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  *out = reinterpret_cast<ze_command_list_handle_t>(make<List>(Kind::List));
  st().calls.push_back(std::string(call) + " -> " + name(*out));
  return ZE_RESULT_SUCCESS;
}

ze_result_t fCommandListCreateImmediate(ze_context_handle_t c, ze_device_handle_t d,
                                        const ze_command_queue_desc_t *desc,
                                        ze_command_list_handle_t *out) {
  LOCK;
  const char *call = "zeCommandListCreateImmediate";
  if (!get(c, Kind::Context, call) || !get(d, Kind::Device, call) || !desc || !out)
    return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!stypeOk(desc->stype, ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC, call))
    return ZE_RESULT_ERROR_INVALID_ENUMERATION;
  if (!computeOrdinal(desc->ordinal, call)) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  if (desc->mode != ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS)
    violation(std::string(call) +
              ": the fake runs immediate lists synchronously; asked for another mode");
  List *l = make<List>(Kind::List);
  l->immediate = true;
  *out = reinterpret_cast<ze_command_list_handle_t>(l);
  st().calls.push_back(std::string(call) + "(sync) -> " + name(*out));
  return ZE_RESULT_SUCCESS;
}

ze_result_t fCommandListDestroy(ze_command_list_handle_t h) {
  LOCK;
  return destroy(h, Kind::List, "zeCommandListDestroy");
}

ze_result_t fCommandListClose(ze_command_list_handle_t h) {
  LOCK;
  List *l = get<List>(h, Kind::List, "zeCommandListClose");
  if (!l) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (l->closed || l->immediate)
    violation("zeCommandListClose: " + name(h) +
              (l->immediate ? " is immediate" : " closed twice"));
  l->closed = true;
  st().calls.push_back("zeCommandListClose(" + name(h) + ")");
  return ZE_RESULT_SUCCESS;
}

ze_result_t fCommandListAppendBarrier(ze_command_list_handle_t h, ze_event_handle_t sig, uint32_t n,
                                      ze_event_handle_t *w) {
  LOCK;
  const char *call = "zeCommandListAppendBarrier";
  List *list = nullptr;
  Cmd cmd;
  cmd.type = Cmd::Barrier;
  if (!appendCommon(call, h, sig, n, w, list, cmd)) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  return finishAppend(list, std::move(cmd),
                      std::string(call) + "(" + name(h) + eventList(cmd.signal, n, w) + ")");
}

ze_result_t fCommandListAppendEventReset(ze_command_list_handle_t h, ze_event_handle_t ev) {
  LOCK;
  const char *call = "zeCommandListAppendEventReset";
  List *list = nullptr;
  Cmd cmd;
  cmd.type = Cmd::Reset;
  if (!appendCommon(call, h, nullptr, 0, nullptr, list, cmd))
    return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  cmd.reset = get<Event>(ev, Kind::Event, call);
  if (!cmd.reset) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  return finishAppend(list, std::move(cmd),
                      std::string(call) + "(" + name(h) + ", " + name(ev) + ")");
}

ze_result_t fCommandListAppendMemoryCopy(ze_command_list_handle_t h, void *dst, const void *src,
                                         size_t size, ze_event_handle_t sig, uint32_t n,
                                         ze_event_handle_t *w) {
  LOCK;
  INJECT("zeCommandListAppendMemoryCopy");
  const char *call = "zeCommandListAppendMemoryCopy";
  List *list = nullptr;
  Cmd cmd;
  cmd.type = Cmd::Copy;
  if (!appendCommon(call, h, sig, n, w, list, cmd)) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  if (!dst || !src) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  // Recorded lists copy between device allocations only; the immediate list also
  // copies to or from host memory (one side must be on the device).
  const bool d = findAlloc(dst, size) != nullptr, s = findAlloc(src, size) != nullptr;
  if (!list->immediate
          ? !(deviceRange(dst, size, call, "destination") & deviceRange(src, size, call, "source"))
          : !(d || s)) {
    if (list->immediate) violation(std::string(call) + ": neither side is device memory");
    return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  }
  cmd.dst = static_cast<char *>(dst);
  cmd.src = static_cast<const char *>(src);
  cmd.bytes = size;
  return finishAppend(list, std::move(cmd),
                      std::string(call) + "(" + name(h) + ", " + ptrName(dst) + " <- " +
                          ptrName(src) + ", " + std::to_string(size) + eventList(cmd.signal, n, w) +
                          ")");
}

ze_result_t fCommandListAppendMemoryCopyRegion(ze_command_list_handle_t h, void *dst,
                                               const ze_copy_region_t *dr, uint32_t dp,
                                               uint32_t dsp, const void *src,
                                               const ze_copy_region_t *sr, uint32_t sp,
                                               uint32_t ssp, ze_event_handle_t sig, uint32_t n,
                                               ze_event_handle_t *w) {
  LOCK;
  const char *call = "zeCommandListAppendMemoryCopyRegion";
  List *list = nullptr;
  Cmd cmd;
  cmd.type = Cmd::Copy;
  if (!appendCommon(call, h, sig, n, w, list, cmd)) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  if (!dst || !src || !dr || !sr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (dr->width != sr->width || dr->height != sr->height || dr->depth != sr->depth || !dr->width ||
      !dr->height || !dr->depth) {
    violation(std::string(call) + ": source and destination regions differ or are empty");
    return ZE_RESULT_ERROR_INVALID_SIZE;
  }
  if (dp < dr->width || sp < sr->width ||
      (dr->depth > 1 && (dsp < dp * dr->height || ssp < sp * sr->height))) {
    violation(std::string(call) + ": a pitch is smaller than the region");
    return ZE_RESULT_ERROR_INVALID_SIZE;
  }
  auto extent = [](const ze_copy_region_t &r, uint32_t pitch, uint32_t slice) {
    return size_t(r.originZ + r.depth - 1) * slice + size_t(r.originY + r.height - 1) * pitch +
           r.originX + r.width;
  };
  if (!(deviceRange(dst, extent(*dr, dp, dsp), call, "destination region") &
        deviceRange(src, extent(*sr, sp, ssp), call, "source region")))
    return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  cmd.dst =
      static_cast<char *>(dst) + size_t(dr->originZ) * dsp + size_t(dr->originY) * dp + dr->originX;
  cmd.src = static_cast<const char *>(src) + size_t(sr->originZ) * ssp + size_t(sr->originY) * sp +
            sr->originX;
  cmd.bytes = dr->width;
  cmd.rows = dr->height;
  cmd.slices = dr->depth;
  cmd.dstPitch = dp;
  cmd.srcPitch = sp;
  cmd.dstSlice = dsp;
  cmd.srcSlice = ssp;
  std::ostringstream line;
  line << call << "(" << name(h) << ", " << ptrName(dst) << " <- " << ptrName(src) << ", "
       << dr->width << "x" << dr->height << "x" << dr->depth << ", pitch " << dp << "/" << sp
       << eventList(cmd.signal, n, w) << ")";
  return finishAppend(list, std::move(cmd), line.str());
}

ze_result_t fCommandListAppendMemoryFill(ze_command_list_handle_t h, void *ptr, const void *pattern,
                                         size_t psize, size_t size, ze_event_handle_t sig,
                                         uint32_t n, ze_event_handle_t *w) {
  LOCK;
  const char *call = "zeCommandListAppendMemoryFill";
  List *list = nullptr;
  Cmd cmd;
  cmd.type = Cmd::Fill;
  if (!appendCommon(call, h, sig, n, w, list, cmd)) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  if (!ptr || !pattern) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (!psize || (psize & (psize - 1)) || psize > st().cfg.maxFillPatternSize || size % psize) {
    violation(std::string(call) + ": pattern of " + std::to_string(psize) + " bytes over " +
              std::to_string(size) + " bytes (must be a power of two <= " +
              std::to_string(st().cfg.maxFillPatternSize) + " that divides the size)");
    return ZE_RESULT_ERROR_INVALID_SIZE;
  }
  if (!deviceRange(ptr, size, call, "destination")) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  cmd.dst = static_cast<char *>(ptr);
  cmd.bytes = size;
  cmd.pattern.assign(static_cast<const uint8_t *>(pattern),
                     static_cast<const uint8_t *>(pattern) + psize);
  return finishAppend(list, std::move(cmd),
                      std::string(call) + "(" + name(h) + ", " + ptrName(ptr) + ", pattern " +
                          std::to_string(psize) + ", " + std::to_string(size) +
                          eventList(cmd.signal, n, w) + ")");
}

ze_result_t fCommandListAppendLaunchKernel(ze_command_list_handle_t h, ze_kernel_handle_t k,
                                           const ze_group_count_t *g, ze_event_handle_t sig,
                                           uint32_t n, ze_event_handle_t *w) {
  LOCK;
  INJECT("zeCommandListAppendLaunchKernel");
  const char *call = "zeCommandListAppendLaunchKernel";
  List *list = nullptr;
  Cmd cmd;
  cmd.type = Cmd::Launch;
  if (!appendCommon(call, h, sig, n, w, list, cmd)) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  KernelObj *kern = get<KernelObj>(k, Kind::Kernel, call);
  if (!kern || !g) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  for (size_t i = 0; i < kern->set.size(); ++i)
    if (!kern->set[i]) {
      violation(std::string(call) + ": " + kern->name + ": argument " + std::to_string(i) +
                " was never set");
      return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    }
  if (!kern->group[0]) {
    violation(std::string(call) + ": " + kern->name + ": no group size was set");
    return ZE_RESULT_ERROR_INVALID_GROUP_SIZE_DIMENSION;
  }
  if (!g->groupCountX || !g->groupCountY || !g->groupCountZ) {
    violation(std::string(call) + ": " + kern->name + ": a group count is zero");
    return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  }
  cmd.kernel = kern->name;
  std::ostringstream line;
  line << call << "(" << name(h) << ", " << kern->name << ", groups " << g->groupCountX << "x"
       << g->groupCountY << "x" << g->groupCountZ << " of " << kern->group[0] << "x"
       << kern->group[1] << "x" << kern->group[2];
  if (kern->offset[0] || kern->offset[1] || kern->offset[2])
    line << ", offset " << kern->offset[0] << "," << kern->offset[1] << "," << kern->offset[2];
  line << ", args [";
  for (size_t i = 0; i < kern->argText.size(); ++i)
    line << (i ? " " : "") << kern->argText[i];
  line << "]" << eventList(cmd.signal, n, w) << ")";
  return finishAppend(list, std::move(cmd), line.str());
}

// ---- events, fences ------------------------------------------------------------------

ze_result_t fEventPoolCreate(ze_context_handle_t c, const ze_event_pool_desc_t *desc, uint32_t nd,
                             ze_device_handle_t *devs, ze_event_pool_handle_t *out) {
  LOCK;
  const char *call = "zeEventPoolCreate";
  if (!get(c, Kind::Context, call) || !desc || !out) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!stypeOk(desc->stype, ZE_STRUCTURE_TYPE_EVENT_POOL_DESC, call))
    return ZE_RESULT_ERROR_INVALID_ENUMERATION;
  if (!desc->count) {
    violation(std::string(call) + ": count 0");
    return ZE_RESULT_ERROR_INVALID_SIZE;
  }
  for (uint32_t i = 0; i < nd; ++i)
    if (!get(devs[i], Kind::Device, call)) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  Pool *p = make<Pool>(Kind::Pool);
  p->count = desc->count;
  p->timestamps = (desc->flags & ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP) != 0;
  p->used.assign(desc->count, false);
  *out = reinterpret_cast<ze_event_pool_handle_t>(p);
  st().calls.push_back(std::string(call) + "(" + std::to_string(desc->count) +
                       (p->timestamps ? ", timestamps" : "") + ") -> " + name(p));
  return ZE_RESULT_SUCCESS;
}

ze_result_t fEventPoolDestroy(ze_event_pool_handle_t h) {
  LOCK;
  return destroy(h, Kind::Pool, "zeEventPoolDestroy");
}

ze_result_t fEventCreate(ze_event_pool_handle_t hp, const ze_event_desc_t *desc,
                         ze_event_handle_t *out) {
  LOCK;
  const char *call = "zeEventCreate";
  Pool *p = get<Pool>(hp, Kind::Pool, call);
  if (!p || !desc || !out) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!stypeOk(desc->stype, ZE_STRUCTURE_TYPE_EVENT_DESC, call))
    return ZE_RESULT_ERROR_INVALID_ENUMERATION;
  if (desc->index >= p->count || p->used[desc->index]) {
    violation(std::string(call) + ": index " + std::to_string(desc->index) +
              " is out of range or taken in " + name(p));
    return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  }
  p->used[desc->index] = true;
  Event *e = make<Event>(Kind::Event);
  e->pool = p;
  e->index = desc->index;
  *out = reinterpret_cast<ze_event_handle_t>(e);
  st().calls.push_back(std::string(call) + "(" + name(p) + ", " + std::to_string(desc->index) +
                       ") -> " + name(e));
  return ZE_RESULT_SUCCESS;
}

ze_result_t fEventDestroy(ze_event_handle_t h) {
  LOCK;
  Event *e = get<Event>(h, Kind::Event, "zeEventDestroy");
  if (!e) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!e->pool->alive) violation("zeEventDestroy: " + name(h) + " destroyed after its pool");
  e->pool->used[e->index] = false;
  return destroy(h, Kind::Event, "zeEventDestroy");
}

ze_result_t fEventHostReset(ze_event_handle_t h) {
  LOCK;
  const char *call = "zeEventHostReset";
  Event *e = get<Event>(h, Kind::Event, call);
  if (!e) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  e->signalled = false;
  st().calls.push_back(std::string(call) + "(" + name(h) + ")");
  return ZE_RESULT_SUCCESS;
}

ze_result_t fEventQueryKernelTimestamp(ze_event_handle_t h, ze_kernel_timestamp_result_t *r) {
  LOCK;
  const char *call = "zeEventQueryKernelTimestamp";
  Event *e = get<Event>(h, Kind::Event, call);
  if (!e || !r) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!e->pool->timestamps) {
    violation(std::string(call) + ": " + name(h) +
              "'s pool has no ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP");
    return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  }
  if (!e->signalled) return ZE_RESULT_NOT_READY;
  r->global.kernelStart = r->context.kernelStart = e->start;
  r->global.kernelEnd = r->context.kernelEnd = e->end;
  st().calls.push_back(std::string(call) + "(" + name(h) + ")");
  return ZE_RESULT_SUCCESS;
}

ze_result_t fFenceCreate(ze_command_queue_handle_t q, const ze_fence_desc_t *desc,
                         ze_fence_handle_t *out) {
  LOCK;
  INJECT("zeFenceCreate");
  const char *call = "zeFenceCreate";
  if (!get(q, Kind::Queue, call) || !desc || !out) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!stypeOk(desc->stype, ZE_STRUCTURE_TYPE_FENCE_DESC, call))
    return ZE_RESULT_ERROR_INVALID_ENUMERATION;
  *out = reinterpret_cast<ze_fence_handle_t>(make<Fence>(Kind::Fence));
  st().calls.push_back(std::string(call) + " -> " + name(*out));
  return ZE_RESULT_SUCCESS;
}

ze_result_t fFenceDestroy(ze_fence_handle_t h) {
  LOCK;
  return destroy(h, Kind::Fence, "zeFenceDestroy");
}

ze_result_t fFenceHostSynchronize(ze_fence_handle_t h, uint64_t) {
  LOCK;
  Fence *f = get<Fence>(h, Kind::Fence, "zeFenceHostSynchronize");
  if (!f) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  st().calls.push_back("zeFenceHostSynchronize(" + name(h) + ")");
  if (!f->submitted) {
    violation("zeFenceHostSynchronize: " + name(h) + " was never submitted (it would hang)");
    return ZE_RESULT_NOT_READY;
  }
  return ZE_RESULT_SUCCESS;
}

ze_result_t fFenceQueryStatus(ze_fence_handle_t h) {
  LOCK;
  Fence *f = get<Fence>(h, Kind::Fence, "zeFenceQueryStatus");
  if (!f) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  return f->submitted ? ZE_RESULT_SUCCESS : ZE_RESULT_NOT_READY;
}

// ---- memory --------------------------------------------------------------------------

ze_result_t fMemAllocDevice(ze_context_handle_t c, const ze_device_mem_alloc_desc_t *desc,
                            size_t size, size_t align, ze_device_handle_t d, void **out) {
  LOCK;
  INJECT("zeMemAllocDevice");
  const char *call = "zeMemAllocDevice";
  if (!get(c, Kind::Context, call) || !get(d, Kind::Device, call) || !desc || !out)
    return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!stypeOk(desc->stype, ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC, call))
    return ZE_RESULT_ERROR_INVALID_ENUMERATION;
  if (!size) return ZE_RESULT_ERROR_UNSUPPORTED_SIZE;
  if (align && (align & (align - 1))) {
    violation(std::string(call) + ": alignment " + std::to_string(align) +
              " is not a power of two");
    return ZE_RESULT_ERROR_UNSUPPORTED_ALIGNMENT;
  }
  const size_t a = std::max<size_t>(align, 64);
  Alloc al;
  al.size = size;
  al.id = st().nextAlloc++;
  al.bytes.reset(new uint8_t[size + a]);
  uintptr_t base = (reinterpret_cast<uintptr_t>(al.bytes.get()) + a - 1) / a * a;
  *out = reinterpret_cast<void *>(base);
  st().calls.push_back(std::string(call) + "(" + std::to_string(size) + ", align " +
                       std::to_string(align) + ") -> mem#" + std::to_string(al.id));
  st().allocs[base] = std::move(al);
  return ZE_RESULT_SUCCESS;
}

ze_result_t fMemFree(ze_context_handle_t c, void *p) {
  LOCK;
  if (!get(c, Kind::Context, "zeMemFree")) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  auto it = st().allocs.find(reinterpret_cast<uintptr_t>(p));
  if (it == st().allocs.end() || !it->second.alive) {
    violation("zeMemFree: " + ptrName(p) + " is not the base of a live allocation");
    return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  }
  it->second.alive = false;
  st().calls.push_back("zeMemFree(mem#" + std::to_string(it->second.id) + ")");
  return ZE_RESULT_SUCCESS;
}

// ---- modules, kernels ----------------------------------------------------------------

ze_result_t fModuleCreate(ze_context_handle_t c, ze_device_handle_t d, const ze_module_desc_t *desc,
                          ze_module_handle_t *out, ze_module_build_log_handle_t *log) {
  LOCK;
  const char *call = "zeModuleCreate";
  if (!get(c, Kind::Context, call) || !get(d, Kind::Device, call) || !desc || !out)
    return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!stypeOk(desc->stype, ZE_STRUCTURE_TYPE_MODULE_DESC, call))
    return ZE_RESULT_ERROR_INVALID_ENUMERATION;
  st().calls.push_back(std::string(call) + "(" +
                       (desc->format == ZE_MODULE_FORMAT_IL_SPIRV ? "spirv" : "native") + ", " +
                       std::to_string(desc->inputSize) + " bytes)");
  Log *l = nullptr;
  if (log) {
    l = make<Log>(Kind::Log);
    *log = reinterpret_cast<ze_module_build_log_handle_t>(l);
  }
  if (desc->format != ZE_MODULE_FORMAT_IL_SPIRV && desc->format != ZE_MODULE_FORMAT_NATIVE) {
    violation(std::string(call) + ": unknown module format");
    return ZE_RESULT_ERROR_INVALID_ENUMERATION;
  }
  if (!desc->pInputModule || !desc->inputSize) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  const uint8_t *spv = desc->pInputModule;
  size_t spvSize = desc->inputSize;
  if (desc->format == ZE_MODULE_FORMAT_NATIVE) {
    // Only this driver's own binaries (zeModuleGetNativeBinary) load; anything else is
    // refused as a real driver refuses a foreign binary (not a misuse).
    if (spvSize <= sizeof kNativeTag || std::memcmp(spv, kNativeTag, sizeof kNativeTag) != 0) {
      if (l) l->text = "not a native binary of this device";
      return ZE_RESULT_ERROR_INVALID_NATIVE_BINARY;
    }
    spv += sizeof kNativeTag;
    spvSize -= sizeof kNativeTag;
  }
  if (Error e = validateSpirv(spv, spvSize, "fake-driver")) {
    violation(std::string(call) + ": invalid SPIR-V reached the driver: " + e.message());
    if (l) l->text = e.message();
    return ZE_RESULT_ERROR_INVALID_NATIVE_BINARY;
  }
  if (!st().cfg.buildLog.empty()) {
    if (l) l->text = st().cfg.buildLog;
    return ZE_RESULT_ERROR_MODULE_BUILD_FAILURE;
  }
  auto ks = reflectKernels(spv, spvSize);
  if (!ks) return ZE_RESULT_ERROR_INVALID_NATIVE_BINARY;
  Module *m = make<Module>(Kind::Module);
  m->kernels = std::move(*ks);
  m->spirv.assign(spv, spv + spvSize);
  *out = reinterpret_cast<ze_module_handle_t>(m);
  return ZE_RESULT_SUCCESS;
}

ze_result_t fModuleGetNativeBinary(ze_module_handle_t h, size_t *size, uint8_t *out) {
  LOCK;
  Module *m = get<Module>(h, Kind::Module, "zeModuleGetNativeBinary");
  if (!m || !size) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  const size_t n = sizeof kNativeTag + m->spirv.size();
  if (out) {
    if (*size < n) return ZE_RESULT_ERROR_INVALID_SIZE;
    std::memcpy(out, kNativeTag, sizeof kNativeTag);
    std::memcpy(out + sizeof kNativeTag, m->spirv.data(), m->spirv.size());
  }
  *size = n;
  return ZE_RESULT_SUCCESS;
}

ze_result_t fModuleDestroy(ze_module_handle_t h) {
  LOCK;
  return destroy(h, Kind::Module, "zeModuleDestroy");
}

ze_result_t fModuleBuildLogDestroy(ze_module_build_log_handle_t h) {
  LOCK;
  Obj *o = get(h, Kind::Log, "zeModuleBuildLogDestroy");
  if (!o) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  o->alive = false;
  return ZE_RESULT_SUCCESS;
}

ze_result_t fModuleBuildLogGetString(ze_module_build_log_handle_t h, size_t *size, char *text) {
  LOCK;
  Log *l = get<Log>(h, Kind::Log, "zeModuleBuildLogGetString");
  if (!l || !size) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (text) {
    if (*size < l->text.size() + 1) return ZE_RESULT_ERROR_INVALID_SIZE;
    std::memcpy(text, l->text.c_str(), l->text.size() + 1);
  }
  *size = l->text.size() + 1;
  return ZE_RESULT_SUCCESS;
}

ze_result_t fKernelCreate(ze_module_handle_t hm, const ze_kernel_desc_t *desc,
                          ze_kernel_handle_t *out) {
  LOCK;
  const char *call = "zeKernelCreate";
  Module *m = get<Module>(hm, Kind::Module, call);
  if (!m || !desc || !out || !desc->pKernelName) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!stypeOk(desc->stype, ZE_STRUCTURE_TYPE_KERNEL_DESC, call))
    return ZE_RESULT_ERROR_INVALID_ENUMERATION;
  for (const Kernel &k : m->kernels)
    if (k.name == desc->pKernelName) {
      KernelObj *o = make<KernelObj>(Kind::Kernel);
      o->name = k.name;
      o->params = k.params;
      o->set.assign(k.params.size(), false);
      o->argText.assign(k.params.size(), "?");
      *out = reinterpret_cast<ze_kernel_handle_t>(o);
      st().calls.push_back(std::string(call) + "(" + k.name + ") -> " + name(o));
      return ZE_RESULT_SUCCESS;
    }
  violation(std::string(call) + ": no kernel '" + desc->pKernelName + "' in " + name(hm));
  return ZE_RESULT_ERROR_INVALID_KERNEL_NAME;
}

ze_result_t fKernelDestroy(ze_kernel_handle_t h) {
  LOCK;
  return destroy(h, Kind::Kernel, "zeKernelDestroy");
}

ze_result_t fKernelSetGroupSize(ze_kernel_handle_t h, uint32_t x, uint32_t y, uint32_t z) {
  LOCK;
  KernelObj *k = get<KernelObj>(h, Kind::Kernel, "zeKernelSetGroupSize");
  if (!k) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  const uint32_t g = st().cfg.maxGroupSize;
  if (!x || !y || !z || x > g || y > g || z > std::max(1u, g / 4) || uint64_t(x) * y * z > g) {
    violation("zeKernelSetGroupSize: " + k->name + ": " + std::to_string(x) + "x" +
              std::to_string(y) + "x" + std::to_string(z) + " is outside the device limits");
    return ZE_RESULT_ERROR_INVALID_GROUP_SIZE_DIMENSION;
  }
  k->group[0] = x;
  k->group[1] = y;
  k->group[2] = z;
  return ZE_RESULT_SUCCESS;
}

ze_result_t fKernelSuggestGroupSize(ze_kernel_handle_t h, uint32_t gx, uint32_t gy, uint32_t gz,
                                    uint32_t *x, uint32_t *y, uint32_t *z) {
  LOCK;
  KernelObj *k = get<KernelObj>(h, Kind::Kernel, "zeKernelSuggestGroupSize");
  if (!k || !x || !y || !z) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!gx || !gy || !gz) return ZE_RESULT_ERROR_INVALID_GLOBAL_WIDTH_DIMENSION;
  // The largest power of two dividing each size, within the limits (x first).
  uint32_t budget = st().cfg.maxGroupSize;
  auto pick = [&](uint32_t global, uint32_t limit) {
    uint32_t s = 1;
    while (s * 2 <= std::min(budget, limit) && global % (s * 2) == 0)
      s *= 2;
    budget /= s;
    return s;
  };
  *x = pick(gx, st().cfg.maxGroupSize);
  *y = pick(gy, st().cfg.maxGroupSize);
  *z = pick(gz, std::max(1u, st().cfg.maxGroupSize / 4));
  return ZE_RESULT_SUCCESS;
}

ze_result_t fKernelSetArgumentValue(ze_kernel_handle_t h, uint32_t i, size_t size,
                                    const void *value) {
  LOCK;
  const char *call = "zeKernelSetArgumentValue";
  KernelObj *k = get<KernelObj>(h, Kind::Kernel, call);
  if (!k) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (i >= k->params.size()) {
    violation(std::string(call) + ": " + k->name + " has no argument " + std::to_string(i));
    return ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_INDEX;
  }
  const KernelParam &p = k->params[i];
  std::string text;
  switch (p.kind) {
  case ParamKind::GlobalBuffer:
  case ParamKind::ConstantBuffer: {
    if (size != sizeof(void *) || !value) {
      violation(std::string(call) + ": " + k->name + " argument " + std::to_string(i) +
                " is a pointer; got " + std::to_string(size) + " bytes");
      return ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE;
    }
    void *ptr = nullptr;
    std::memcpy(&ptr, value, sizeof ptr);
    if (!findAlloc(ptr, 1)) {
      violation(std::string(call) + ": " + k->name + " argument " + std::to_string(i) +
                " points outside every live device allocation");
      return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    }
    text = ptrName(ptr);
    break;
  }
  case ParamKind::LocalBuffer:
    if (value || !size) {
      violation(std::string(call) + ": " + k->name + " argument " + std::to_string(i) +
                " is __local: a size and a null value");
      return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    }
    text = "local " + std::to_string(size);
    break;
  case ParamKind::Scalar: {
    if (!value || (p.size && size != p.size)) {
      violation(std::string(call) + ": " + k->name + " argument " + std::to_string(i) + " takes " +
                std::to_string(p.size) + " bytes; got " + std::to_string(size));
      return ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE;
    }
    uint64_t bits = 0;
    std::memcpy(&bits, value, std::min<size_t>(size, 8));
    std::ostringstream os;
    os << p.typeName << " " << bits;
    text = os.str();
    break;
  }
  }
  k->set[i] = true;
  k->argText[i] = text;
  return ZE_RESULT_SUCCESS;
}

ze_result_t fKernelSetGlobalOffsetExp(ze_kernel_handle_t h, uint32_t x, uint32_t y, uint32_t z) {
  LOCK;
  KernelObj *k = get<KernelObj>(h, Kind::Kernel, "zeKernelSetGlobalOffsetExp");
  if (!k) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!st().cfg.globalOffsetExtension)
    violation("zeKernelSetGlobalOffsetExp: the driver does not report the extension");
  k->offset[0] = x;
  k->offset[1] = y;
  k->offset[2] = z;
  return ZE_RESULT_SUCCESS;
}

} // namespace

const ZeDriverTable &install(const FakeConfig &config) {
  State &s = st();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.cfg = config;
  s.objects.clear();
  s.handles.clear();
  s.nextId.clear();
  s.allocs.clear();
  s.nextAlloc = 0;
  s.calls.clear();
  s.violations.clear();
  s.kernelRuns.clear();
  s.listExecutions = 0;
  s.failed = false;
  s.initialized = false;
  gDriver = make<Obj>(Kind::Driver);
  gDevices.clear();
  for (uint32_t i = 0; i < config.devices; ++i)
    gDevices.push_back(make<Obj>(Kind::Device));
  ZeDriverTable &t = s.table;
  t.origin = "recording fake";
  t.zeInit = fInit;
  t.zeDriverGet = fDriverGet;
  t.zeDriverGetProperties = fDriverGetProperties;
  t.zeDriverGetApiVersion = fDriverGetApiVersion;
  t.zeDriverGetExtensionProperties = fDriverGetExtensionProperties;
  t.zeDeviceGet = fDeviceGet;
  t.zeDeviceGetProperties = fDeviceGetProperties;
  t.zeDeviceGetComputeProperties = fDeviceGetComputeProperties;
  t.zeDeviceGetModuleProperties = fDeviceGetModuleProperties;
  t.zeDeviceGetMemoryProperties = fDeviceGetMemoryProperties;
  t.zeDeviceGetCommandQueueGroupProperties = fDeviceGetCommandQueueGroupProperties;
  t.zeContextCreate = fContextCreate;
  t.zeContextDestroy = fContextDestroy;
  t.zeCommandQueueCreate = fCommandQueueCreate;
  t.zeCommandQueueDestroy = fCommandQueueDestroy;
  t.zeCommandQueueExecuteCommandLists = fCommandQueueExecuteCommandLists;
  t.zeCommandQueueSynchronize = fCommandQueueSynchronize;
  t.zeCommandListCreate = fCommandListCreate;
  t.zeCommandListCreateImmediate = fCommandListCreateImmediate;
  t.zeCommandListDestroy = fCommandListDestroy;
  t.zeCommandListClose = fCommandListClose;
  t.zeCommandListAppendBarrier = fCommandListAppendBarrier;
  t.zeCommandListAppendMemoryCopy = fCommandListAppendMemoryCopy;
  t.zeCommandListAppendMemoryFill = fCommandListAppendMemoryFill;
  t.zeCommandListAppendMemoryCopyRegion = fCommandListAppendMemoryCopyRegion;
  t.zeCommandListAppendLaunchKernel = fCommandListAppendLaunchKernel;
  t.zeCommandListAppendEventReset = fCommandListAppendEventReset;
  t.zeEventPoolCreate = fEventPoolCreate;
  t.zeEventPoolDestroy = fEventPoolDestroy;
  t.zeEventCreate = fEventCreate;
  t.zeEventDestroy = fEventDestroy;
  t.zeEventHostReset = fEventHostReset;
  t.zeEventQueryKernelTimestamp = fEventQueryKernelTimestamp;
  t.zeFenceCreate = fFenceCreate;
  t.zeFenceDestroy = fFenceDestroy;
  t.zeFenceHostSynchronize = fFenceHostSynchronize;
  t.zeFenceQueryStatus = fFenceQueryStatus;
  t.zeMemAllocDevice = fMemAllocDevice;
  t.zeMemFree = fMemFree;
  t.zeModuleCreate = fModuleCreate;
  t.zeModuleDestroy = fModuleDestroy;
  t.zeModuleBuildLogDestroy = fModuleBuildLogDestroy;
  t.zeModuleBuildLogGetString = fModuleBuildLogGetString;
  t.zeModuleGetNativeBinary = fModuleGetNativeBinary;
  t.zeKernelCreate = fKernelCreate;
  t.zeKernelDestroy = fKernelDestroy;
  t.zeKernelSetGroupSize = fKernelSetGroupSize;
  t.zeKernelSuggestGroupSize = fKernelSuggestGroupSize;
  t.zeKernelSetArgumentValue = fKernelSetArgumentValue;
  t.zeKernelSetGlobalOffsetExp = fKernelSetGlobalOffsetExp;
  return t;
}

std::vector<std::string> calls() {
  std::lock_guard<std::mutex> lock(st().mutex);
  return st().calls;
}

std::vector<std::string> calls(const std::vector<std::string> &prefixes) {
  std::lock_guard<std::mutex> lock(st().mutex);
  std::vector<std::string> out;
  for (const std::string &c : st().calls)
    for (const std::string &p : prefixes)
      if (c.compare(0, p.size(), p) == 0) {
        out.push_back(c);
        break;
      }
  return out;
}

void clearCalls() {
  std::lock_guard<std::mutex> lock(st().mutex);
  st().calls.clear();
}

std::vector<std::string> violations() {
  std::lock_guard<std::mutex> lock(st().mutex);
  return st().violations;
}

std::vector<std::string> liveObjects() {
  std::lock_guard<std::mutex> lock(st().mutex);
  std::vector<std::string> out;
  for (const auto &o : st().objects)
    if (o->alive && o->kind != Kind::Driver && o->kind != Kind::Device)
      out.push_back(name(o.get()));
  for (const auto &[base, a] : st().allocs)
    if (a.alive) out.push_back("mem#" + std::to_string(a.id));
  return out;
}

uint64_t kernelRuns(const std::string &kernel) {
  std::lock_guard<std::mutex> lock(st().mutex);
  auto it = st().kernelRuns.find(kernel);
  return it == st().kernelRuns.end() ? 0 : it->second;
}

uint64_t listExecutions() {
  std::lock_guard<std::mutex> lock(st().mutex);
  return st().listExecutions;
}

} // namespace cgraph::level_zero::fake
