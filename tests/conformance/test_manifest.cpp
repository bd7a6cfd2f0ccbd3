// The conformance suites' inputs, without a device: every manifest parses, the skip
// table names only cases that exist (kernel cases and graph cases), a malformed line is
// an error that names it.
// Lists the skips and the cases that have no C++ reference yet.
#include "conformance.h"
#include "graph_suite.h"

#include <catch2/catch.hpp>

using namespace cgraph;
using namespace cgraph::conformance;

TEST_CASE("kernel manifests parse and the suite has cases", "[conformance]") {
  const std::vector<ManifestFile> files = loadSuite();
  size_t cases = 0, without = 0;
  std::string missing;
  for (const ManifestFile &f : files)
    for (const ManifestCase &c : f.cases) {
      ++cases;
      if (findReference(c)) continue;
      ++without;
      missing += (missing.empty() ? "" : ", ") + c.label();
    }
  CHECK(cases >= 10);
  if (without)
    WARN(without << " of " << cases
                 << " cases have no C++ reference yet (checked replay against eager, "
                 << "and across backends by compareWithoutReference): " << missing);
}

TEST_CASE("every skip names a case of the suite and says why", "[conformance]") {
  const std::vector<ManifestFile> files = loadSuite();
  for (const Skip &s : skips()) {
    WARN("skipped on " << s.backend << ": " << s.caseId << ": " << s.reason);
    bool found = false;
    for (const std::string &name : graphCaseNames()) found = found || findGraphSkip(name, s.backend) == &s;
    for (const ManifestFile &f : files)
      for (const ManifestCase &c : f.cases)
        found = found || findSkip(c, s.backend) == &s;
    INFO("skip table entry '" << s.caseId << "' for " << s.backend
                              << " matches no case (stale, or a line moved)");
    CHECK(found);
    CHECK(std::string(s.reason) != "");
  }
}

TEST_CASE("a malformed manifest line is an error naming the file and line", "[conformance]") {
  auto bad = parseManifest("// cgtest: kernel=k global=4 args=x:f32[4]:bogus", "bad.cl");
  REQUIRE_FALSE(bad);
  CHECK(bad.error().message() ==
        "bad.cl:1: unknown initializer 'bogus' (w, zero, seq, rand, rand(LO..HI), fill(V))");
}
