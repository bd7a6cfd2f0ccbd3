// Serializes a Graph as .cgf 1.0. The layout is described in format/SPEC.md and
// layout.h; the reader (reader.cpp, reader_records.cpp) holds the grammar.
#include "cgraph/format/writer.h"
#include "cgraph/format/reader.h"

#include "layout.h"
#include "structure.h"

#include <xxhash.h>
#include <zstd.h>

#include <algorithm>
#include <deque>
#include <memory>
#include <tuple>
#include <unordered_map>

namespace cgraph {
namespace cgf {
namespace {

constexpr uint32_t kMaxWriteDepth = 8;

struct ZstdCtx {
  ZSTD_CCtx *ctx = ZSTD_createCCtx();
  ~ZstdCtx() { ZSTD_freeCCtx(ctx); }
};

class Writer {
public:
  Writer(const WriteOptions &opts, uint32_t depth) : opts_(opts), depth_(depth) {}

  Expected<std::vector<uint8_t>> write(const Graph &g) {
    if (depth_ > kMaxWriteDepth)
      return makeError("subgraphs nested deeper than " + std::to_string(kMaxWriteDepth) + " levels");
    CGRAPH_RETURN_IF_ERROR(checkStructure(g, "graph"));
    if (!zstd_.ctx) return makeError("cannot create a zstd compression context");

    str(rec(kGRPH), g.name);
    for (const Slot &s : g.slots) {
      uint8_t *r = rec(kSLOT);
      str(r, s.name);
      st64(r + 8, s.size);
      st32(r + 16, s.alignment);
      st32(r + 20, s.usage);
      r[24] = static_cast<uint8_t>(s.init);
      uint32_t data = blob(s.data); // may grow the section: reload r
      r = last(kSLOT);
      st32(r + 28, data);
      str(r + 32, s.path);
    }
    for (const Param &p : g.params) {
      uint8_t *r = rec(kPARM);
      str(r, p.name);
      st64(r + 8, p.defaultBits);
      r[16] = static_cast<uint8_t>(p.type);
    }
    uint32_t forms = 0;
    for (const KernelModule &m : g.modules) {
      uint8_t *r = rec(kKMOD);
      str(r, m.name);
      st32(r + 8, forms);
      st32(r + 12, static_cast<uint32_t>(m.forms.size()));
      forms += static_cast<uint32_t>(m.forms.size());
      for (const KernelForm &f : m.forms) {
        uint32_t bytes = blob(f.bytes);
        uint8_t *fr = rec(kKFRM);
        fr[0] = static_cast<uint8_t>(f.kind);
        st32(fr + 4, bytes);
        str(fr + 8, f.target);
        str(fr + 16, f.options);
      }
    }
    uint32_t kparams = 0;
    for (const Kernel &k : g.kernels) {
      uint8_t *r = rec(kKERN);
      str(r, k.name);
      st32(r + 8, k.module);
      st32(r + 12, kparams);
      st32(r + 16, static_cast<uint32_t>(k.params.size()));
      for (int d = 0; d < 3; ++d) st32(r + 20 + 4 * d, k.reqdLocal[d]);
      kparams += static_cast<uint32_t>(k.params.size());
      for (const KernelParam &p : k.params) {
        uint8_t *pr = rec(kKPRM);
        str(pr, p.name);
        str(pr + 8, p.typeName);
        pr[16] = static_cast<uint8_t>(p.kind);
        st32(pr + 20, p.size);
        st32(pr + 24, p.qualifiers);
      }
    }
    uint32_t args = 0, lists = 0;
    for (const Node &n : g.nodes) {
      uint32_t detail = kNone;
      switch (n.kind) {
      case NodeKind::Kernel: detail = range(n.range); break;
      case NodeKind::Copy:
      case NodeKind::CopyRect: detail = copy(n.copy); break;
      case NodeKind::Fill: detail = fill(n.fill); break;
      case NodeKind::Host: detail = host(n.host); break;
      case NodeKind::Conditional: {
        detail = count_[kCOND];
        uint8_t *c = rec(kCOND);
        c[0] = static_cast<uint8_t>(n.cond.kind);
        st32(c + 4, n.cond.slot);
        st64(c + 8, n.cond.offset);
        st32(c + 16, n.cond.maxTrips);
        hasConds_ = true;
        break;
      }
      case NodeKind::Collective: detail = collective(n.coll); break;
      default: break;
      }
      uint8_t *r = rec(kNODE);
      str(r, n.name);
      r[8] = static_cast<uint8_t>(n.kind);
      st32(r + 12, n.kernel);
      st32(r + 16, args);
      st32(r + 20, static_cast<uint32_t>(n.args.size()));
      st32(r + 24, detail);
      st32(r + 28, n.subgraph);
      st32(r + 32, lists);
      st32(r + 36, static_cast<uint32_t>(n.subgraphSlots.size()));
      args += static_cast<uint32_t>(n.args.size());
      for (const Arg &a : n.args) {
        uint8_t *ar = rec(kNARG);
        ar[0] = static_cast<uint8_t>(a.kind);
        ar[1] = static_cast<uint8_t>(a.type);
        st32(ar + 4, a.index);
        st64(ar + 8, a.value);
        str(ar + 16, a.text);
      }
      lists += list(n.subgraphSlots);
    }
    for (const Edge &e : g.edges) {
      uint8_t *r = rec(kEDGE);
      st32(r, e.from);
      st32(r + 4, e.to);
    }
    for (uint32_t o : g.order) st32(rec(kORDR), o);
    for (const Partition &p : g.partitions) {
      uint8_t *r = rec(kPART);
      st32(r, lists);
      st32(r + 4, static_cast<uint32_t>(p.nodes.size()));
      st32(r + 8, lists + static_cast<uint32_t>(p.nodes.size()));
      st32(r + 12, static_cast<uint32_t>(p.deps.size()));
      lists += list(p.nodes);
      lists += list(p.deps);
    }
    for (const Graph &sub : g.subgraphs) {
      auto bytes = Writer(opts_, depth_ + 1).write(sub);
      if (!bytes) return bytes.error().withContext("subgraphs[" + std::to_string(count_[kSUBG]) + "]");
      nested_.push_back(std::move(*bytes));
      uint32_t b = blob(nested_.back());
      st32(rec(kSUBG), b);
    }
    for (const auto &kv : g.metadata) {
      uint8_t *r = rec(kMETA);
      str(r, kv.first);
      str(r + 8, kv.second);
    }
    // Stored expressions (2.0), sorted by (node, field, arg) as the reader requires.
    std::vector<const FieldExpr *> xs;
    for (const FieldExpr &e : g.exprs)
      xs.push_back(&e);
    std::stable_sort(xs.begin(), xs.end(), [](const FieldExpr *a, const FieldExpr *b) {
      return std::make_tuple(a->node, uint16_t(a->field), a->arg) <
             std::make_tuple(b->node, uint16_t(b->field), b->arg);
    });
    for (const FieldExpr *e : xs) {
      uint8_t *r = rec(kXPRS);
      st32(r, e->node);
      st16(r + 4, static_cast<uint16_t>(e->field));
      st32(r + 8, e->arg);
      str(r + 12, std::string(e->code.begin(), e->code.end()));
    }
    hasExprs_ = !xs.empty();
    for (const FieldExpr *e : xs)
      if (isTransferField(e->field) || e->field == ExprField::SlotSize ||
          (e->field == ExprField::ScalarArg && e->node < g.nodes.size() &&
           g.nodes[e->node].kind == NodeKind::Host))
        hasTransferExprs_ = true;
    // Device placement (minor version 1): nodes not on device 0, in node order.
    for (uint32_t n = 0; n < g.nodes.size(); ++n)
      if (g.nodes[n].device != 0) {
        uint8_t *r = rec(kPLAC);
        st32(r, n);
        st32(r + 4, g.nodes[n].device);
        hasPlac_ = true;
      }
    // Kernel alternatives (minor version 1): per node in node order, in list order.
    for (uint32_t n = 0; n < g.nodes.size(); ++n)
      for (uint32_t k : g.nodes[n].alternatives) {
        uint8_t *r = rec(kALTK);
        st32(r, n);
        st32(r + 4, k);
        hasAlts_ = true;
      }
    if (tooBig_) return makeError("the graph holds more than 4 GiB of strings or 2^32 records in one table");
    return assemble();
  }

private:
  uint8_t *rec(SectionId id) {
    std::vector<uint8_t> &s = sec_[id];
    size_t o = s.size();
    s.resize(o + kSections[id].recordSize);
    if (++count_[id] == 0) tooBig_ = true;
    return s.data() + o;
  }
  uint8_t *last(SectionId id) { return sec_[id].data() + sec_[id].size() - kSections[id].recordSize; }

