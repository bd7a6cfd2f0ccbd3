// Internal: the reader's two stages. reader.cpp checks the container (header, section
// table, checksums, decompression); reader_records.cpp decodes the records into a Graph.
#pragma once

#include "cgraph/format/reader.h"
#include "layout.h"

#include <memory>
#include <vector>

namespace cgraph {
namespace cgf {

// The bytes the reader may still produce (ReadOptions::maxTotalBytes), shared by nested
// files.
struct Budget {
  uint64_t left = 0;
  Error take(uint64_t n, const std::string &what);
};

// A known section after checks: `size` raw (decompressed) bytes of `count` records of
// `recordSize` bytes (byte sections STRS/BDAT: recordSize 1, count unused).
struct Section {
  const uint8_t *data = nullptr;
  uint64_t size = 0;
  uint32_t count = 0;
  uint32_t recordSize = 0;
  const uint8_t *rec(uint32_t i) const { return data + uint64_t(i) * recordSize; }
};

struct Image {
  uint16_t major = 1;
  uint16_t minor = 0;
  uint32_t flags = 0; // header flags (2.x: required features)
  Section sec[kSectionIdCount];
  std::vector<std::unique_ptr<uint8_t[]>> owned; // decompressed sections
};

Error parseContainer(const uint8_t *data, size_t size, const ReadOptions &opts, Budget &budget,
                     Image *image);
Expected<Graph> decodeGraph(const Image &image, const ReadOptions &opts, uint32_t depth,
                            Budget &budget);
Expected<Graph> readImpl(const uint8_t *data, size_t size, const ReadOptions &opts,
                         uint32_t depth, Budget &budget);
// Decompresses one zstd frame that must hold exactly `raw` bytes into `out`.
Error unzstd(const uint8_t *src, uint64_t stored, uint64_t raw, uint8_t *out,
             const std::string &what);

} // namespace cgf
} // namespace cgraph
