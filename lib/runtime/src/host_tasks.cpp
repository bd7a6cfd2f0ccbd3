// Host task preparation (argument checks, plugin loading) and dispatch.
#include "host_internal.h"

#include "cgraph/graph/host_ops.h"
#include "cgraph/graph/labels.h"
#include "cgraph/runtime/paths.h"
#include "cgraph/runtime/scalar_text.h"

#include <dlfcn.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <cstdlib>
#include <map>

namespace cgraph::rt {

using detail::Builtin;
using detail::Extras;
using detail::SlotView;
using detail::TaskNode;
using detail::builtins;

struct HostTasks::Impl {
  HostPolicy policy;
  std::vector<std::string> slotNames;
  std::vector<uint64_t> slotSizes;
  std::vector<ScalarType> paramTypes;
  std::vector<TaskNode> nodes; // indexed by node; isHost false for other kinds
  std::vector<void *> libraries;
  mutable std::mutex outputMutex;

  // The library never prints: without HostPolicy::output the text is dropped (the
  // tools install an output that prints).
  void emit(const std::string &line) const {
    if (!policy.output) return;
    std::lock_guard<std::mutex> lock(outputMutex);
    policy.output(line);
  }
};

namespace {

std::string slotName(const Graph &g, uint32_t s) {
  if (s < g.slots.size() && !g.slots[s].name.empty()) return g.slots[s].name;
  return "#" + std::to_string(s);
}

bool startsWith(const std::string &s, const char *p) { return s.rfind(p, 0) == 0; }

// Reads the non-slot args of built-in `b` (checkHostTask has checked their shapes at
// prepare). `params` null: Param values are not read (prepare time).
Error parseExtras(const Builtin &b, const TaskNode &t, const std::vector<ScalarType> &paramTypes,
                  const std::vector<uint64_t> *params, Extras *x) {
  bool havePath = false;
  for (size_t i = b.slotArgs; i < t.args.size(); ++i) {
    const Arg &a = t.args[i];
    const std::string where = "arg " + std::to_string(i);
    switch (a.kind) {
    case ArgKind::String: {
      ScalarType ty;
      if (b.needsPath && !havePath) {
        x->path = a.text;
        havePath = true;
      } else if (parseScalarType(a.text, &ty)) {
        x->type = ty;
        x->hasType = true;
      } else if (std::string(b.name) == "compare" &&
                 (startsWith(a.text, "atol=") || startsWith(a.text, "rtol="))) {
        uint64_t bits;
        Error e = parseScalarText(a.text.substr(5), ScalarType::F64, &bits);
        if (e) return e.withContext(where);
        double v;
        std::memcpy(&v, &bits, 8);
        if (!(v >= 0)) return makeError(where + ": tolerance must be >= 0");
        (a.text[0] == 'a' ? x->atol : x->rtol) = v;
        x->hasTolerance = true;
      } else if (std::string(b.name) == "print" && !a.text.empty() &&
                 a.text.find_first_not_of("0123456789") == std::string::npos) {
        x->count = std::strtoull(a.text.c_str(), nullptr, 10);
        x->hasCount = true;
      } else {
        return makeError(where + ": '" + a.text + "' is not understood by '" + b.name + "'");
      }
      break;
    }
    case ArgKind::Scalar:
    case ArgKind::Param: {
      ScalarType ty = a.type;
      uint64_t bits = a.value;
      if (a.kind == ArgKind::Param) {
        // An index past the graph's params is a stored expression's value (rt::Executable
        // appends them), typed by the argument itself.
        if (a.index < paramTypes.size()) ty = paramTypes[a.index];
        if (!params) break; // value known only at run time
        if (a.index >= params->size()) return makeError(where + ": param index out of range");
        bits = (*params)[a.index];
      }
      const bool isFloat = ty == ScalarType::F16 || ty == ScalarType::F32 || ty == ScalarType::F64;
      uint8_t raw[8];
      std::memcpy(raw, &bits, 8);
      const double v = detail::loadElement(raw, ty);
      if (std::string(b.name) == "print" && !isFloat) {
        if (v < 0) return makeError(where + ": count must be >= 0");
        x->count = uint64_t(v);
        x->hasCount = true;
      } else if (std::string(b.name) == "compare") {
        if (!(v >= 0)) return makeError(where + ": tolerance must be >= 0");
        x->atol = v;
        x->hasTolerance = true;
      } else {
        return makeError(where + ": '" + b.name + "' takes no scalar argument here");
      }
      break;
    }
    case ArgKind::Slot:
      return makeError(where + ": '" + b.name + "' takes " + std::to_string(b.slotArgs) +
                       " slot argument" + (b.slotArgs == 1 ? "" : "s"));
    case ArgKind::LocalMem:
      return makeError(where + ": local memory is not a host task argument");
    }
  }
  if (b.needsPath && !havePath) return makeError("'" + std::string(b.name) + "' needs a path argument");
  return Error::success();
}

} // namespace

HostTasks::HostTasks(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

HostTasks::~HostTasks() {
  for (void *h : impl_->libraries) dlclose(h);
}

const std::vector<std::string> &HostTasks::builtinNames() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (const Builtin &b : detail::builtins()) v.push_back(b.name);
    return v;
  }();
  return names;
}

