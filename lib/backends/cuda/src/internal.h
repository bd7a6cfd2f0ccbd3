// Types shared by the CUDA backend's source files. Not installed.
#pragma once

#include "cgraph/backends/cuda/cuda_backend.h"
#include "cgraph/backends/cuda/table_loader.h"
#include "cgraph/codegen/ptx.h"
#include "cu_api.h"

#include "cgraph/backends/gpu_common/driver.h"
#include "cgraph/cache/kernel_cache.h"
#include "cgraph/runtime/wait_once_event.h"

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace cgraph::cuda {

using codegen::lowerSpirvToPtx;
using codegen::ptxLoweringVersion;
using codegen::ptxTargetFor;
using codegen::waitsForGridDependencies;

class CudaDevice;

class CudaBuffer final : public rt::Buffer {
public:
  // `owns`: the buffer frees `ptr` when destroyed (false: the caller's memory, wrapped).
  CudaBuffer(CudaDevice &device, CUdeviceptr ptr, uint64_t size, bool owns = true)
      : device_(&device), ptr_(ptr), size_(size), owns_(owns) {}
  ~CudaBuffer() override;
  uint64_t size() const override { return size_; }
  const rt::Device *device() const override;
  CUdeviceptr ptr() const { return ptr_; }

private:
  CudaDevice *device_;
  CUdeviceptr ptr_;
  uint64_t size_;
  bool owns_;
};

// A loaded CUmodule and its kernels; shared by the device's cache and executables.
struct LoadedModule {
  const CuApi *api = nullptr;
  CUcontext ctx = nullptr;
  CUmodule module = nullptr;
  std::string from; // "cubin form", "ptx form", "spir-v"
  bool gridWait = false; // its kernels have the griddepcontrol prologue (ptx.h)
  ~LoadedModule();
  Expected<CUfunction> function(const std::string &name) const;
};

struct AtomicCounters : gpu::ReplayCounters {
  std::atomic<uint64_t> lowerings{0}, ptxJits{0}, cubinForms{0}, conditionalNodes{0}, collectiveRecaptures{0};
  std::atomic<uint64_t> programmaticEdges{0}; // added to graphs, captures included
};

class CudaDevice;
// The gpu::Driver over `device`'s CUDA table, context and stream (driver.cpp).
std::unique_ptr<gpu::Driver> makeCudaDriver(CudaDevice &device);
// A launch as kernel-node parameters (pointers into `l`: keep it alive and bound).
CUDA_KERNEL_NODE_PARAMS kernelNodeParams(gpu::Launch &l);

class CudaDevice final : public rt::Device {
public:
  static Expected<std::unique_ptr<CudaDevice>> open(const CuApi &api, int ordinal,
                                                    const CudaBackendOptions &opts);
  ~CudaDevice() override;

  const rt::DeviceInfo &info() const override { return info_; }
  Expected<std::unique_ptr<rt::Buffer>> allocate(uint64_t bytes, uint32_t alignment) override;
  Error write(rt::Buffer &dst, uint64_t offset, const void *src, uint64_t bytes) override;
  Error read(rt::Buffer &src, uint64_t offset, void *dst, uint64_t bytes) override;
  // From another CUDA device's buffer (or this one's): cuMemcpyPeerAsync, never
  // through host memory.
  Error copyFromDevice(rt::Device &from, rt::Buffer &src, uint64_t srcOffset, rt::Buffer &dst, uint64_t dstOffset,
                       uint64_t bytes) override;
  // Collective nodes: on the device's stream through NCCL (lib/comm/nccl) on this GPU.
  CollectiveSupport collectiveSupport() const override { return CollectiveSupport::Stream; }
  int communicatorDevice() const override { return ordinal(); }

  const CuApi &api() const { return *api_; }
  int ordinal() const { return int(dev_); }
  CUcontext context() const { return ctx_; }
  CUstream stream() const { return stream_; }
  // Makes the device's primary context current on the calling thread.
  Error makeCurrent() const;
  unsigned sm() const { return sm_; } // PTX target (ptxTargetFor)
  unsigned cc() const { return ccMajor_ * 10 + ccMinor_; }
  // Replay graphs may have programmatic edges: the option is on and the driver has
  // edges with data (the kernels' modules say whether they wait: LoadedModule).
  bool programmaticEdges() const { return opts_.programmaticEdges && api_->cuGraphAddDependencies; }
  // The options as resolveOptions() filled them: every optional field holds a value.
  uint64_t coarsenMinItems() const { return *opts_.coarsenMinItems; }
  bool pinnedPool() const { return *opts_.pinnedPool; }
  bool nativeConditionals() const { return *opts_.nativeConditionals; }
  AtomicCounters &counters() { return counters_; }
  // The shared executable's driver interface over this device (lives as long as it).
  gpu::Driver &driver() { return *driver_; }
  // Completion events (CU_EVENT_DISABLE_TIMING) reused across submissions: creating and
  // destroying one per submission costs about a microsecond of host time each.
  Expected<CUevent> takeEvent() const;
  void returnEvent(CUevent e) const;

  // kernel_compiler.cpp: the module for `m` (form choice as in cuda_backend.h).
  Expected<std::shared_ptr<const LoadedModule>> loadModule(const KernelModule &m, bool useCache);
  // The fill and copy kernels (table ABI), built once per device.
  Expected<std::shared_ptr<const LoadedModule>> builtinModule();
  // The set-condition kernel of native conditional nodes (device/set_condition.cu,
  // embedded at build time), loaded once per device; an error says why conditionals
  // must run runtime-driven (no nvcc at build time, a driver without conditional
  // nodes, no cubin for this device's architecture).
  Expected<CUfunction> setConditionKernel();
  // The table loader variant with room for `entries` table values: a kernel `(u64
  // *table, u32 n, u64 values[capacity])` that copies its by-value values into the
  // device table (exec.h's parameter loader; *capacity gets its size). PTX written
  // here, assembled once per device through the cubin cache.
  Expected<CUfunction> tableLoader(size_t entries, size_t *capacity);
  // The ring table loader from the same module: a kernel `(u64 *table, u32 n, const
  // u64 *ring, u32 depth, u32 *counter, u32 *loaded)`, launched as one block, that
  // reads launch number c from *counter, copies entry c % depth of `ring` (pinned host
  // memory) into the table, then stores c + 1 to *counter and *loaded (exec.h's ring
  // mode). An error when CudaBackendOptions::tableRing is off.
  Expected<CUfunction> ringLoader();
  // The done marker from the same module: a one-thread kernel `(u32 *counter, u32
  // *done)` that copies the ring loader's count to *done (pinned host memory) after a
  // system-wide fence (exec.h's done word). An error when CudaBackendOptions::tableRing
  // or completionWord is off.
  Expected<CUfunction> doneMarker();


protected:
  Expected<std::unique_ptr<rt::Executable>> finalizeFlat(FlatGraph flat, const rt::FinalizeOptions &opts) override;
  // CUDA conditional nodes where the driver, the options and the graph allow
  // (nativeConditionals, command_buffer.cpp).
  Error runsConditionalsNatively(const Graph &flat, const rt::FinalizeOptions &opts) override;

private:
  CudaDevice(const CuApi &api, const CudaBackendOptions &opts) : api_(&api), opts_(opts) {}
  Expected<std::vector<uint8_t>> ptxToCubin(const std::string &ptx, const std::string &what);
  // The cubin cache (created on first use; call with mutex_ held) and its key for an
  // image built from `input` ("spir-v lowered for sm_90", "ptx form ...") with kernels `names`.
  cache::KernelCache<LoadedModule> &cubinCache();
  cache::CacheKey cubinKey(const std::string &input, const std::string &names) const;
  Expected<std::shared_ptr<const LoadedModule>> moduleFromCubin(const std::vector<uint8_t> &cubin, bool gridWait,
                                                                const std::string &from) const;
  const CuApi *api_;
  CudaBackendOptions opts_;
  rt::DeviceInfo info_;
  CUdevice dev_ = 0;
  CUcontext ctx_ = nullptr;
  CUstream stream_ = nullptr;
  int ccMajor_ = 0, ccMinor_ = 0;
  unsigned sm_ = 0;
  AtomicCounters counters_;
  std::mutex mutex_;
  std::unique_ptr<cache::KernelCache<LoadedModule>> modules_; // memory + disk (cubins)
  std::shared_ptr<const LoadedModule> loader_; // the table loader module, once loaded
  Expected<std::shared_ptr<const LoadedModule>> loaderModule(); // loads it (mutex_ held)
  std::shared_ptr<const LoadedModule> builtins_;
  std::shared_ptr<const LoadedModule> setCond_;
  mutable std::mutex eventsMutex_;
  mutable std::vector<CUevent> freeEvents_;
  std::mutex peersMutex_;
  std::vector<CUcontext> peers_; // contexts this one has asked peer access to
  void enablePeerAccess(const CudaDevice &source);
  bool setCondTried_ = false;
  Error setCondError_;
  std::unique_ptr<gpu::Driver> driver_;
};

// A submission's completion: `done` recorded on the stream after its last work.
class CudaEvent final : public rt::WaitOnceEvent {
public:
  // `check` runs once after the submission completed; its error is the event's (the
  // while-loop trip limit of native conditional nodes).
  // `done` comes from CudaDevice::takeEvent when `pooled` (returned to the device on
  // destruction), else it is destroyed.
  CudaEvent(const CudaDevice &dev, CUevent done, CUevent start,
            std::vector<std::pair<uint32_t, std::pair<CUevent, CUevent>>> nodes,
            std::function<Error()> check = {}, bool pooled = false);
  ~CudaEvent() override;
  bool isComplete() const override;

private:
  Error waitOnce() override;

  const CudaDevice *dev_;
  CUevent done_, start_;
  std::vector<std::pair<uint32_t, std::pair<CUevent, CUevent>>> nodes_;
  std::function<Error()> check_;
  bool pooled_ = false;
};

// A replay submission whose graphs end with the done marker (CudaDevice::doneMarker): complete once the u32 at `word` (pinned host memory the device writes;
// shared with the executable, which may go first) reaches `target` modulo 2^32. No
// driver object per submission. wait() reads the word, spinning for the first 20 us,
// then yielding, then sleeping 20 us at a time past 2 ms, and calls cuStreamQuery every
// 256 reads so that a device fault (the marker never runs) is an error, not a hang.
// Thread-safe; the device must outlive the event, as for CudaEvent.
// Never profiled (profiled submissions use CudaEvent), so its timings stay empty.
class WordEvent final : public rt::WaitOnceEvent {
public:
  WordEvent(const CudaDevice &dev, std::shared_ptr<void> word, uint32_t target)
      : dev_(&dev), word_(std::move(word)), target_(target) {}
  bool isComplete() const override;

private:
  Error waitOnce() override;

  bool reached() const {
    const uint32_t w = __atomic_load_n(static_cast<const uint32_t *>(word_.get()), __ATOMIC_ACQUIRE);
    return int32_t(w - target_) >= 0;
  }
  const CudaDevice *dev_;
  std::shared_ptr<void> word_;
  uint32_t target_;
};

Expected<std::unique_ptr<rt::Executable>> makeExecutable(CudaDevice &device, const Graph *original, Graph flattened,
                                                         const rt::FinalizeOptions &opts, double flattenUs = -1);

} // namespace cgraph::cuda
