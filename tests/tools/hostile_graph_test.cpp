// Hostile sizes end to end: descriptions whose copy extents or nd-ranges overflow 64
// bits are refused by cgc with an error that names the node and field; .cgf files that
// carry them (written without cgc) are refused by cgrun instead of copying out of
// bounds; nd-ranges that come from parameters or stored expressions are checked at
// every enqueue.
#include "tool_test_util.h"

#include "../common/temp_dir.h"

#include "cgraph/format/writer.h"
#include "cgraph/graph/builder.h"
#include "cgraph/graph/hazards.h"
#include "cgraph/graph/order.h"

#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace fs = std::filesystem;
using tooltest::quote;
using tooltest::Result;

namespace {

// A fresh directory of its own for each test (tests/common/temp_dir.h).
struct Dir {
  cgraph::test::TempDir tmp{"cgraph-hostile"};
  const fs::path &path = tmp.path();
  void write(const std::string &name, const std::string &text) const {
    std::ofstream(path / name, std::ios::binary) << text;
  }
  Result cgc(const std::string &args) const {
    return tooltest::runTool(CGC_PATH, args, path, path / "cgc");
  }
  Result cgrun(const std::string &args) const {
    return tooltest::runTool(CGRUN_PATH, args, path, path / "cgrun");
  }
};

const char *kKernel = R"(__kernel void count(__global uint *c, uint n) {
  if (get_global_id(0) < n) atomic_inc(c);
}
)";

// A description with slots "a" and "b" (1024 bytes each) and the one node `node`.
std::string copyGraph(const std::string &node) {
  return R"({ "slots": [ { "name": "a", "bytes": 1024 }, { "name": "b", "bytes": 1024 } ],
  "nodes": [ )" + node + " ] }\n";
}

// A description with kernel `count` over slot "c", the parameters `params` and the
// nd-range fields `range`.
std::string kernelGraph(const std::string &range, const std::string &params = "[]") {
  return R"({ "kernels": ["count.cl"], "slots": [ { "name": "c", "bytes": 16 } ], "params": )" +
         params + R"(,
  "nodes": [ { "name": "k", "kernel": "count", )" + range + R"(, "args": ["c", 0] } ] }
)";
}

std::string firstError(const std::string &err) {
  std::istringstream in(err);
  for (std::string l; std::getline(in, l);)
    if (l.find("error: ") != std::string::npos) return l;
  return "";
}

} // namespace

TEST_CASE("cgc refuses rect copies whose extent overflows 64 bits", "[tools][hostile]") {
  Dir d;
  struct Case {
    const char *node, *error;
  } cases[] = {
      {R"({ "name": "r", "copy_rect": { "src": "a", "src_pitch": [4611686018427387904], "dst": "b", "region": [4, 5, 1] } })",
       "graph.json:2:14: error: node 'r': rect copy source row pitch 4611686018427387904 * 5 rows "
       "(region[1]) overflows 64 bits"},
      {R"({ "name": "r", "copy_rect": { "src": "a", "dst": "b", "dst_pitch": [4611686018427387904], "region": [4, 5, 1] } })",
       "graph.json:2:14: error: node 'r': rect copy destination row pitch 4611686018427387904 * 5 "
       "rows (region[1]) overflows 64 bits"},
      {R"({ "name": "r", "copy_rect": { "src": "a", "src_pitch": [4, 4611686018427387904], "dst": "b", "region": [4, 1, 5] } })",
       "graph.json:2:14: error: node 'r': rect copy source slice pitch 4611686018427387904 * 4 "
       "slices (region[2] - 1) overflows 64 bits"},
      {R"({ "name": "r", "copy_rect": { "src": "a", "dst": "b", "region": [4294967296, 4294967296, 4294967296] } })",
       "graph.json:2:14: error: node 'r': rect copy source row pitch 4294967296 * 4294967296 rows "
       "(region[1]) overflows 64 bits"},
      {R"({ "name": "c", "copy": { "src": { "slot": "a", "offset": 18446744073709551615 }, "dst": "b", "bytes": 2 } })",
       "graph.json:2:14: error: node 'c': copy reads 2 bytes from offset 18446744073709551615: the "
       "end overflows 64 bits"},
  };
  for (const Case &c : cases) {
    INFO(c.node);
    d.write("graph.json", copyGraph(c.node));
    Result r = d.cgc("graph.json -o out.cgf");
    INFO(r.err);
    CHECK(r.code == 1);
    CHECK(firstError(r.err) == c.error);
    CHECK_FALSE(fs::exists(d.path / "out.cgf"));
  }
}