Expected<std::unique_ptr<HostTasks>> HostTasks::prepare(const Graph &graph,
                                                        const HostPolicy &policy) {
  auto impl = std::make_unique<Impl>();
  impl->policy = policy;
  for (uint32_t s = 0; s < graph.slots.size(); ++s) {
    impl->slotNames.push_back(slotName(graph, s));
    impl->slotSizes.push_back(graph.slots[s].size);
  }
  for (const Param &p : graph.params) impl->paramTypes.push_back(p.type);
  impl->nodes.resize(graph.nodes.size());
  // Owned here until the HostTasks exists, so an early return closes what was opened.
  std::unique_ptr<HostTasks> result(new HostTasks(std::move(impl)));
  Impl &im = *result->impl_;
  std::map<std::string, void *> opened;

  for (uint32_t n = 0; n < graph.nodes.size(); ++n) {
    const Node &node = graph.nodes[n];
    if (node.kind == NodeKind::Subgraph)
      return makeError(nodeLabel(graph, n) + ": subgraph nodes must be flattened before host tasks are prepared");
    if (node.kind != NodeKind::Host) continue;
    TaskNode &t = im.nodes[n];
    t.isHost = true;
    t.name = nodeLabel(graph, n);
    t.op = node.host.op;
    t.args = node.args;

    if (!node.host.library.empty()) {
      t.pluginLabel = node.host.library + ":" + node.host.op;
      if (!policy.allowPlugins)
        return makeError(t.name + ": host task '" + t.pluginLabel +
                         "' is a plugin, and plugins are not allowed (cgrun --allow-plugins)");
      for (size_t i = 0; i < t.args.size(); ++i) {
        const Arg &a = t.args[i];
        if (a.kind == ArgKind::LocalMem)
          return makeError(t.name + ": arg " + std::to_string(i) + ": local memory is not a host task argument");
        if ((a.kind == ArgKind::Slot && a.index >= graph.slots.size()) ||
            (a.kind == ArgKind::Param && a.index >= graph.params.size() + graph.exprs.size()))
          return makeError(t.name + ": arg " + std::to_string(i) + ": index out of range");
      }
      Expected<std::string> lib = resolveAllowedPath(node.host.library, policy);
      if (!lib) return lib.error().withContext(t.name + ": plugin library");
      void *h = nullptr;
      auto it = opened.find(*lib);
      if (it != opened.end()) {
        h = it->second;
      } else {
        h = dlopen(lib->c_str(), RTLD_NOW | RTLD_LOCAL);
        if (!h) {
          const char *why = dlerror();
          return makeError(t.name + ": cannot load plugin '" + node.host.library +
                           "': " + (why ? why : "unknown error"));
        }
        opened[*lib] = h;
        im.libraries.push_back(h);
      }
      dlerror();
      void *sym = dlsym(h, node.host.op.c_str());
      if (!sym)
        return makeError(t.name + ": plugin '" + node.host.library + "' has no symbol '" +
                         node.host.op + "'");
      t.plugin = reinterpret_cast<cgraph_host_fn>(sym);
      continue;
    }

    // The one argument check cgc and validateGraph make too (cgraph/graph/host_ops.h).
    Error e = checkHostTask(graph, node);
    const Builtin *b = e ? nullptr : detail::findBuiltin(t.op);
    if (!e && !b) e = makeError("built-in host task '" + t.op + "' has no implementation here");
    if (!e) {
      Extras x;
      e = parseExtras(*b, t, im.paramTypes, nullptr, &x);
      if (!e && b->needsPath) {
        Expected<std::string> p = resolveAllowedPath(x.path, policy);
        if (!p) e = p.error();
      }
    }
    if (e) return e.withContext(t.name);
  }
  return result;
}

