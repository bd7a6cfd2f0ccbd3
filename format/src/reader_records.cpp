// Decodes the record sections of a checked container (reader.cpp) into a Graph.
//
// Record grammar, version 1.0 (offsets in bytes; str = u32 offset + u32 length into
// STRS; blob = u32 index into BLOB or 0xFFFFFFFF for none; a record may be longer in
// newer minors, the extra bytes are skipped):
//
//   GRPH  8: str name                                   ; 0 or 1 record
//   SLOT 40: str name, u64 size, u32 alignment, u32 usage, u8 init, u8[3] 0,
//            blob data, str path
//   PARM 24: str name, u64 defaultBits, u8 type, u8[7] 0
//   KMOD 16: str name, u32 firstForm, u32 formCount      ; into KFRM, in order
//   KFRM 24: u8 kind, u8[3] 0, blob bytes, str target, str options
//   KERN 32: str name, u32 module, u32 firstParam, u32 paramCount, u32 reqdLocal[3]
//   KPRM 28: str name, str typeName, u8 kind, u8[3] 0, u32 size, u32 qualifiers
//   RNGE 112: u32 dims, {u64 value, u32 param}[9]        ; global[3] local[3] offset[3]
//   COPY 88: u32 srcSlot, u32 dstSlot, u64 srcOffset, u64 dstOffset, u64 bytes,
//            u64 region[3], u64 srcRowPitch, srcSlicePitch, dstRowPitch, dstSlicePitch
//   FILL 24: u32 slot, blob pattern, u64 offset, u64 bytes
//   HOST 16: str op, str library
//   NODE 40: str name, u8 kind, u8[3] 0, u32 kernel, u32 firstArg, u32 argCount,
//            u32 detail (Kernel: RNGE, Copy/CopyRect: COPY, Fill: FILL, Host: HOST,
//            Conditional: COND, Collective: COLL),
//            u32 subgraph, u32 firstSlot, u32 slotCount  ; args into NARG, slots into LIST
//   NARG 24: u8 kind, u8 type, u8[2] 0, u32 index, u64 value, str text
//   EDGE  8: u32 from, u32 to
//   ORDR  4: u32 node
//   PART 16: u32 firstNode, u32 nodeCount, u32 firstDep, u32 depCount  ; into LIST
//   LIST  4: u32                ; node subgraph-slot lists in node order, then per
//                               ; partition its nodes then its deps
//   SUBG  4: blob file          ; a complete nested .cgf file
//   META 16: str key, str value
//   BLOB 32: u64 offset (into BDAT), u64 storedSize, u64 rawSize, u32 flags (bit0 zstd),
//            u32 0
//   XPRS 20: u32 node, u16 field (ExprField), u16 0, u32 arg, str code  ; 2.0 only,
//            sorted by (node, field, arg); code = cgraph/expr.h's encode() over params
//   ALTK  8: u32 node, u32 kernel  ; minor 1, sorted by node
//   COND 24: u8 kind (0 if, 1 while), u8[3] 0, u32 slot, u64 offset, u32 maxTrips, u32 0
//            ; 2.1 with header flag bit 1
//   PLAC  8: u32 node, u32 device (1..kMaxDevices)  ; minor 1, sorted by node
//   COLL 48: u8 kind (CollKind 0..5), u8 op (ReduceOp 0..3), u8 type (ScalarType),
//            u8 0, u32 sendSlot, u32 recvSlot, u32 0, u64 sendOffset, u64 recvOffset,
//            u64 count, u64 peer  ; 2.3 with header flag bit 3
//
// Lists (forms, kernel params, args, LIST) must be stored back to back in the order
// above: each `first` equals the sum of the counts before it. This makes every list a
// disjoint slice, so no record can make the reader copy a slice many times.
// String and blob bytes copied into the Graph count against ReadOptions::maxTotalBytes
// (a string or blob may be shared by many records). Index ranges are then checked by
// checkStructure (structure.cpp).
#include "reader_internal.h"
#include "structure.h"

#include "cgraph/expr.h"

#include <new>
#include <tuple>

