// The Level Zero driver table: every entry point the level_zero backend calls, as
// function pointers typed by the real API header (<level_zero/ze_api.h>).
//
// The backend fills it from libze_loader.so.1 with dlopen/dlsym (loadZeDriverTable);
// nothing links the loader. Tests may hand the backend another table
// (LevelZeroBackendOptions::driverTable): the test-only recording fake in
// tests/level_zero is the one such table, since no Level Zero device exists in CI.
//
// Ownership: a table is a plain struct of pointers; the one from loadZeDriverTable lives
// for the whole process (the library is never closed). A table given through the options
// must outlive the backend and everything made from it.
// Thread-safety: loadZeDriverTable may be called from any thread (loaded once). The
// entry points are as thread-safe as the Level Zero specification says.
// Failure modes: loadZeDriverTable returns an Error naming the missing library
// ("libze_loader.so.1 not found") or the first missing entry point; zeError turns a
// ze_result_t into an Error naming the call and the result ("zeModuleCreate:
// ZE_RESULT_ERROR_MODULE_BUILD_FAILURE").
#pragma once

#include "cgraph/error.h"

#include <level_zero/ze_api.h>

#include <string>

namespace cgraph::level_zero {

// Entry points every driver must have (the table is refused if one is missing).
// clang-format off
#define CGRAPH_ZE_FUNCTIONS(X)                                                                      \
  X(zeInit) X(zeDriverGet) X(zeDriverGetProperties) X(zeDriverGetApiVersion)                        \
  X(zeDriverGetExtensionProperties) X(zeDeviceGet) X(zeDeviceGetProperties)                         \
  X(zeDeviceGetComputeProperties) X(zeDeviceGetModuleProperties) X(zeDeviceGetMemoryProperties)     \
  X(zeDeviceGetCommandQueueGroupProperties) X(zeContextCreate) X(zeContextDestroy)                  \
  X(zeCommandQueueCreate) X(zeCommandQueueDestroy) X(zeCommandQueueExecuteCommandLists)             \
  X(zeCommandQueueSynchronize) X(zeCommandListCreate) X(zeCommandListCreateImmediate)               \
  X(zeCommandListDestroy) X(zeCommandListClose) X(zeCommandListAppendBarrier)                       \
  X(zeCommandListAppendMemoryCopy) X(zeCommandListAppendMemoryFill)                                 \
  X(zeCommandListAppendMemoryCopyRegion) X(zeCommandListAppendLaunchKernel)                         \
  X(zeCommandListAppendEventReset) X(zeEventPoolCreate) X(zeEventPoolDestroy) X(zeEventCreate)      \
  X(zeEventDestroy) X(zeEventHostReset) X(zeEventQueryKernelTimestamp) X(zeFenceCreate) X(zeFenceDestroy)               \
  X(zeFenceHostSynchronize) X(zeFenceQueryStatus) X(zeMemAllocDevice) X(zeMemFree)                  \
  X(zeModuleCreate) X(zeModuleDestroy) X(zeModuleBuildLogDestroy) X(zeModuleBuildLogGetString)      \
  X(zeModuleGetNativeBinary)                                                                        \
  X(zeKernelCreate) X(zeKernelDestroy) X(zeKernelSetGroupSize) X(zeKernelSuggestGroupSize)          \
  X(zeKernelSetArgumentValue)
// clang-format on

// Extension entry points: null when the loader lacks them; used only where the driver
// also reports the extension.
#define CGRAPH_ZE_OPTIONAL_FUNCTIONS(X) X(zeKernelSetGlobalOffsetExp)

struct ZeDriverTable {
#define CGRAPH_ZE_MEMBER(name) decltype(&::name) name = nullptr;
  CGRAPH_ZE_FUNCTIONS(CGRAPH_ZE_MEMBER)
  CGRAPH_ZE_OPTIONAL_FUNCTIONS(CGRAPH_ZE_MEMBER)
#undef CGRAPH_ZE_MEMBER
  // Where the table came from, for messages ("libze_loader.so.1", "recording fake").
  const char *origin = "";
};

// Opens libze_loader.so.1 once per process and fills the table (zeInit is not called
// here: the backend calls it through the table).
Expected<const ZeDriverTable *> loadZeDriverTable();

// "ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY", or "ze_result_t 0x7..." for an unknown value.
std::string zeResultName(ze_result_t rc);

// "zeCommandListAppendLaunchKernel: ZE_RESULT_ERROR_INVALID_ARGUMENT".
Error zeError(const char *call, ze_result_t rc);

} // namespace cgraph::level_zero
