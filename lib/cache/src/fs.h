// POSIX file helpers for the persistent cache (internal). Errors carry errno so the
// caller can tell "this disk cannot take writes" from "this one file is bad".
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace cgraph::cache::detail {

struct IoError {
  int code = 0; // errno; 0 = success
  std::string message;
  explicit operator bool() const { return code != 0; }
};

IoError ioError(int code, const std::string &what);

// EROFS, EACCES, EPERM, ENOSPC, EDQUOT: the directory cannot take writes at all.
bool isDiskUnusable(int code);

IoError makeDirs(const std::string &path);

// cgraph::writeFileAtomic (format/include/cgraph/format/atomic_file.h: temp file +
// fsync + rename, the old file intact on failure) of `head` then `body`, with the
// errno kept so that a full or read-only disk can turn writing off.
IoError writeFileAtomic(const std::string &path, const std::string &head, const uint8_t *body, size_t bodySize);

IoError readFile(const std::string &path, std::string &out);

// Names in a directory (no "." / ".."). ENOENT is reported as an IoError too.
IoError listDir(const std::string &path, std::vector<std::string> &names);

// "<n>.src" / "<n>.bin" -> n and "src"/"bin"; false for anything else (temp files,
// .lock).
bool parseEntryName(const std::string &name, unsigned &n, std::string &ext);
bool isTempName(const std::string &name);

// An exclusive flock(2) on `path` (created if missing). The kernel drops it when the
// process dies, so a lock left by a killed process never blocks anyone.
class FileLock {
public:
  FileLock() = default;
  FileLock(FileLock &&o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
  FileLock &operator=(FileLock &&o) noexcept;
  FileLock(const FileLock &) = delete;
  ~FileLock();
  // Waits up to `timeout` (0: one try). ETIMEDOUT when still held by someone else.
  static IoError acquire(const std::string &path, std::chrono::milliseconds timeout, FileLock &out);
  bool held() const { return fd_ >= 0; }
  int fd() const { return fd_; }

private:
  int fd_ = -1;
};

inline constexpr std::chrono::milliseconds kStatsLockTimeout(1000);

// A "name value" counter file updated under its own flock. `deltas` are added;
// entries of `sets` replace the value. Returns the new contents in `result`.
// Waits at most `timeout` for the lock: ETIMEDOUT then, and nothing is changed.
IoError updateCounterFile(const std::string &path, const std::map<std::string, int64_t> &deltas,
                          const std::map<std::string, uint64_t> &sets, std::map<std::string, uint64_t> *result,
                          std::chrono::milliseconds timeout = kStatsLockTimeout);
std::map<std::string, uint64_t> readCounterFile(const std::string &path);

// Last modification time of `path`; false when it cannot be stat'ed.
bool modificationTime(const std::string &path, std::chrono::system_clock::time_point &out, uint64_t *size = nullptr);

} // namespace cgraph::cache::detail