TEST_CASE("cgc refuses literal nd-ranges that overflow 64 bits", "[tools][hostile]") {
  Dir d;
  d.write("count.cl", kKernel);
  struct Case {
    const char *range, *error;
  } cases[] = {
      {R"("global": [4294967296, 4294967296, 4294967296])",
       "graph.json:2:14: error: node 'k': global size (4294967296,4294967296,4294967296) has more "
       "than 2^63 - 1 work-items in all"},
      {R"("global": [4294967296, 4294967296])",
       "graph.json:2:14: error: node 'k': global size (4294967296,4294967296) has more than 2^63 - 1 "
       "work-items in all"},
      {R"("global": [1024], "offset": [18446744073709551615])",
       "graph.json:2:14: error: node 'k': offset 18446744073709551615 + global size 1024 in "
       "dimension 0 overflows 64 bits"},
  };
  for (const Case &c : cases) {
    INFO(c.range);
    d.write("graph.json", kernelGraph(c.range));
    Result r = d.cgc("graph.json -o out.cgf");
    INFO(r.err);
    CHECK(r.code == 1);
    CHECK(firstError(r.err) == c.error);
  }
  d.write("graph.json", kernelGraph(R"("global": [4294967296, 65536], "offset": [18446744069414583295, 0])"));
  Result ok = d.cgc("graph.json -o out.cgf");
  INFO(ok.err);
  CHECK(ok.code == 0);
}

// The same graphs written straight to a .cgf (no cgc): cgrun validates at finalize and
// refuses them instead of copying outside the slot or running no work-items.
TEST_CASE("cgrun refuses .cgf files with overflowing extents and ranges", "[tools][hostile]") {
  using namespace cgraph;
  Dir d;
  GraphBuilder b("hostile");
  Slot a;
  a.name = "a";
  a.size = 1024;
  a.init = SlotInit::Transient;
  b.addSlot(a);
  a.name = "b";
  b.addSlot(a);
  CopyOp op;
  op.srcSlot = 0;
  op.dstSlot = 1;
  op.region[0] = 4;
  op.region[1] = 5;
  op.srcRowPitch = uint64_t(1) << 62;
  b.addCopyRect("r", op);
  Graph g = b.take();
  g.edges = inferHazardEdges(g);
  REQUIRE_FALSE(finalizeForFile(g));
  REQUIRE_FALSE(writeCgfFile(g, (d.path / "rect.cgf").string()));
  Result r = d.cgrun("rect.cgf");
  INFO(r.err);
  CHECK(r.code == 1);
  CHECK(r.err.find("node 'r': rect copy source row pitch 4611686018427387904 * 5 rows (region[1]) "
                   "overflows 64 bits") != std::string::npos);
}

TEST_CASE("cgrun checks nd-ranges from parameters and expressions at every enqueue",
          "[tools][hostile]") {
  Dir d;
  d.write("count.cl", kKernel);
  d.write("graph.json",
          kernelGraph(R"("global": ["$n", "$n", "$m + 1"], "offset": ["$o", 0, 0])",
                      R"([ { "name": "n", "type": "u64", "default": 4 },
                           { "name": "m", "type": "i64", "default": 0 },
                           { "name": "o", "type": "u64", "default": 0 } ])"));
  Result c = d.cgc("graph.json -o g.cgf");
  INFO(c.err);
  REQUIRE(c.code == 0);
  Result ok = d.cgrun("g.cgf --param n=8");
  INFO(ok.err);
  CHECK(ok.code == 0);
  struct Case {
    const char *params, *error;
  } cases[] = {
      {"--param n=4294967296 --param m=4294967295",
       "node 'k': global size (4294967296,4294967296,4294967296) has more than 2^63 - 1 "
       "work-items in all"},
      {"--param n=4294967296",
       "node 'k': global size (4294967296,4294967296,1) has more than 2^63 - 1 work-items in all"},
      {"--param n=3037000500 --param m=0",
       "node 'k': global size (3037000500,3037000500,1) has more than 2^63 - 1 work-items in all"},
      {"--param o=18446744073709551615",
       "node 'k': offset 18446744073709551615 + global size 4 in dimension 0 overflows 64 bits"},
  };
  for (const Case &k : cases) {
    INFO(k.params);
    Result r = d.cgrun(std::string("g.cgf ") + k.params);
    INFO(r.err);
    CHECK(r.code == 1);
    CHECK(r.err.find(k.error) != std::string::npos);
  }
}
