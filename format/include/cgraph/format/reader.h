// Reading .cgf files (format/SPEC.md) into a cgraph::Graph.
//
// Contract: the input is untrusted. Every count, offset, size, index, string reference
// and checksum is checked once, here; a Graph returned by these functions is
// structurally sound: every index it holds is in range (kernel.module, node.kernel,
// arg slot/param, copy/fill slots, NDRange dims 1..3 and Dim.param, edges, order,
// partitions, subgraph and subgraphSlots) and every fill pattern is 1..128 bytes.
// Semantics (cycles, hazards, argument/parameter agreement) are NOT checked here;
// lib/graph validates those.
//
// Failure: an Error whose message names the record, e.g.
//   `nodes[17]: arg 3 refers to slot 99 but the file has 12 slots`
//   `section 'NODE': checksum mismatch`
// Reading never crashes, hangs or allocates without bound: allocations are bounded by
// the input size and ReadOptions::maxTotalBytes.
//
// Ownership: readCgf copies what it needs; `data` may be released when it returns.
// Thread-safety: the functions keep no state; concurrent calls are safe.
#pragma once

#include "cgraph/error.h"
#include "cgraph/model.h"

#include <cstddef>
#include <cstdint>
#include <string>

namespace cgraph {

// The versions this library writes and reads. A graph without stored parameter
// expressions is written as 1.0 (every 1.0 reader runs it correctly); one with them as
// 2.0, which 1.0 readers refuse (format/SPEC.md section 6). Majors 1 and 2 are read;
// files with a newer minor version load (unknown sections and trailing record bytes
// are skipped); files with another major version are refused.
constexpr uint16_t kCgfMajorVersion = 1;
constexpr uint16_t kCgfMinorVersion = 0;
constexpr uint16_t kCgfAlternativesMinorVersion = 1; // files holding Node::alternatives
constexpr uint16_t kCgfExprMajorVersion = 2; // files holding Graph::exprs
constexpr uint16_t kCgfTransferExprMinorVersion = 2; // copy/fill/host/slot-size exprs (bit 2)
constexpr uint16_t kCgfCollectiveMinorVersion = 3; // collective nodes (bit 3)
constexpr uint16_t kCgfMaxMajorVersion = 2;

struct ReadOptions {
  // Upper bound on the bytes the reader produces from the file: decompressed sections
  // and blobs, nested subgraph files, and string/byte contents copied into the Graph
  // (nested files share the one budget).
  uint64_t maxTotalBytes = uint64_t(1) << 30;
  // Deepest nesting of subgraphs (the top graph is depth 0).
  uint32_t maxDepth = 8;
  // Verify the per-section XXH3-64 checksums. Structure is checked either way.
  bool verifyChecksums = true;
};

// Parses a whole .cgf image held in memory.
Expected<Graph> readCgf(const uint8_t *data, size_t size, const ReadOptions &opts = {});

// Maps (or reads) the file at `path` and parses it. Errors are prefixed with the path.
Expected<Graph> readCgfFile(const std::string &path, const ReadOptions &opts = {});

// A multi-line human-readable summary of the header and section table (version, file
// size, one line per section: tag, offset, sizes, records, flags, checksum), for
// tools and debugging. Checks only what it needs to print; an Error if the header is
// unreadable.
Expected<std::string> describeCgf(const uint8_t *data, size_t size);

} // namespace cgraph
