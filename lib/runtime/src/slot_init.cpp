// Initial contents of runtime-owned slots (contract in slot_init.h).
#include "cgraph/runtime/slot_init.h"

#include "cgraph/runtime/npy.h"
#include "cgraph/runtime/paths.h"

#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <new>
#include <stdexcept>

namespace cgraph::rt {

void fillPattern(void *dst, uint64_t bytes, const uint8_t *pattern, size_t patternSize) {
  uint8_t *d = static_cast<uint8_t *>(dst);
  if (bytes == 0 || patternSize == 0) return;
  const uint64_t first = std::min<uint64_t>(bytes, patternSize);
  std::memcpy(d, pattern, size_t(first));
  // Doubling copies: O(log n) memcpy calls, each over an already-filled prefix, which
  // keeps whole pattern periods because every copied length is a multiple of it.
  uint64_t done = first;
  while (done < bytes) {
    const uint64_t n = std::min(done, bytes - done);
    std::memcpy(d + done, d, size_t(n));
    done += n;
  }
}

Error initializeSlot(const Slot &slot, const HostPolicy &policy, void *dst, uint64_t bytes) {
  const std::string where = "slot '" + slot.name + "'";
  switch (slot.init) {
  case SlotInit::External:
    return makeError(where + ": is external; the binding table supplies it");
  case SlotInit::Data:
    if (slot.data.size() < bytes)
      return makeError(where + ": has " + std::to_string(slot.data.size()) +
                       " bytes of data, needs " + std::to_string(bytes));
    if (bytes) std::memcpy(dst, slot.data.data(), size_t(bytes));
    return Error::success();
  case SlotInit::Fill:
    if (slot.data.empty() || slot.data.size() > 128)
      return makeError(where + ": fill pattern has " + std::to_string(slot.data.size()) +
                       " bytes, expected 1 to 128");
    fillPattern(dst, bytes, slot.data.data(), slot.data.size());
    return Error::success();
  case SlotInit::File: {
    Expected<std::string> path = resolveAllowedPath(slot.path, policy);
    if (!path) return path.error().withContext(where);
    Expected<std::vector<uint8_t>> data = readDataFile(*path);
    if (!data) return data.error().withContext(where);
    if (data->size() < bytes)
      return makeError(where + ": file '" + slot.path + "' has " + std::to_string(data->size()) +
                       " bytes of data, the slot needs " + std::to_string(bytes));
    if (bytes) std::memcpy(dst, data->data(), size_t(bytes));
    return Error::success();
  }
  case SlotInit::Transient:
    if (bytes) std::memset(dst, 0, size_t(bytes));
    return Error::success();
  }
  return makeError(where + ": unknown init kind " + std::to_string(int(slot.init)));
}

uint64_t ownedSlotBytes(const Slot &slot, uint64_t minSize) {
  return std::max<uint64_t>({slot.size, minSize, 1});
}

namespace {
// Zero and fill slots on a device without host pointers go through a staging buffer of
// at most this many bytes, written piece by piece: a slot as large as the device's
// memory (a large GPU has more than many hosts) needs no host buffer of its size.
constexpr uint64_t kStagingPiece = uint64_t(8) << 20;

// Writes `bytes` bytes of the contents in `piece` (whole periods of them) to `buf` from
// `offset` on, one piece at a time.
Error writePieces(Device &device, Buffer &buf, uint64_t offset, uint64_t bytes, const std::vector<uint8_t> &piece) {
  for (uint64_t done = 0; done < bytes;) {
    const uint64_t n = std::min<uint64_t>(piece.size(), bytes - done);
    CGRAPH_RETURN_IF_ERROR(device.write(buf, offset + done, piece.data(), n));
    done += n;
  }
  return Error::success();
}

// The initial contents of owned slot `s` (`bytes` bytes: Slot::size of them initialized,
// the rest zero) written through Device::write. initializeSlot's errors name the slot;
// the writes' get `where`.
Error stageSlot(Device &device, Buffer &buf, const Slot &s, uint64_t bytes, const HostPolicy &policy,
                std::vector<uint8_t> &staging, const std::string &where) {
  const bool repeats = s.init == SlotInit::Transient || s.init == SlotInit::Fill;
  if (!repeats || bytes <= kStagingPiece) {
    // Data and file slots: their contents are in host memory already.
    staging.assign(size_t(bytes), 0);
    CGRAPH_RETURN_IF_ERROR(initializeSlot(s, policy, staging.data(), s.size));
    return device.write(buf, 0, staging.data(), bytes).withContext(where);
  }
  uint64_t zerosFrom = 0;
  if (s.init == SlotInit::Fill) {
    // A piece of whole pattern periods, so every piece starts on a period.
    const uint64_t period = std::max<uint64_t>(1, s.data.size());
    staging.assign(size_t(std::max<uint64_t>(period, kStagingPiece / period * period)), 0);
    CGRAPH_RETURN_IF_ERROR(initializeSlot(s, policy, staging.data(), staging.size()));
    CGRAPH_RETURN_IF_ERROR(writePieces(device, buf, 0, s.size, staging).withContext(where));
    zerosFrom = s.size;
  }
  staging.assign(size_t(kStagingPiece), 0);
  return writePieces(device, buf, zerosFrom, bytes - zerosFrom, staging).withContext(where);
}

// Allocates and initializes one owned slot. A std::bad_alloc from the device's
// allocator or the staging buffer becomes an Error naming the slot and its size.
Expected<std::unique_ptr<Buffer>> setUpSlot(Device &device, const Slot &s, uint64_t bytes, uint32_t align,
                                            const HostPolicy &policy, std::vector<uint8_t> &staging,
                                            const std::string &where) {
  try {
    Expected<std::unique_ptr<Buffer>> buf = device.allocate(bytes, align);
    if (!buf) return buf.error().withContext(where + " (" + std::to_string(bytes) + " bytes)");
    if (void *p = (*buf)->hostPointer()) {
      CGRAPH_RETURN_IF_ERROR(initializeSlot(s, policy, p, s.size));
      if (bytes > s.size) std::memset(static_cast<char *>(p) + s.size, 0, size_t(bytes - s.size));
    } else {
      CGRAPH_RETURN_IF_ERROR(stageSlot(device, **buf, s, bytes, policy, staging, where));
    }
    return buf;
  } catch (const std::bad_alloc &) {
    return makeError(where + ": out of memory allocating " + std::to_string(bytes) + " bytes");
  }
}
} // namespace

Expected<std::unique_ptr<Buffer>> setUpOwnedSlot(Device &device, const Slot &slot, uint64_t bytes,
                                                 uint32_t align, const HostPolicy &policy) {
  CGRAPH_RETURN_IF_ERROR(checkSlotFits(device.info(), slot.name, bytes));
  std::vector<uint8_t> staging;
  return setUpSlot(device, slot, std::max(bytes, slot.size), align, policy, staging, "slot '" + slot.name + "'");
}

uint64_t deviceMemoryLimit(const DeviceInfo &info) {
  if (info.caps.globalMemoryBytes) return info.caps.globalMemoryBytes;
  if (!info.caps.hostPointerBuffers) return 0;
  const long pages = sysconf(_SC_PHYS_PAGES), pageSize = sysconf(_SC_PAGE_SIZE);
  return pages > 0 && pageSize > 0 ? uint64_t(pages) * uint64_t(pageSize) : 0;
}

Error checkSlotFits(const DeviceInfo &info, const std::string &slotName, uint64_t bytes) {
  const uint64_t limit = deviceMemoryLimit(info);
  if (!limit || bytes <= limit) return Error::success();
  return makeError("slot '" + slotName + "': " + std::to_string(bytes) + " bytes is more than the memory of device '" +
                   info.name + "' (" + std::to_string(limit) + " bytes)");
}

Expected<std::vector<std::unique_ptr<Buffer>>>
allocateOwnedSlots(Device &device, const Graph &graph, const std::vector<uint64_t> &minSizes,
                   const HostPolicy &policy, uint32_t minAlignment) {
  std::vector<std::unique_ptr<Buffer>> out(graph.slots.size());
  // Every size is checked before the first allocation: a graph that cannot fit fails
  // at once, without allocating (and zeroing) the slots before the one too large.
  for (size_t i = 0; i < graph.slots.size(); ++i) {
    const Slot &s = graph.slots[i];
    if (s.init == SlotInit::External) continue;
    CGRAPH_RETURN_IF_ERROR(checkSlotFits(device.info(), s.name, ownedSlotBytes(s, i < minSizes.size() ? minSizes[i] : 0)));
  }
  std::vector<uint8_t> staging;
  for (size_t i = 0; i < graph.slots.size(); ++i) {
    const Slot &s = graph.slots[i];
    if (s.init == SlotInit::External) continue;
    const std::string where = "slot '" + s.name + "'";
    const uint64_t bytes = ownedSlotBytes(s, i < minSizes.size() ? minSizes[i] : 0);
    const uint32_t align = std::max<uint32_t>(s.alignment ? s.alignment : 1, minAlignment);
    Expected<std::unique_ptr<Buffer>> buf = setUpSlot(device, s, bytes, align, policy, staging, where);
    if (!buf) return buf.error();
    out[i] = std::move(*buf);
  }
  return out;
}

Expected<std::vector<uint8_t>> initialSlotContents(const Slot &slot, const HostPolicy &policy) {
  std::vector<uint8_t> out;
  try {
    out.resize(size_t(slot.size));
  } catch (const std::bad_alloc &) {
    return makeError("slot '" + slot.name + "': out of memory allocating " + std::to_string(slot.size) + " bytes");
  } catch (const std::length_error &) {
    return makeError("slot '" + slot.name + "': out of memory allocating " + std::to_string(slot.size) + " bytes");
  }
  Error e = initializeSlot(slot, policy, out.data(), slot.size);
  if (e) return e;
  return out;
}

} // namespace cgraph::rt
