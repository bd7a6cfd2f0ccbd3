// The one temporary directory of the tests: a fresh, uniquely named directory (mkdtemp
// under $TMPDIR, else /tmp), so suites running at once never share one; removed with
// everything in it when the object goes (permissions a test took away are given back
// first). Tests hand it to backends and caches through their options
// (rt::KernelCacheOptions::dir, CacheConfig::root), never through the environment.
// Not copyable; path() is canonical (symlinks resolved), as path checks compare them.
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <stdexcept>
#include <string>
#include <system_error>

namespace cgraph::test {

class TempDir {
public:
  explicit TempDir(const std::string &prefix = "cgraph-test") {
    std::string pattern = (std::filesystem::temp_directory_path() / (prefix + "-XXXXXX")).string();
    if (!::mkdtemp(pattern.data())) throw std::runtime_error("cannot create a temporary directory " + pattern);
    std::filesystem::permissions(pattern, std::filesystem::perms(0755));
    path_ = std::filesystem::canonical(pattern);
    text_ = path_.string();
  }
  ~TempDir() {
    std::error_code ec;
    for (auto it = std::filesystem::recursive_directory_iterator(path_, ec);
         !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec))
      if (it->is_directory(ec) && !it->is_symlink(ec))
        std::filesystem::permissions(it->path(), std::filesystem::perms::owner_all,
                                     std::filesystem::perm_options::add, ec);
    std::filesystem::permissions(path_, std::filesystem::perms::owner_all, std::filesystem::perm_options::add, ec);
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir &) = delete;
  TempDir &operator=(const TempDir &) = delete;

  const std::filesystem::path &path() const { return path_; }
  // The directory, or `leaf` inside it, as a string.
  const std::string &str() const { return text_; }
  std::string str(const std::string &leaf) const { return (path_ / leaf).string(); }
  std::string sub(const std::string &leaf) const { return str(leaf); }

private:
  std::filesystem::path path_;
  std::string text_;
};

} // namespace cgraph::test
