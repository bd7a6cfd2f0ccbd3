// Programmatic edges (exec.h): kernel nodes whose kernels wait for their grid
// dependencies (the griddepcontrol prologue of codegen/ptx.h) get programmatic edges from
// the kernel nodes they depend on, and their launches during a capture allow
// programmatic stream serialization.
#include "exec.h"

#include <algorithm>
#include <cstring>

namespace cgraph::cuda {

void KernelHandleSet::reset(size_t expected) {
  size_t cap = 16;
  while (cap < 2 * expected + 2) cap <<= 1;
  slots_.assign(cap, nullptr);
  count_ = 0;
}

void KernelHandleSet::insert(gpu::GraphNodeHandle h) {
  if (!h) return;
  if (2 * (count_ + 1) > slots_.size()) grow();
  size_t i = at(h);
  while (slots_[i] && slots_[i] != h) i = (i + 1) & (slots_.size() - 1);
  if (!slots_[i]) ++count_;
  slots_[i] = h;
}

bool KernelHandleSet::contains(gpu::GraphNodeHandle h) const {
  if (slots_.empty() || !h) return false;
  for (size_t i = at(h); slots_[i]; i = (i + 1) & (slots_.size() - 1))
    if (slots_[i] == h) return true;
  return false;
}

size_t KernelHandleSet::at(gpu::GraphNodeHandle h) const {
  return size_t((uint64_t(reinterpret_cast<uintptr_t>(h)) * 0x9E3779B97F4A7C15ull) >> 24) & (slots_.size() - 1);
}

void KernelHandleSet::grow() {
  std::vector<gpu::GraphNodeHandle> old = std::move(slots_);
  reset(std::max<size_t>(old.size(), 8));
  for (gpu::GraphNodeHandle h : old) insert(h);
}

namespace {

bool moduleWaits(const gpu::ModuleRef &m) { return m && static_cast<const LoadedModule *>(m.get())->gridWait; }

} // namespace

// After the node plans: every kernel a node or an update may launch is loaded by then.
void CudaExecutable::prepareProgrammatic() {
  fnWaits_.assign(graph_.kernels.size(), 0);
  if (!dev_->programmaticEdges()) return;
  for (uint32_t k = 0; k < graph_.kernels.size(); ++k)
    fnWaits_[k] = fns_[k] && moduleWaits(byModule_[graph_.kernels[k].module]);
  builtinsWait_ = moduleWaits(builtins_);
}

bool CudaExecutable::programmaticInto(uint32_t p) const {
  if (p >= graph_.nodes.size() || p >= plans_.size()) return false;
  const Node &node = graph_.nodes[p];
  if (plans_[p].kind != NodePlan::Kernel) return false;
  if (node.kind != NodeKind::Kernel) return builtinsWait_; // a copy or fill as the builtin kernel
  if (node.kernel >= fnWaits_.size() || !fnWaits_[node.kernel]) return false;
  for (uint32_t k : node.alternatives)
    if (k >= fnWaits_.size() || !fnWaits_[k]) return false;
  return true;
}

void CudaExecutable::partitionBuildStarting(uint32_t pi) {
  kernelHandles_.reset(parts_[pi].nodes.size()); // handles of destroyed graphs may come back
}

Error CudaExecutable::addKernelGraphNode(gpu::GraphNodeHandle *n, gpu::GraphHandle g, uint32_t p,
                                         const std::vector<gpu::GraphNodeHandle> &deps, Launch &l) {
  ordinaryDeps_.clear();
  programmaticDeps_.clear();
  const bool split = programmaticInto(p);
  for (gpu::GraphNodeHandle d : deps)
    (split && kernelHandles_.contains(d) ? programmaticDeps_ : ordinaryDeps_).push_back(d);
  CGRAPH_RETURN_IF_ERROR(addKernelNodeWithEdges(n, g, ordinaryDeps_, programmaticDeps_, l));
  if (p < graph_.nodes.size()) {
    dev_->counters().programmaticEdges += programmaticDeps_.size();
    kernelHandles_.insert(*n);
  }
  return Error::success();
}

// One cuGraphAddNode with per-edge data where the driver has it; else
// cuGraphAddKernelNode and one cuGraphAddDependencies per programmatic edge.
Error CudaExecutable::addKernelNodeWithEdges(gpu::GraphNodeHandle *n, gpu::GraphHandle g,
                                             const std::vector<gpu::GraphNodeHandle> &ordinary,
                                             const std::vector<gpu::GraphNodeHandle> &programmatic, Launch &l) {
  if (programmatic.empty() || !api_->cuGraphAddNode) {
    CGRAPH_RETURN_IF_ERROR(dev_->driver().addKernelNode(n, g, ordinary, l));
    for (gpu::GraphNodeHandle d : programmatic) CGRAPH_RETURN_IF_ERROR(addProgrammaticEdge(g, d, *n));
    return Error::success();
  }
  std::vector<CUgraphNode> &from = edgeFrom_;
  std::vector<CUgraphEdgeData> &edges = edgeData_;
  from.clear();
  edges.clear();
  CUgraphEdgeData plain;
  std::memset(&plain, 0, sizeof(plain));
  CUgraphEdgeData prog = plain;
  prog.from_port = CU_GRAPH_KERNEL_NODE_PORT_PROGRAMMATIC; // when every block triggered or exited
  prog.type = CU_GRAPH_DEPENDENCY_TYPE_PROGRAMMATIC;
  for (gpu::GraphNodeHandle d : ordinary) {
    from.push_back(CUgraphNode(d));
    edges.push_back(plain);
  }
  for (gpu::GraphNodeHandle d : programmatic) {
    from.push_back(CUgraphNode(d));
    edges.push_back(prog);
  }
  CUgraphNodeParams np;
  std::memset(&np, 0, sizeof(np));
  np.type = CU_GRAPH_NODE_TYPE_KERNEL;
  const CUDA_KERNEL_NODE_PARAMS kp = kernelNodeParams(l);
  np.kernel.func = kp.func;
  np.kernel.gridDimX = kp.gridDimX;
  np.kernel.gridDimY = kp.gridDimY;
  np.kernel.gridDimZ = kp.gridDimZ;
  np.kernel.blockDimX = kp.blockDimX;
  np.kernel.blockDimY = kp.blockDimY;
  np.kernel.blockDimZ = kp.blockDimZ;
  np.kernel.sharedMemBytes = kp.sharedMemBytes;
  np.kernel.kernelParams = kp.kernelParams;
  CGRAPH_CU_CHECK(*api_, "cuGraphAddNode (kernel, programmatic edges)",
                  api_->cuGraphAddNode(reinterpret_cast<CUgraphNode *>(n), CUgraph(g), from.data(), edges.data(),
                                       from.size(), &np));
  return Error::success();
}

Error CudaExecutable::addProgrammaticEdge(gpu::GraphHandle g, gpu::GraphNodeHandle from, gpu::GraphNodeHandle to) {
  CUgraphEdgeData ed;
  std::memset(&ed, 0, sizeof(ed));
  ed.from_port = CU_GRAPH_KERNEL_NODE_PORT_PROGRAMMATIC;
  ed.type = CU_GRAPH_DEPENDENCY_TYPE_PROGRAMMATIC;
  CUgraphNode f = CUgraphNode(from), t = CUgraphNode(to);
  CGRAPH_CU_CHECK(*api_, "cuGraphAddDependencies (programmatic)", api_->cuGraphAddDependencies(CUgraph(g), &f, &t, &ed, 1));
  return Error::success();
}

Error CudaExecutable::launchEager(uint32_t p, Launch &l) {
  if (capturing_ && api_->cuLaunchKernelEx && programmaticInto(p)) return launchProgrammatic(l);
  return driver_->launchKernel(l);
}

// A stream launch that may start before the kernel ahead of it completes: the launch
// attribute of CUDA's programmatic dependent launch.
Error CudaExecutable::launchProgrammatic(Launch &l) {
  CUlaunchAttribute attr;
  std::memset(&attr, 0, sizeof(attr));
  attr.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
  attr.value.programmaticStreamSerializationAllowed = 1;
  CUlaunchConfig cfg;
  std::memset(&cfg, 0, sizeof(cfg));
  cfg.gridDimX = l.grid[0];
  cfg.gridDimY = l.grid[1];
  cfg.gridDimZ = l.grid[2];
  cfg.blockDimX = l.block[0];
  cfg.blockDimY = l.block[1];
  cfg.blockDimZ = l.block[2];
  cfg.sharedMemBytes = l.smem;
  cfg.hStream = dev_->stream();
  cfg.attrs = &attr;
  cfg.numAttrs = 1;
  ++dev_->counters().programmaticEdges; // an edge of the capture this launch goes into
  CGRAPH_CU_CHECK(*api_, "cuLaunchKernelEx (programmatic)",
                  api_->cuLaunchKernelEx(&cfg, CUfunction(l.fn), l.ptrs.data(), nullptr));
  return Error::success();
}

} // namespace cgraph::cuda
