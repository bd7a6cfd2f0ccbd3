// The executable graph: preparation (programs, kernel objects), kernel arguments and
// launch sizes, and what recordings own. The recordings are cl_khr_command_buffer
// command buffers or pre-resolved node lists, one per binding set: PoCL 3.1 has no
// mutable dispatch (cgraph/runtime/recorded_executable.h says why that needs them).
#include "exec.h"

#include "cgraph/runtime/finalize_progress.h"

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

OpenCLExecutable::OpenCLExecutable(OpenCLDevice &device, Graph flattened, rt::ExecMode mode)
    : RecordedExecutable(device, std::move(flattened), mode,
                         Config{1, device.options().maxRecordings, false}),
      dev_(&device), api_(&device.api()) {}

OpenCLExecutable::~OpenCLExecutable() {
  recordings_.clear();
  for (cl_kernel k : kernels_)
    if (k) api_->clReleaseKernel(k);
}

Error OpenCLExecutable::prepareDevice(const rt::FinalizeOptions &opts) {
  // Programs and one cl_kernel per graph kernel that a node launches or may launch.
  const std::vector<bool> used = kernelsUsed();
  rt::ModuleProgress progress(opts, graph_.modules.size());
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
      progress.ready(kern.module);
    }
    kernelProgram_[k] = prog->program;
    cl_int rc = CL_SUCCESS;
    kernels_[k] = api_->clCreateKernel(prog->program, kern.name.c_str(), &rc);
    if (rc != CL_SUCCESS)
      return clError("clCreateKernel", rc).withContext("kernel '" + kern.name + "'");
  }
  return Error::success();
}

Error OpenCLExecutable::setArgs(cl_kernel k, uint32_t n, const std::vector<uint64_t> &params,
                                SubBuffers &subs) {
  const Node &node = graph_.nodes[n];
  for (cl_uint i = 0; i < node.args.size(); ++i) {
    Expected<KernelArg> a = kernelArg(n, i, params);
    if (!a) return a.error();
    cl_int rc = CL_SUCCESS;
    switch (a->kind) {
    case KernelArg::Slot: {
      // A kernel argument is a cl_mem, never a pointer + offset: a sub-buffer at offsets.
      const SlotMem &m = *a->slot;
      auto mem = subs.get(memOf(m), m.offset + a->offset, m.length - a->offset);
      if (!mem) return mem.error().withContext(nodeLabel(graph_, n) + ": arg " + std::to_string(i));
      cl_mem v = *mem;
      rc = api_->clSetKernelArg(k, i, sizeof(cl_mem), &v);
      break;
    }
    case KernelArg::Value:
      rc = api_->clSetKernelArg(k, i, size_t(a->size), &a->bits);
      break;
    case KernelArg::Local:
      rc = api_->clSetKernelArg(k, i, size_t(a->size), nullptr);
      break;
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
