// Shared between host_tasks.cpp (preparation, dispatch, plugins) and host_builtins.cpp.
#pragma once

#include "cgraph/runtime/host_plugin.h"
#include "cgraph/runtime/host_tasks.h"

#include <mutex>

namespace cgraph::rt::detail {

struct TaskNode {
  bool isHost = false;
  std::string name; // node name for messages ("node #3" when unnamed)
  std::string op;
  std::vector<Arg> args;
  cgraph_host_fn plugin = nullptr;
  std::string pluginLabel; // "lib.so:symbol"
};

struct SlotView {
  std::string name;
  uint8_t *data = nullptr;
  uint64_t size = 0;
};

// Non-slot arguments of a built-in, parsed once per call (and at prepare, without
// param values, to reject bad ones early).
struct Extras {
  bool hasType = false;
  ScalarType type = ScalarType::F32;
  std::string path;
  bool hasCount = false;
  uint64_t count = 16;
  double atol = 0, rtol = 0;
  bool hasTolerance = false;
};

struct Context {
  const HostPolicy *policy;
  std::function<void(const std::string &)> emit;
};

struct Builtin {
  const char *name;
  uint32_t slotArgs;  // leading Slot args
  bool needsPath;     // first String arg is a path
  bool pathIsOutput;  // write_file: the file may not exist yet
  bool writesSlots;   // changes its slots' bytes (read_file); the others only read them
  Error (*run)(const Context &ctx, const std::vector<SlotView> &slots, const Extras &x);
};

const Builtin *findBuiltin(const std::string &name);
const std::vector<Builtin> &builtins();

double loadElement(const uint8_t *p, ScalarType t);

} // namespace cgraph::rt::detail
