// Writes the seed corpus for fuzz_cgf_reader: small valid files covering every section
// and a few broken ones. Usage: gen_cgf_corpus <dir>
#include "cgf_test_util.h"

#include "cgraph/expr.h"

#include <cstdlib>

#include <cstdio>
#include <fstream>

using namespace cgftest;

namespace {

void put(const std::string &dir, const std::string &name, const std::vector<uint8_t> &bytes) {
  std::ofstream(dir + "/" + name, std::ios::binary).write(reinterpret_cast<const char *>(bytes.data()), bytes.size());
}

std::vector<uint8_t> must(const Graph &g, WriteOptions wo = {}) {
  auto b = writeCgf(g, wo);
  if (!b) {
    std::fprintf(stderr, "gen_cgf_corpus: %s\n", b.error().message().c_str());
    std::exit(1);
  }
  return *b;
}

} // namespace

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: gen_cgf_corpus <dir>\n");
    return 2;
  }
  std::string dir = argv[1];
  Graph full = makeFullGraph();
  full.slots[1].size = 8192; // keep the seeds small but above the 4 KiB zstd threshold
  full.slots[1].data.resize(8192);
  auto fullBytes = must(full);
  put(dir, "full.cgf", fullBytes);
  WriteOptions small;
  small.compressTables = true;
  small.compressThreshold = 64;
  put(dir, "full_compressed_tables.cgf", must(full, small));
  put(dir, "empty.cgf", must(Graph{}));
  put(dir, "subgraph.cgf", must(makeSubgraph()));
  Graph chain;
  KernelModule m; m.name = "m.spv"; m.forms.resize(1); m.forms[0].bytes = {3, 2, 0x23, 7};
  chain.modules.push_back(m);
  Kernel k; k.name = "k"; k.module = 0;
  chain.kernels.push_back(k);
  Slot s; s.name = "buf"; s.size = 1 << 20;
  chain.slots.push_back(s);
  for (uint32_t i = 0; i < 16; ++i) {
    Node n; n.name = "n" + std::to_string(i); n.kind = NodeKind::Kernel; n.kernel = 0;
    n.range.global[0].value = 256;
    n.args = {Arg::slot(0, i * 64), Arg::scalar(ScalarType::F32, 0x40000000), Arg::localMem(64)};
    chain.nodes.push_back(n);
    if (i) chain.edges.push_back({i - 1, i});
    chain.order.push_back(i);
  }
  put(dir, "chain.cgf", must(chain));
  // Format 2.0: stored parameter expressions (XPRS) on kernel node k0.
  Graph withExprs = full;
  auto addExpr = [&](ExprField f, uint32_t arg, const char *text) {
    auto p = expr::parse(text);
    auto mp = p ? expr::remapVariables(*p, {0}) : Expected<expr::Program>(p.error());
    if (!mp) std::abort();
    FieldExpr e;
    e.node = 0;
    e.field = f;
    e.arg = arg;
    e.code = expr::encode(*mp);
    withExprs.exprs.push_back(e);
  };
  addExpr(ExprField::Global0, 0, "align_up($n - 1, 64)");
  addExpr(ExprField::Offset1, 0, "max($n % 7, ceil_div($n, 3))");
  addExpr(ExprField::ScalarArg, 4, "-($n / 2) * 3 + min($n, 9)");
  put(dir, "exprs.cgf", must(withExprs));
  // Format 2.2: copy (node 1) and fill (node 3) fields and a slot size (slot 4).
  auto addAt = [&](Graph &g, uint32_t node, ExprField f, uint32_t arg, const char *text) {
    auto p = expr::parse(text);
    auto mp = p ? expr::remapVariables(*p, {0}) : Expected<expr::Program>(p.error());
    if (!mp) std::abort();
    FieldExpr e;
    e.node = node;
    e.field = f;
    e.arg = arg;
    e.code = expr::encode(*mp);
    g.exprs.push_back(e);
  };
  Graph transfer = withExprs;
  addAt(transfer, 1, ExprField::CopySrcOffset, 0, "$n * 4");
  addAt(transfer, 1, ExprField::CopyBytes, 0, "min($n, 64) * 4");
  addAt(transfer, 3, ExprField::FillOffset, 0, "$n * 8");
  addAt(transfer, 3, ExprField::FillBytes, 0, "align_up($n, 8)");
  addAt(transfer, kNone, ExprField::SlotSize, 4, "$n * $n * 4");
  put(dir, "exprs_transfer.cgf", must(transfer));
  // Broken seeds: truncated, bad checksum, dangling edge.
  put(dir, "broken_truncated.cgf", std::vector<uint8_t>(fullBytes.begin(), fullBytes.begin() + fullBytes.size() / 2));
  auto bad = fullBytes;
  bad[bad.size() - 70] ^= 0x10;
  put(dir, "broken_checksum.cgf", bad);
  auto dangling = must(chain);
  st32(field(dangling, "EDGE", 3, 4), 999);
  fixChecksums(dangling);
  put(dir, "broken_edge.cgf", dangling);
  return 0;
}
