#include "test_helpers.h"

#include <cgraph/graph/dot.h>
#include <cgraph/graph/json.h>
#include <cgraph/graph/order.h>

#include <catch2/catch.hpp>
#include <xxhash.h>

using namespace cgraph;
using namespace cgraph::test;
using nlohmann::json;

namespace {

Graph sample() {
  GraphBuilder b("sample");
  b.graph().metadata.push_back({"source", "graph.json"});
  Slot data = slot("in", 8, SlotInit::Data);
  data.data = {0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4};
  b.addSlot(data);
  b.addSlot(slot("out", 64, SlotInit::Transient));
  b.addParam(Param{"n", ScalarType::I32, 5});
  KernelModule m{"k.cl", {}};
  KernelForm spv;
  spv.target = "spirv64";
  spv.bytes.assign(100, 7);
  m.forms.push_back(spv);
  b.addModule(m);
  Kernel k;
  k.name = "scale";
  k.module = 0;
  k.params = {bufferParam("x", true), bufferParam("y"), scalarParam("s", "float", 4),
              scalarParam("n", "int", 4)};
  b.addKernel(k);
  b.addKernelNode("k1", 0, range2D(64, 4, 16, 2),
                  {Arg::slot(0), Arg::slot(1, 16), Arg::scalar(ScalarType::F32, f32Bits(2.5f)),
                   Arg::param(0)});
  b.addHost("dump", HostOp{"print", ""}, {Arg::slot(1), Arg::string("out")});
  b.addFill("zero", fillOp(1, 0, 64, {0, 0, 0, 0}));
  b.addEdge(0, 1);
  b.addEdge(1, 2);
  Graph g = b.take();
  REQUIRE_FALSE(finalizeForFile(g).failed());
  return g;
}

bool contains(const std::string &hay, const std::string &needle) {
  return hay.find(needle) != std::string::npos;
}

} // namespace

TEST_CASE("DOT output", "[graph][render]") {
  std::string d = toDot(sample());
  INFO(d);
  CHECK(d.rfind("digraph \"sample\" {\n", 0) == 0);
  CHECK(contains(d, "subgraph cluster_p0 {\n    label=\"partition 0\";\n"));
  CHECK(contains(d, "subgraph cluster_p1 {"));
  CHECK(contains(d, "subgraph cluster_p2 {"));
  CHECK(contains(d, "n0 [label=\"k1\\nkernel scale\\nglobal (64,4) local (16,2)\\nr in, rw out\"];"));
  CHECK(contains(d, "n1 [label=\"dump\\nhost print\\nr out\"];"));
  CHECK(contains(d, "n2 [label=\"zero\\nfill 64 bytes\\nw out\"];"));
  CHECK(contains(d, "  n0 -> n1;\n"));
  CHECK(contains(d, "  n1 -> n2;\n"));
  CHECK(d.substr(d.size() - 2) == "}\n");
}

TEST_CASE("JSON output", "[graph][render]") {
  Graph g = sample();
  json j = toJson(g);
  CHECK(j["name"] == "sample");
  CHECK(j["metadata"]["source"] == "graph.json");
  REQUIRE(j["slots"].size() == 2);
  CHECK(j["slots"][0]["name"] == "in");
  CHECK(j["slots"][0]["init"] == "data");
  CHECK(j["slots"][0]["usage"] == "read");
  CHECK(j["slots"][0]["data"]["size"] == 8);
  CHECK(j["slots"][0]["data"]["head"] == "deadbeef01020304");
  char hash[17];
  snprintf(hash, sizeof hash, "%016llx", (unsigned long long)XXH64(g.slots[0].data.data(), 8, 0));
  CHECK(j["slots"][0]["data"]["xxh64"] == hash);
  CHECK(j["slots"][1]["usage"] == "read|write|transfer");
  CHECK(j["params"][0] == json{{"index", 0}, {"name", "n"}, {"type", "i32"}, {"default", "5"}});
  CHECK(j["modules"][0]["forms"][0]["kind"] == "spirv");
  CHECK(j["modules"][0]["forms"][0]["bytes"]["size"] == 100);
  CHECK(j["modules"][0]["forms"][0]["bytes"]["head"] == "07070707070707070707070707070707");
  CHECK(j["kernels"][0]["params"][0] ==
        json{{"name", "x"}, {"type", "const float*"}, {"kind", "global"}, {"size", 4}, {"qualifiers", {"const"}}});
  const json &k1 = j["nodes"][0];
  CHECK(k1["kind"] == "kernel");
  CHECK(k1["kernel"] == "scale");
  CHECK(k1["range"]["global"] == json{64, 4});
  CHECK(k1["range"]["local"] == json{16, 2});
  CHECK(k1["args"][0] == json{{"slot", "in"}, {"offset", 0}});
  CHECK(k1["args"][1] == json{{"slot", "out"}, {"offset", 16}});
  CHECK(k1["args"][2]["type"] == "f32");
  CHECK(k1["args"][2]["value"] == "2.5");
  CHECK(k1["args"][3] == json{{"param", "n"}});
  CHECK(k1["accesses"][1] == json{{"slot", "out"}, {"offset", 16}, {"mode", "rw"}, {"size", nullptr}});
  CHECK(j["nodes"][1]["host"]["op"] == "print");
  CHECK(j["nodes"][1]["args"][1] == json{{"string", "out"}});
  CHECK(j["nodes"][2]["fill"]["pattern"] == "00000000");
  CHECK(j["edges"] == json{{0, 1}, {1, 2}});
  CHECK(j["order"] == json{0, 1, 2});
  CHECK(j["partitions"][1] == json{{"nodes", {1}}, {"deps", {0}}});
  CHECK(j["subgraphs"].empty());
  CHECK_NOTHROW(j.dump(2));
}

TEST_CASE("text listing", "[graph][render]") {
  std::string l = listing(sample());
  INFO(l);
  CHECK(l.rfind("graph 'sample': 2 slots, 1 params, 1 kernels, 3 nodes, 2 edges\n", 0) == 0);
  CHECK(contains(l, "  meta source = graph.json\n"));
  CHECK(contains(l, "  [0] in  size 8  align 16  init data  usage read  data 8 bytes deadbeef01020304\n"));
  CHECK(contains(l, "  [0] n i32 = 5\n"));
  CHECK(contains(l, "  [0] k.cl  forms: spirv(spirv64, 100 bytes)\n"));
  CHECK(contains(l, "  [0] scale(global const float* x, global float* y, scalar float s, scalar int n)  module 0\n"));
  CHECK(contains(l, "nodes (execution order):\n  [0] k1  kernel scale  global (64,4) local (16,2)  args: in out+16 f32 2.5 $n\n"));
  CHECK(contains(l, "  [1] dump  host print  args: out \"out\"\n"));
  CHECK(contains(l, "  [2] zero  fill out+0  64 bytes  pattern 00000000\n"));
  CHECK(contains(l, "edges:\n  0 -> 1\n  1 -> 2\n"));
  CHECK(contains(l, "partitions:\n  [0] nodes 0  deps -\n  [1] nodes 1  deps 0\n  [2] nodes 2  deps 1\n"));
}
