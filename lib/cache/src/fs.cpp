#include "fs.h"

#include "cgraph/format/atomic_file.h"

#include <atomic>
#include <cerrno>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <sstream>
#include <sys/file.h>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

namespace cgraph::cache::detail {

IoError ioError(int code, const std::string &what) {
  return IoError{code == 0 ? EIO : code, what + ": " + std::strerror(code == 0 ? EIO : code)};
}

bool isDiskUnusable(int code) {
  return code == EROFS || code == EACCES || code == EPERM || code == ENOSPC || code == EDQUOT;
}

IoError makeDirs(const std::string &path) {
  if (path.empty()) return {};
  struct stat st;
  if (::stat(path.c_str(), &st) == 0) return S_ISDIR(st.st_mode) ? IoError{} : ioError(ENOTDIR, path);
  size_t slash = path.find_last_of('/');
  if (slash != std::string::npos && slash > 0) {
    IoError e = makeDirs(path.substr(0, slash));
    if (e) return e;
  }
  // EEXIST: another process made it between our stat and mkdir.
  if (::mkdir(path.c_str(), 0777) != 0 && errno != EEXIST) return ioError(errno, "cannot create " + path);
  return {};
}

IoError writeFileAtomic(const std::string &path, const std::string &head, const uint8_t *body, size_t bodySize) {
  int code = 0;
  Error e = cgraph::writeFileAtomic(path, {ByteSpan{head.data(), head.size()}, ByteSpan{body, bodySize}}, &code);
  if (!e) return {};
  return IoError{code == 0 ? EIO : code, e.message()};
}

void Fd::reset(int fd) {
  if (fd_ >= 0) ::close(fd_);
  fd_ = fd;
}

std::string fileTypeName(unsigned mode) {
  switch (mode & S_IFMT) {
  case S_IFREG: return "a regular file";
  case S_IFDIR: return "a directory";
  case S_IFLNK: return "a symbolic link";
  case S_IFIFO: return "a FIFO";
  case S_IFSOCK: return "a socket";
  case S_IFCHR: return "a character device";
  case S_IFBLK: return "a block device";
  default: return "not a file";
  }
}

IoError openRegular(int dirFd, const std::string &name, const std::string &display, Fd &out, struct stat &st) {
  int fd = ::openat(dirFd, name.c_str(), O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    int err = errno;
    if (err == ELOOP) return IoError{ELOOP, display + ": a symbolic link, not a regular file"};
    return ioError(err, "cannot open " + display);
  }
  Fd owned(fd);
  if (::fstat(fd, &st) != 0) return ioError(errno, "cannot stat " + display);
  if (!S_ISREG(st.st_mode)) return IoError{EINVAL, display + ": not a regular file (" + fileTypeName(st.st_mode) + ")"};
  out = std::move(owned);
  return {};
}

bool preadAll(int fd, void *buf, size_t size, uint64_t offset) {
  auto *p = static_cast<char *>(buf);
  while (size > 0) {
    ssize_t r = ::pread(fd, p, size, static_cast<off_t>(offset));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    p += r;
    size -= static_cast<size_t>(r);
    offset += static_cast<uint64_t>(r);
  }
  return true;
}

IoError readFileAt(int dirFd, const std::string &name, const std::string &display, uint64_t maxSize,
                   std::string &out) {
  out.clear();
  Fd fd;
  struct stat st;
  if (IoError e = openRegular(dirFd, name, display, fd, st)) return e;
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  auto tooLarge = [&](uint64_t n) {
    return IoError{EFBIG, display + ": " + std::to_string(n) + " bytes, more than the limit of " +
                              std::to_string(maxSize)};
  };
  if (size > maxSize) return tooLarge(size);
  try {
    out.reserve(static_cast<size_t>(size));
    char buf[16384];
    for (;;) {
      ssize_t r = ::read(fd.get(), buf, sizeof buf);
      if (r < 0) {
        if (errno == EINTR) continue;
        return ioError(errno, "cannot read " + display);
      }
      if (r == 0) break;
      // The file may grow while it is read: the limit holds for what is read too.
      if (out.size() + static_cast<size_t>(r) > maxSize) return tooLarge(out.size() + static_cast<size_t>(r));
      out.append(buf, static_cast<size_t>(r));
    }
  } catch (const std::bad_alloc &) {
    out.clear();
    return ioError(ENOMEM, "cannot read " + display);
  }
  return {};
}

IoError readFile(const std::string &path, std::string &out, uint64_t maxSize) {
  return readFileAt(AT_FDCWD, path, path, maxSize, out);
}

namespace {

// Opens `name` below `dirFd` as a directory without following a link.
IoError openSubdir(int dirFd, const std::string &name, const std::string &display, Fd &out) {
  int fd = ::openat(dirFd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd >= 0) {
    out.reset(fd);
    return {};
  }
  int err = errno;
  struct stat st;
  if ((err == ELOOP || err == ENOTDIR) && ::fstatat(dirFd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0)
    return IoError{err, display + ": " + fileTypeName(st.st_mode) + ", not a directory"};
  return ioError(err, "cannot open directory " + display);
}

std::vector<std::string> components(const std::string &rel) {
  std::vector<std::string> parts;
  size_t pos = 0;
  while (pos <= rel.size()) {
    size_t slash = rel.find('/', pos);
    if (slash == std::string::npos) slash = rel.size();
    if (slash > pos) parts.push_back(rel.substr(pos, slash - pos));
    pos = slash + 1;
  }
  return parts;
}

IoError walkBelow(const std::string &root, const std::string &rel, bool create, Fd &out) {
  int fd = ::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return ioError(errno, "cannot open directory " + root);
  Fd dir(fd);
  std::string display = root;
  for (const std::string &part : components(rel)) {
    display += "/" + part;
    // EEXIST: it exists already, or another process made it meanwhile.
    if (create && ::mkdirat(dir.get(), part.c_str(), 0777) != 0 && errno != EEXIST)
      return ioError(errno, "cannot create " + display);
    Fd next;
    if (IoError e = openSubdir(dir.get(), part, display, next)) return e;
    dir = std::move(next);
  }
  out = std::move(dir);
  return {};
}

} // namespace

IoError openDirBelow(const std::string &root, const std::string &rel, Fd &out) {
  return walkBelow(root, rel, false, out);
}

IoError makeDirsBelow(const std::string &root, const std::string &rel, Fd &out) {
  if (IoError e = makeDirs(root)) return e;
  return walkBelow(root, rel, true, out);
}

IoError listDir(const std::string &path, std::vector<std::string> &names) {
  names.clear();
  DIR *d = ::opendir(path.c_str());
  if (!d) return ioError(errno, "cannot open directory " + path);
  while (dirent *e = ::readdir(d)) {
    if (std::strcmp(e->d_name, ".") == 0 || std::strcmp(e->d_name, "..") == 0) continue;
    names.emplace_back(e->d_name);
  }
  ::closedir(d);
  return {};
}

IoError listDirAt(int dirFd, const std::string &display, std::vector<std::string> &names) {
  names.clear();
  // fdopendir takes over the descriptor it is given: a duplicate keeps `dirFd` open.
  int fd = ::openat(dirFd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return ioError(errno, "cannot open directory " + display);
  DIR *d = ::fdopendir(fd);
  if (!d) {
    int err = errno;
    ::close(fd);
    return ioError(err, "cannot open directory " + display);
  }
  while (dirent *e = ::readdir(d)) {
    if (std::strcmp(e->d_name, ".") == 0 || std::strcmp(e->d_name, "..") == 0) continue;
    names.emplace_back(e->d_name);
  }
  ::closedir(d);
  return {};
}

bool parseEntryName(const std::string &name, unsigned &n, std::string &ext) {
  size_t dot = name.find('.');
  if (dot == 0 || dot == std::string::npos || dot > 9) return false;
  for (size_t i = 0; i < dot; ++i)
    if (name[i] < '0' || name[i] > '9') return false;
  ext = name.substr(dot + 1);
  if (ext != "src" && ext != "bin") return false;
  n = static_cast<unsigned>(std::stoul(name.substr(0, dot)));
  return true;
}

bool isTempName(const std::string &name) { return name.find(".tmp.") != std::string::npos; }

FileLock &FileLock::operator=(FileLock &&o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = o.fd_;
    o.fd_ = -1;
  }
  return *this;
}

FileLock::~FileLock() {
  // Closing the descriptor releases the flock.
  if (fd_ >= 0) ::close(fd_);
}

IoError FileLock::acquire(const std::string &path, std::chrono::milliseconds timeout, FileLock &out) {
  return acquireAt(AT_FDCWD, path, path, timeout, out);
}

IoError FileLock::acquireAt(int dirFd, const std::string &name, const std::string &display,
                            std::chrono::milliseconds timeout, FileLock &out) {
  // O_NONBLOCK: a FIFO in place of the lock file must not block the open.
  int fd = ::openat(dirFd, name.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0666);
  if (fd < 0) {
    int err = errno;
    if (err == ELOOP) return IoError{ELOOP, "cannot open lock " + display + ": a symbolic link"};
    return ioError(err, "cannot open lock " + display);
  }
  const std::string path = display;
  auto deadline = std::chrono::steady_clock::now() + timeout;
  auto pause = std::chrono::microseconds(50);
  for (;;) {
    if (::flock(fd, LOCK_EX | LOCK_NB) == 0) break;
    int err = errno;
    if (err == EINTR) continue;
    if (err != EWOULDBLOCK || std::chrono::steady_clock::now() >= deadline) {
      ::close(fd);
      return ioError(err == EWOULDBLOCK ? ETIMEDOUT : err, "cannot lock " + path);
    }
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::microseconds(5000));
  }
  out = FileLock();
  out.fd_ = fd;
  return {};
}

std::map<std::string, uint64_t> readCounterFile(const std::string &path) {
  std::map<std::string, uint64_t> m;
  std::string text;
  if (readFile(path, text)) return m;
  std::istringstream in(text);
  std::string name;
  uint64_t value;
  while (in >> name >> value) m[name] = value;
  return m;
}

IoError updateCounterFile(const std::string &path, const std::map<std::string, int64_t> &deltas,
                          const std::map<std::string, uint64_t> &sets, std::map<std::string, uint64_t> *result,
                          std::chrono::milliseconds timeout) {
  // A bounded wait, like every other lock of the cache: a process that holds the
  // counters' lock for long (stopped in a debugger, on a hung NFS mount) costs the
  // others one skipped counter update, never a hang.
  FileLock lock;
  if (IoError e = FileLock::acquire(path, timeout, lock)) return e;
  const int fd = lock.fd();
  struct stat st;
  if (::fstat(fd, &st) != 0) return ioError(errno, "cannot stat " + path);
  if (!S_ISREG(st.st_mode)) return IoError{EINVAL, path + ": not a regular file (" + fileTypeName(st.st_mode) + ")"};
  std::string text;
  char buf[4096];
  ssize_t r;
  // Counters are a few hundred bytes: a larger file is damage, and starts again empty.
  while (text.size() < kMaxSmallFileSize &&
         (r = ::pread(fd, buf, sizeof buf, static_cast<off_t>(text.size()))) > 0)
    text.append(buf, static_cast<size_t>(r));
  if (text.size() >= kMaxSmallFileSize) text.clear();
  std::map<std::string, uint64_t> m;
  {
    std::istringstream in(text);
    std::string name;
    uint64_t value;
    while (in >> name >> value) m[name] = value;
  }
  for (const auto &[k, d] : deltas) {
    int64_t v = static_cast<int64_t>(m[k]) + d;
    m[k] = v < 0 ? 0 : static_cast<uint64_t>(v);
  }
  for (const auto &[k, v] : sets) m[k] = v;
  std::string out;
  for (const auto &[k, v] : m) out += k + " " + std::to_string(v) + "\n";
  IoError e;
  // Rewritten in place under the lock; a crash mid-write can only garble counters,
  // which readers parse leniently.
  if (::pwrite(fd, out.data(), out.size(), 0) != static_cast<ssize_t>(out.size())) e = ioError(errno, "cannot write " + path);
  else if (::ftruncate(fd, static_cast<off_t>(out.size())) != 0) e = ioError(errno, "cannot truncate " + path);
  if (result) *result = std::move(m);
  return e;
}

bool modificationTime(const std::string &path, std::chrono::system_clock::time_point &out, uint64_t *size) {
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) return false;
  out = std::chrono::system_clock::time_point(
      std::chrono::duration_cast<std::chrono::system_clock::duration>(
          std::chrono::seconds(st.st_mtim.tv_sec) + std::chrono::nanoseconds(st.st_mtim.tv_nsec)));
  if (size) *size = static_cast<uint64_t>(st.st_size);
  return true;
}

} // namespace cgraph::cache::detail
