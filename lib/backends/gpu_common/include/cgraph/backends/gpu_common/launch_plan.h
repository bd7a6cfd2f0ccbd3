// Launch planning shared by the CUDA and HIP executables: how a node of a flattened
// graph becomes a table-ABI launch (codegen/table_abi.h) and when a copy or fill can be
// a driver memcpy/memset instead of the builtin kernel. Header-only templates over the
// backend's launch record L, which has `std::vector<uint64_t> vals`, `unsigned grid[3]`,
// `block[3]` and `unsigned smem` (CUDA: cuda::Launch with a CUfunction; HIP:
// hip::Launch with a hipFunction_t), so both backends run one implementation.
//
// Ownership: pure functions of their arguments. Thread-safety: reentrant. Failure modes:
// invalid ranges and arguments are Errors prefixed with the node label the caller gives.
#pragma once

#include "cgraph/codegen/table_abi.h"
#include "cgraph/error.h"
#include "cgraph/model.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace cgraph::gpu {

using codegen::kCoarseEntryPrefix;
using codegen::kCoarseItems;
using codegen::kLiteral;

// Largest divisor of `g` not above `limit` (OpenCL 1.2: the global size is a multiple
// of the work-group size, so the runtime's choice must divide it).
inline uint64_t divisorUpTo(uint64_t g, uint64_t limit) {
  for (uint64_t d = std::min(g, limit); d > 1; --d)
    if (g % d == 0) return d;
  return 1;
}

// The launch geometry of kernel node `node` (kernel `kern`) with parameter values
// `params`: grid, block and the wrapper's offset/work_dim arguments (the last four
// vals). `api` names the grid limit in errors ("CUDA", "HIP"); `label()` gives the
// node's name for them (called only on error).
template <class L, class LabelFn>
Error planRange(const Node &node, const Kernel &kern, const std::vector<uint64_t> &params,
                const LabelFn &label, const char *api, L &l) {
  auto val = [&](const Dim &d) { return d.param != kNone ? params[d.param] : d.value; };
  uint64_t global[3] = {1, 1, 1}, local[3] = {1, 1, 1};
  const uint32_t dims = std::max<uint32_t>(1, std::min<uint32_t>(3, node.range.dims));
  for (uint32_t d = 0; d < dims; ++d)
    global[d] = val(node.range.global[d]);
  if (node.range.hasLocal()) {
    for (uint32_t d = 0; d < dims; ++d)
      local[d] = val(node.range.local[d]);
  } else if (kern.reqdLocal[0] != 0) {
    for (uint32_t d = 0; d < dims; ++d)
      local[d] = kern.reqdLocal[d] ? kern.reqdLocal[d] : 1;
  } else {
    local[0] = divisorUpTo(global[0], 256);
    if (dims > 1)
      local[1] =
          divisorUpTo(global[1], std::max<uint64_t>(1, 256 / local[0] >= 16 ? 256 / local[0] : 1));
  }
  uint64_t threads = 1;
  for (uint32_t d = 0; d < 3; ++d) {
    if (global[d] == 0) return makeError(label() + ": global size " + std::to_string(d) + " is 0");
    if (local[d] == 0 || global[d] % local[d] != 0)
      return makeError(label() + ": global size " + std::to_string(global[d]) + " in dimension " +
                       std::to_string(d) + " is not a multiple of the work-group size " +
                       std::to_string(local[d]));
    threads *= local[d];
    l.block[d] = unsigned(local[d]);
    const uint64_t g = global[d] / local[d];
    if (g > (d == 0 ? 0x7FFFFFFFull : 65535ull))
      return makeError(label() + ": " + std::to_string(g) + " work-groups in dimension " +
                       std::to_string(d) + " exceed the " + api + " grid limit");
    l.grid[d] = unsigned(g);
  }
  if (threads > 1024)
    return makeError(label() + ": work-group of " + std::to_string(threads) +
                     " work-items exceeds 1024");
  const size_t base = 1 + 2 * kern.params.size();
  for (uint32_t d = 0; d < 3; ++d)
    l.vals[base + d] = d < dims ? val(node.range.offset[d]) : 0;
  l.vals[base + 3] = dims;
  return Error::success();
}

