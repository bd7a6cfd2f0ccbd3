// Kernel programs: choose the form the device takes, build it, keep it per device.
#include "internal.h"

#include "cgraph/kernel/spirv_to_llvm.h"

#include <chrono>
#include <functional>
#include <string_view>

namespace cgraph::opencl {

Program::~Program() {
  if (program) api->clReleaseProgram(program);
}

const char *programPathName(ProgramPath p) {
  switch (p) {
  case ProgramPath::IL: return "il";
  case ProgramPath::Spir: return "spir";
  case ProgramPath::Source: return "source";
  }
  return "?";
}

namespace {

// Bump when what reaches the driver changes for the same input (the SPIR-V -> SPIR
// lowering, the options we add): old binaries on disk then miss.
constexpr const char *kProgramCacheVersion = "cgraph-opencl 2 / LLVM 14"; // 2: mad() -> llvm.fmuladd

// CL_PROGRAM_BINARIES of a program built for one device; empty when the driver has
// none to give (then nothing is stored and the next process builds again).
std::vector<uint8_t> programBinary(const ClApi &api, cl_program p) {
  size_t size = 0;
  if (api.clGetProgramInfo(p, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, nullptr) != CL_SUCCESS || size == 0)
    return {};
  std::vector<uint8_t> binary(size);
  unsigned char *out = binary.data();
  if (api.clGetProgramInfo(p, CL_PROGRAM_BINARIES, sizeof out, &out, nullptr) != CL_SUCCESS) return {};
  return binary;
}

const KernelForm *findForm(const KernelModule &m, FormKind kind, const char *target = nullptr) {
  for (const KernelForm &f : m.forms)
    if (f.kind == kind && (!target || f.target == target)) return &f;
  return nullptr;
}

std::string buildLog(const ClApi &api, cl_program p, cl_device_id d) {
  size_t n = 0;
  if (api.clGetProgramBuildInfo(p, d, CL_PROGRAM_BUILD_LOG, 0, nullptr, &n) != CL_SUCCESS) return {};
  std::string s(n, '\0');
  if (api.clGetProgramBuildInfo(p, d, CL_PROGRAM_BUILD_LOG, n, s.data(), nullptr) != CL_SUCCESS)
    return {};
  while (!s.empty() && (s.back() == '\0' || s.back() == '\n')) s.pop_back();
  return s;
}

} // namespace

Expected<ProgramPath> OpenCLDevice::choosePath(const KernelModule &m) const {
  const bool hasSpirv = findForm(m, FormKind::SpirV) != nullptr;
  const bool hasBitcode = findForm(m, FormKind::LLVMBitcode, "spir64") != nullptr;
  const bool hasSource = findForm(m, FormKind::OpenCLC) != nullptr;
  const bool canIL = props_.il && hasSpirv;
  const bool canSpir = props_.spir && (hasSpirv || hasBitcode);
  const bool canSource = props_.compiler && hasSource;
  const std::string &force = opts_.forcePath;
  if (force == "il" || (force.empty() && canIL)) {
    if (canIL) return ProgramPath::IL;
  } else if (force == "spir" || (force.empty() && canSpir)) {
    if (canSpir) return ProgramPath::Spir;
  } else if (force == "source" || (force.empty() && canSource)) {
    if (canSource) return ProgramPath::Source;
  }
  std::string why = "module '" + m.name + "': device '" + info_.name + "' ";
  if (!force.empty()) return makeError(why + "cannot build the module through the forced path '" + force + "'");
  return makeError(why + "takes " + (props_.il ? "SPIR-V IL" : "no SPIR-V IL") + ", " +
                   (props_.spir ? "SPIR" : "no SPIR") + ", " +
                   (props_.compiler ? "OpenCL C" : "no OpenCL C") +
                   (hasSource ? "" : " and the module carries no OpenCL C source"));
}

Expected<std::shared_ptr<const Program>> OpenCLDevice::buildProgram(const KernelModule &m, bool useCache) {
  Expected<ProgramPath> path = choosePath(m);
  if (!path) return path.error();

  // The input bytes and options of the chosen path; the cache key is both.
  const uint8_t *bytes = nullptr;
  size_t size = 0;
  std::string options;
  FormKind form = FormKind::SpirV;
  if (*path == ProgramPath::IL) {
    const KernelForm *f = findForm(m, FormKind::SpirV);
    bytes = f->bytes.data();
    size = f->bytes.size();
  } else if (*path == ProgramPath::Spir) {
    options = "-x spir -spir-std=1.2";
    if (const KernelForm *f = findForm(m, FormKind::SpirV)) {
      bytes = f->bytes.data();
      size = f->bytes.size();
    } else {
      const KernelForm *b = findForm(m, FormKind::LLVMBitcode, "spir64");
      bytes = b->bytes.data();
      size = b->bytes.size();
      form = FormKind::LLVMBitcode;
    }
  } else {
    const KernelForm *f = findForm(m, FormKind::OpenCLC);
    bytes = f->bytes.data();
    size = f->bytes.size();
    options = f->options;
    form = FormKind::OpenCLC;
  }
  if (!useCache) {
    Expected<std::shared_ptr<Program>> built = compileProgram(m, *path, bytes, size, options, form);
    if (!built) return built.error();
    return std::shared_ptr<const Program>(std::move(*built));
  }

  // lib/cache's KernelCache: programs in memory (full key bytes compared), their
  // binaries (CL_PROGRAM_BINARIES) on disk.
  std::call_once(cacheOnce_, [&] {
    programs_ = ProgramCache::fromEnvironment(opts_.cache.dir, opts_.cache.persistent);
  });
  cache::CacheKey key;
  key.backend = "opencl";
  key.deviceName = info_.name;
  key.driverVersion = info_.driverVersion;
  // The SPIR path lowers SPIR-V with our LLVM, so our version is part of the identity.
  key.compilerVersion = std::string(kProgramCacheVersion) + " / path " + programPathName(*path);
  key.buildOptions = options;
  return programs_->getOrBuild(
      key, bytes, size, "opencl-program-binary",
      [&](const std::vector<uint8_t> &binary) { return loadProgramBinary(m, binary); },
      [&]() -> Expected<ProgramCache::Built> {
        Expected<std::shared_ptr<Program>> built = compileProgram(m, *path, bytes, size, options, form);
        if (!built) return built.error();
        std::vector<uint8_t> binary = programBinary(*api_, (*built)->program);
        return ProgramCache::Built{std::move(*built), std::move(binary)};
      });
}

Expected<std::shared_ptr<Program>> OpenCLDevice::compileProgram(const KernelModule &m, ProgramPath path,
                                                                const uint8_t *bytes, size_t size,
                                                                const std::string &options, FormKind form) {
  const std::string where = "module '" + m.name + "'";
  std::vector<uint8_t> converted;
  auto prog = std::make_shared<Program>();
  prog->api = api_;
  prog->form = form;
  cl_int rc = CL_SUCCESS;
  if (path == ProgramPath::IL) {
    prog->program = api_->clCreateProgramWithIL(context_, bytes, size, &rc);
    if (rc != CL_SUCCESS) return clError("clCreateProgramWithIL", rc).withContext(where);
  } else if (path == ProgramPath::Spir) {
    if (form == FormKind::SpirV) {
      Expected<std::vector<uint8_t>> bc = spirvToSpirBitcode(bytes, size);
      if (!bc) return bc.error().withContext(where);
      converted = std::move(*bc);
      bytes = converted.data();
      size = converted.size();
    }
    cl_int status = CL_SUCCESS;
    const unsigned char *bin = bytes;
    prog->program = api_->clCreateProgramWithBinary(context_, 1, &props_.device, &size, &bin,
                                                    &status, &rc);
    if (rc != CL_SUCCESS) return clError("clCreateProgramWithBinary", rc).withContext(where);
  } else {
    const char *src = reinterpret_cast<const char *>(bytes);
    prog->program = api_->clCreateProgramWithSource(context_, 1, &src, &size, &rc);
    if (rc != CL_SUCCESS) return clError("clCreateProgramWithSource", rc).withContext(where);
  }
  auto t0 = std::chrono::steady_clock::now();
  rc = api_->clBuildProgram(prog->program, 1, &props_.device, options.c_str(), nullptr, nullptr);
  prog->buildMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  if (rc != CL_SUCCESS) {
    std::string log = buildLog(*api_, prog->program, props_.device);
    return makeError(where + ": clBuildProgram (" + programPathName(path) + "): " +
                     clErrorName(rc) + (log.empty() ? "" : ": " + log));
  }
  return prog;
}

// A program from the device's own binary (a persistent cache hit). Any refusal is an
// Error the cache treats as a miss: the program is then rebuilt from its form.
Expected<std::shared_ptr<const Program>> OpenCLDevice::loadProgramBinary(const KernelModule &m,
                                                                         const std::vector<uint8_t> &binary) {
  const std::string where = "module '" + m.name + "': cached program binary";
  auto prog = std::make_shared<Program>();
  prog->api = api_;
  prog->form = FormKind::SpirV;
  prog->fromBinary = true;
  cl_int rc = CL_SUCCESS, status = CL_SUCCESS;
  size_t size = binary.size();
  const unsigned char *bin = binary.data();
  prog->program = api_->clCreateProgramWithBinary(context_, 1, &props_.device, &size, &bin, &status, &rc);
  if (rc != CL_SUCCESS || status != CL_SUCCESS)
    return clError("clCreateProgramWithBinary", rc != CL_SUCCESS ? rc : status).withContext(where);
  auto t0 = std::chrono::steady_clock::now();
  // No options: the binary is already compiled for this device ("-x spir" would make
  // the driver read it as SPIR again).
  rc = api_->clBuildProgram(prog->program, 1, &props_.device, "", nullptr, nullptr);
  prog->buildMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  if (rc != CL_SUCCESS) return clError("clBuildProgram", rc).withContext(where);
  return std::shared_ptr<const Program>(std::move(prog));
}

} // namespace cgraph::opencl