namespace cgraph {
namespace cgf {
namespace {


// Names a record in messages. Built only when a message is, so the success path does
// no string work per record.
struct Where {
  const char *table;
  uint32_t i = kNone;
  const char *sub = nullptr;
  uint32_t j = 0;
  std::string text() const {
    std::string s = i == kNone ? std::string(table) : at(table, i);
    if (sub) s += "." + at(sub, j);
    return s;
  }
};
std::string operator+(const Where &w, const char *s) { return w.text() + s; }

class Decoder {
public:
  Decoder(const Image &im, const ReadOptions &opts, uint32_t depth, Budget &budget)
      : im_(im), opts_(opts), depth_(depth), budget_(budget) {}

  Expected<Graph> run() {
    Graph g;
    CGRAPH_RETURN_IF_ERROR(chargeTables());
    CGRAPH_RETURN_IF_ERROR(checkBlobs());
    const Section &grph = sec(kGRPH);
    if (grph.count > 1)
      return makeError("section 'GRPH': " + std::to_string(grph.count) + " records (expected 1)");
    if (grph.count == 1) CGRAPH_RETURN_IF_ERROR(str(grph.rec(0), Where{"graph"}, "name", &g.name));
    CGRAPH_RETURN_IF_ERROR(slots(g));
    CGRAPH_RETURN_IF_ERROR(params(g));
    CGRAPH_RETURN_IF_ERROR(modules(g));
    CGRAPH_RETURN_IF_ERROR(kernels(g));
    if (sec(kCOND).count > 0 && (im_.major < 2 || !(im_.flags & kHeaderFlagConditionals)))
      return makeError("section 'COND' holds " + std::to_string(sec(kCOND).count) +
                       " conditions but the header does not declare them (format 2.1, flag bit 1)");
    if (sec(kCOLL).count > 0 && (im_.major < 2 || !(im_.flags & kHeaderFlagCollectives)))
      return makeError("section 'COLL' holds " + std::to_string(sec(kCOLL).count) +
                       " collectives but the header does not declare them (format 2.3, flag bit 3)");
    CGRAPH_RETURN_IF_ERROR(nodes(g));
    CGRAPH_RETURN_IF_ERROR(rest(g));
    CGRAPH_RETURN_IF_ERROR(subgraphs(g));
    CGRAPH_RETURN_IF_ERROR(checkStructure(g, "file"));
    CGRAPH_RETURN_IF_ERROR(exprs(g));
    CGRAPH_RETURN_IF_ERROR(alternatives(g));
    CGRAPH_RETURN_IF_ERROR(placement(g));
    return g;
  }

private:
  const Section &sec(SectionId id) const { return im_.sec[id]; }

  Error str(const uint8_t *p, const Where &where, const char *field, std::string *out) {
    uint32_t off = ld32(p), len = ld32(p + 4);
    const Section &s = sec(kSTRS);
    if (uint64_t(off) + len > s.size)
      return makeError(where + ": " + field + " (offset " + std::to_string(off) + ", length " +
                       std::to_string(len) + ") points past the string table (" + std::to_string(s.size) +
                       " bytes)");
    if (len == 0) return Error::success();
    // The record's name is built only for the error (a string per node otherwise).
    if (len > budget_.left) return budget_.take(len, where + ": " + field);
    budget_.left -= len;
    out->assign(reinterpret_cast<const char *>(s.data) + off, len);
    return Error::success();
  }

  // The in-memory structs are several times larger than their records; charging them
  // up front keeps a small (or compressed) file from making the reader allocate
  // gigabytes.
  Error chargeTables() {
    uint64_t bytes = uint64_t(sec(kSLOT).count) * sizeof(Slot) + uint64_t(sec(kPARM).count) * sizeof(Param) +
                     uint64_t(sec(kKMOD).count) * sizeof(KernelModule) +
                     uint64_t(sec(kKFRM).count) * sizeof(KernelForm) + uint64_t(sec(kKERN).count) * sizeof(Kernel) +
                     uint64_t(sec(kKPRM).count) * sizeof(KernelParam) + uint64_t(sec(kNODE).count) * sizeof(Node) +
                     uint64_t(sec(kNARG).count) * sizeof(Arg) + uint64_t(sec(kEDGE).count) * sizeof(Edge) +
                     uint64_t(sec(kORDR).count) * 4 + uint64_t(sec(kPART).count) * sizeof(Partition) +
                     uint64_t(sec(kLIST).count) * 4 + uint64_t(sec(kSUBG).count) * sizeof(Graph) +
                     uint64_t(sec(kMETA).count) * sizeof(std::pair<std::string, std::string>);
    return budget_.take(bytes, "records");
  }

