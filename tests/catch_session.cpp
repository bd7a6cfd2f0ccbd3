// The Catch2 implementation, compiled once for every test executable (it is the
// heaviest translation unit of the tests), and the session runner they all call.
#define CATCH_CONFIG_RUNNER
#include "catch_session.h"

#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <system_error>

namespace cgraph::test {

int runCatchSession(int argc, char **argv) {
  std::string tempRoot;
  if (!std::getenv("CGRAPH_CACHE_DIR")) {
    std::string pattern = (std::filesystem::temp_directory_path() / "cgraph-test-XXXXXX").string();
    if (!mkdtemp(pattern.data())) {
      std::perror("cannot create a temporary cache directory");
      return 2;
    }
    tempRoot = pattern;
    setenv("CGRAPH_CACHE_DIR", (tempRoot + "/cgraph").c_str(), 1);
    setenv("XDG_CACHE_HOME", (tempRoot + "/xdg").c_str(), 1);
    setenv("POCL_CACHE_DIR", (tempRoot + "/pocl").c_str(), 1);
  }
  const int rc = Catch::Session().run(argc, argv);
  if (!tempRoot.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(tempRoot, ec);
  }
  return rc;
}

} // namespace cgraph::test
