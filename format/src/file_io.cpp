// File entry points: mmap-based reading, the atomic write (temp file in the same
// directory, fsync, rename, fsync of the directory) and the tools' output write, which
// picks between the atomic write and writing through by what the path names.
#include "cgraph/format/atomic_file.h"
#include "cgraph/format/output_file.h"
#include "cgraph/format/reader.h"
#include "cgraph/format/writer.h"

#include <atomic>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <string>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace cgraph {
namespace {

std::atomic<uint64_t> gTempCounter{0};

// A failed system call on a file: ErrorCode::Io with its errno (ENOMEM: OutOfMemory).
Error osError(const std::string &what, int err) {
  std::string m = what + ": " + std::strerror(err);
  // EFBIG from a regular file means the process's size limit (RLIMIT_FSIZE) was hit.
  if (err == EFBIG) m += " (the file size limit, ulimit -f)";
  return Error::make(std::move(m), err == ENOMEM ? ErrorCode::OutOfMemory : ErrorCode::Io, err);
}

class Fd {
public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() { reset(); }
  Fd(const Fd &) = delete;
  Fd &operator=(const Fd &) = delete;
  int get() const { return fd_; }
  int release() { int f = fd_; fd_ = -1; return f; }
  void reset() { if (fd_ >= 0) ::close(fd_); fd_ = -1; }

private:
  int fd_;
};

std::string dirOf(const std::string &path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

} // namespace

// Files from this size on are mapped; smaller ones are read: a 140 KB file took 200 us
// mapped (a page fault per page, and the unmap's TLB flush) against 100 read.
constexpr size_t kMapAtLeast = size_t(4) << 20;

Expected<Graph> readCgfFile(const std::string &path, const ReadOptions &opts) {
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) return osError("cannot open '" + path + "'", errno);
  struct stat st;
  if (::fstat(fd.get(), &st) != 0) return osError("cannot stat '" + path + "'", errno);
  if (!S_ISREG(st.st_mode)) return makeError("'" + path + "' is not a regular file");
  size_t size = static_cast<size_t>(st.st_size);
  Expected<Graph> g = makeError("unreachable");
  if (size == 0) {
    g = readCgf(nullptr, 0, opts);
  } else if (void *map = size >= kMapAtLeast ? ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd.get(), 0) : MAP_FAILED;
             map != MAP_FAILED) {
    g = readCgf(static_cast<const uint8_t *>(map), size, opts);
    ::munmap(map, size);
  } else {
    // Small (a read copies less than mapping faults in) or not mappable: one read loop.
    std::vector<uint8_t> buf(size);
    size_t got = 0;
    while (got < size) {
      ssize_t n = ::read(fd.get(), buf.data() + got, size - got);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return osError("cannot read '" + path + "'", errno);
      if (n == 0) break;
      got += static_cast<size_t>(n);
    }
    g = readCgf(buf.data(), got, opts);
  }
  if (!g) return g.error().withContext(path);
  return g;
}

Error writeFileAtomic(const std::string &path, std::initializer_list<ByteSpan> parts, int *osErrorOut) {
  if (osErrorOut) *osErrorOut = 0;
  auto osFail = [&](const std::string &what, int err) {
    if (osErrorOut) *osErrorOut = err;
    return osError(what, err);
  };
  std::string dir = dirOf(path);
  std::string tmp;
  int raw = -1;
  // O_EXCL with a unique name instead of mkstemp: the mode then follows the umask. The
  // counter keeps threads of one process apart; the pid keeps processes apart.
  for (int attempt = 0; attempt < 100 && raw < 0; ++attempt) {
    tmp = path + ".tmp." + std::to_string(::getpid()) + "." +
          std::to_string(gTempCounter.fetch_add(1, std::memory_order_relaxed));
    raw = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (raw < 0 && errno != EEXIST)
      return osFail("cannot create a temporary file in '" + dir + "' for '" + path + "'", errno);
  }
  if (raw < 0) return makeError("cannot create a temporary file for '" + path + "': too many stale temporaries");
  Fd fd(raw);
  auto fail = [&](const std::string &what, int err) {
    fd.reset();
    ::unlink(tmp.c_str());
    return osFail(what, err);
  };
  for (const ByteSpan &part : parts) {
    const uint8_t *data = static_cast<const uint8_t *>(part.data);
    size_t done = 0;
    while (done < part.size) {
      ssize_t n = ::write(fd.get(), data + done, part.size - done);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return fail("cannot write '" + path + "' (temporary '" + tmp + "')", errno);
      done += static_cast<size_t>(n);
    }
  }
  if (::fsync(fd.get()) != 0) return fail("cannot sync '" + tmp + "'", errno);
  int closed = ::close(fd.release());
  if (closed != 0) return fail("cannot close '" + tmp + "'", errno);
  if (::rename(tmp.c_str(), path.c_str()) != 0) return fail("cannot rename '" + tmp + "' to '" + path + "'", errno);
  // Make the rename itself durable; failure here does not undo the write.
  Fd d(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (d.get() >= 0) (void)::fsync(d.get());
  return Error::success();
}

Error writeCgfFile(const Graph &g, const std::string &path, const WriteOptions &opts) {
  auto bytes = writeCgf(g, opts);
  if (!bytes) return bytes.error().withContext(path);
  return writeFileAtomic(path, bytes->data(), bytes->size());
}

namespace {

// Writes every part to `fd` (a stream, device or FIFO: no fsync, no truncation).
Error writeParts(int fd, std::initializer_list<ByteSpan> parts, const std::string &name, int *osErrorOut) {
  for (const ByteSpan &part : parts) {
    const uint8_t *data = static_cast<const uint8_t *>(part.data);
    size_t done = 0;
    while (done < part.size) {
      ssize_t n = ::write(fd, data + done, part.size - done);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        if (osErrorOut) *osErrorOut = errno;
        return osError("cannot write " + name, errno);
      }
      done += static_cast<size_t>(n);
    }
  }
  return Error::success();
}

bool isWrittenThrough(mode_t mode) { return S_ISCHR(mode) || S_ISFIFO(mode); }

const char *kindName(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISBLK(mode)) return "a block device";
  return "not a regular file, character device or FIFO";
}