  Error checkBlobs() {
    const Section &b = sec(kBLOB);
    uint64_t dataSize = sec(kBDAT).size;
    for (uint32_t i = 0; i < b.count; ++i) {
      const uint8_t *r = b.rec(i);
      uint64_t off = ld64(r), stored = ld64(r + 8), raw = ld64(r + 16);
      uint32_t flags = ld32(r + 24);
      if (off > dataSize || stored > dataSize - off)
        return makeError(at("blobs", i) + ": offset " + std::to_string(off) + " + size " + std::to_string(stored) +
                         " points past the blob data (" + std::to_string(dataSize) + " bytes)");
      if (!(flags & kFlagZstd) && raw != stored)
        return makeError(at("blobs", i) + ": raw size " + std::to_string(raw) + " differs from the stored size " +
                         std::to_string(stored) + " of an uncompressed blob");
    }
    return Error::success();
  }

  Error blob(uint32_t idx, const Where &where, const char *field, std::vector<uint8_t> *out) {
    if (idx == kNone) return Error::success();
    const Section &b = sec(kBLOB);
    if (idx >= b.count)
      return makeError(where + ": " + field + " refers to blob " + std::to_string(idx) + " but the file has " +
                       std::to_string(b.count) + " blobs");
    const uint8_t *r = b.rec(idx);
    uint64_t off = ld64(r), stored = ld64(r + 8), raw = ld64(r + 16);
    const uint8_t *src = sec(kBDAT).data + off;
    std::string what = where + ": " + field + " (blob " + std::to_string(idx) + ")";
    CGRAPH_RETURN_IF_ERROR(budget_.take(raw, what));
    try {
      out->resize(raw);
    } catch (const std::bad_alloc &) {
      return makeError(what + ": out of memory for " + std::to_string(raw) + " bytes");
    }
    if (ld32(r + 24) & kFlagZstd) return unzstd(src, stored, raw, out->data(), what);
    if (raw) std::memcpy(out->data(), src, raw);
    return Error::success();
  }

  // Checks that records [first, first+count) of `table` follow on from `*cursor`.
  Error span(const Where &where, const char *what, uint32_t first, uint32_t count, uint64_t *cursor,
             SectionId table) {
    uint32_t total = sec(table).count;
    if (first != *cursor)
      return makeError(where + ": " + what + " start at " + std::to_string(first) + ", expected " +
                       std::to_string(*cursor) + " (lists are stored back to back)");
    if (count > total - std::min<uint64_t>(first, total))
      return makeError(where + ": " + std::to_string(count) + " " + what + " from " + std::to_string(first) +
                       " point past section '" + kSections[table].tag + "' (" + std::to_string(total) +
                       " records)");
    *cursor += count;
    return Error::success();
  }

  Error slots(Graph &g) {
    const Section &s = sec(kSLOT);
    g.slots.resize(s.count);
    for (uint32_t i = 0; i < s.count; ++i) {
      const uint8_t *r = s.rec(i);
      Slot &sl = g.slots[i];
      Where w{"slots", i};
      CGRAPH_RETURN_IF_ERROR(str(r, w, "name", &sl.name));
      sl.size = ld64(r + 8);
      sl.alignment = ld32(r + 16);
      sl.usage = ld32(r + 20);
      sl.init = static_cast<SlotInit>(r[24]);
      CGRAPH_RETURN_IF_ERROR(blob(ld32(r + 28), w, "data", &sl.data));
      CGRAPH_RETURN_IF_ERROR(str(r + 32, w, "path", &sl.path));
    }
    return Error::success();
  }

  Error params(Graph &g) {
    const Section &s = sec(kPARM);
    g.params.resize(s.count);
    for (uint32_t i = 0; i < s.count; ++i) {
      const uint8_t *r = s.rec(i);
      CGRAPH_RETURN_IF_ERROR(str(r, Where{"params", i}, "name", &g.params[i].name));
      g.params[i].defaultBits = ld64(r + 8);
      g.params[i].type = static_cast<ScalarType>(r[16]);
    }
    return Error::success();
  }

