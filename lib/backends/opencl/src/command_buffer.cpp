// The executable graph: per-node enqueue (eager) and cl_khr_command_buffer recordings
// kept per binding set (replay).
//
// Why recordings per binding set: without mutable dispatch (PoCL 3.1 has none) the
// buffers and scalar values of a recorded command cannot change, so a new binding table
// or parameter value needs a new recording (docs/architecture.md decision 5). The last few
// are kept so that alternating tables (double buffering) replay without re-recording.
// Stored parameter expressions (.cgf 2.0) arrive as extra parameter values, so each
// distinct shape gets its own recording, kept the same way.
#include "exec.h"

#include "cgraph/graph/order.h"

#include <algorithm>
#include <cstring>

namespace cgraph::opencl {

// ---- sub-buffers ---------------------------------------------------------------------

SubBuffers::~SubBuffers() {
  for (auto &e : subs_) api_->clReleaseMemObject(e.second);
}

Expected<cl_mem> SubBuffers::get(cl_mem parent, uint64_t offset, uint64_t size) {
  if (offset == 0) return parent;
  auto key = std::make_tuple(parent, offset, size);
  auto it = subs_.find(key);
  if (it != subs_.end()) return it->second;
  if (offset % align_ != 0)
    return makeError("offset " + std::to_string(offset) + " is not a multiple of the device's " +
                     "base address alignment (" + std::to_string(align_) +
                     " bytes), which OpenCL sub-buffers require");
  cl_buffer_region region{size_t(offset), size_t(size)};
  cl_int rc = CL_SUCCESS;
  cl_mem sub = api_->clCreateSubBuffer(parent, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION,
                                       &region, &rc);
  if (rc != CL_SUCCESS) return clError("clCreateSubBuffer", rc);
  subs_.emplace(key, sub);
  return sub;
}

// ---- recordings ----------------------------------------------------------------------

Recording::~Recording() {
  if (lastUse) api->clReleaseEvent(lastUse);
  for (auto &p : parts)
    if (p.cb) cbApi->release(p.cb);
  for (cl_mem m : retained) api->clReleaseMemObject(m);
  for (cl_kernel k : kernels)
    if (k) api->clReleaseKernel(k);
}

// ---- the executable ------------------------------------------------------------------

OpenCLExecutable::OpenCLExecutable(OpenCLDevice &device, Graph flattened, rt::ExecMode mode,
                                   const rt::FinalizeOptions &opts)
    : rt::Executable(device, std::move(flattened), mode), dev_(&device), api_(&device.api()),
      host_(opts.host), planMemory_(opts.planMemory) {}

OpenCLExecutable::~OpenCLExecutable() {
  recordings_.clear();
  for (cl_kernel k : kernels_)
    if (k) api_->clReleaseKernel(k);
}

Error OpenCLExecutable::applyUpdate(const std::vector<uint32_t> &) {
  // Every recording resolved the old values (arguments set on its kernel objects,
  // launch sizes, commands recorded): drop them all; the next submission records the
  // updated graph. Eager submission reads graph() per node and needs nothing.
  recordings_.clear();
  return Error::success();
}

Error OpenCLExecutable::prepare(const rt::FinalizeOptions &opts) {
  // The plan is the graph's stored order and partitions (flattenSubgraphs checked or
  // computed them): one command buffer per device partition, host partitions between.
  order_ = graph_.order;
  std::vector<uint32_t> partOf(graph_.nodes.size(), 0);
  for (uint32_t p = 0; p < graph_.partitions.size(); ++p) {
    const Partition &part = graph_.partitions[p];
    const bool host = part.nodes.size() == 1 && graph_.nodes[part.nodes[0]].kind == NodeKind::Host;
    parts_.push_back({part.nodes, host});
    for (uint32_t n : part.nodes) partOf[n] = p;
  }
  // Sync points come from the graph's edges inside a partition; earlier partitions are
  // complete before a later one starts (in-order queue, partitions in index order).
  partPreds_.assign(graph_.nodes.size(), {});
  for (const Edge &e : graph_.edges)
    if (partOf[e.from] == partOf[e.to]) partPreds_[e.to].push_back(e.from);
  // Programs and one cl_kernel per graph kernel that a node launches or may launch.
  std::vector<bool> used(graph_.kernels.size(), false);
  bool anyHost = false;
  for (const Node &n : graph_.nodes) {
    if (n.kind == NodeKind::Kernel) used[n.kernel] = true;
    for (uint32_t k : n.alternatives) used[k] = true; // an update may switch to it
    if (n.kind == NodeKind::Host) anyHost = true;
  }
  kernels_.assign(graph_.kernels.size(), nullptr);
  kernelProgram_.assign(graph_.kernels.size(), nullptr);
  std::vector<std::shared_ptr<const Program>> byModule(graph_.modules.size());
  for (size_t k = 0; k < graph_.kernels.size(); ++k) {
    if (!used[k]) continue;
    const Kernel &kern = graph_.kernels[k];
    auto &prog = byModule[kern.module];
    if (!prog) {
      auto p = dev_->buildProgram(graph_.modules[kern.module], opts.useCache);
      if (!p) return p.error();
      prog = *p;
      programs_.push_back(prog);
    }
    kernelProgram_[k] = prog->program;
    cl_int rc = CL_SUCCESS;
    kernels_[k] = api_->clCreateKernel(prog->program, kern.name.c_str(), &rc);
    if (rc != CL_SUCCESS)
      return clError("clCreateKernel", rc).withContext("kernel '" + kern.name + "'");
  }
  if (anyHost) {
    auto h = rt::HostTasks::prepare(graph_, opts.host);
    if (!h) return h.error();
    hostTasks_ = std::move(*h);
  }
  return initOwnedSlots();
}

Error OpenCLExecutable::initOwnedSlots() { return allocateOwnedSlotsAs(host_, 1, &owned_, planMemory_); }

Error OpenCLExecutable::resolve(const std::vector<ResolvedSlot> &slots) {
  mems_.resize(graph_.slots.size());
  forEachSlotStorage(slots, owned_, [&](size_t i, OpenCLBuffer *b, uint64_t offset, uint64_t length) {
    mems_[i] = b ? SlotMem{b->mem(), offset, length, b->id()} : SlotMem{};
  });
  return Error::success();
}

Error OpenCLExecutable::setArgs(cl_kernel k, uint32_t n, const std::vector<uint64_t> &params,
                                SubBuffers &subs) {
  const Node &node = graph_.nodes[n];
  const Kernel &kern = graph_.kernels[node.kernel];
  for (cl_uint i = 0; i < node.args.size(); ++i) {
    const Arg &a = node.args[i];
    const uint32_t psize = i < kern.params.size() ? kern.params[i].size : 0;
    cl_int rc = CL_SUCCESS;
    switch (a.kind) {
    case ArgKind::Slot: {
      const SlotMem &m = mems_[a.index];
      if (!m.mem) return makeError(nodeLabel(graph_, n) + ": arg " + std::to_string(i) + ": slot is unbound");
      if (a.value >= m.length && m.length)
        return makeError(nodeLabel(graph_, n) + ": arg " + std::to_string(i) + ": offset " +
                         std::to_string(a.value) + " is past the bound range");
      auto mem = subs.get(m.mem, m.offset + a.value, m.length - a.value);
      if (!mem) return mem.error().withContext(nodeLabel(graph_, n) + ": arg " + std::to_string(i));
      cl_mem v = *mem;
      rc = api_->clSetKernelArg(k, i, sizeof(cl_mem), &v);
      break;
    }
    case ArgKind::Scalar:
    case ArgKind::Param: {
      uint64_t bits = a.kind == ArgKind::Scalar ? a.value : params[a.index];
      // A Param index past graph_.params is a stored expression (rt::Executable appends
      // their values to the parameters); its Arg keeps the argument's own type.
      uint32_t size = psize ? psize
                            : scalarSize(a.kind == ArgKind::Param && a.index < graph_.params.size()
                                             ? graph_.params[a.index].type
                                             : a.type);
      if (size > 8)
        return makeError(nodeLabel(graph_, n) + ": arg " + std::to_string(i) + ": by-value argument of " +
                         std::to_string(size) + " bytes is wider than a scalar");
      rc = api_->clSetKernelArg(k, i, size, &bits);
      break;
    }
    case ArgKind::LocalMem:
      rc = api_->clSetKernelArg(k, i, size_t(a.value), nullptr);
      break;
    case ArgKind::String:
      return makeError(nodeLabel(graph_, n) + ": arg " + std::to_string(i) + ": string argument for a kernel");
    }
    if (rc != CL_SUCCESS)
      return clError("clSetKernelArg", rc).withContext(nodeLabel(graph_, n) + ": arg " + std::to_string(i));
  }
  return Error::success();
}

Launch OpenCLExecutable::launchDims(uint32_t n, const std::vector<uint64_t> &params) const {
  const Node &node = graph_.nodes[n];
  const Kernel &kern = graph_.kernels[node.kernel];
  auto val = [&](const Dim &d) { return size_t(d.param != kNone ? params[d.param] : d.value); };
  Launch l;
  l.dims = node.range.dims;
  bool anyOffset = false;
  for (uint32_t d = 0; d < l.dims; ++d) {
    l.global[d] = val(node.range.global[d]);
    l.local[d] = val(node.range.local[d]);
    l.offset[d] = val(node.range.offset[d]);
    anyOffset |= l.offset[d] != 0;
  }
  l.hasLocal = node.range.hasLocal();
  if (!l.hasLocal && kern.reqdLocal[0] != 0) {
    l.hasLocal = true;
    for (uint32_t d = 0; d < l.dims; ++d) l.local[d] = kern.reqdLocal[d] ? kern.reqdLocal[d] : 1;
  }
  l.hasOffset = anyOffset;
  return l;
}

} // namespace cgraph::opencl
