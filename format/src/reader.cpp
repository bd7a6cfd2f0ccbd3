// The .cgf container: header, section table, checksums and section decompression.
// Records are decoded in reader_records.cpp. format/SPEC.md is the full description.
//
// Grammar (all integers little-endian, offsets from the start of the file):
//
//   file     := header table? section*               ; sections 64-byte aligned,
//                                                     ; gaps zero, no two overlap
//   header   := magic[8] = "CGF\0\r\n\x1a\n"
//               u16 major (1 or 2)  u16 minor (=0)  u32 endian (=0x01020304)
//               u32 flags (1.x: ignored; 2.x: required features, bit 0 = XPRS)  u32 sectionCount
//               u64 fileSize (= the input size)  u64 tableOffset (>= headerSize)
//               u32 entrySize (>=48)  u32 headerSize (>=64)
//               u64 tableChecksum (XXH3_64 of sectionCount*entrySize table bytes)
//               u64 reserved  byte[headerSize-64] (newer minors)
//   table    := entry[sectionCount]                   ; at tableOffset
//   entry    := tag[4] u32 flags (bit0: zstd) u64 offset u64 storedSize u64 rawSize
//               u32 recordCount u32 recordSize u64 checksum (XXH3_64 of stored bytes)
//               byte[entrySize-48]
//   section  := byte[storedSize]                      ; zstd frame of rawSize bytes if
//                                                     ; bit0, else rawSize = storedSize
//   raw      := record[recordCount]  with recordCount*recordSize = rawSize
//             | byte[rawSize]        for STRS and BDAT (recordSize 1, recordCount 0)
//
// Rules checked here: known major; fileSize = input size; every section inside the
// file, aligned, past the table and disjoint from the others; checksums; a known tag at
// most once; recordSize >= the 1.0 record size (newer minors append fields, which are
// skipped); decompressed sizes within ReadOptions::maxTotalBytes and equal to the
// frame's recorded content size. Unknown tags are checked for placement and checksum,
// then ignored.
#include "reader_internal.h"

#include <xxhash.h>
#include <zstd.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>

