// Chrome trace JSON: valid JSON, one "X" event per node timing.
#include "cgraph/runtime/trace.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

using namespace cgraph;
using namespace cgraph::rt;

TEST_CASE("trace has one complete event per node", "[runtime][trace]") {
  Graph g;
  g.nodes.resize(3);
  g.nodes[0].name = "k\"0";
  g.nodes[0].kind = NodeKind::Kernel;
  g.nodes[1].name = "copy\n1";
  g.nodes[1].kind = NodeKind::Copy;
  g.nodes[2].kind = NodeKind::Host; // unnamed
  std::vector<NodeTiming> t = {{0, 1000, 2500, 0}, {1, 2500, 4000, 1}, {2, 4000, 4001, 0}};
  TraceWriter w;
  w.setProcessName(1, "cpu \xff bad utf8");
  w.addRun(g, t, 0, 1, 0);
  w.addRun(g, t, 10000, 1, 1);
  CHECK(w.eventCount() == 6);
  nlohmann::json j = nlohmann::json::parse(w.json());
  auto &ev = j["traceEvents"];
  REQUIRE(ev.size() == 7);
  CHECK(ev[0]["ph"] == "M");
  CHECK(ev[1]["ph"] == "X");
  CHECK(ev[1]["name"] == "k\"0");
  CHECK(ev[1]["cat"] == "kernel");
  CHECK(ev[1]["ts"].get<double>() == Approx(1.0));
  CHECK(ev[1]["dur"].get<double>() == Approx(1.5));
  CHECK(ev[2]["tid"] == 1);
  CHECK(ev[2]["name"] == "copy\n1");
  CHECK(ev[3]["name"] == "node #2");
  CHECK(ev[4]["ts"].get<double>() == Approx(11.0));
  CHECK(ev[4]["args"]["iteration"] == "1");
}
