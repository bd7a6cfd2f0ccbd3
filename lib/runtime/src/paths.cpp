// Allowed-directory checks for paths named by a .cgf (see paths.h).
#include "cgraph/runtime/paths.h"

#include <algorithm>
#include <filesystem>
#include <system_error>

namespace cgraph::rt {

namespace fs = std::filesystem;

namespace {

// weakly_canonical keeps a trailing separator as an empty last component; drop it so
// that "/a/b/" and "/a/b" compare equal component by component.
fs::path stripTrailing(fs::path p) {
  if (p.has_relative_path() && p.filename().empty()) p = p.parent_path();
  return p;
}

bool isInside(const fs::path &p, const fs::path &dir) {
  auto d = dir.begin(), de = dir.end();
  auto q = p.begin(), qe = p.end();
  for (; d != de; ++d, ++q)
    if (q == qe || *q != *d) return false;
  return true;
}

} // namespace

Expected<std::string> resolveAllowedPath(const std::string &path, const HostPolicy &policy) {
  if (path.empty()) return makeError("empty path");
  std::error_code ec;
  fs::path cwd = fs::current_path(ec);
  if (ec) return makeError("cannot read the current directory: " + ec.message());
  fs::path base = policy.baseDir.empty() ? cwd : fs::path(policy.baseDir);
  if (base.is_relative()) base = cwd / base;
  fs::path p(path);
  if (p.is_relative()) p = base / p;
  fs::path resolved = stripTrailing(fs::weakly_canonical(p, ec));
  if (ec) return makeError("path '" + path + "': " + ec.message());

  std::vector<fs::path> dirs;
  if (policy.allowedDirs.empty()) dirs.push_back(cwd);
  for (const std::string &d : policy.allowedDirs) {
    fs::path dp(d);
    if (dp.is_relative()) dp = cwd / dp;
    dirs.push_back(dp);
  }
  std::string allowedList;
  for (const fs::path &d : dirs) {
    fs::path rd = stripTrailing(fs::weakly_canonical(d, ec));
    if (ec) {
      ec.clear();
      continue; // an unreadable allowed dir allows nothing
    }
    if (isInside(resolved, rd)) return resolved.string();
    allowedList += (allowedList.empty() ? "" : ", ") + rd.string();
  }
  return makeError("path '" + path + "' resolves to '" + resolved.string() +
                   "', outside the allowed directories (" + allowedList + ")");
}

} // namespace cgraph::rt
