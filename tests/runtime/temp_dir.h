// A fresh directory under the build tree, removed at the end of the test.
#pragma once

#include <filesystem>
#include <random>
#include <string>

namespace cgraph::rt::test {

class TempDir {
public:
  TempDir() {
    std::random_device rd;
    path_ = std::filesystem::path(CGRAPH_BINARY_DIR) / "tmp" /
            ("rt-" + std::to_string(rd()) + "-" + std::to_string(rd()));
    std::filesystem::create_directories(path_);
    path_ = std::filesystem::canonical(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::filesystem::path &path() const { return path_; }
  std::string str(const std::string &leaf = "") const {
    return leaf.empty() ? path_.string() : (path_ / leaf).string();
  }

private:
  std::filesystem::path path_;
};

} // namespace cgraph::rt::test