  // Strings are deduplicated in first-use order; the empty string is (0, 0). An
  // open-addressing table of (hash, offset, length) compared against STRS itself: the
  // strings then sit in one contiguous buffer instead of scattered across the Graph.
  struct StrEntry {
    uint64_t hash = 0;
    uint32_t off = 0, len = 0; // len 0: empty bucket
  };
  void str(uint8_t *r, const std::string &s) {
    uint32_t off = 0;
    if (!s.empty()) off = intern(s);
    st32(r, off);
    st32(r + 4, static_cast<uint32_t>(s.size()));
  }
  uint32_t intern(const std::string &s) {
    std::vector<uint8_t> &t = sec_[kSTRS];
    if (s.size() > 0xFFFFFFFFull || t.size() + s.size() > 0xFFFFFFFFull) {
      tooBig_ = true;
      return 0;
    }
    if (strUsed_ * 2 >= strTable_.size()) growStrings();
    uint64_t h = XXH3_64bits(s.data(), s.size());
    size_t mask = strTable_.size() - 1;
    for (size_t b = h & mask;; b = (b + 1) & mask) {
      StrEntry &e = strTable_[b];
      if (e.len == 0) {
        e.hash = h;
        e.off = static_cast<uint32_t>(t.size());
        e.len = static_cast<uint32_t>(s.size());
        t.insert(t.end(), s.begin(), s.end());
        ++strUsed_;
        return e.off;
      }
      if (e.hash == h && e.len == s.size() && std::memcmp(t.data() + e.off, s.data(), s.size()) == 0)
        return e.off;
    }
  }
  void growStrings() {
    std::vector<StrEntry> old(std::max<size_t>(1024, strTable_.size() * 2));
    old.swap(strTable_);
    size_t mask = strTable_.size() - 1;
    for (const StrEntry &e : old) {
      if (e.len == 0) continue;
      size_t b = e.hash & mask;
      while (strTable_[b].len != 0) b = (b + 1) & mask;
      strTable_[b] = e;
    }
  }