namespace cgraph {
namespace cgf {

std::string tagText(const uint8_t *tag) {
  std::string s;
  for (int i = 0; i < 4; ++i) {
    if (tag[i] >= 0x20 && tag[i] < 0x7F && tag[i] != '\'' && tag[i] != '\\') {
      s += static_cast<char>(tag[i]);
    } else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", tag[i]);
      s += buf;
    }
  }
  return s;
}

Error Budget::take(uint64_t n, const std::string &what) {
  if (n > left)
    return makeError(what + ": " + std::to_string(n) + " bytes exceed the read limit (" +
                     std::to_string(left) + " bytes left of ReadOptions::maxTotalBytes)");
  left -= n;
  return Error::success();
}

Error unzstd(const uint8_t *src, uint64_t stored, uint64_t raw, uint8_t *out, const std::string &what) {
  unsigned long long frame = ZSTD_getFrameContentSize(src, stored);
  if (frame == ZSTD_CONTENTSIZE_ERROR || frame == ZSTD_CONTENTSIZE_UNKNOWN)
    return makeError(what + ": not a zstd frame with a recorded content size");
  if (frame != raw)
    return makeError(what + ": zstd frame holds " + std::to_string(frame) + " bytes but " +
                     std::to_string(raw) + " are recorded");
  size_t got = ZSTD_decompress(out, raw, src, stored);
  if (ZSTD_isError(got)) return makeError(what + ": zstd: " + ZSTD_getErrorName(got));
  if (got != raw)
    return makeError(what + ": zstd data decompressed to " + std::to_string(got) + " bytes, expected " +
                     std::to_string(raw));
  return Error::success();
}

namespace {

struct Entry {
  const uint8_t *tag;
  uint32_t flags;
  uint64_t offset, stored, raw;
  uint32_t count, recordSize;
  uint64_t checksum;
};

std::string secName(const uint8_t *tag) { return "section '" + tagText(tag) + "'"; }

int knownId(const uint8_t *tag) {
  for (int i = 0; i < int(kSectionIdCount); ++i)
    if (std::memcmp(kSections[i].tag, tag, 4) == 0) return i;
  return -1;
}

struct Header {
  uint16_t major, minor;
  uint32_t flags, sectionCount, entrySize, headerSize;
  uint64_t fileSize, tableOffset, tableChecksum;
};

Error parseHeader(const uint8_t *data, size_t size, Header *h) {
  if (size >= sizeof kMagic && std::memcmp(data, kMagic, sizeof kMagic) != 0)
    return makeError("not a .cgf file (bad magic)");
  if (size < kHeaderSize)
    return makeError("file truncated: the header needs " + std::to_string(kHeaderSize) + " bytes, got " +
                     std::to_string(size));
  h->major = ld16(data + hdr::kMajor);
  h->minor = ld16(data + hdr::kMinor);
  if (h->major < kCgfMajorVersion || h->major > kCgfMaxMajorVersion)
    return makeError("unsupported major version " + std::to_string(h->major) +
                     " (this reader supports " + std::to_string(kCgfMajorVersion) + " to " +
                     std::to_string(kCgfMaxMajorVersion) + ")");
  h->flags = ld32(data + hdr::kFlags);
  // 1.x: reserved and ignored. 2.x: required features, refused when unknown.
  if (h->major >= 2 && (h->flags & ~kKnownHeaderFlags))
    return makeError("file needs unknown features (header flags 0x" + [&] {
      char b[16];
      std::snprintf(b, sizeof b, "%x", h->flags & ~kKnownHeaderFlags);
      return std::string(b);
    }() + ")");
  if (h->major == 1) h->flags = 0;
  uint32_t endian = ld32(data + hdr::kEndian);
  if (endian == 0x04030201u) return makeError("file is big-endian; this reader reads little-endian files only");
  if (endian != kEndianMarker) return makeError("bad endianness marker 0x" + [&] {
                                 char b[16];
                                 std::snprintf(b, sizeof b, "%08x", endian);
                                 return std::string(b);
                               }());
  h->sectionCount = ld32(data + hdr::kSectionCount);
  h->fileSize = ld64(data + hdr::kFileSize);
  h->tableOffset = ld64(data + hdr::kTableOffset);
  h->entrySize = ld32(data + hdr::kEntrySize);
  h->headerSize = ld32(data + hdr::kHeaderSize);
  h->tableChecksum = ld64(data + hdr::kTableChecksum);
  if (h->fileSize > size)
    return makeError("file truncated: header says " + std::to_string(h->fileSize) + " bytes, got " +
                     std::to_string(size));
  if (h->fileSize < size)
    return makeError("file has " + std::to_string(size - h->fileSize) + " bytes past the " +
                     std::to_string(h->fileSize) + " its header records");
  if (h->headerSize < kHeaderSize || h->headerSize > h->fileSize)
    return makeError("header size " + std::to_string(h->headerSize) + " is out of range (" +
                     std::to_string(kHeaderSize) + ".." + std::to_string(h->fileSize) + ")");
  if (h->entrySize < kEntrySize)
    return makeError("section table entry size " + std::to_string(h->entrySize) + " is smaller than " +
                     std::to_string(kEntrySize));
  if (h->tableOffset < h->headerSize)
    return makeError("section table at offset " + std::to_string(h->tableOffset) + " overlaps the header");
  if (h->tableOffset > h->fileSize ||
      uint64_t(h->sectionCount) * h->entrySize > h->fileSize - h->tableOffset)
    return makeError("section table (" + std::to_string(h->sectionCount) + " entries of " +
                     std::to_string(h->entrySize) + " bytes at offset " + std::to_string(h->tableOffset) +
                     ") points past the end of the file (" + std::to_string(h->fileSize) + " bytes)");
  return Error::success();
}

Error readEntries(const uint8_t *data, const Header &h, std::vector<Entry> *out) {
  uint64_t tableEnd = h.tableOffset + uint64_t(h.sectionCount) * h.entrySize;
  out->reserve(h.sectionCount); // bounded: the table fits in the file
  for (uint32_t i = 0; i < h.sectionCount; ++i) {
    const uint8_t *e = data + h.tableOffset + uint64_t(i) * h.entrySize;
    Entry en{e + ent::kTag,          ld32(e + ent::kFlags), ld64(e + ent::kOffset),
             ld64(e + ent::kStoredSize), ld64(e + ent::kRawSize), ld32(e + ent::kCount),
             ld32(e + ent::kRecordSize), ld64(e + ent::kChecksum)};
    std::string name = secName(en.tag);
    if (en.offset % kAlign != 0)
      return makeError(name + ": offset " + std::to_string(en.offset) + " is not 64-byte aligned");
    if (en.offset > h.fileSize || en.stored > h.fileSize - en.offset)
      return makeError(name + ": offset " + std::to_string(en.offset) + " + size " + std::to_string(en.stored) +
                       " points past the end of the file (" + std::to_string(h.fileSize) + " bytes)");
    if (en.stored > 0 && en.offset < tableEnd)
      return makeError(name + " overlaps the header or the section table");
    out->push_back(en);
  }
  std::vector<uint32_t> byOffset;
  for (uint32_t i = 0; i < h.sectionCount; ++i)
    if ((*out)[i].stored > 0) byOffset.push_back(i);
  std::sort(byOffset.begin(), byOffset.end(), [&](uint32_t a, uint32_t b) {
    return (*out)[a].offset != (*out)[b].offset ? (*out)[a].offset < (*out)[b].offset : a < b;
  });
  for (size_t k = 1; k < byOffset.size(); ++k) {
    const Entry &a = (*out)[byOffset[k - 1]], &b = (*out)[byOffset[k]];
    if (b.offset < a.offset + a.stored) {
      uint32_t x = std::min(byOffset[k - 1], byOffset[k]), y = std::max(byOffset[k - 1], byOffset[k]);
      return makeError("sections " + std::to_string(x) + " and " + std::to_string(y) + " overlap ('" +
                       tagText((*out)[x].tag) + "' and '" + tagText((*out)[y].tag) + "')");
    }
  }
  return Error::success();
}

Error loadSection(const uint8_t *data, const Entry &en, int id, const ReadOptions &opts, Budget &budget,
                  Image *image) {
  std::string name = secName(en.tag);
  const uint8_t *stored = data + en.offset;
  if (opts.verifyChecksums && XXH3_64bits(stored, en.stored) != en.checksum)
    return makeError(name + ": checksum mismatch");
  if (id < 0) return Error::success();
  bool bytes = id == kSTRS || id == kBDAT;
  uint32_t want = kSections[id].recordSize;
  if (bytes ? en.recordSize != 1 : en.recordSize < want)
    return makeError(name + ": record size " + std::to_string(en.recordSize) +
                     (bytes ? " (must be 1)" : " is smaller than " + std::to_string(want)));
  if (!bytes && en.raw / en.recordSize != en.count)
    return makeError(name + ": " + std::to_string(en.count) + " records of " + std::to_string(en.recordSize) +
                     " bytes do not match the section size of " + std::to_string(en.raw) + " bytes");
  if (!bytes && en.raw % en.recordSize != 0)
    return makeError(name + ": size " + std::to_string(en.raw) + " is not a multiple of the record size " +
                     std::to_string(en.recordSize));
  Section &s = image->sec[id];
  s.size = en.raw;
  s.count = bytes ? 0 : en.count;
  s.recordSize = en.recordSize;
  if (en.flags & kFlagZstd) {
    CGRAPH_RETURN_IF_ERROR(budget.take(en.raw, name));
    std::unique_ptr<uint8_t[]> buf(new (std::nothrow) uint8_t[en.raw ? en.raw : 1]);
    if (!buf) return makeError(name + ": out of memory for " + std::to_string(en.raw) + " bytes");
    CGRAPH_RETURN_IF_ERROR(unzstd(stored, en.stored, en.raw, buf.get(), name));
    s.data = buf.get();
    image->owned.push_back(std::move(buf));
  } else {
    if (en.raw != en.stored)
      return makeError(name + ": raw size " + std::to_string(en.raw) + " differs from the stored size " +
                       std::to_string(en.stored) + " of an uncompressed section");
    s.data = stored;
  }
  return Error::success();
}

} // namespace

Error parseContainer(const uint8_t *data, size_t size, const ReadOptions &opts, Budget &budget, Image *image) {
  if (!data && size) return makeError("null input");
  Header h;
  CGRAPH_RETURN_IF_ERROR(parseHeader(data, size, &h));
  if (opts.verifyChecksums &&
      XXH3_64bits(data + h.tableOffset, uint64_t(h.sectionCount) * h.entrySize) != h.tableChecksum)
    return makeError("section table: checksum mismatch");
  std::vector<Entry> entries;
  CGRAPH_RETURN_IF_ERROR(readEntries(data, h, &entries));
  image->major = h.major;
  image->minor = h.minor;
  image->flags = h.flags;
  int seen[kSectionIdCount];
  std::fill(std::begin(seen), std::end(seen), -1);
  for (uint32_t i = 0; i < entries.size(); ++i) {
    int id = knownId(entries[i].tag);
    if (id >= 0) {
      if (seen[id] >= 0)
        return makeError(secName(entries[i].tag) + " appears twice (sections " + std::to_string(seen[id]) +
                         " and " + std::to_string(i) + ")");
      seen[id] = static_cast<int>(i);
    }
    CGRAPH_RETURN_IF_ERROR(loadSection(data, entries[i], id, opts, budget, image));
  }
  return Error::success();
}

Expected<Graph> readImpl(const uint8_t *data, size_t size, const ReadOptions &opts, uint32_t depth,
                         Budget &budget) {
  Image image;
  CGRAPH_RETURN_IF_ERROR(parseContainer(data, size, opts, budget, &image));
  return decodeGraph(image, opts, depth, budget);
}

} // namespace cgf

