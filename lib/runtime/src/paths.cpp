// Allowed-directory checks for paths named by a .cgf (see paths.h).
#include "cgraph/runtime/paths.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <sys/stat.h>
#include <system_error>
#include <vector>

namespace cgraph::rt {

namespace fs = std::filesystem;

namespace {

bool isInside(const fs::path &p, const fs::path &dir) {
  auto d = dir.begin(), de = dir.end();
  auto q = p.begin(), qe = p.end();
  for (; d != de; ++d, ++q)
    if (q == qe || *q != *d) return false;
  return true;
}

// The absolute path `abs` with every symbolic link replaced by its target, dangling
// links included (std::filesystem::weakly_canonical keeps a dangling link as it is,
// and opening that path would then follow it wherever it points). Components that do
// not exist are kept as written; "." and ".." are applied to the path resolved so far.
// The result has no "." / ".." components and no trailing separator.
Expected<fs::path> resolveLinks(const fs::path &abs, const std::string &shown) {
  std::vector<fs::path> rest; // components still to walk, last first
  auto pushAll = [&](const fs::path &p) {
    const fs::path rel = p.relative_path();
    std::vector<fs::path> parts(rel.begin(), rel.end());
    for (auto it = parts.rbegin(); it != parts.rend(); ++it) rest.push_back(*it);
  };
  pushAll(abs);
  fs::path done = abs.root_path();
  int links = 0;
  while (!rest.empty()) {
    fs::path c = rest.back();
    rest.pop_back();
    if (c.empty() || c == ".") continue;
    if (c == "..") {
      done = done.parent_path();
      continue;
    }
    fs::path next = done / c;
    // Every component is looked at, also below a missing one: "missing/../link"
    // still reaches (and follows) "link".
    struct stat st;
    if (::lstat(next.c_str(), &st) != 0) {
      if (errno != ENOENT && errno != ENOTDIR)
        return makeError("path '" + shown + "': cannot resolve '" + next.string() + "': " + std::strerror(errno));
      done = next;
      continue;
    }
    if (!S_ISLNK(st.st_mode)) {
      done = next;
      continue;
    }
    if (++links > 40) return makeError("path '" + shown + "': too many levels of symbolic links");
    std::error_code ec;
    fs::path target = fs::read_symlink(next, ec);
    if (ec) return makeError("path '" + shown + "': cannot read the link '" + next.string() + "': " + ec.message());
    if (target.is_absolute()) done = target.root_path();
    pushAll(target);
  }
  return done;
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
  Expected<fs::path> resolved = resolveLinks(p, path);
  if (!resolved) return resolved.error();

  std::vector<fs::path> dirs;
  if (policy.allowedDirs.empty()) dirs.push_back(cwd);
  for (const std::string &d : policy.allowedDirs) {
    fs::path dp(d);
    if (dp.is_relative()) dp = cwd / dp;
    dirs.push_back(dp);
  }
  std::string allowedList;
  for (const fs::path &d : dirs) {
    Expected<fs::path> rd = resolveLinks(d, d.string());
    if (!rd) continue; // an unresolvable allowed dir allows nothing
    if (isInside(*resolved, *rd)) return resolved->string();
    allowedList += (allowedList.empty() ? "" : ", ") + rd->string();
  }
  return makeError("path '" + path + "' resolves to '" + resolved->string() +
                   "', outside the allowed directories (" + allowedList + ")");
}

} // namespace cgraph::rt