// The wrapper's arguments of kernel node `node`: vals = {table, {a_i, m_i}..., 0 x 4}
// (the range fills the last four) and the dynamic shared memory of its __local
// arguments (16-byte aligned each, at most `maxSmem` bytes). Slot s is table entry s;
// parameter p is entry nSlots + p. `label()` names the node in errors.
template <class L, class LabelFn>
Error planKernelArgs(const Node &node, const Kernel &kern, uint64_t table, uint32_t nSlots,
                     const LabelFn &label, uint64_t maxSmem, L &l) {
  if (node.args.size() != kern.params.size())
    return makeError(label() + ": " + std::to_string(node.args.size()) + " arguments for kernel '" +
                     kern.name + "' of " + std::to_string(kern.params.size()) + " parameters");
  l.vals.assign(1 + 2 * kern.params.size() + 4, 0);
  l.vals[0] = table;
  uint64_t smem = 0;
  for (size_t i = 0; i < node.args.size(); ++i) {
    const Arg &a = node.args[i];
    uint64_t &av = l.vals[1 + 2 * i];
    uint64_t &mv = l.vals[2 + 2 * i];
    switch (a.kind) {
    case ArgKind::Slot:
      av = a.value;
      mv = a.index;
      break;
    case ArgKind::Scalar:
      av = a.value;
      mv = kLiteral;
      break;
    case ArgKind::Param:
      av = 0;
      mv = nSlots + a.index;
      break;
    case ArgKind::LocalMem:
      smem = (smem + 15) & ~uint64_t(15);
      av = smem;
      mv = kLiteral;
      smem += a.value;
      break;
    case ArgKind::String:
      return makeError(label() + ": arg " + std::to_string(i) + ": string argument for a kernel");
    }
  }
  if (smem > maxSmem)
    return makeError(label() + ": " + std::to_string(smem) + " bytes of __local arguments exceed " +
                     std::to_string(maxSmem / 1024) + " KiB");
  l.smem = unsigned(smem);
  return Error::success();
}

// The coarse entry's launch (codegen/table_abi.h `coarsen`) for `n` work-items of a
// 1-D range planned by planRange and planKernelArgs: ceil(n / kCoarseItems) threads in
// groups of at most 256, and n as the entry's last argument.
template <class L> void planCoarse(uint64_t n, L &l) {
  const uint64_t threads = (n + kCoarseItems - 1) / kCoarseItems;
  l.block[0] = unsigned(std::min<uint64_t>(256, threads));
  l.grid[0] = unsigned((threads + l.block[0] - 1) / l.block[0]);
  l.vals.push_back(n);
}

// The builtin kernels (builtinKernelSource) loop with a grid stride: one work-item per
// 16 bytes, at most 1024 groups of 256 (enough to fill a large GPU; larger copies take more
// steps per work-item).
template <class L> void stridedGrid(uint64_t bytes, L &l) {
  l.block[0] = 256;
  l.grid[0] = unsigned(std::min<uint64_t>(1024, std::max<uint64_t>(1, (bytes / 16 + 255) / 256)));
}

// The builtin fill kernel's arguments (cgraph_fill: dst, bytes, pattern, psize) with
// the pattern in table entry `patIndex`.
template <class L> void planFillLaunch(const FillOp &f, uint64_t table, uint64_t patIndex, L &l) {
  l.vals = {table,    f.offset, f.slot, f.bytes, kLiteral, 0, patIndex, f.pattern.size(),
            kLiteral, 0,        0,      0,       1};
  stridedGrid(f.bytes, l);
}

