// The built-in host task operations (checksum, print, write_file, read_file, compare)
// and the one check of a built-in host node's arguments. validateGraph runs it on every
// Host node without a library, so cgc, `cgc lint` and Device::finalize refuse the same
// host tasks; the runtime's HostTasks::prepare runs it too. What each operation does is
// written in cgraph/runtime/host_tasks.h.
//
// Arguments of a built-in: exactly `slotArgs` Slot args first, then in any order:
// - the path (a String; write_file and read_file, which need one);
// - a scalar type name String ("f32", "u8", ...);
// - print: a count, as an integer Scalar (>= 0), an integer-typed Param or a decimal
//   String;
// - compare: "atol=X" / "rtol=Y" Strings (X, Y >= 0), or a Scalar (>= 0) or numeric
//   Param read as atol.
// A Param index past the graph's params is a stored expression's value, typed by the
// Arg itself (cgraph/runtime/runtime.h).
//
// Pure functions over const data; thread-safe. Failure modes: an Error describing the
// first problem, without the node's name (callers add it), e.g.
// `arg 1: 'print' takes 1 slot argument`.
#pragma once

#include <cgraph/error.h>
#include <cgraph/model.h>

#include <cstdint>
#include <string>
#include <vector>

namespace cgraph {

struct HostOpInfo {
  const char *name;
  uint32_t slotArgs; // leading Slot args
  bool needsPath;    // the first String arg is a path
};

// Every built-in, in the order the documentation lists them.
const std::vector<HostOpInfo> &builtinHostOps();
// The built-in named `name`, or null.
const HostOpInfo *findBuiltinHostOp(const std::string &name);

// Checks Host node `node` of `graph`: nothing for a plugin (HostOp::library set: its
// arguments are the plugin's business); for a built-in, a known name and the argument
// kinds, counts and texts above. Slot indices must be in range.
Error checkHostTask(const Graph &graph, const Node &node);

} // namespace cgraph
