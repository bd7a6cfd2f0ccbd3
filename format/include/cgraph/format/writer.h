// Writing a cgraph::Graph as a .cgf file (format/SPEC.md).
//
// Contract: the output is deterministic: the same Graph and options give the same
// bytes (no timestamps, padding zeroed, stable order, strings and blobs deduplicated
// in first-use order), so writeCgf(readCgf(writeCgf(g))) == writeCgf(g).
// The writer checks the same structural rules the reader enforces (indices in range,
// dims 1..3, fill patterns 1..128 bytes, nesting depth) and returns an Error naming
// the record instead of writing a file the reader would refuse; it does not check
// semantics (lib/graph does).
//
// writeCgfFile is atomic: it writes a temporary file in the target's directory,
// fsyncs it and renames it over `path`. On any failure (unwritable or missing
// directory, ENOSPC, EFBIG, ...) it returns an Error naming the path and the OS
// reason, removes the temporary file and leaves an existing file at `path` untouched.
//
// Ownership: the returned bytes belong to the caller. Thread-safety: no shared state;
// concurrent calls are safe (concurrent writes to one path: the last rename wins).
#pragma once

#include "cgraph/error.h"
#include "cgraph/format/atomic_file.h"
#include "cgraph/model.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace cgraph {

struct WriteOptions {
  // Blobs (slot data, kernel form bytes, nested subgraph files) of at least this many
  // bytes are zstd-compressed, unless compression does not make them smaller.
  uint64_t compressThreshold = 4096;
  int zstdLevel = 3;
  // Also zstd-compress the record sections (smaller files, slower loads).
  bool compressTables = false;
};

Expected<std::vector<uint8_t>> writeCgf(const Graph &g, const WriteOptions &opts = {});

Error writeCgfFile(const Graph &g, const std::string &path, const WriteOptions &opts = {});

// writeFileAtomic (the one used by writeCgfFile, for any bytes) is in atomic_file.h.

} // namespace cgraph
