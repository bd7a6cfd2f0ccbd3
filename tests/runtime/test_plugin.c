/* A plugin host task library for the runtime tests (ABI in cgraph/runtime/host_plugin.h). */
#include "cgraph/runtime/host_plugin.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Adds strings[0] (an integer) to every int32 element of slot 0. */
int cgraph_test_add_i32(void **slotPtrs, const uint64_t *slotSizes, uint32_t nSlots,
                        const char **strings, uint32_t nStrings, char *errBuf, size_t errLen) {
  if (nSlots != 1 || nStrings != 1) {
    snprintf(errBuf, errLen, "expected 1 slot and 1 value, got %u and %u", nSlots, nStrings);
    return 1;
  }
  int32_t add = (int32_t)strtol(strings[0], NULL, 10);
  int32_t *p = (int32_t *)slotPtrs[0];
  for (uint64_t i = 0; i < slotSizes[0] / 4; ++i) p[i] += add;
  return 0;
}

int cgraph_test_fail(void **slotPtrs, const uint64_t *slotSizes, uint32_t nSlots,
                     const char **strings, uint32_t nStrings, char *errBuf, size_t errLen) {
  snprintf(errBuf, errLen, "deliberate failure with %u slots", nSlots);
  return 7;
}
