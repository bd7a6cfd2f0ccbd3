/* The C ABI of plugin host tasks (HostOp::library + HostOp::op).
 *
 * A plugin is a shared library exporting, with C linkage, one function per host op:
 *
 *   extern "C" int my_op(void **slotPtrs, const uint64_t *slotSizes, uint32_t nSlots,
 *                        const char **strings, uint32_t nStrings,
 *                        char *errBuf, size_t errLen);
 *
 * - slotPtrs[i] / slotSizes[i]: the i-th Slot arg of the host node, in argument order:
 *   host-visible memory starting at the arg's byte offset, and the bytes from there to
 *   the end of the bound range. The memory is valid only during the call.
 * - strings[i]: the String args, then Scalar and Param args formatted as text
 *   (parseable back with their type), in argument order; valid only during the call.
 * - return 0 on success. Any other value is a failure: write a NUL-terminated,
 *   lower-case message (no final period) into errBuf (errLen bytes, always >= 1).
 *   The runtime reports it as `node 'name': plugin 'lib.so:my_op': <message>`.
 * - the function may be called from any runtime thread, concurrently for different
 *   nodes; it must not unwind a C++ exception across this boundary.
 *
 * The library is loaded with dlopen(RTLD_NOW | RTLD_LOCAL) at finalize, only when
 * HostPolicy::allowPlugins is set and its path resolves inside HostPolicy::allowedDirs,
 * and stays loaded while the Executable lives.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef int (*cgraph_host_fn)(void **slotPtrs, const uint64_t *slotSizes, uint32_t nSlots,
                              const char **strings, uint32_t nStrings, char *errBuf,
                              size_t errLen);

#ifdef __cplusplus
}
#endif