  uint32_t list(const std::vector<uint32_t> &v) {
    for (uint32_t x : v) st32(rec(kLIST), x);
    return static_cast<uint32_t>(v.size());
  }

  uint32_t range(const NDRange &nr) {
    uint8_t r[112] = {};
    st32(r, nr.dims);
    const Dim *dims[3] = {nr.global, nr.local, nr.offset};
    for (int k = 0; k < 3; ++k)
      for (int d = 0; d < 3; ++d) {
        uint8_t *p = r + 4 + 12 * (3 * k + d);
        st64(p, dims[k][d].value);
        st32(p + 8, dims[k][d].param);
      }
    std::string key(reinterpret_cast<const char *>(r), sizeof r);
    auto it = rangeIdx_.find(key);
    if (it != rangeIdx_.end()) return it->second;
    uint32_t idx = count_[kRNGE];
    std::memcpy(rec(kRNGE), r, sizeof r);
    rangeIdx_.emplace(std::move(key), idx);
    return idx;
  }

  uint32_t copy(const CopyOp &c) {
    uint32_t idx = count_[kCOPY];
    uint8_t *r = rec(kCOPY);
    st32(r, c.srcSlot);
    st32(r + 4, c.dstSlot);
    st64(r + 8, c.srcOffset);
    st64(r + 16, c.dstOffset);
    st64(r + 24, c.bytes);
    for (int d = 0; d < 3; ++d) st64(r + 32 + 8 * d, c.region[d]);
    st64(r + 56, c.srcRowPitch);
    st64(r + 64, c.srcSlicePitch);
    st64(r + 72, c.dstRowPitch);
    st64(r + 80, c.dstSlicePitch);
    return idx;
  }