  Error modules(Graph &g) {
    const Section &s = sec(kKMOD), &fs = sec(kKFRM);
    g.modules.resize(s.count);
    uint64_t cursor = 0;
    for (uint32_t i = 0; i < s.count; ++i) {
      const uint8_t *r = s.rec(i);
      KernelModule &m = g.modules[i];
      Where w{"modules", i};
      CGRAPH_RETURN_IF_ERROR(str(r, w, "name", &m.name));
      uint32_t first = ld32(r + 8), count = ld32(r + 12);
      CGRAPH_RETURN_IF_ERROR(span(w, "forms", first, count, &cursor, kKFRM));
      m.forms.resize(count);
      for (uint32_t f = 0; f < count; ++f) {
        const uint8_t *fr = fs.rec(first + f);
        KernelForm &form = m.forms[f];
        Where fw{"modules", i, "forms", f};
        form.kind = static_cast<FormKind>(fr[0]);
        CGRAPH_RETURN_IF_ERROR(blob(ld32(fr + 4), fw, "bytes", &form.bytes));
        CGRAPH_RETURN_IF_ERROR(str(fr + 8, fw, "target", &form.target));
        CGRAPH_RETURN_IF_ERROR(str(fr + 16, fw, "options", &form.options));
      }
    }
    return Error::success();
  }

  Error kernels(Graph &g) {
    const Section &s = sec(kKERN), &ps = sec(kKPRM);
    g.kernels.resize(s.count);
    uint64_t cursor = 0;
    for (uint32_t i = 0; i < s.count; ++i) {
      const uint8_t *r = s.rec(i);
      Kernel &k = g.kernels[i];
      Where w{"kernels", i};
      CGRAPH_RETURN_IF_ERROR(str(r, w, "name", &k.name));
      k.module = ld32(r + 8);
      uint32_t first = ld32(r + 12), count = ld32(r + 16);
      for (int d = 0; d < 3; ++d) k.reqdLocal[d] = ld32(r + 20 + 4 * d);
      CGRAPH_RETURN_IF_ERROR(span(w, "params", first, count, &cursor, kKPRM));
      k.params.resize(count);
      for (uint32_t p = 0; p < count; ++p) {
        const uint8_t *pr = ps.rec(first + p);
        KernelParam &kp = k.params[p];
        Where pw{"kernels", i, "params", p};
        CGRAPH_RETURN_IF_ERROR(str(pr, pw, "name", &kp.name));
        CGRAPH_RETURN_IF_ERROR(str(pr + 8, pw, "type name", &kp.typeName));
        kp.kind = static_cast<ParamKind>(pr[16]);
        kp.size = ld32(pr + 20);
        kp.qualifiers = ld32(pr + 24);
      }
    }
    return Error::success();
  }

  Error detailRef(const Where &w, uint32_t idx, SectionId table, const char *what) {
    if (idx >= sec(table).count)
      return makeError(w + ": refers to " + what + " " + std::to_string(idx) + " but the file has " +
                       std::to_string(sec(table).count) + " " + what + "s");
    return Error::success();
  }

