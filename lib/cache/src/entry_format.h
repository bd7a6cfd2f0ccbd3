// Byte formats of one persistent cache entry (internal; README.md repeats them).
//
// <n>.src (text, every value length-prefixed so any bytes survive):
//   "cgraph-cache-src 1\n"
//   for each field in the order backend, deviceName, driverVersion, compilerVersion,
//   imageHash, specConstants, buildOptions, kernelNames:
//     <field name> " " <decimal byte length> "\n" <value bytes> "\n"
//
// <n>.bin (little-endian):
//   offset 0  u8[8] magic "CGCACHE\0"
//          8  u32   format version (1)
//         12  u32   binary kind length K
//         16  u64   payload size P
//         24  u64   xxh3-64 of the payload
//         32  u64   xxh3-64 of identityBytes(key) (ties the .bin to its .src)
//         40  u64   xxh3-64 of bytes 0..39
//         48  u8[K] binary kind, then u8[P] payload; file size must be 48 + K + P
#pragma once

#include "cgraph/cache/key.h"

#include <cstdint>
#include <string>

namespace cgraph::cache::detail {

inline constexpr size_t kBinHeaderSize = 48;

std::string serializeSrc(const CacheKey &key);
// Empty string on success, else what is wrong.
std::string parseSrc(const std::string &text, CacheKey &key);

// The identity fields only (kernelNames excluded), unambiguously concatenated.
std::string identityBytes(const CacheKey &key);
uint64_t identityChecksum(const CacheKey &key);
uint64_t checksum64(const uint8_t *data, size_t size);

std::string makeBinHeader(const std::string &kind, const uint8_t *payload, size_t size, uint64_t keyChecksum);

struct BinHeader {
  uint32_t kindLength = 0;
  uint64_t payloadSize = 0;
  uint64_t payloadChecksum = 0;
  uint64_t keyChecksum = 0;
};
// Checks magic, version, header checksum and that fileSize == 48 + K + P.
std::string parseBinHeader(const uint8_t *bytes, uint64_t fileSize, BinHeader &out);

inline constexpr uint32_t kMaxKindLength = 4096;

// Largest payload a load or verify accepts: the maximum item size (no store writes
// more), else the maximum cache size, else none (UINT64_MAX).
uint64_t payloadLimit(uint64_t maxItemSize, uint64_t maxSize);
// Empty when a .bin of `fileSize` bytes (fstat) may hold a payload within `limit`,
// else why not: checked before the file is read at all.
std::string checkBinFileSize(uint64_t fileSize, uint64_t limit);
// Empty when the header's payload is within `limit`, else why not.
std::string checkPayloadSize(const BinHeader &h, uint64_t limit);

// xxh3-64 of `size` bytes of `fd` from `offset`, read in small chunks (nothing the
// size of the range is allocated); false on a read error or a short file.
bool checksumRange(int fd, uint64_t offset, uint64_t size, uint64_t &out);

} // namespace cgraph::cache::detail
