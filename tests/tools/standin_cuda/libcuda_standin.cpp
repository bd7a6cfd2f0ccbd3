// A stand-in libcuda.so.1 for cgrun's "why is there no cuda device" reasons on machines
// without an NVIDIA driver (CI). It is never a device. Every entry point the backend
// looks up exists (built with CGRAPH_STANDIN_PARTIAL, only cuInit and cuDriverGetVersion
// do), and it answers only the two questions the backend asks before giving up:
//   cuDriverGetVersion -> $CGRAPH_STANDIN_CUDA_VERSION (default 13000)
//   cuInit             -> CUDA_ERROR_NO_DEVICE
// Every other entry point returns CUDA_ERROR_NOT_SUPPORTED. The names come from the
// backend's own list (cu_api.h), so an entry point added there is exported here too.
#include "cu_api.h"

#include <cstdlib>

#define CGRAPH_STANDIN_STR2(x) #x
#define CGRAPH_STANDIN_STR(x) CGRAPH_STANDIN_STR2(x)
// Exported under the versioned symbol cuda.h maps a function to (cuMemAlloc ->
// "cuMemAlloc_v2"), the name the backend's dlsym asks for.
#define CGRAPH_STANDIN_EXPORT(name) __asm__(CGRAPH_STANDIN_STR(name)) __attribute__((visibility("default")))

extern "C" {
int standin_cuInit(unsigned) CGRAPH_STANDIN_EXPORT(cuInit);
int standin_cuInit(unsigned) { return CUDA_ERROR_NO_DEVICE; }

int standin_cuDriverGetVersion(int *) CGRAPH_STANDIN_EXPORT(cuDriverGetVersion);
int standin_cuDriverGetVersion(int *version) {
  const char *v = std::getenv("CGRAPH_STANDIN_CUDA_VERSION");
  *version = v ? std::atoi(v) : 13000;
  return CUDA_SUCCESS;
}

#ifndef CGRAPH_STANDIN_PARTIAL
// Every other name of the list: CGRAPH_STANDIN_IS_SPECIAL(name) is 1 for the two above
// (a "probe": their SPECIAL_ macro expands to two arguments) and 0 otherwise.
#define CGRAPH_STANDIN_SECOND(a, b, ...) b
#define CGRAPH_STANDIN_PROBE(...) CGRAPH_STANDIN_SECOND(__VA_ARGS__, 0, 0)
#define CGRAPH_STANDIN_SPECIAL_cuInit ~, 1
#define CGRAPH_STANDIN_SPECIAL_cuDriverGetVersion ~, 1
#define CGRAPH_STANDIN_IS_SPECIAL(name) CGRAPH_STANDIN_PROBE(CGRAPH_STANDIN_SPECIAL_##name)
#define CGRAPH_STANDIN_CAT2(a, b) a##b
#define CGRAPH_STANDIN_CAT(a, b) CGRAPH_STANDIN_CAT2(a, b)
#define CGRAPH_STANDIN_IF_1(...)
#define CGRAPH_STANDIN_IF_0(...) __VA_ARGS__
#define CGRAPH_STANDIN_UNSUPPORTED(name)                                                 \
  int standin_##name() CGRAPH_STANDIN_EXPORT(name);                                     \
  int standin_##name() { return CUDA_ERROR_NOT_SUPPORTED; }
#define CGRAPH_STANDIN_DEFINE(name)                                                      \
  CGRAPH_STANDIN_CAT(CGRAPH_STANDIN_IF_, CGRAPH_STANDIN_IS_SPECIAL(name))(CGRAPH_STANDIN_UNSUPPORTED(name))
CGRAPH_CU_FUNCTIONS(CGRAPH_STANDIN_DEFINE)
CGRAPH_CU_OPTIONAL_FUNCTIONS(CGRAPH_STANDIN_DEFINE)
#endif
}