  Error nodeDetail(Node &n, const Where &w, uint32_t detail) {
    switch (n.kind) {
    case NodeKind::Kernel: {
      CGRAPH_RETURN_IF_ERROR(detailRef(w, detail, kRNGE, "range"));
      const uint8_t *r = sec(kRNGE).rec(detail);
      n.range.dims = ld32(r);
      Dim *dims[3] = {n.range.global, n.range.local, n.range.offset};
      for (int k = 0; k < 3; ++k)
        for (int d = 0; d < 3; ++d) {
          const uint8_t *p = r + 4 + 12 * (3 * k + d);
          dims[k][d].value = ld64(p);
          dims[k][d].param = ld32(p + 8);
        }
      return Error::success();
    }
    case NodeKind::Copy:
    case NodeKind::CopyRect: {
      CGRAPH_RETURN_IF_ERROR(detailRef(w, detail, kCOPY, "copy"));
      const uint8_t *r = sec(kCOPY).rec(detail);
      CopyOp &c = n.copy;
      c.srcSlot = ld32(r);
      c.dstSlot = ld32(r + 4);
      c.srcOffset = ld64(r + 8);
      c.dstOffset = ld64(r + 16);
      c.bytes = ld64(r + 24);
      for (int d = 0; d < 3; ++d) c.region[d] = ld64(r + 32 + 8 * d);
      c.srcRowPitch = ld64(r + 56);
      c.srcSlicePitch = ld64(r + 64);
      c.dstRowPitch = ld64(r + 72);
      c.dstSlicePitch = ld64(r + 80);
      return Error::success();
    }
    case NodeKind::Fill: {
      CGRAPH_RETURN_IF_ERROR(detailRef(w, detail, kFILL, "fill"));
      const uint8_t *r = sec(kFILL).rec(detail);
      n.fill.slot = ld32(r);
      uint32_t pattern = ld32(r + 4);
      // Bounded before copying: a pattern is at most 128 bytes.
      if (pattern != kNone && pattern < sec(kBLOB).count && ld64(sec(kBLOB).rec(pattern) + 16) > kMaxFillPattern)
        return makeError(w + ": fill pattern has " + std::to_string(ld64(sec(kBLOB).rec(pattern) + 16)) +
                         " bytes (must be 1..128)");
      CGRAPH_RETURN_IF_ERROR(blob(pattern, w, "fill pattern", &n.fill.pattern));
      n.fill.offset = ld64(r + 8);
      n.fill.bytes = ld64(r + 16);
      return Error::success();
    }
    case NodeKind::Host: {
      CGRAPH_RETURN_IF_ERROR(detailRef(w, detail, kHOST, "host op"));
      const uint8_t *r = sec(kHOST).rec(detail);
      CGRAPH_RETURN_IF_ERROR(str(r, w, "host op", &n.host.op));
      return str(r + 8, w, "host library", &n.host.library);
    }
    case NodeKind::Conditional: {
      if (im_.major < 2 || !(im_.flags & kHeaderFlagConditionals))
        return makeError(w + ": a conditional node but the header does not declare them (format 2.1, flag "
                             "bit 1)");
      CGRAPH_RETURN_IF_ERROR(detailRef(w, detail, kCOND, "condition"));
      const uint8_t *r = sec(kCOND).rec(detail);
      if (r[0] > uint8_t(CondKind::While))
        return makeError(w + ": unknown condition kind " + std::to_string(r[0]));
      n.cond.kind = static_cast<CondKind>(r[0]);
      n.cond.slot = ld32(r + 4);
      n.cond.offset = ld64(r + 8);
      n.cond.maxTrips = ld32(r + 16);
      return Error::success();
    }
    case NodeKind::Collective: {
      if (im_.major < 2 || !(im_.flags & kHeaderFlagCollectives))
        return makeError(w + ": a collective node but the header does not declare them (format 2.3, flag "
                             "bit 3)");
      CGRAPH_RETURN_IF_ERROR(detailRef(w, detail, kCOLL, "collective"));
      const uint8_t *r = sec(kCOLL).rec(detail);
      // Enum values are checked by checkStructure, which sees hand-built graphs too.
      CollectiveOp &c = n.coll;
      c.kind = static_cast<CollKind>(r[0]);
      c.op = static_cast<ReduceOp>(r[1]);
      c.type = static_cast<ScalarType>(r[2]);
      c.sendSlot = ld32(r + 4);
      c.recvSlot = ld32(r + 8);
      c.sendOffset = ld64(r + 16);
      c.recvOffset = ld64(r + 24);
      c.count = ld64(r + 32);
      c.peer = ld64(r + 40);
      return Error::success();
    }
    default:
      return Error::success();
    }
  }

  Error nodes(Graph &g) {
    const Section &s = sec(kNODE), &as = sec(kNARG), &ls = sec(kLIST);
    g.nodes.resize(s.count);
    uint64_t argCursor = 0;
    for (uint32_t i = 0; i < s.count; ++i) {
      const uint8_t *r = s.rec(i);
      Node &n = g.nodes[i];
      Where w{"nodes", i};
      CGRAPH_RETURN_IF_ERROR(str(r, w, "name", &n.name));
      n.kind = static_cast<NodeKind>(r[8]);
      n.kernel = ld32(r + 12);
      uint32_t firstArg = ld32(r + 16), argCount = ld32(r + 20);
      n.subgraph = ld32(r + 28);
      uint32_t firstSlot = ld32(r + 32), slotCount = ld32(r + 36);
      CGRAPH_RETURN_IF_ERROR(nodeDetail(n, w, ld32(r + 24)));
      CGRAPH_RETURN_IF_ERROR(span(w, "args", firstArg, argCount, &argCursor, kNARG));
      n.args.resize(argCount);
      for (uint32_t a = 0; a < argCount; ++a) {
        const uint8_t *ar = as.rec(firstArg + a);
        Arg &arg = n.args[a];
        arg.kind = static_cast<ArgKind>(ar[0]);
        arg.type = static_cast<ScalarType>(ar[1]);
        arg.index = ld32(ar + 4);
        arg.value = ld64(ar + 8);
        CGRAPH_RETURN_IF_ERROR(str(ar + 16, Where{"nodes", i, "args", a}, "text", &arg.text));
      }
      CGRAPH_RETURN_IF_ERROR(span(w, "subgraph slots", firstSlot, slotCount, &listCursor_, kLIST));
      n.subgraphSlots.resize(slotCount);
      for (uint32_t k = 0; k < slotCount; ++k) n.subgraphSlots[k] = ld32(ls.rec(firstSlot + k));
    }
    return Error::success();
  }

