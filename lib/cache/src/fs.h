// POSIX file helpers for the persistent cache (internal). Errors carry errno so the
// caller can tell "this disk cannot take writes" from "this one file is bad".
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <sys/stat.h>
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

// Largest .src the cache writes or reads: its key fields are short strings, spec
// constant bytes and kernel names. A bigger one is damage, refused unread.
inline constexpr uint64_t kMaxSrcSize = 16ull << 20;
// Largest cgcache.conf or stats file read.
inline constexpr uint64_t kMaxSmallFileSize = 1ull << 20;

// A file descriptor, closed on destruction.
class Fd {
public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(Fd &&o) noexcept : fd_(o.release()) {}
  Fd &operator=(Fd &&o) noexcept {
    reset(o.release());
    return *this;
  }
  Fd(const Fd &) = delete;
  Fd &operator=(const Fd &) = delete;
  ~Fd() { reset(); }
  int get() const { return fd_; }
  int release() {
    int fd = fd_;
    fd_ = -1;
    return fd;
  }
  void reset(int fd = -1);

private:
  int fd_ = -1;
};

// "a directory", "a FIFO", "a symbolic link", ... for a non-regular st_mode.
std::string fileTypeName(unsigned mode);

// Opens `name` (relative to `dirFd`; AT_FDCWD for a path) for reading, but only a
// regular file: O_NOFOLLOW makes a symbolic link ELOOP, O_NONBLOCK keeps a FIFO from
// blocking the open, and fstat then refuses anything but a regular file (EINVAL,
// the message says what it is). `display` names the file in messages.
IoError openRegular(int dirFd, const std::string &name, const std::string &display, Fd &out, struct stat &st);

// Reads a whole regular file (openRegular) of at most `maxSize` bytes. The size is
// checked with fstat before anything is read (EFBIG, naming both sizes); failing
// to allocate is ENOMEM, never an exception.
IoError readFileAt(int dirFd, const std::string &name, const std::string &display, uint64_t maxSize,
                   std::string &out);
IoError readFile(const std::string &path, std::string &out, uint64_t maxSize = kMaxSmallFileSize);

// pread of exactly `size` bytes (looping over short reads); false otherwise.
bool preadAll(int fd, void *buf, size_t size, uint64_t offset);

// Opens <root>/<rel> as a directory, one component of `rel` at a time with
// O_DIRECTORY|O_NOFOLLOW, so nothing below the root is reached through a symbolic
// link: ELOOP or ENOTDIR when a component is a link or not a directory. The root
// itself may be a link. An empty `rel` opens the root.
IoError openDirBelow(const std::string &root, const std::string &rel, Fd &out);
// makeDirs(root), then creates and opens <root>/<rel> the same way (mkdirat +
// openat without following links).
IoError makeDirsBelow(const std::string &root, const std::string &rel, Fd &out);

// Names in a directory (no "." / ".."). ENOENT is reported as an IoError too.
IoError listDir(const std::string &path, std::vector<std::string> &names);
IoError listDirAt(int dirFd, const std::string &display, std::vector<std::string> &names);

// "<n>.src" / "<n>.bin" -> n and "src"/"bin"; false for anything else (temp files,
// .lock).
bool parseEntryName(const std::string &name, unsigned &n, std::string &ext);
bool isTempName(const std::string &name);

// An exclusive flock(2) on `path` (created if missing). The kernel drops it when the
// process dies, so a lock left by a killed process never blocks anyone.
// How long a store or an eviction waits for an entry's leaf lock: long enough for another
// process to write a large binary, short enough that a stuck process cannot stall a run
// (a store that cannot get the lock is skipped).
inline constexpr std::chrono::milliseconds kLeafLockTimeout(2000);

class FileLock {
public:
  FileLock() = default;
  FileLock(FileLock &&o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
  FileLock &operator=(FileLock &&o) noexcept;
  FileLock(const FileLock &) = delete;
  ~FileLock();
  // Waits up to `timeout` (0: one try). ETIMEDOUT when still held by someone else.
  // The lock file is never reached through a symbolic link (ELOOP).
  static IoError acquire(const std::string &path, std::chrono::milliseconds timeout, FileLock &out);
  // `name` relative to the directory `dirFd`; `display` names it in messages.
  static IoError acquireAt(int dirFd, const std::string &name, const std::string &display,
                           std::chrono::milliseconds timeout, FileLock &out);
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
