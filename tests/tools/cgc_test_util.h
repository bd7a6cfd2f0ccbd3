// Helpers for the cgc end-to-end tests: run the real cgc binary (CGC_PATH) through the
// shell and capture its exit code, stdout and stderr.
#pragma once

#include "tool_test_util.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace cgctest {

namespace fs = std::filesystem;

using tooltest::quote;
using tooltest::Result;
using tooltest::slurp;

// A fresh scratch directory under the build tree, one per test case name.
inline fs::path scratch(const std::string &name) {
  fs::path dir = fs::path(CGRAPH_BINARY_DIR) / "cgc_test_tmp" / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

// Runs `cgc <args>` in `cwd`; args are passed to the shell as written.
inline Result cgc(const std::string &args, const fs::path &cwd) {
  static int counter = 0;
  fs::path tmp = fs::path(CGRAPH_BINARY_DIR) / "cgc_test_tmp" / "io";
  fs::create_directories(tmp);
  return tooltest::runTool(CGC_PATH, args, cwd, tmp / ("run" + std::to_string(counter++)));
}

inline std::vector<std::string> lines(const std::string &text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

// Every regular file under `dir` with its size and mtime, to prove nothing was written.
inline std::string snapshot(const fs::path &dir) {
  std::ostringstream s;
  for (const auto &e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file())
      s << e.path().string() << " " << e.file_size() << " "
        << e.last_write_time().time_since_epoch().count() << "\n";
  return s.str();
}

inline const fs::path &sourceDir() {
  static const fs::path p(CGRAPH_SOURCE_DIR);
  return p;
}

} // namespace cgctest
