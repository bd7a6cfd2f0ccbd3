// Internal: byte layout constants of .cgf version 1.0 and little-endian helpers shared
// by the reader and the writer. format/SPEC.md is the prose version of this file; keep
// the two in step.
#pragma once

#include "cgraph/error.h"

#include <cstdint>
#include <cstring>
#include <string>

namespace cgraph {
namespace cgf {

constexpr uint8_t kMagic[8] = {'C', 'G', 'F', 0, '\r', '\n', 0x1A, '\n'};
constexpr uint32_t kEndianMarker = 0x01020304u;
constexpr uint32_t kHeaderSize = 64;
constexpr uint32_t kEntrySize = 48;
constexpr uint64_t kAlign = 64;
constexpr uint32_t kFlagZstd = 1u << 0;
constexpr uint32_t kMaxFillPattern = 128;
// Header flags of 2.x files: required features; a reader refuses bits it does not know.
constexpr uint32_t kHeaderFlagExprs = 1u << 0;        // the XPRS section holds expressions
constexpr uint32_t kHeaderFlagConditionals = 1u << 1; // conditional nodes (COND, 2.1)
// Expressions in copy/fill offsets and sizes, host task arguments or slot sizes (2.2):
// a 2.0/2.1 reader would refuse their XPRS records with a less helpful message.
constexpr uint32_t kHeaderFlagTransferExprs = 1u << 2;
// Collective nodes and their COLL section (2.3).
constexpr uint32_t kHeaderFlagCollectives = 1u << 3;
constexpr uint32_t kKnownHeaderFlags =
    kHeaderFlagExprs | kHeaderFlagConditionals | kHeaderFlagTransferExprs | kHeaderFlagCollectives;

// Header field offsets.
namespace hdr {
constexpr uint32_t kMajor = 8, kMinor = 10, kEndian = 12, kFlags = 16, kSectionCount = 20,
                   kFileSize = 24, kTableOffset = 32, kEntrySize = 40, kHeaderSize = 44,
                   kTableChecksum = 48, kReserved = 56;
}
// Section table entry field offsets.
namespace ent {
constexpr uint32_t kTag = 0, kFlags = 4, kOffset = 8, kStoredSize = 16, kRawSize = 24,
                   kCount = 32, kRecordSize = 36, kChecksum = 40;
}

// Sections in the order the writer emits them. `recordSize` is the version 1.0 size,
// the smallest a reader accepts. XPRS (2.0) is written only when the graph stores
// expressions, ALTK (minor version 1) only when a node has kernel alternatives and COND
// (2.1, header flag bit 1) only when it has conditional nodes and PLAC (minor version 1)
// only when a node is placed on a device other than 0 and COLL (2.3, header flag bit 3)
// only when it has collective nodes, so a graph with none of them gives exactly a 1.0
// file.
enum SectionId : uint32_t {
  kGRPH, kSTRS, kSLOT, kPARM, kKMOD, kKFRM, kKERN, kKPRM, kRNGE, kCOPY, kFILL, kHOST,
  kNODE, kNARG, kEDGE, kORDR, kPART, kLIST, kSUBG, kMETA, kBLOB, kBDAT, kXPRS, kALTK,
  kCOND, kPLAC, kCOLL,
  kSectionIdCount
};
struct SectionKind {
  char tag[5];
  uint32_t recordSize;
};
constexpr SectionKind kSections[kSectionIdCount] = {
    {"GRPH", 8},  {"STRS", 1},  {"SLOT", 40}, {"PARM", 24}, {"KMOD", 16}, {"KFRM", 24},
    {"KERN", 32}, {"KPRM", 28}, {"RNGE", 112}, {"COPY", 88}, {"FILL", 24}, {"HOST", 16},
    {"NODE", 40}, {"NARG", 24}, {"EDGE", 8},  {"ORDR", 4},  {"PART", 16}, {"LIST", 4},
    {"SUBG", 4},  {"META", 16}, {"BLOB", 32}, {"BDAT", 1},  {"XPRS", 20}, {"ALTK", 8},
    {"COND", 24}, {"PLAC", 8},  {"COLL", 48},
};

// ---- little-endian loads and stores (unaligned) -----------------------------------
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
inline uint16_t fromLe(uint16_t v) { return __builtin_bswap16(v); }
inline uint32_t fromLe(uint32_t v) { return __builtin_bswap32(v); }
inline uint64_t fromLe(uint64_t v) { return __builtin_bswap64(v); }
#else
inline uint16_t fromLe(uint16_t v) { return v; }
inline uint32_t fromLe(uint32_t v) { return v; }
inline uint64_t fromLe(uint64_t v) { return v; }
#endif
inline uint16_t ld16(const uint8_t *p) { uint16_t v; std::memcpy(&v, p, 2); return fromLe(v); }
inline uint32_t ld32(const uint8_t *p) { uint32_t v; std::memcpy(&v, p, 4); return fromLe(v); }
inline uint64_t ld64(const uint8_t *p) { uint64_t v; std::memcpy(&v, p, 8); return fromLe(v); }
inline void st16(uint8_t *p, uint16_t v) { v = fromLe(v); std::memcpy(p, &v, 2); }
inline void st32(uint8_t *p, uint32_t v) { v = fromLe(v); std::memcpy(p, &v, 4); }
inline void st64(uint8_t *p, uint64_t v) { v = fromLe(v); std::memcpy(p, &v, 8); }

inline uint64_t alignUp(uint64_t v) { return (v + kAlign - 1) & ~(kAlign - 1); }

// A 4-byte tag as text for messages; non-printable bytes as \xNN.
std::string tagText(const uint8_t *tag);

} // namespace cgf
} // namespace cgraph