Expected<Graph> readCgf(const uint8_t *data, size_t size, const ReadOptions &opts) {
  cgf::Budget budget{opts.maxTotalBytes};
  return cgf::readImpl(data, size, opts, 0, budget);
}

Expected<std::string> describeCgf(const uint8_t *data, size_t size) {
  using namespace cgf;
  Header h;
  CGRAPH_RETURN_IF_ERROR(parseHeader(data, size, &h));
  std::string s = "cgf " + std::to_string(h.major) + "." + std::to_string(h.minor) + ", " +
                  std::to_string(h.fileSize) + " bytes, " + std::to_string(h.sectionCount) + " sections\n";
  for (uint32_t i = 0; i < h.sectionCount; ++i) {
    const uint8_t *e = data + h.tableOffset + uint64_t(i) * h.entrySize;
    char line[256];
    std::snprintf(line, sizeof line,
                  "  [%2u] %-6s offset %10" PRIu64 "  stored %10" PRIu64 "  raw %10" PRIu64
                  "  records %10u x %4u  flags 0x%x  xxh3 %016" PRIx64 "\n",
                  i, tagText(e).c_str(), ld64(e + ent::kOffset), ld64(e + ent::kStoredSize),
                  ld64(e + ent::kRawSize), ld32(e + ent::kCount), ld32(e + ent::kRecordSize),
                  ld32(e + ent::kFlags), ld64(e + ent::kChecksum));
    s += line;
  }
  return s;
}

} // namespace cgraph