  Error rest(Graph &g) {
    const Section &es = sec(kEDGE);
    g.edges.resize(es.count);
    for (uint32_t i = 0; i < es.count; ++i) g.edges[i] = Edge{ld32(es.rec(i)), ld32(es.rec(i) + 4)};
    const Section &os = sec(kORDR);
    g.order.resize(os.count);
    for (uint32_t i = 0; i < os.count; ++i) g.order[i] = ld32(os.rec(i));
    const Section &ps = sec(kPART), &ls = sec(kLIST);
    g.partitions.resize(ps.count);
    for (uint32_t i = 0; i < ps.count; ++i) {
      const uint8_t *r = ps.rec(i);
      Where w{"partitions", i};
      uint32_t fn = ld32(r), nn = ld32(r + 4), fd = ld32(r + 8), nd = ld32(r + 12);
      CGRAPH_RETURN_IF_ERROR(span(w, "nodes", fn, nn, &listCursor_, kLIST));
      CGRAPH_RETURN_IF_ERROR(span(w, "deps", fd, nd, &listCursor_, kLIST));
      Partition &p = g.partitions[i];
      p.nodes.resize(nn);
      for (uint32_t k = 0; k < nn; ++k) p.nodes[k] = ld32(ls.rec(fn + k));
      p.deps.resize(nd);
      for (uint32_t k = 0; k < nd; ++k) p.deps[k] = ld32(ls.rec(fd + k));
    }
    const Section &ms = sec(kMETA);
    g.metadata.resize(ms.count);
    for (uint32_t i = 0; i < ms.count; ++i) {
      CGRAPH_RETURN_IF_ERROR(str(ms.rec(i), Where{"metadata", i}, "key", &g.metadata[i].first));
      CGRAPH_RETURN_IF_ERROR(str(ms.rec(i) + 8, Where{"metadata", i}, "value", &g.metadata[i].second));
    }
    return Error::success();
  }

  // Device placement (minor version 1; an older reader skips it and runs every node on
  // one device, which gives the same results).
  Error placement(Graph &g) {
    const Section &ps = sec(kPLAC);
    for (uint32_t i = 0; i < ps.count; ++i) {
      const uint8_t *r = ps.rec(i);
      Where w{"placement", i};
      const uint32_t node = ld32(r), device = ld32(r + 4);
      if (node >= g.nodes.size())
        return makeError(w + ": node " + std::to_string(node) + " points past the node table (" +
                         std::to_string(g.nodes.size()) + " nodes)");
      if (i > 0 && node <= ld32(ps.rec(i - 1)))
        return makeError(w + ": not sorted by node (or a node placed twice)");
      if (device == 0 || device >= kMaxDevices)
        return makeError(w + ": device " + std::to_string(device) + " (must be 1 to " +
                         std::to_string(kMaxDevices - 1) + "; device 0 is not stored)");
      g.nodes[node].device = device;
    }
    return Error::success();
  }

