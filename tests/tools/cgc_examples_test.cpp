// cgc on every example and on the schema-coverage description: compiles cleanly,
// dump / --emit=json / --emit=dot agree on the nodes, lint passes and writes nothing.
#include "cgc_test_util.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <map>
#include <set>

using namespace cgctest;
using nlohmann::json;

namespace {

struct Example {
  const char *dir;   // under the source tree
  size_t nodes;      // after repeat expansion
  size_t kernels;
};

const Example kExamples[] = {
    {"examples/saxpy", 2, 1},
    {"examples/stencil", 202, 3}, // boundary + 100 x (sweep, residual) + checksum
    {"examples/mlp", 9, 6},
    {"examples/image", 5, 4},
    {"examples/chain1000", 1000, 1},
    {"examples/lu", 510, 2}, // 255 x (scale, update), ranges from expressions
    {"examples/data-parallel", 5, 4}, // shard, forward, gradient, all_reduce, update
    {"examples/pipeline", 17, 2},      // make_input + 4 x (recv, layer, send, keep)
    {"tests/tools/data/features", 20, 4},
};

} // namespace

TEST_CASE("cgc compiles each example, dump and emit agree", "[cgc][examples]") {
  for (const Example &ex : kExamples) {
    DYNAMIC_SECTION(ex.dir) {
      fs::path dir = scratch(std::string("examples_") + fs::path(ex.dir).filename().string());
      std::string input = quote((sourceDir() / ex.dir / "graph.json").string());

      Result c = cgc(input + " -o out.cgf", dir);
      INFO(c.err);
      REQUIRE(c.code == 0);
      REQUIRE(fs::file_size(dir / "out.cgf") > 64);

      Result d = cgc("dump --json out.cgf", dir);
      REQUIRE(d.code == 0);
      json j = json::parse(d.out);
      CHECK(j["nodes"].size() == ex.nodes);
      CHECK(j["kernels"].size() == ex.kernels);
      CHECK(j["order"].size() == ex.nodes);

      Result t = cgc("dump out.cgf", dir);
      REQUIRE(t.code == 0);
      CHECK(lines(t.out).at(0).find(std::to_string(ex.nodes) + " nodes") != std::string::npos);

      Result e = cgc(input + " --emit=json", dir);
      REQUIRE(e.code == 0);
      json ej = json::parse(e.out);
      CHECK(ej["nodes"].size() == ex.nodes);
      CHECK(ej == j); // the file holds exactly what was compiled

      Result dot = cgc(input + " --emit=dot", dir);
      REQUIRE(dot.code == 0);
      CHECK(dot.out.rfind("digraph", 0) == 0);
      for (const auto &n : j["nodes"]) {
        std::string label = "label=\"" + n["name"].get<std::string>() + "\\n";
        CHECK(dot.out.find(label) != std::string::npos);
      }

      std::string before = snapshot(dir) + snapshot(sourceDir() / ex.dir);
      Result l = cgc("lint " + input, dir);
      CHECK(l.code == 0);
      CHECK(l.err.empty());
      CHECK(snapshot(dir) + snapshot(sourceDir() / ex.dir) == before);

      Result lc = cgc("lint out.cgf", dir);
      CHECK(lc.code == 0);
    }
  }
}

TEST_CASE("cgc expands repeat blocks with ping-pong slots", "[cgc][examples]") {
  fs::path dir = scratch("stencil_pingpong");
  Result c = cgc(quote((sourceDir() / "examples/stencil/graph.json").string()) + " --emit=json", dir);
  REQUIRE(c.code == 0);
  json j = json::parse(c.out);
  std::map<std::string, json> byName;
  for (const auto &n : j["nodes"]) byName[n["name"].get<std::string>()] = n;
  REQUIRE(byName.count("sweep.0"));
  REQUIRE(byName.count("sweep.99"));
  REQUIRE(byName.count("residual.99"));
  // Sweep 0 writes u1 from u0, sweep 1 writes u0 from u1, and so on.
  auto slotArg = [&](const std::string &node, int i) {
    return byName[node]["args"][i]["slot"].get<std::string>();
  };
  CHECK(slotArg("sweep.0", 0) == "u1");
  CHECK(slotArg("sweep.0", 1) == "u0");
  CHECK(slotArg("sweep.1", 0) == "u0");
  CHECK(slotArg("sweep.1", 1) == "u1");
  CHECK(slotArg("sweep.99", 0) == "u0");
  CHECK(slotArg("residual.0", 1) == "u1");
  // Each sweep depends on the previous iteration through the hazards.
  CHECK(j["edges"].size() >= 200);
}

TEST_CASE("cgc folds the expressions of examples/lu per iteration", "[cgc][examples][expr]") {
  fs::path dir = scratch("examples_lu_expr");
  Result c = cgc(quote((sourceDir() / "examples/lu/graph.json").string()) + " --emit=json", dir);
  INFO(c.err);
  REQUIRE(c.code == 0);
  json j = json::parse(c.out);
  REQUIRE(j["nodes"].size() == 510);
  for (int k = 0; k < 255; ++k) {
    INFO("k = " << k);
    const json &scale = j["nodes"][2 * k];
    const json &update = j["nodes"][2 * k + 1];
    REQUIRE(scale["name"] == "scale." + std::to_string(k));
    const int rows = 256 - k - 1;
    CHECK(scale["range"]["global"] ==
          json::array({(rows + 63) / 64 * 64}));               // align_up(256 - $k - 1, 64)
    CHECK(scale["args"][1]["value"] == std::to_string(k));     // "$k"
    CHECK(scale["args"][2]["value"] == std::to_string(k + 1)); // "$k + 1"
    CHECK(scale["args"][2]["type"] == "i32");                  // the kernel's int
    const int g = (rows + 15) / 16 * 16;
    CHECK(update["range"]["global"] == json::array({g, g}));
    CHECK(update["range"]["offset"] == json::array({k + 1, k + 1}));
  }
}

TEST_CASE("the feature description stores every form it declares", "[cgc][examples]") {
  fs::path dir = scratch("features_forms");
  std::string input = quote((sourceDir() / "tests/tools/data/features/graph.json").string());
  Result c = cgc(input + " --emit=json", dir);
  REQUIRE(c.code == 0);
  json j = json::parse(c.out);
  CHECK(j["subgraphs"].size() == 2);
  CHECK(j["params"].size() == 2);
  CHECK(j["slots"].size() == 7);
  CHECK(j["metadata"]["revision"] == "3");
  std::set<std::string> kinds;
  for (const auto &n : j["nodes"]) kinds.insert(n["kind"].get<std::string>());
  CHECK(kinds.size() == 7); // every node kind
  std::set<std::string> names;
  for (const auto &n : j["nodes"]) names.insert(n["name"].get<std::string>());
  CHECK(names.count("step.2"));
  CHECK(names.count("mark.0"));
}
