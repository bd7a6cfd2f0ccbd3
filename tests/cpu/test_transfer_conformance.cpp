// The conformance suite's transfer shapes (tests/common/transfer_conformance.h) on the
// cpu backend.
#include "cpu_test_util.h"

#include "../common/memory_plan_conformance.h"
#include "../common/transfer_conformance.h"

using namespace cgraph;
using cgtest::cpuDevice;

TEST_CASE("transfer conformance: fills at the end of an owned slot (replay and eager)", "[cpu][conformance]") {
  conformance::checkFillTails(cpuDevice(), rt::ExecMode::Replay);
  conformance::checkFillTails(cpuDevice(), rt::ExecMode::Eager);
}

TEST_CASE("memory plan conformance: branches apart, a chain shared (replay and eager)", "[cpu][conformance][plan]") {
  conformance::checkMemoryPlan(cpuDevice(), rt::ExecMode::Replay);
  conformance::checkMemoryPlan(cpuDevice(), rt::ExecMode::Eager);
}
