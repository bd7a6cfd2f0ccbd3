// Test helpers for the .cgf tests: a graph using every feature, deep comparison, and
// byte-level editing of written files (with checksums fixed up afterwards, so a test
// reaches the check it means to hit instead of the checksum check).
#pragma once

#include "cgraph/format/reader.h"
#include "cgraph/format/writer.h"
#include "cgraph/model.h"

#include <xxhash.h>

#include <cstring>
#include <sstream>
#include <string>
#include <vector>

namespace cgftest {

using namespace cgraph;

inline uint32_t ld32(const uint8_t *p) { uint32_t v; std::memcpy(&v, p, 4); return v; }
inline uint64_t ld64(const uint8_t *p) { uint64_t v; std::memcpy(&v, p, 8); return v; }
inline void st32(uint8_t *p, uint32_t v) { std::memcpy(p, &v, 4); }
inline void st64(uint8_t *p, uint64_t v) { std::memcpy(p, &v, 8); }
inline void st16(uint8_t *p, uint16_t v) { std::memcpy(p, &v, 2); }

constexpr size_t kTableOffset = 64, kEntry = 48;

inline uint32_t sectionCount(const std::vector<uint8_t> &f) { return ld32(f.data() + 20); }
inline uint8_t *entry(std::vector<uint8_t> &f, uint32_t i) { return f.data() + kTableOffset + i * kEntry; }

// Index in the section table of `tag`; aborts the test (returns ~0u) if absent.
inline uint32_t findSection(std::vector<uint8_t> &f, const char *tag) {
  for (uint32_t i = 0; i < sectionCount(f); ++i)
    if (std::memcmp(entry(f, i), tag, 4) == 0) return i;
  return ~0u;
}

// Pointer to byte `field` of record `rec` of section `tag` (uncompressed sections).
inline uint8_t *field(std::vector<uint8_t> &f, const char *tag, uint32_t rec, uint32_t field) {
  uint8_t *e = entry(f, findSection(f, tag));
  return f.data() + ld64(e + 8) + uint64_t(rec) * ld32(e + 36) + field;
}

// Recomputes every section checksum, then the table checksum.
inline void fixChecksums(std::vector<uint8_t> &f) {
  uint32_t n = sectionCount(f);
  if (kTableOffset + uint64_t(n) * kEntry > f.size()) return; // a deliberately broken table
  for (uint32_t i = 0; i < n; ++i) {
    uint8_t *e = entry(f, i);
    uint64_t off = ld64(e + 8), size = ld64(e + 16);
    if (off <= f.size() && size <= f.size() - off) st64(e + 40, XXH3_64bits(f.data() + off, size));
  }
  st64(f.data() + 48, XXH3_64bits(f.data() + kTableOffset, n * kEntry));
}

// A section as a test sees it: the stored bytes plus the table fields.
struct RawSection {
  std::string tag;
  uint32_t flags = 0;
  std::vector<uint8_t> bytes; // stored bytes
  uint64_t rawSize = 0;
  uint32_t count = 0, recordSize = 0;
};

inline std::vector<RawSection> unpack(const std::vector<uint8_t> &f) {
  std::vector<RawSection> out;
  uint32_t n = ld32(f.data() + 20);
  uint64_t table = ld64(f.data() + 32);
  for (uint32_t i = 0; i < n; ++i) {
    const uint8_t *e = f.data() + table + i * kEntry;
    RawSection s;
    s.tag.assign(reinterpret_cast<const char *>(e), 4);
    s.flags = ld32(e + 4);
    uint64_t off = ld64(e + 8), size = ld64(e + 16);
    s.bytes.assign(f.begin() + off, f.begin() + off + size);
    s.rawSize = ld64(e + 24);
    s.count = ld32(e + 32);
    s.recordSize = ld32(e + 36);
    out.push_back(std::move(s));
  }
  return out;
}

// Lays sections out the way the writer does (header, table at 64, 64-byte aligned
// sections) with correct checksums.
inline std::vector<uint8_t> pack(const std::vector<RawSection> &secs, uint16_t major = 1, uint16_t minor = 0) {
  auto align = [](uint64_t v) { return (v + 63) & ~uint64_t(63); };
  uint64_t pos = align(64 + secs.size() * kEntry);
  std::vector<uint64_t> offs;
  for (const RawSection &s : secs) { offs.push_back(pos); pos = align(pos + s.bytes.size()); }
  std::vector<uint8_t> f(pos, 0);
  const uint8_t magic[8] = {'C', 'G', 'F', 0, '\r', '\n', 0x1A, '\n'};
  std::memcpy(f.data(), magic, 8);
  st16(f.data() + 8, major);
  st16(f.data() + 10, minor);
  st32(f.data() + 12, 0x01020304u);
  st32(f.data() + 20, static_cast<uint32_t>(secs.size()));
  st64(f.data() + 24, pos);
  st64(f.data() + 32, 64);
  st32(f.data() + 40, kEntry);
  st32(f.data() + 44, 64);
  for (size_t i = 0; i < secs.size(); ++i) {
    uint8_t *e = entry(f, static_cast<uint32_t>(i));
    std::memcpy(e, secs[i].tag.data(), 4);
    st32(e + 4, secs[i].flags);
    st64(e + 8, offs[i]);
    st64(e + 16, secs[i].bytes.size());
    st64(e + 24, secs[i].rawSize);
    st32(e + 32, secs[i].count);
    st32(e + 36, secs[i].recordSize);
    if (!secs[i].bytes.empty()) std::memcpy(f.data() + offs[i], secs[i].bytes.data(), secs[i].bytes.size());
  }
  fixChecksums(f);
  return f;
}

inline RawSection *sectionByTag(std::vector<RawSection> &secs, const char *tag) {
  for (RawSection &s : secs)
    if (s.tag == tag) return &s;
  return nullptr;
}

inline Graph makeSubgraph() {
  Graph s;
  s.name = "inner";
  Slot a; a.name = "in"; a.size = 64;
  Slot b; b.name = "out"; b.size = 64;
  s.slots = {a, b};
  Node c; c.name = "inner_copy"; c.kind = NodeKind::Copy;
  c.copy.srcSlot = 0; c.copy.dstSlot = 1; c.copy.bytes = 64;
  s.nodes = {c};
  return s;
}

// A graph that uses every node kind, arg kind, slot init kind, kernel form kind,
// params, edges, order, partitions, metadata, a nested subgraph and a large
// compressible blob.
inline Graph makeFullGraph() {
  Graph g;
  g.name = "everything";
  auto slot = [](std::string name, uint64_t size, SlotInit init) {
    Slot s; s.name = std::move(name); s.size = size; s.init = init; s.usage = kUsageRead | kUsageWrite;
    return s;
  };
  g.slots.push_back(slot("ext", 4096, SlotInit::External));
  Slot data = slot("weights", 256 * 1024, SlotInit::Data); // compressible: zstd path
  data.data.resize(data.size);
  for (size_t i = 0; i < data.data.size(); ++i) data.data[i] = static_cast<uint8_t>((i / 64) % 7);
  data.alignment = 256;
  g.slots.push_back(data);
  Slot fill = slot("zeros", 1024, SlotInit::Fill);
  fill.data = {0xDE, 0xAD, 0xBE, 0xEF};
  g.slots.push_back(fill);
  Slot file = slot("table", 100, SlotInit::File);
  file.path = "data/table.bin";
  g.slots.push_back(file);
  g.slots.push_back(slot("tmp", 8192, SlotInit::Transient));
  Slot small = slot("small", 16, SlotInit::Data);
  small.data = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
  g.slots.push_back(small);

  Param n; n.name = "n"; n.type = ScalarType::U32; n.defaultBits = 1024;
  Param alpha; alpha.name = "alpha"; alpha.type = ScalarType::F32; alpha.defaultBits = 0x3F800000;
  g.params = {n, alpha};

  KernelModule m; m.name = "kernels.cl";
  const FormKind kinds[] = {FormKind::SpirV, FormKind::OpenCLC, FormKind::LLVMBitcode, FormKind::PTX,
                            FormKind::Cubin, FormKind::AmdgcnCodeObject, FormKind::HostObject};
  for (FormKind k : kinds) {
    KernelForm f; f.kind = k; f.target = std::string(formKindName(k)) + "-target";
    f.options = k == FormKind::OpenCLC ? "" : "-O2";
    for (int i = 0; i < 40 + static_cast<int>(k); ++i) f.bytes.push_back(static_cast<uint8_t>(i * 13 + int(k)));
    m.forms.push_back(f);
  }
  g.modules.push_back(m);
  KernelModule empty; empty.name = "empty.spv";
  g.modules.push_back(empty);

  Kernel axpy; axpy.name = "axpy"; axpy.module = 0;
  auto kp = [](std::string name, std::string type, ParamKind kind, uint32_t size, uint32_t q) {
    KernelParam p; p.name = std::move(name); p.typeName = std::move(type); p.kind = kind; p.size = size;
    p.qualifiers = q;
    return p;
  };
  axpy.params = {kp("x", "float*", ParamKind::GlobalBuffer, 4, kQualConst | kQualRestrict),
                 kp("y", "float*", ParamKind::ConstantBuffer, 4, 0),
                 kp("scratch", "float*", ParamKind::LocalBuffer, 4, kQualVolatile),
                 kp("a", "float", ParamKind::Scalar, 4, 0), kp("n", "uint", ParamKind::Scalar, 4, 0),
                 kp("", "long", ParamKind::Scalar, 8, 0)};
  axpy.reqdLocal[0] = 64; axpy.reqdLocal[1] = 1; axpy.reqdLocal[2] = 1;
  g.kernels.push_back(axpy);
  Kernel other; other.name = "other"; other.module = 1;
  g.kernels.push_back(other);

  Node k; k.name = "k0"; k.kind = NodeKind::Kernel; k.kernel = 0;
  k.range.dims = 2;
  k.range.global[0].value = 1024; k.range.global[1].param = 0; k.range.global[2].value = 1;
  k.range.local[0].value = 64; k.range.local[1].value = 1; k.range.local[2].value = 1;
  k.range.offset[0].value = 7;
  k.args = {Arg::slot(0, 16), Arg::slot(4), Arg::localMem(256), Arg::param(1),
            Arg::scalar(ScalarType::U32, 1024), Arg::scalar(ScalarType::I64, uint64_t(-5))};
  g.nodes.push_back(k);
  Node c; c.name = "copy"; c.kind = NodeKind::Copy;
  c.copy.srcSlot = 1; c.copy.srcOffset = 8; c.copy.dstSlot = 4; c.copy.dstOffset = 16; c.copy.bytes = 512;
  g.nodes.push_back(c);
  Node r; r.name = "rect"; r.kind = NodeKind::CopyRect;
  r.copy.srcSlot = 0; r.copy.dstSlot = 4; r.copy.region[0] = 16; r.copy.region[1] = 4; r.copy.region[2] = 2;
  r.copy.srcRowPitch = 32; r.copy.srcSlicePitch = 128; r.copy.dstRowPitch = 16; r.copy.dstSlicePitch = 64;
  g.nodes.push_back(r);
  Node f; f.name = "fill"; f.kind = NodeKind::Fill;
  f.fill.slot = 4; f.fill.offset = 0; f.fill.bytes = 4096; f.fill.pattern = {1, 2, 3, 4, 5, 6, 7, 8};
  g.nodes.push_back(f);
  Node h; h.name = "print"; h.kind = NodeKind::Host;
  h.host.op = "print"; h.host.library = "libplugin.so";
  h.args = {Arg::string("hello \"world\""), Arg::slot(4, 4), Arg::param(0)};
  g.nodes.push_back(h);
  Node b; b.name = "barrier"; b.kind = NodeKind::Barrier;
  g.nodes.push_back(b);
  Node sg; sg.name = "sub"; sg.kind = NodeKind::Subgraph; sg.subgraph = 0; sg.subgraphSlots = {4, 0};
  g.nodes.push_back(sg);
  Node k2 = k; k2.name = "k1"; // shares k0's range record
  g.nodes.push_back(k2);

  for (uint32_t i = 0; i + 1 < g.nodes.size(); ++i) g.edges.push_back({i, i + 1});
  g.edges.push_back({0, 5});
  for (uint32_t i = 0; i < g.nodes.size(); ++i) g.order.push_back(i);
  Partition p0; p0.nodes = {0, 1, 2, 3};
  Partition p1; p1.nodes = {4}; p1.deps = {0};
  Partition p2; p2.nodes = {5, 6, 7}; p2.deps = {0, 1};
  g.partitions = {p0, p1, p2};
  g.subgraphs.push_back(makeSubgraph());
  g.metadata = {{"producer", "cgc 0.1"}, {"source", "graph.json"}, {"empty", ""}};
  return g;
}

// ---- deep comparison: returns "" when equal, else the first difference -----------
inline std::string diffGraphs(const Graph &a, const Graph &b, const std::string &at = "graph");

#define CGFTEST_CMP(expr, what)                                                          \
  do {                                                                                   \
    if (!(expr)) return at + ": " + (what) + " differs";                                 \
  } while (0)

inline bool sameDim(const Dim &x, const Dim &y) { return x.value == y.value && x.param == y.param; }

inline std::string diffNodes(const Node &x, const Node &y, const std::string &at) {
  CGFTEST_CMP(x.name == y.name && x.kind == y.kind && x.kernel == y.kernel, "name/kind/kernel");
  CGFTEST_CMP(x.range.dims == y.range.dims, "range.dims");
  for (int d = 0; d < 3; ++d)
    CGFTEST_CMP(sameDim(x.range.global[d], y.range.global[d]) && sameDim(x.range.local[d], y.range.local[d]) &&
                    sameDim(x.range.offset[d], y.range.offset[d]),
                "range");
  CGFTEST_CMP(x.args.size() == y.args.size(), "arg count");
  for (size_t i = 0; i < x.args.size(); ++i) {
    const Arg &p = x.args[i], &q = y.args[i];
    CGFTEST_CMP(p.kind == q.kind && p.type == q.type && p.index == q.index && p.value == q.value &&
                    p.text == q.text,
                "arg " + std::to_string(i));
  }
  const CopyOp &c = x.copy, &d = y.copy;
  CGFTEST_CMP(c.srcSlot == d.srcSlot && c.srcOffset == d.srcOffset && c.dstSlot == d.dstSlot &&
                  c.dstOffset == d.dstOffset && c.bytes == d.bytes && c.region[0] == d.region[0] &&
                  c.region[1] == d.region[1] && c.region[2] == d.region[2] && c.srcRowPitch == d.srcRowPitch &&
                  c.srcSlicePitch == d.srcSlicePitch && c.dstRowPitch == d.dstRowPitch &&
                  c.dstSlicePitch == d.dstSlicePitch,
              "copy");
  CGFTEST_CMP(x.fill.slot == y.fill.slot && x.fill.offset == y.fill.offset && x.fill.bytes == y.fill.bytes &&
                  x.fill.pattern == y.fill.pattern,
              "fill");
  CGFTEST_CMP(x.host.op == y.host.op && x.host.library == y.host.library, "host");
  CGFTEST_CMP(x.subgraph == y.subgraph && x.subgraphSlots == y.subgraphSlots, "subgraph");
  CGFTEST_CMP(x.alternatives == y.alternatives, "alternatives");
  CGFTEST_CMP(x.device == y.device, "device");
  CGFTEST_CMP(x.cond.kind == y.cond.kind && x.cond.slot == y.cond.slot && x.cond.offset == y.cond.offset &&
                  x.cond.maxTrips == y.cond.maxTrips,
              "condition");
  const CollectiveOp &p = x.coll, &q = y.coll;
  CGFTEST_CMP(p.kind == q.kind && p.op == q.op && p.type == q.type && p.sendSlot == q.sendSlot &&
                  p.sendOffset == q.sendOffset && p.recvSlot == q.recvSlot && p.recvOffset == q.recvOffset &&
                  p.count == q.count && p.peer == q.peer,
              "collective");
  return "";
}

inline std::string diffGraphs(const Graph &a, const Graph &b, const std::string &at) {
  CGFTEST_CMP(a.name == b.name, "name");
  CGFTEST_CMP(a.slots.size() == b.slots.size(), "slot count");
  for (size_t i = 0; i < a.slots.size(); ++i) {
    const Slot &x = a.slots[i], &y = b.slots[i];
    CGFTEST_CMP(x.name == y.name && x.size == y.size && x.alignment == y.alignment && x.usage == y.usage &&
                    x.init == y.init && x.data == y.data && x.path == y.path,
                "slots[" + std::to_string(i) + "]");
  }
  CGFTEST_CMP(a.params.size() == b.params.size(), "param count");
  for (size_t i = 0; i < a.params.size(); ++i)
    CGFTEST_CMP(a.params[i].name == b.params[i].name && a.params[i].type == b.params[i].type &&
                    a.params[i].defaultBits == b.params[i].defaultBits,
                "params[" + std::to_string(i) + "]");
  CGFTEST_CMP(a.modules.size() == b.modules.size(), "module count");
  for (size_t i = 0; i < a.modules.size(); ++i) {
    CGFTEST_CMP(a.modules[i].name == b.modules[i].name && a.modules[i].forms.size() == b.modules[i].forms.size(),
                "modules[" + std::to_string(i) + "]");
    for (size_t f = 0; f < a.modules[i].forms.size(); ++f) {
      const KernelForm &x = a.modules[i].forms[f], &y = b.modules[i].forms[f];
      CGFTEST_CMP(x.kind == y.kind && x.target == y.target && x.options == y.options && x.bytes == y.bytes,
                  "modules[" + std::to_string(i) + "].forms[" + std::to_string(f) + "]");
    }
  }
  CGFTEST_CMP(a.kernels.size() == b.kernels.size(), "kernel count");
  for (size_t i = 0; i < a.kernels.size(); ++i) {
    const Kernel &x = a.kernels[i], &y = b.kernels[i];
    CGFTEST_CMP(x.name == y.name && x.module == y.module && x.params.size() == y.params.size() &&
                    std::memcmp(x.reqdLocal, y.reqdLocal, sizeof x.reqdLocal) == 0,
                "kernels[" + std::to_string(i) + "]");
    for (size_t p = 0; p < x.params.size(); ++p)
      CGFTEST_CMP(x.params[p].name == y.params[p].name && x.params[p].typeName == y.params[p].typeName &&
                      x.params[p].kind == y.params[p].kind && x.params[p].size == y.params[p].size &&
                      x.params[p].qualifiers == y.params[p].qualifiers,
                  "kernels[" + std::to_string(i) + "].params[" + std::to_string(p) + "]");
  }
  CGFTEST_CMP(a.nodes.size() == b.nodes.size(), "node count");
  for (size_t i = 0; i < a.nodes.size(); ++i) {
    std::string d = diffNodes(a.nodes[i], b.nodes[i], at + ".nodes[" + std::to_string(i) + "]");
    if (!d.empty()) return d;
  }
  CGFTEST_CMP(a.edges.size() == b.edges.size(), "edge count");
  for (size_t i = 0; i < a.edges.size(); ++i)
    CGFTEST_CMP(a.edges[i].from == b.edges[i].from && a.edges[i].to == b.edges[i].to, "edges");
  CGFTEST_CMP(a.order == b.order, "order");
  CGFTEST_CMP(a.partitions.size() == b.partitions.size(), "partition count");
  for (size_t i = 0; i < a.partitions.size(); ++i)
    CGFTEST_CMP(a.partitions[i].nodes == b.partitions[i].nodes && a.partitions[i].deps == b.partitions[i].deps,
                "partitions[" + std::to_string(i) + "]");
  CGFTEST_CMP(a.metadata == b.metadata, "metadata");
  CGFTEST_CMP(a.exprs.size() == b.exprs.size(), "expression count");
  for (size_t i = 0; i < a.exprs.size(); ++i)
    CGFTEST_CMP(a.exprs[i].node == b.exprs[i].node && a.exprs[i].field == b.exprs[i].field &&
                    a.exprs[i].arg == b.exprs[i].arg && a.exprs[i].code == b.exprs[i].code,
                "exprs[" + std::to_string(i) + "]");
  CGFTEST_CMP(a.subgraphs.size() == b.subgraphs.size(), "subgraph count");
  for (size_t i = 0; i < a.subgraphs.size(); ++i) {
    std::string d = diffGraphs(a.subgraphs[i], b.subgraphs[i], at + ".subgraphs[" + std::to_string(i) + "]");
    if (!d.empty()) return d;
  }
  return "";
}
#undef CGFTEST_CMP

} // namespace cgftest