  // Kernel alternatives (minor version 1; older readers skip the section, which only
  // loses the choice, never changes what runs).
  Error alternatives(Graph &g) {
    const Section &as = sec(kALTK);
    if (as.count == 0) return Error::success();
    CGRAPH_RETURN_IF_ERROR(budget_.take(uint64_t(as.count) * 4, "kernel alternatives"));
    uint32_t prevNode = 0;
    for (uint32_t i = 0; i < as.count; ++i) {
      const uint8_t *r = as.rec(i);
      Where w{"alternatives", i};
      const uint32_t node = ld32(r), kernel = ld32(r + 4);
      if (node >= g.nodes.size())
        return makeError(w + ": node " + std::to_string(node) + " points past the node table (" +
                         std::to_string(g.nodes.size()) + " nodes)");
      if (i > 0 && node < prevNode) return makeError(w + ": not sorted by node");
      prevNode = node;
      Node &n = g.nodes[node];
      if (n.kind != NodeKind::Kernel)
        return makeError(w + ": node " + std::to_string(node) + " is a " + nodeKindName(n.kind) +
                         " node; only kernel nodes have alternatives");
      if (kernel >= g.kernels.size())
        return makeError(w + ": kernel " + std::to_string(kernel) + " points past the kernel table (" +
                         std::to_string(g.kernels.size()) + " kernels)");
      for (uint32_t k : n.alternatives)
        if (k == kernel) return makeError(w + ": kernel '" + g.kernels[kernel].name + "' is listed twice");
      const std::string sig = signatureDifference(g.kernels[n.kernel], g.kernels[kernel]);
      if (!sig.empty()) return makeError(w + ": " + sig);
      n.alternatives.push_back(kernel);
    }
    for (uint32_t n = 0; n < g.nodes.size(); ++n) {
      const Node &node = g.nodes[n];
      if (node.alternatives.empty()) continue;
      bool own = false;
      for (uint32_t k : node.alternatives) own = own || k == node.kernel;
      if (!own)
        return makeError("alternatives of node " + std::to_string(n) + ": its kernel '" +
                         g.kernels[node.kernel].name + "' is not among them");
    }
    return Error::success();
  }

  // A collective expression field must be one its kind has (no peer of an all_reduce).
  Error collectiveExprField(const Where &w, const CollectiveOp &c, ExprField f) {
    const bool has = f == ExprField::CollCount || (f == ExprField::CollSendOffset && collHasSend(c.kind)) ||
                     (f == ExprField::CollRecvOffset && collHasRecv(c.kind)) ||
                     (f == ExprField::CollPeer && collHasPeer(c.kind));
    if (!has)
      return makeError(w + ": " + std::string(collKindName(c.kind)) + " has no " + exprFieldName(f, 0) + " field");
    return Error::success();
  }