bool HostTasks::writesSlots(uint32_t node) const {
  const Impl &im = *impl_;
  if (node >= im.nodes.size() || !im.nodes[node].isHost) return false;
  const TaskNode &t = im.nodes[node];
  if (t.plugin) return true;
  const Builtin *b = detail::findBuiltin(t.op);
  return !b || b->writesSlots;
}

Error HostTasks::run(uint32_t node, const std::vector<HostSpan> &slots,
                     const std::vector<uint64_t> &params) const {
  const Impl &im = *impl_;
  if (node >= im.nodes.size() || !im.nodes[node].isHost)
    return makeError("node #" + std::to_string(node) + " is not a host task");
  const TaskNode &t = im.nodes[node];
  if (slots.size() < im.slotNames.size() || params.size() < im.paramTypes.size())
    return makeError(t.name + ": host task given " + std::to_string(slots.size()) + " slots and " +
                     std::to_string(params.size()) + " params, the graph has " +
                     std::to_string(im.slotNames.size()) + " and " + std::to_string(im.paramTypes.size()));

  std::vector<SlotView> views;
  std::vector<std::string> strings;
  for (size_t i = 0; i < t.args.size(); ++i) {
    const Arg &a = t.args[i];
    if (a.kind == ArgKind::Slot) {
      const HostSpan &span = slots[a.index];
      uint64_t size = span.size;
      const uint64_t declared = im.slotSizes[a.index];
      if (declared && declared < size) size = declared;
      if (a.value > size || !span.data)
        return makeError(t.name + ": arg " + std::to_string(i) + ": offset " +
                         std::to_string(a.value) + " is outside slot '" + im.slotNames[a.index] + "'");
      views.push_back({im.slotNames[a.index], static_cast<uint8_t *>(span.data) + a.value,
                       size - a.value});
    } else if (t.plugin) {
      if (a.kind == ArgKind::String) strings.push_back(a.text);
      else if (a.kind == ArgKind::Scalar) strings.push_back(formatScalarBits(a.value, a.type));
      else if (a.kind == ArgKind::Param && a.index >= params.size())
        return makeError(t.name + ": arg " + std::to_string(i) + ": param index out of range");
      else if (a.kind == ArgKind::Param)
        strings.push_back(formatScalarBits(
            params[a.index], a.index < im.paramTypes.size() ? im.paramTypes[a.index] : a.type));
    }
  }

  if (t.plugin) {
    std::vector<void *> ptrs;
    std::vector<uint64_t> sizes;
    for (const SlotView &v : views) {
      ptrs.push_back(v.data);
      sizes.push_back(v.size);
    }
    std::vector<const char *> cstrs;
    for (const std::string &s : strings) cstrs.push_back(s.c_str());
    char err[512] = {0};
    const int rc = t.plugin(ptrs.data(), sizes.data(), uint32_t(ptrs.size()), cstrs.data(),
                            uint32_t(cstrs.size()), err, sizeof err);
    if (rc != 0) {
      err[sizeof err - 1] = '\0';
      return makeError(t.name + ": plugin '" + t.pluginLabel + "': " +
                       (err[0] ? std::string(err) : "failed with code " + std::to_string(rc)));
    }
    return Error::success();
  }

  const Builtin *b = detail::findBuiltin(t.op);
  Extras x;
  Error e = parseExtras(*b, t, im.paramTypes, &params, &x);
  if (e) return e.withContext(t.name);
  detail::Context ctx{&im.policy, [&im](const std::string &line) { im.emit(line); }};
  e = b->run(ctx, views, x);
  if (e) return e.withContext(t.name);
  return Error::success();
}

Expected<uint8_t *> HostStaging::block(uint32_t slot, size_t bytes) {
  if (slot >= blocks_.size()) blocks_.resize(size_t(slot) + 1);
  Block &b = blocks_[slot];
  if (b.mem && b.size >= bytes) return static_cast<uint8_t *>(b.mem.get());
  b = Block{};
  const size_t want = bytes ? bytes : 1;
  if (alloc_) {
    Expected<std::shared_ptr<void>> m = alloc_(want);
    if (m && *m) b.mem = std::move(*m);
  }
  if (!b.mem) { // no allocator, or its memory ran out: plain host memory
    void *p = std::malloc(want);
    if (!p)
      return makeError(ErrorCode::OutOfMemory,
                       "staging " + std::to_string(bytes) + " bytes of a host task's slot in host memory");
    b.mem = std::shared_ptr<void>(p, [](void *q) { std::free(q); });
  }
  b.size = want;
  return static_cast<uint8_t *>(b.mem.get());
}

} // namespace cgraph::rt
