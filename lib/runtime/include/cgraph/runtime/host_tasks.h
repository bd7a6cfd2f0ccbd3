// Host tasks: the built-in host operations every backend with host-visible memory runs,
// and plugin host tasks loaded from shared libraries (host_plugin.h has their C ABI).
//
// Built-ins (HostOp::library empty). Slot args come first, in the order below; the
// other args may come in any order after them. A slot arg views the bytes from its
// offset to the end of the slot's declared size (Slot::size; the bound range when the
// slot is unsized).
//   checksum(slot, ["type"])          prints `checksum <slot>: xxh3=<16 hex> sum=<v>
//                                     (<n> x <type>)`; type default f32 (any scalar
//                                     name; the sum is f64-accumulated for floats,
//                                     wrapping 64-bit for integers)
//   print(slot, ["type"], [count])     prints `print <slot>: <v0> <v1> ...` (first count
//                                     elements, default 16; count is a Scalar or Param
//                                     arg, an expression over parameters (.cgf 2.2, read
//                                     as a Param past the graph's params, typed by the
//                                     Arg), or a decimal String)
//   write_file(slot, "path", ["type"]) writes the slot's bytes; a .npy path gets a 1-D
//                                     array of `type` (default u8)
//   read_file(slot, "path")           fills the slot from a raw file or a .npy payload;
//                                     an Error when the file has fewer bytes than the
//                                     slot (extra bytes are ignored)
//   compare(a, b, ["type"], ["atol=X"], ["rtol=Y"])
//                                     succeeds when every element satisfies
//                                     |a-b| <= atol + rtol*|b| (integers: exact unless a
//                                     tolerance is given); otherwise an Error naming the
//                                     first differing element:
//                                     `compare 'a' vs 'b': element 17 differs: 1 vs 1.5`
// Paths resolve inside HostPolicy::allowedDirs (paths.h), checked at prepare and again
// right before the file is opened. "Prints" means: one line to HostPolicy::output, the
// caller's sink; without one the line is dropped (the library never writes to
// stdout/stderr itself).
//
// Ownership/lifetime: HostTasks copies what it needs from the graph; it holds the
// plugin libraries open (dlopen) until destroyed. Thread-safety: run() may be called
// concurrently for different nodes; output lines are serialized. Failure modes: all
// problems are Errors prefixed with `node '<name>'`; prepare() rejects unknown built-ins,
// wrong argument kinds, paths outside the allowed directories and plugins that are not
// allowed or fail to load, before anything runs.
#pragma once

#include "cgraph/error.h"
#include "cgraph/model.h"
#include "cgraph/runtime/runtime.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace cgraph::rt {

// Host-visible view of one slot's bound range.
struct HostSpan {
  void *data = nullptr;
  uint64_t size = 0;
};

class HostTasks {
public:
  ~HostTasks();
  HostTasks(const HostTasks &) = delete;
  HostTasks &operator=(const HostTasks &) = delete;

  // Checks every Host node of `graph` (no subgraphs: flatten first) and loads plugins.
  static Expected<std::unique_ptr<HostTasks>> prepare(const Graph &graph,
                                                      const HostPolicy &policy);

  // Runs Host node `node` of the prepared graph. `slots` has one span per graph slot
  // (unbound slots may be empty spans; only the node's slot args are read), `params`
  // one value per graph param (Param::defaultBits layout).
  Error run(uint32_t node, const std::vector<HostSpan> &slots,
            const std::vector<uint64_t> &params) const;

  // Whether Host node `node` may change the bytes of its slots: read_file and plugin
  // tasks; checksum, print, write_file and compare only read them (a backend that
  // copies slots to the host for a task need not copy those back).
  bool writesSlots(uint32_t node) const;

  // The built-in names, for messages and tools.
  static const std::vector<std::string> &builtinNames();

  struct Impl;

private:
  explicit HostTasks(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// The host memory staged host tasks run on (runStagedHostTask), kept by an executable
// between runs so that a run neither allocates nor initializes it: one block per slot,
// grown to the largest length staged and held until the HostStaging goes. `alloc`
// gives a block (a backend's pinned memory, which its copies reach directly); where it
// is empty or fails, plain host memory is used. Not thread-safe (one per executable,
// whose submissions are not concurrent). Errors: out of memory.
class HostStaging {
public:
  using Alloc = std::function<Expected<std::shared_ptr<void>>(size_t bytes)>;
  explicit HostStaging(Alloc alloc = {}) : alloc_(std::move(alloc)) {}
  // At least `bytes` bytes for `slot`, valid until the next call for that slot.
  Expected<uint8_t *> block(uint32_t slot, size_t bytes);

private:
  struct Block {
    std::shared_ptr<void> mem;
    size_t size = 0;
  };
  Alloc alloc_;
  std::vector<Block> blocks_;
};

// Host node `n` of `g` on a device whose memory the host cannot address, the one
// staging path of every such backend: the device's earlier work drained (`sync()`),
// each slot argument's bound bytes (`length(slot)`) copied to host memory from
// `staging` (`toHost(dst, slot, bytes)`), the task run on the copies, and, only where
// it may write slots (writesSlots), the copies written back (`toDevice(slot, src,
// bytes)`) and drained again. Slot indices at or past `nSlots` are not staged. Errors:
// the first failing step's.
template <class Length, class Sync, class ToHost, class ToDevice>
Error runStagedHostTask(const Graph &g, uint32_t n, uint32_t nSlots, const HostTasks &tasks,
                        const std::vector<uint64_t> &params, HostStaging &staging, Length length, Sync sync,
                        ToHost toHost, ToDevice toDevice) {
  CGRAPH_RETURN_IF_ERROR(sync());
  const Node &node = g.nodes[n];
  std::vector<HostSpan> spans(g.slots.size());
  for (const Arg &a : node.args) {
    if (a.kind != ArgKind::Slot || a.index >= nSlots || spans[a.index].data) continue;
    const size_t bytes = size_t(length(a.index));
    Expected<uint8_t *> c = staging.block(a.index, bytes);
    if (!c) return c.error();
    if (bytes) CGRAPH_RETURN_IF_ERROR(toHost(*c, a.index, bytes));
    spans[a.index] = {*c, bytes};
  }
  CGRAPH_RETURN_IF_ERROR(sync());
  CGRAPH_RETURN_IF_ERROR(tasks.run(n, spans, params));
  if (!tasks.writesSlots(n)) return Error::success(); // checksum, print, ...: nothing to copy back
  for (size_t i = 0; i < spans.size(); ++i)
    if (spans[i].size) CGRAPH_RETURN_IF_ERROR(toDevice(uint32_t(i), spans[i].data, spans[i].size));
  return sync();
}

} // namespace cgraph::rt