  uint32_t fill(const FillOp &f) {
    uint32_t pattern = blob(f.pattern);
    uint32_t idx = count_[kFILL];
    uint8_t *r = rec(kFILL);
    st32(r, f.slot);
    st32(r + 4, pattern);
    st64(r + 8, f.offset);
    st64(r + 16, f.bytes);
    return idx;
  }

  uint32_t host(const HostOp &h) {
    uint32_t idx = count_[kHOST];
    uint8_t *r = rec(kHOST);
    str(r, h.op);
    str(r + 8, h.library);
    return idx;
  }

  // COLL 48: u8 kind, u8 op, u8 type, u8 0, u32 sendSlot, u32 recvSlot, u32 0,
  //          u64 sendOffset, u64 recvOffset, u64 count, u64 peer
  uint32_t collective(const CollectiveOp &c) {
    uint32_t idx = count_[kCOLL];
    uint8_t *r = rec(kCOLL);
    r[0] = static_cast<uint8_t>(c.kind);
    r[1] = static_cast<uint8_t>(c.op);
    r[2] = static_cast<uint8_t>(c.type);
    st32(r + 4, c.sendSlot);
    st32(r + 8, c.recvSlot);
    st64(r + 16, c.sendOffset);
    st64(r + 24, c.recvOffset);
    st64(r + 32, c.count);
    st64(r + 40, c.peer);
    hasColls_ = true;
    return idx;
  }

  // Blobs are deduplicated by content in first-use order; empty bytes are kNone.
  uint32_t blob(const std::vector<uint8_t> &bytes) {
    if (bytes.empty()) return kNone;
    uint64_t h = XXH3_64bits(bytes.data(), bytes.size());
    auto range = blobIdx_.equal_range(h);
    for (auto it = range.first; it != range.second; ++it)
      if (*blobSrc_[it->second] == bytes) return it->second;
    uint32_t idx = count_[kBLOB];
    blobIdx_.emplace(h, idx);
    blobSrc_.push_back(&bytes);

    std::vector<uint8_t> &d = sec_[kBDAT];
    uint64_t off = d.size();
    uint32_t flags = 0;
    uint64_t stored = bytes.size();
    if (bytes.size() >= opts_.compressThreshold && compress(bytes.data(), bytes.size(), &d)) {
      flags = kFlagZstd;
      stored = d.size() - off;
    } else {
      d.insert(d.end(), bytes.begin(), bytes.end());
    }
    uint8_t *r = rec(kBLOB);
    st64(r, off);
    st64(r + 8, stored);
    st64(r + 16, bytes.size());
    st32(r + 24, flags);
    return idx;
  }

  // Appends the zstd frame of [p, p+n) to `out` if that is smaller than n bytes.
  bool compress(const uint8_t *p, size_t n, std::vector<uint8_t> *out) {
    size_t off = out->size();
    out->resize(off + ZSTD_compressBound(n));
    size_t z = ZSTD_compressCCtx(zstd_.ctx, out->data() + off, out->size() - off, p, n, opts_.zstdLevel);
    if (ZSTD_isError(z) || z >= n) {
      out->resize(off);
      return false;
    }
    out->resize(off + z);
    return true;
  }