// The builtin copy kernel's arguments (cgraph_copy: dst, src, w, h, d, pitches).
template <class L> void planCopyLaunch(const Node &node, uint64_t table, L &l) {
  const CopyOp &c = node.copy;
  uint64_t w = c.bytes, h = 1, d = 1, sr = c.bytes, ss = c.bytes, dr = c.bytes, ds = c.bytes;
  if (node.kind == NodeKind::CopyRect) {
    w = c.region[0];
    h = std::max<uint64_t>(1, c.region[1]);
    d = std::max<uint64_t>(1, c.region[2]);
    sr = c.srcRowPitch ? c.srcRowPitch : w;
    ss = c.srcSlicePitch ? c.srcSlicePitch : sr * h;
    dr = c.dstRowPitch ? c.dstRowPitch : w;
    ds = c.dstSlicePitch ? c.dstSlicePitch : dr * h;
  }
  l.vals = {table,    c.dstOffset, c.dstSlot, c.srcOffset, c.srcSlot, w,  kLiteral, h,
            kLiteral, d,           kLiteral,  sr,          kLiteral,  ss, kLiteral, dr,
            kLiteral, ds,          kLiteral,  0,           0,         0,  1};
  stridedGrid(w * h * d, l);
}

// OpenCL C of the table-ABI fill and copy kernels (cgraph_fill, cgraph_copy) that copies
// and fills touching binding-table slots run as (so they rebind through the table like
// every kernel), and fills whose pattern a driver memset cannot express. Grid-stride
// loops; contiguous copies and fills move 16 bytes per step where the addresses and
// size allow, else bytes.
const char *builtinKernelSource();

// builtinKernelSource compiled to a SPIR-V module named `name`, as a backend loads it.
// Fails (an Error naming `name`) only where the OpenCL C compiler does.
Expected<KernelModule> builtinKernelModule(const std::string &name);

// A copy as a driver 3D memcpy between device addresses (pitched, no arrays).
struct Copy3D {
  uint64_t src = 0, dst = 0;                 // first byte
  uint64_t width = 0, height = 1, depth = 1; // bytes, rows, slices
  uint64_t srcPitch = 0, dstPitch = 0;       // bytes per row
  uint64_t srcHeight = 1, dstHeight = 1;     // rows per slice
};

// False where a driver memcpy cannot express the copy (the builtin kernel does it).
inline bool copy3DFor(const Node &node, uint64_t srcBase, uint64_t dstBase, Copy3D &m) {
  const CopyOp &c = node.copy;
  m = Copy3D{};
  m.src = srcBase + c.srcOffset;
  m.dst = dstBase + c.dstOffset;
  if (node.kind == NodeKind::Copy) {
    m.width = c.bytes;
    m.srcPitch = m.dstPitch = c.bytes;
    return c.bytes > 0;
  }
  const uint64_t w = c.region[0], h = std::max<uint64_t>(1, c.region[1]),
                 d = std::max<uint64_t>(1, c.region[2]);
  const uint64_t sr = c.srcRowPitch ? c.srcRowPitch : w, dr = c.dstRowPitch ? c.dstRowPitch : w;
  const uint64_t ss = c.srcSlicePitch ? c.srcSlicePitch : sr * h,
                 ds = c.dstSlicePitch ? c.dstSlicePitch : dr * h;
  if (w == 0 || (d > 1 && (ss % sr != 0 || ds % dr != 0))) return false;
  m.width = w;
  m.height = h;
  m.depth = d;
  m.srcPitch = sr;
  m.dstPitch = dr;
  m.srcHeight = d > 1 ? ss / sr : h;
  m.dstHeight = d > 1 ? ds / dr : h;
  return true;
}

// A fill as a driver memset of 1-, 2- or 4-byte elements.
struct Memset {
  uint64_t dst = 0;
  unsigned elementSize = 0;
  uint64_t width = 0; // elements
  uint32_t value = 0;
};

inline bool memsetFor(const FillOp &f, uint64_t base, Memset &m) {
  const size_t p = f.pattern.size();
  if (p != 1 && p != 2 && p != 4) return false;
  const uint64_t dst = base + f.offset;
  if (dst % p != 0 || f.bytes % p != 0 || f.bytes == 0) return false;
  m = Memset{};
  m.dst = dst;
  m.elementSize = unsigned(p);
  m.width = f.bytes / p;
  uint32_t v = 0;
  std::memcpy(&v, f.pattern.data(), p);
  m.value = v;
  return true;
}

} // namespace cgraph::gpu
