#include "cl_api.h"

#include <dirent.h>
#include <dlfcn.h>

#include <cstdlib>
#include <fstream>
#include <mutex>
#include <vector>

namespace cgraph::opencl {

namespace {

struct Loaded {
  ClApi api;
  Error error;
};

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define CGRAPH_CL_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) ||                 \
    __has_feature(memory_sanitizer)
#define CGRAPH_CL_SANITIZED 1
#endif
#endif

// The vendor libraries the ICD loader will open, from the .icd files it reads.
[[maybe_unused]] std::vector<std::string> vendorLibraries() { // unused in sanitizer builds
  std::vector<std::string> libs;
  const char *env = std::getenv("OCL_ICD_VENDORS");
  std::string dir = env && *env ? env : "/etc/OpenCL/vendors";
  DIR *d = opendir(dir.c_str());
  if (!d) return libs;
  while (dirent *e = readdir(d)) {
    std::string name = e->d_name;
    if (name.size() < 5 || name.compare(name.size() - 4, 4, ".icd") != 0) continue;
    std::ifstream f(dir + "/" + name);
    std::string lib;
    if (std::getline(f, lib)) {
      while (!lib.empty() && (lib.back() == '\r' || lib.back() == ' ')) lib.pop_back();
      if (!lib.empty()) libs.push_back(lib);
    }
  }
  closedir(d);
  return libs;
}

// Why: our programs link clang/LLVM 14 (libclang-cpp.so.14, whose symbols carry no
// version), and a vendor driver may link another clang (Debian's PoCL 3.1 links
// libclang-cpp.so.15). In the default lookup order the driver's clang calls would bind
// to our clang 14 and crash in the driver's compiler. Opening each vendor library first
// with RTLD_DEEPBIND puts its own dependencies ahead of the global scope; the ICD
// loader's later dlopen of the same library gets this handle back.
// Sanitizer runtimes refuse RTLD_DEEPBIND, so sanitized builds skip it (and probe()
// reports the conflict instead of crashing, see below).
void preloadVendorsIsolated() {
#ifndef CGRAPH_CL_SANITIZED
  for (const std::string &lib : vendorLibraries()) dlopen(lib.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
#endif
}

// True when the vendor libraries cannot be isolated from clang 14. This backend links
// lib/kernel, so clang 14 is always in the process; a driver that brings its own clang
// (Debian's PoCL: clang 15) then binds to ours and crashes, at run time or in its exit
// destructors. Without RTLD_DEEPBIND (sanitizer builds) no driver is loaded at all.
bool clangConflict() {
#ifdef CGRAPH_CL_SANITIZED
  return true;
#else
  return false;
#endif
}

Loaded load() {
  Loaded out;
  if (clangConflict()) {
    out.error = makeError("OpenCL drivers cannot be isolated from this process's clang "
                          "(RTLD_DEEPBIND is unavailable in sanitizer builds)");
    return out;
  }
  preloadVendorsIsolated();
  // The versioned name is what the ICD loader packages install (ocl-icd-libopencl1);
  // the unversioned one only exists with the -dev package.
  const char *names[] = {"libOpenCL.so.1", "libOpenCL.so"};
  void *lib = nullptr;
  std::string dlerr;
  for (const char *n : names) {
    lib = dlopen(n, RTLD_NOW | RTLD_LOCAL);
    if (lib) {
      out.api.libraryPath = n;
      break;
    }
    const char *e = dlerror();
    if (dlerr.empty() && e) dlerr = e;
  }
  if (!lib) {
    out.error = makeError("libOpenCL.so.1 not found (" + dlerr + ")");
    return out;
  }
#define CGRAPH_CL_RESOLVE(name)                                                          \
  out.api.name = reinterpret_cast<decltype(&::name)>(dlsym(lib, #name));                \
  if (!out.api.name) {                                                                   \
    out.error = makeError(out.api.libraryPath + ": entry point " #name " not found");    \
    return out;                                                                          \
  }
  CGRAPH_CL_CORE_FUNCTIONS(CGRAPH_CL_RESOLVE)
#undef CGRAPH_CL_RESOLVE
#define CGRAPH_CL_RESOLVE_OPT(name)                                                      \
  out.api.name = reinterpret_cast<decltype(&::name)>(dlsym(lib, #name));
  CGRAPH_CL_OPTIONAL_FUNCTIONS(CGRAPH_CL_RESOLVE_OPT)
#undef CGRAPH_CL_RESOLVE_OPT
  return out;
}

} // namespace

Expected<const ClApi *> loadClApi() {
  static Loaded loaded = load(); // thread-safe static initialization
  if (loaded.error) return loaded.error;
  return &loaded.api;
}

ClCommandBufferApi loadCommandBufferApi(const ClApi &api, cl_platform_id platform) {
  ClCommandBufferApi cb;
  auto get = [&](const char *name) {
    return api.clGetExtensionFunctionAddressForPlatform(platform, name);
  };
  cb.create = reinterpret_cast<clCreateCommandBufferKHR_fn>(get("clCreateCommandBufferKHR"));
  cb.finalize = reinterpret_cast<clFinalizeCommandBufferKHR_fn>(get("clFinalizeCommandBufferKHR"));
  cb.release = reinterpret_cast<clReleaseCommandBufferKHR_fn>(get("clReleaseCommandBufferKHR"));
  cb.enqueue = reinterpret_cast<clEnqueueCommandBufferKHR_fn>(get("clEnqueueCommandBufferKHR"));
  cb.ndrange = reinterpret_cast<clCommandNDRangeKernelKHR_fn>(get("clCommandNDRangeKernelKHR"));
  cb.copy = reinterpret_cast<clCommandCopyBufferKHR_fn>(get("clCommandCopyBufferKHR"));
  cb.copyRect = reinterpret_cast<clCommandCopyBufferRectKHR_fn>(get("clCommandCopyBufferRectKHR"));
  cb.fill = reinterpret_cast<clCommandFillBufferKHR_fn>(get("clCommandFillBufferKHR"));
  return cb;
}

std::string clErrorName(cl_int code) {
  switch (code) {
#define C(x) case x: return #x;
    C(CL_SUCCESS) C(CL_DEVICE_NOT_FOUND) C(CL_DEVICE_NOT_AVAILABLE) C(CL_COMPILER_NOT_AVAILABLE)
    C(CL_MEM_OBJECT_ALLOCATION_FAILURE) C(CL_OUT_OF_RESOURCES) C(CL_OUT_OF_HOST_MEMORY)
    C(CL_PROFILING_INFO_NOT_AVAILABLE) C(CL_MEM_COPY_OVERLAP) C(CL_BUILD_PROGRAM_FAILURE)
    C(CL_MAP_FAILURE) C(CL_MISALIGNED_SUB_BUFFER_OFFSET)
    C(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST) C(CL_COMPILE_PROGRAM_FAILURE)
    C(CL_LINK_PROGRAM_FAILURE) C(CL_INVALID_VALUE) C(CL_INVALID_DEVICE_TYPE)
    C(CL_INVALID_PLATFORM) C(CL_INVALID_DEVICE) C(CL_INVALID_CONTEXT)
    C(CL_INVALID_QUEUE_PROPERTIES) C(CL_INVALID_COMMAND_QUEUE) C(CL_INVALID_HOST_PTR)
    C(CL_INVALID_MEM_OBJECT) C(CL_INVALID_BINARY) C(CL_INVALID_BUILD_OPTIONS)
    C(CL_INVALID_PROGRAM) C(CL_INVALID_PROGRAM_EXECUTABLE) C(CL_INVALID_KERNEL_NAME)
    C(CL_INVALID_KERNEL_DEFINITION) C(CL_INVALID_KERNEL) C(CL_INVALID_ARG_INDEX)
    C(CL_INVALID_ARG_VALUE) C(CL_INVALID_ARG_SIZE) C(CL_INVALID_KERNEL_ARGS)
    C(CL_INVALID_WORK_DIMENSION) C(CL_INVALID_WORK_GROUP_SIZE) C(CL_INVALID_WORK_ITEM_SIZE)
    C(CL_INVALID_GLOBAL_OFFSET) C(CL_INVALID_EVENT_WAIT_LIST) C(CL_INVALID_EVENT)
    C(CL_INVALID_OPERATION) C(CL_INVALID_BUFFER_SIZE) C(CL_INVALID_GLOBAL_WORK_SIZE)
    C(CL_INVALID_PROPERTY) C(CL_PLATFORM_NOT_FOUND_KHR) C(CL_INVALID_COMMAND_BUFFER_KHR)
    C(CL_INVALID_SYNC_POINT_WAIT_LIST_KHR) C(CL_INCOMPATIBLE_COMMAND_QUEUE_KHR)
#undef C
  default:
    return "OpenCL error " + std::to_string(code);
  }
}

Error clError(const char *call, cl_int code) {
  return makeError(std::string(call) + ": " + clErrorName(code));
}

} // namespace cgraph::opencl
