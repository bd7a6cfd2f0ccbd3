// NCCL unique ids as text and their rendezvous through a file (cgraph/comm/nccl.h).
#include "cgraph/comm/nccl.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <thread>

#include <fcntl.h>
#include <unistd.h>

namespace cgraph::comm {

std::string toHex(const NcclUniqueId &id) {
  static const char digits[] = "0123456789abcdef";
  std::string s;
  s.reserve(2 * id.bytes.size());
  for (char c : id.bytes) {
    const auto b = static_cast<unsigned char>(c);
    s += digits[b >> 4];
    s += digits[b & 15];
  }
  return s;
}

Expected<NcclUniqueId> uniqueIdFromHex(const std::string &hex) {
  NcclUniqueId id;
  if (hex.size() != 2 * id.bytes.size())
    return makeError("an NCCL unique id is " + std::to_string(2 * id.bytes.size()) + " hex digits, not " +
                     std::to_string(hex.size()) + " characters");
  auto nibble = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  for (size_t i = 0; i < id.bytes.size(); ++i) {
    const int hi = nibble(hex[2 * i]), lo = nibble(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) return makeError("an NCCL unique id has hex digits only; character " +
                                           std::to_string(2 * i + (hi < 0 ? 0 : 1)) + " is not one");
    id.bytes[i] = char(hi << 4 | lo);
  }
  return id;
}

namespace {

Error writeIdFile(const std::string &path, const NcclUniqueId &id) {
  const std::string tmp = path + ".tmp." + std::to_string(getpid());
  const std::string text = toHex(id) + "\n";
  int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return makeIoError(errno, "nccl: cannot write the unique id to " + tmp);
  const bool ok = write(fd, text.data(), text.size()) == ssize_t(text.size()) && fsync(fd) == 0;
  const int err = errno;
  close(fd);
  if (!ok || std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int e = ok ? errno : err;
    unlink(tmp.c_str());
    return makeIoError(e, "nccl: cannot write the unique id to " + path);
  }
  return Error::success();
}

} // namespace

Expected<NcclUniqueId> exchangeUniqueIdFile(const std::string &path, uint32_t rank,
                                            std::chrono::milliseconds timeout) {
  if (rank == 0) {
    auto id = ncclNewUniqueId();
    if (!id) return id.error();
    CGRAPH_RETURN_IF_ERROR(writeIdFile(path, *id));
    return id;
  }
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    std::ifstream in(path);
    if (in) {
      std::string text;
      std::getline(in, text);
      auto id = uniqueIdFromHex(text); // written whole by a rename
      if (!id) return id.error().withContext("nccl: " + path);
      return id;
    }
    if (std::chrono::steady_clock::now() >= deadline)
      return makeError(ErrorCode::Timeout, "nccl: rank " + std::to_string(rank) + ": no unique id at " + path +
                                               " after " + std::to_string(timeout.count()) +
                                               " ms (rank 0 writes it)");
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

} // namespace cgraph::comm
