// Initial contents of runtime-owned slots (SlotInit::Data, Fill, File, Transient), for
// backends that allocate those slots at finalize and for tools that bind them.
//
// - Data: the embedded bytes (Slot::data must hold at least `bytes`).
// - Fill: Slot::data repeated (1..128-byte pattern; a partial last copy is allowed).
// - File: the file at Slot::path (a .npy payload or raw bytes), resolved inside
//   HostPolicy::allowedDirs (paths.h); fewer bytes than needed is an Error, extra bytes
//   are ignored.
// - Transient: zeros on every backend, so that runs are reproducible and backends agree
//   (the contents are undefined by contract; never rely on them).
// - External: an Error (the binding table supplies it).
// Errors are prefixed `slot '<name>'`. Pure functions except for reading files;
// thread-safe. `dst` is owned by the caller.
#pragma once

#include "cgraph/error.h"
#include "cgraph/model.h"
#include "cgraph/runtime/runtime.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace cgraph::rt {

// Writes the first `bytes` bytes of the slot's initial contents to `dst`.
Error initializeSlot(const Slot &slot, const HostPolicy &policy, void *dst, uint64_t bytes);

// The slot's initial contents, Slot::size bytes.
Expected<std::vector<uint8_t>> initialSlotContents(const Slot &slot, const HostPolicy &policy);

// Repeats `pattern` (non-empty) over `bytes` bytes of `dst`.
void fillPattern(void *dst, uint64_t bytes, const uint8_t *pattern, size_t patternSize);

// ---- the one slot-setup path every backend uses ---------------------------------------
// A runtime-owned slot is allocated with max(Slot::size, the graph's accumulated minimum
// size for it, 1) bytes at the slot's alignment (at least `minAlignment`). The first
// Slot::size bytes get the initial contents above; any bytes past Slot::size are zero.
// Semantics are written in format/SPEC.md ("Runtime-owned slots").
uint64_t ownedSlotBytes(const Slot &slot, uint64_t minSize);

// The most bytes one slot may have on a device: DeviceInfo::caps.globalMemoryBytes, or,
// where the device does not say and its buffers are host memory, the host's physical
// memory; 0 = unknown (no limit).
uint64_t deviceMemoryLimit(const DeviceInfo &info);
// An Error naming slot `slotName` and both sizes when `bytes` is more than
// deviceMemoryLimit(info): `slot 'big': 1099511627776 bytes is more than the memory of
// device 'cpu' (16777216000 bytes)`.
Error checkSlotFits(const DeviceInfo &info, const std::string &slotName, uint64_t bytes);

// Allocates `bytes` (at least Slot::size) at alignment `align` and initializes them as
// above: the one setup of a single owned slot, used at finalize, when a slot whose size
// is an expression grows, and for the shared blocks of memory planning (a Transient
// slot of the block's size). Checks the size with checkSlotFits first. The Buffer is
// owned by the caller and must be destroyed before `device`.
Expected<std::unique_ptr<Buffer>> setUpOwnedSlot(Device &device, const Slot &slot, uint64_t bytes,
                                                 uint32_t align, const HostPolicy &policy);

// Allocates and initializes every runtime-owned slot of `graph` on `device`: result[i] is
// null for External slots. `minSizes[i]` is the graph's minimum size for slot i (empty =
// Slot::size). Initializes in place through Buffer::hostPointer() where the device has
// one, else through Device::write: one per data or file slot, pieces of at most 8 MiB for
// zero and fill slots (no host buffer of a slot's size). Before allocating anything, every
// slot is checked with checkSlotFits; a std::bad_alloc while setting one up is caught. Errors
// name the slot (and its size where it did not fit). The buffers are
// owned by the caller and must be destroyed before `device`.
Expected<std::vector<std::unique_ptr<Buffer>>>
allocateOwnedSlots(Device &device, const Graph &graph, const std::vector<uint64_t> &minSizes,
                   const HostPolicy &policy, uint32_t minAlignment = 1);

} // namespace cgraph::rt