Error refuse(const std::string &path, mode_t mode, const std::string &via) {
  return makeError("cannot write '" + path + "'" + via + ": it is " + kindName(mode));
}

// Opens an existing device or FIFO for writing and writes the parts. The type is
// checked again on the open descriptor: a regular file swapped in since the lstat is
// never truncated in place.
Error writeThrough(const std::string &path, std::initializer_list<ByteSpan> parts, int *osErrorOut) {
  Fd fd(::open(path.c_str(), O_WRONLY | O_CLOEXEC | O_NOCTTY));
  if (fd.get() < 0) {
    if (osErrorOut) *osErrorOut = errno;
    return osError("cannot open '" + path + "' for writing", errno);
  }
  struct stat st;
  if (::fstat(fd.get(), &st) != 0) {
    if (osErrorOut) *osErrorOut = errno;
    return osError("cannot stat '" + path + "'", errno);
  }
  if (!isWrittenThrough(st.st_mode)) return makeError("cannot write '" + path + "': it changed while being opened");
  return writeParts(fd.get(), parts, "'" + path + "'", osErrorOut);
}

// The path a chain of symbolic links ends at (the last link's target may not exist).
// Relative targets resolve against the directory of the link that names them.
Expected<std::string> followLinks(const std::string &path) {
  std::string cur = path;
  for (int hops = 0; hops < 40; ++hops) {
    std::vector<char> buf(4096);
    ssize_t n = ::readlink(cur.c_str(), buf.data(), buf.size());
    if (n < 0) {
      if (errno == EINVAL || errno == ENOENT) return cur; // not a link, or nothing there
      return osError("cannot read the symbolic link '" + cur + "'", errno);
    }
    if (size_t(n) >= buf.size()) return makeError("symbolic link '" + cur + "' has too long a target");
    std::string target(buf.data(), size_t(n));
    if (target[0] != '/' && cur.find('/') != std::string::npos) target = dirOf(cur) + "/" + target;
    cur = target;
  }
  return makeError("cannot write '" + path + "': too many levels of symbolic links");
}

bool isStdout(const struct stat &st) {
  struct stat out;
  return ::fstat(STDOUT_FILENO, &out) == 0 && out.st_dev == st.st_dev && out.st_ino == st.st_ino;
}

Error writeThroughLink(const std::string &path, std::initializer_list<ByteSpan> parts, int *osErrorOut) {
  const std::string via = " (through the symbolic link '" + path + "')";
  struct stat st;
  if (::stat(path.c_str(), &st) == 0) {
    if (isStdout(st)) return writeParts(STDOUT_FILENO, parts, "to standard output", osErrorOut);
    if (isWrittenThrough(st.st_mode)) return writeThrough(path, parts, osErrorOut);
    if (!S_ISREG(st.st_mode)) {
      Expected<std::string> target = followLinks(path);
      return refuse(target ? *target : path, st.st_mode, via);
    }
  } else if (errno != ENOENT) {
    if (osErrorOut) *osErrorOut = errno;
    return osError("cannot write '" + path + "'", errno);
  }
  // A regular file, or a dangling link: replace (or create) the file at its end.
  Expected<std::string> target = followLinks(path);
  if (!target) return target.error();
  return writeFileAtomic(*target, parts, osErrorOut);
}

} // namespace

Error writeOutputFile(const std::string &path, std::initializer_list<ByteSpan> parts, int *osErrorOut) {
  if (osErrorOut) *osErrorOut = 0;
  if (path == "-") return writeParts(STDOUT_FILENO, parts, "to standard output", osErrorOut);
  if (path.empty()) return makeError("empty output path");
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return writeFileAtomic(path, parts, osErrorOut);
    if (osErrorOut) *osErrorOut = errno;
    return osError("cannot write '" + path + "'", errno);
  }
  if (S_ISREG(st.st_mode)) return writeFileAtomic(path, parts, osErrorOut);
  if (S_ISLNK(st.st_mode)) return writeThroughLink(path, parts, osErrorOut);
  if (isWrittenThrough(st.st_mode)) return writeThrough(path, parts, osErrorOut);
  return refuse(path, st.st_mode, "");
}

Error writeCgfOutput(const Graph &g, const std::string &path, const WriteOptions &opts) {
  auto bytes = writeCgf(g, opts);
  if (!bytes) return bytes.error().withContext(path);
  return writeOutputFile(path, bytes->data(), bytes->size());
}

} // namespace cgraph