  // Stored parameter expressions (2.0): every program is decoded, so a malformed one is
  // an error here and never reaches a runtime.
  Error exprs(Graph &g) {
    const Section &xs = sec(kXPRS);
    if (xs.count == 0) return Error::success();
    if (im_.major < 2 || !(im_.flags & kHeaderFlagExprs))
      return makeError(
          "section 'XPRS' holds " + std::to_string(xs.count) +
          " expressions but the header does not declare them (format 2.0, flag bit 0)");
    CGRAPH_RETURN_IF_ERROR(budget_.take(uint64_t(xs.count) * sizeof(FieldExpr), "expressions"));
    g.exprs.resize(xs.count);
    for (uint32_t i = 0; i < xs.count; ++i) {
      const uint8_t *r = xs.rec(i);
      Where w{"expressions", i};
      FieldExpr &e = g.exprs[i];
      e.node = ld32(r);
      const uint16_t field = ld16(r + 4);
      e.arg = ld32(r + 8);
      const bool known = field <= 8 || field == uint16_t(ExprField::ScalarArg) ||
                         isTransferField(static_cast<ExprField>(field)) ||
                         field == uint16_t(ExprField::SlotSize) ||
                         isCollectiveField(static_cast<ExprField>(field));
      if (!known) return makeError(w + ": unknown field " + std::to_string(field));
      e.field = static_cast<ExprField>(field);
      const bool noFlag = !(im_.flags & kHeaderFlagTransferExprs);
      auto needsFlag = [&] {
        return makeError(w + ": " + exprFieldName(e.field, e.arg) +
                         " expressions need header flag bit 2 (format 2.2)");
      };
      if (e.field == ExprField::SlotSize) {
        if (noFlag) return needsFlag();
        if (e.node != kNone) return makeError(w + ": a slot size record must have node 0xFFFFFFFF");
        if (e.arg >= g.slots.size())
          return makeError(w + ": slot " + std::to_string(e.arg) + " points past the slot table (" +
                           std::to_string(g.slots.size()) + " slots)");
        const SlotInit init = g.slots[e.arg].init;
        if (init == SlotInit::Data)
          return makeError(w + ": slot " + std::to_string(e.arg) +
                           " has embedded data of a fixed size; its size cannot be an expression");
      } else {
        if (e.node >= g.nodes.size())
          return makeError(w + ": node " + std::to_string(e.node) +
                           " points past the node table (" + std::to_string(g.nodes.size()) +
                           " nodes)");
        const Node &n = g.nodes[e.node];
        const NodeKind need =
            isCollectiveField(e.field) ? NodeKind::Collective
            : isTransferField(e.field) ? (field < 24 ? NodeKind::Copy : NodeKind::Fill)
            : e.field == ExprField::ScalarArg && n.kind == NodeKind::Host ? NodeKind::Host
                                                                          : NodeKind::Kernel;
        if (n.kind != need)
          return makeError(w + ": node " + std::to_string(e.node) + " is a " +
                           nodeKindName(n.kind) + " node; " + exprFieldName(e.field, e.arg) +
                           " needs a " + nodeKindName(need) + " node");
        if (need != NodeKind::Kernel && need != NodeKind::Collective && noFlag) return needsFlag();
        if (need == NodeKind::Collective) CGRAPH_RETURN_IF_ERROR(collectiveExprField(w, n.coll, e.field));
        if (field <= 8 && field % 3 >= n.range.dims)
          return makeError(w + ": " + exprFieldName(e.field, e.arg) + " of a " +
                           std::to_string(n.range.dims) + "-dimensional range");
        if (e.field != ExprField::ScalarArg && e.arg != 0)
          return makeError(w + ": arg must be 0 for a range, copy or fill field");
        if (e.field == ExprField::ScalarArg) {
          if (e.arg >= n.args.size())
            return makeError(w + ": arg " + std::to_string(e.arg) + " but the node has " +
                             std::to_string(n.args.size()) + " arguments");
          const Arg &a = n.args[e.arg];
          if (a.kind != ArgKind::Scalar || a.type == ScalarType::F16 || a.type == ScalarType::F32 ||
              a.type == ScalarType::F64)
            return makeError(w + ": arg " + std::to_string(e.arg) + " is not an integer scalar");
        }
      }
      if (i > 0) {
        const FieldExpr &p = g.exprs[i - 1];
        auto key = [](const FieldExpr &x) {
          return std::make_tuple(x.node, uint16_t(x.field), x.arg);
        };
        if (!(key(p) < key(e)))
          return makeError(w + ": not sorted by (node, field, arg) after expressions[" +
                           std::to_string(i - 1) + "] (or a field has two expressions)");
      }
      std::string code;
      CGRAPH_RETURN_IF_ERROR(str(r + 12, w, "code", &code));
      e.code.assign(code.begin(), code.end());
      auto prog = expr::decode(e.code.data(), e.code.size(), uint32_t(g.params.size()));
      if (!prog)
        return makeError(w + ": " + exprFieldName(e.field, e.arg) + ": " + prog.error().message());
      for (uint32_t v : prog->usedVariables()) {
        const ScalarType t = g.params[v].type;
        if (t == ScalarType::F16 || t == ScalarType::F32 || t == ScalarType::F64)
          return makeError(w + ": uses parameter " + std::to_string(v) + " ('" + g.params[v].name +
                           "'), which is " + scalarName(t) +
                           "; expressions need integer parameters");
      }
    }
    return Error::success();
  }

  Error subgraphs(Graph &g) {
    const Section &s = sec(kSUBG);
    if (s.count && depth_ + 1 > opts_.maxDepth)
      return makeError("subgraphs[0]: nested deeper than " + std::to_string(opts_.maxDepth) +
                       " levels (ReadOptions::maxDepth)");
    g.subgraphs.reserve(s.count);
    for (uint32_t i = 0; i < s.count; ++i) {
      Where w{"subgraphs", i};
      std::vector<uint8_t> file;
      uint32_t idx = ld32(s.rec(i));
      if (idx == kNone) return makeError(w + ": no file blob");
      CGRAPH_RETURN_IF_ERROR(blob(idx, w, "file", &file));
      auto sub = readImpl(file.data(), file.size(), opts_, depth_ + 1, budget_);
      if (!sub) return sub.error().withContext(w.text());
      g.subgraphs.push_back(std::move(*sub));
    }
    return Error::success();
  }

  const Image &im_;
  const ReadOptions &opts_;
  uint32_t depth_;
  Budget &budget_;
  uint64_t listCursor_ = 0;
};

} // namespace

Expected<Graph> decodeGraph(const Image &image, const ReadOptions &opts, uint32_t depth, Budget &budget) {
  return Decoder(image, opts, depth, budget).run();
}

} // namespace cgf
} // namespace cgraph