  Expected<std::vector<uint8_t>> assemble() {
    uint64_t tableOff = kHeaderSize;
    // Without expressions, alternatives, conditionals or placement the file is exactly
    // a 1.0 file (no XPRS, ALTK, COND and PLAC entries, the last ones).
    const uint32_t nsec = hasColls_   ? kSectionIdCount
                          : hasPlac_  ? kCOLL
                          : hasConds_ ? kPLAC
                          : hasAlts_  ? kCOND
                          : hasExprs_ ? kALTK
                                      : kXPRS;
    uint64_t pos = alignUp(tableOff + uint64_t(nsec) * kEntrySize);
    std::vector<uint8_t> stored[kSectionIdCount];
    uint32_t flags[kSectionIdCount] = {};
    uint64_t offs[kSectionIdCount];
    for (uint32_t i = 0; i < nsec; ++i) {
      const std::vector<uint8_t> &raw = sec_[i];
      if (opts_.compressTables && i != kBDAT && raw.size() >= opts_.compressThreshold &&
          compress(raw.data(), raw.size(), &stored[i]))
        flags[i] = kFlagZstd;
      offs[i] = pos;
      pos = alignUp(pos + (flags[i] ? stored[i].size() : raw.size()));
    }
    std::vector<uint8_t> out(pos, 0);
    uint8_t *h = out.data();
    std::memcpy(h, kMagic, sizeof kMagic);
    st16(h + hdr::kMajor, hasExprs_ || hasConds_ || hasColls_ ? kCgfExprMajorVersion : kCgfMajorVersion);
    st16(h + hdr::kMinor, hasColls_                           ? kCgfCollectiveMinorVersion
                          : hasTransferExprs_                 ? kCgfTransferExprMinorVersion
                          : hasAlts_ || hasConds_ || hasPlac_ ? kCgfAlternativesMinorVersion
                                                              : kCgfMinorVersion);
    st32(h + hdr::kEndian, kEndianMarker);
    st32(h + hdr::kFlags, (hasExprs_ ? kHeaderFlagExprs : 0) |
                              (hasConds_ ? kHeaderFlagConditionals : 0) |
                              (hasTransferExprs_ ? kHeaderFlagTransferExprs : 0) |
                              (hasColls_ ? kHeaderFlagCollectives : 0));
    st32(h + hdr::kSectionCount, nsec);
    st64(h + hdr::kFileSize, pos);
    st64(h + hdr::kTableOffset, tableOff);
    st32(h + hdr::kEntrySize, kEntrySize);
    st32(h + hdr::kHeaderSize, kHeaderSize);
    for (uint32_t i = 0; i < nsec; ++i) {
      const std::vector<uint8_t> &body = flags[i] ? stored[i] : sec_[i];
      if (!body.empty()) std::memcpy(out.data() + offs[i], body.data(), body.size());
      uint8_t *e = out.data() + tableOff + uint64_t(i) * kEntrySize;
      std::memcpy(e + ent::kTag, kSections[i].tag, 4);
      st32(e + ent::kFlags, flags[i]);
      st64(e + ent::kOffset, offs[i]);
      st64(e + ent::kStoredSize, body.size());
      st64(e + ent::kRawSize, sec_[i].size());
      st32(e + ent::kCount, count_[i]); // 0 for the byte sections STRS and BDAT
      st32(e + ent::kRecordSize, kSections[i].recordSize);
      st64(e + ent::kChecksum, XXH3_64bits(body.data(), body.size()));
    }
    st64(h + hdr::kTableChecksum, XXH3_64bits(out.data() + tableOff, uint64_t(nsec) * kEntrySize));
    return out;
  }

  const WriteOptions &opts_;
  uint32_t depth_;
  ZstdCtx zstd_;
  std::vector<uint8_t> sec_[kSectionIdCount];
  uint32_t count_[kSectionIdCount] = {};
  bool tooBig_ = false;
  bool hasExprs_ = false;
  bool hasTransferExprs_ = false;
  bool hasAlts_ = false;
  bool hasConds_ = false;
  bool hasColls_ = false;
  bool hasPlac_ = false;
  std::vector<StrEntry> strTable_;
  size_t strUsed_ = 0;
  std::unordered_map<std::string, uint32_t> rangeIdx_;
  std::unordered_multimap<uint64_t, uint32_t> blobIdx_;
  std::vector<const std::vector<uint8_t> *> blobSrc_;
  std::deque<std::vector<uint8_t>> nested_;
};

} // namespace
} // namespace cgf

Expected<std::vector<uint8_t>> writeCgf(const Graph &g, const WriteOptions &opts) {
  return cgf::Writer(opts, 0).write(g);
}

} // namespace cgraph
