// Initial contents of runtime-owned slots (SlotInit::Data, Fill, File, Transient), for
// backends that allocate those slots at finalize and for tools that bind them.
//
// - Data: the embedded bytes (Slot::data must hold at least `bytes`).
// - Fill: Slot::data repeated (1..128-byte pattern; a partial last copy is allowed).
// - File: the file at Slot::path (a .npy payload or raw bytes), resolved inside
//   HostPolicy::allowedDirs (paths.h); fewer bytes than needed is an Error, extra bytes
//   are ignored.
// - Transient: zeros, so that runs are reproducible (the contents are undefined by
//   contract; never rely on them).
// - External: an Error (the binding table supplies it).
// Errors are prefixed `slot '<name>'`. Pure functions except for reading files;
// thread-safe. `dst` is owned by the caller.
#pragma once

#include "cgraph/error.h"
#include "cgraph/model.h"
#include "cgraph/runtime/runtime.h"

#include <cstdint>
#include <vector>

namespace cgraph::rt {

// Writes the first `bytes` bytes of the slot's initial contents to `dst`.
Error initializeSlot(const Slot &slot, const HostPolicy &policy, void *dst, uint64_t bytes);

// The slot's initial contents, Slot::size bytes.
Expected<std::vector<uint8_t>> initialSlotContents(const Slot &slot, const HostPolicy &policy);

// Repeats `pattern` (non-empty) over `bytes` bytes of `dst`.
void fillPattern(void *dst, uint64_t bytes, const uint8_t *pattern, size_t patternSize);

} // namespace cgraph::rt
