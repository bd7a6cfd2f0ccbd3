// Types shared by the OpenCL backend's source files. Not installed.
#pragma once

#include "cgraph/backends/opencl/opencl_backend.h"
#include "cl_api.h"

#include "cgraph/cache/kernel_cache.h"
#include "cgraph/runtime/wait_once_event.h"

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace cgraph::opencl {

// What the backend needs to know about a device beyond rt::DeviceInfo.
struct DeviceProps {
  cl_platform_id platform = nullptr;
  cl_device_id device = nullptr;
  bool il = false;            // clCreateProgramWithIL accepts SPIR-V
  bool spir = false;          // cl_khr_spir
  bool compiler = false;      // CL_DEVICE_COMPILER_AVAILABLE
  bool commandBuffer = false; // cl_khr_command_buffer, every entry point found
  bool simultaneousUse = false; // a pending command buffer may be enqueued again
  bool queueProfiling = false;
  bool preResolved = false;   // replay strategy "pre-resolved" (else "command-buffer")
  uint32_t baseAddrAlign = 1; // bytes; sub-buffer origins must be multiples of it
};

// Gathers DeviceInfo + DeviceProps (backend.cpp), the replay strategy included (the
// rule in opencl_backend.h; fails on a bad CGRAPH_OPENCL_REPLAY value).
Expected<std::pair<rt::DeviceInfo, DeviceProps>> describeDevice(const ClApi &api,
                                                                cl_platform_id platform,
                                                                cl_device_id device,
                                                                const OpenCLBackendOptions &opts);

class OpenCLDevice;

class OpenCLBuffer final : public rt::Buffer {
public:
  OpenCLBuffer(OpenCLDevice &device, cl_mem mem, uint64_t size);
  ~OpenCLBuffer() override;
  uint64_t size() const override { return size_; }
  const rt::Device *device() const override;
  cl_mem mem() const { return mem_; }

private:
  OpenCLDevice *device_;
  cl_mem mem_;
  uint64_t size_;
};

// A built program, shared by the device's in-memory cache and the executables using it.
struct Program {
  const ClApi *api = nullptr;
  cl_program program = nullptr;
  FormKind form = FormKind::SpirV; // the form it was built from
  double buildMs = 0;              // clBuildProgram wall time
  bool fromBinary = false;         // built from a cached program binary
  ~Program();
};

// Which form the device builds a module from (see opencl_backend.h for the order).
enum class ProgramPath { IL, Spir, Source };
const char *programPathName(ProgramPath p);

class OpenCLDevice final : public rt::Device {
public:
  static Expected<std::unique_ptr<OpenCLDevice>> open(const ClApi &api, rt::DeviceInfo info,
                                                      DeviceProps props,
                                                      const OpenCLBackendOptions &opts);
  ~OpenCLDevice() override;

  const rt::DeviceInfo &info() const override { return info_; }
  Expected<std::unique_ptr<rt::Buffer>> allocate(uint64_t bytes, uint32_t alignment) override;
  Error write(rt::Buffer &dst, uint64_t offset, const void *src, uint64_t bytes) override;
  Error read(rt::Buffer &src, uint64_t offset, void *dst, uint64_t bytes) override;

  const ClApi &api() const { return *api_; }
  const ClCommandBufferApi &commandBufferApi() const { return cb_; }
  const DeviceProps &props() const { return props_; }
  cl_context context() const { return context_; }
  cl_command_queue queue() const { return queue_; }
  const OpenCLBackendOptions &options() const { return opts_; }
  // Replay through command buffers (else the pre-resolved node list).
  bool useCommandBuffers() const { return !props_.preResolved; }

  // kernel_compiler.cpp: the path chosen for `m`, then the program built from it,
  // through lib/cache's KernelCache (memory, then program binaries on disk) when
  // `useCache`. A cached binary the driver refuses is a miss and a rebuild.
  Expected<ProgramPath> choosePath(const KernelModule &m) const;
  Expected<std::shared_ptr<const Program>> buildProgram(const KernelModule &m, bool useCache);


protected:
  Expected<std::unique_ptr<rt::Executable>> finalizeFlat(FlatGraph flat, const rt::FinalizeOptions &opts) override;

private:
  OpenCLDevice(const ClApi &api, rt::DeviceInfo info, DeviceProps props,
               const OpenCLBackendOptions &opts);
  const ClApi *api_;
  ClCommandBufferApi cb_;
  rt::DeviceInfo info_;
  DeviceProps props_;
  OpenCLBackendOptions opts_;
  cl_context context_ = nullptr;
  cl_command_queue queue_ = nullptr;
  using ProgramCache = cache::KernelCache<Program>;
  Expected<std::shared_ptr<Program>> compileProgram(const KernelModule &m, ProgramPath path, const uint8_t *bytes,
                                                    size_t size, const std::string &options, FormKind form);
  Expected<std::shared_ptr<const Program>> loadProgramBinary(const KernelModule &m, const std::vector<uint8_t> &binary);
  std::once_flag cacheOnce_;
  std::unique_ptr<ProgramCache> programs_; // created on first cached build (reads the environment)
};

// A submission's completion (event.cpp). `last` completes after all the submission's
// work (in-order queue); `profiled` holds one event per node when profiling was asked.
class OpenCLEvent final : public rt::WaitOnceEvent {
public:
  OpenCLEvent(const ClApi &api, cl_event last,
              std::vector<std::pair<uint32_t, cl_event>> profiled);
  ~OpenCLEvent() override;
  bool isComplete() const override;
  cl_event handle() const { return last_; }

private:
  Error waitOnce() override;

  const ClApi *api_;
  cl_event last_;
  std::vector<std::pair<uint32_t, cl_event>> profiled_;
};

// Finalizes `flattened` (validated, subgraphs inlined) for `device` (command_buffer.cpp).
Expected<std::unique_ptr<rt::Executable>> makeExecutable(OpenCLDevice &device, Graph flattened,
                                                         const rt::FinalizeOptions &opts);

} // namespace cgraph::opencl
