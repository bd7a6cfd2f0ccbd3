// Memory planning through the tools: `cgc dump` shows the plan, cgrun reports the
// runtime-owned bytes and `--no-memory-plan` turns planning off with the same results,
// for a graph whose transient slot sizes are parameter expressions (examples/mlp).
#include "cgrun_test_util.h"

#include <nlohmann/json.hpp>

using namespace cgruntest;

namespace {

const std::string kMlpInputs =
    "mlp.cgf --random x:1 --random w1:2 --random b1:3 --random w2:4 --random b2:5 --random wc:6 --random bc:7 ";

fs::path compileMlp() {
  fs::path dir = scratch("memory_plan");
  Result c = tooltest::runTool(CGC_PATH,
                               quote(std::string(CGRAPH_SOURCE_DIR) + "/examples/mlp/mlp_batch.json") + " -o mlp.cgf",
                               dir, dir / "cgc");
  INFO(c.err);
  REQUIRE(c.code == 0);
  return dir;
}

} // namespace

TEST_CASE("cgc dump shows the memory plan of the transient slots", "[tools][plan]") {
  const fs::path dir = compileMlp();
  Result r = tooltest::runTool(CGC_PATH, "dump mlp.cgf", dir, dir / "dump");
  REQUIRE(r.code == 0);
  // Expression sizes at batch = 64: h 512 KiB, y and z 128 KiB, logits 64 KiB; h and y
  // live at once (fc2), so the arena holds both.
  CHECK(r.out.find("memory plan: 4 transient slots share one arena, 851968 -> 655360 bytes") != std::string::npos);
  CHECK(r.out.find("  h @ 0 (524288 bytes)\n") != std::string::npos);
  CHECK(r.out.find("  logits @ 131072 (65536 bytes)\n") != std::string::npos);
  Result j = tooltest::runTool(CGC_PATH, "dump --json mlp.cgf", dir, dir / "dumpj");
  REQUIRE(j.code == 0);
  const nlohmann::json plan = nlohmann::json::parse(j.out)["memory_plan"];
  CHECK(plan["slots"] == 4);
  CHECK(plan["bytes_after"] == 655360);
  // h and z never live at once, nor do y and logits: they may start at one offset.
  CHECK(plan["offsets"]["h"]["offset"] == 0);
  CHECK(plan["offsets"]["z"]["offset"] == 0);
}

TEST_CASE("cgrun: the planned run equals the unplanned one at every batch size", "[tools][plan]") {
  const fs::path dir = compileMlp();
  for (int batch : {48, 16, 64}) {
    INFO("batch " << batch);
    const std::string p = "--param batch=" + std::to_string(batch) + " ";
    Result on = cgrun(kMlpInputs + p + "--output probs=on.npy --output logits_out=lon.npy --json", dir);
    INFO(on.err);
    REQUIRE(on.code == 0);
    Result off = cgrun(kMlpInputs + p + "--output probs=off.npy --output logits_out=loff.npy --json --no-memory-plan", dir);
    INFO(off.err);
    REQUIRE(off.code == 0);
    CHECK(slurp(dir / "on.npy") == slurp(dir / "off.npy"));
    CHECK(slurp(dir / "lon.npy") == slurp(dir / "loff.npy"));
    const nlohmann::json mOn = nlohmann::json::parse(on.out)["memory"];
    const nlohmann::json mOff = nlohmann::json::parse(off.out)["memory"];
    CHECK(mOn["plan_slots"] == 4);
    CHECK(mOff["plan_slots"] == 0);
    CHECK(mOff["plan_skipped"] == "memory planning is off");
    // h (batch * 8 KiB) shares with z, y with logits: less runtime-owned memory.
    CHECK(mOn["owned_bytes"].get<uint64_t>() < mOff["owned_bytes"].get<uint64_t>());
  }
}
