// Rank 0 hands a small payload (NCCL's unique id) to the other ranks over TCP
// (cgraph/comm/nccl.h tcpRendezvous, exchangeUniqueIdTcp).
//
// Protocol, one connection per rank > 0: the rank sends the line
// "cgraph-rendezvous 1 <world> <rank>\n"; rank 0 answers a hello of its own world size
// with the payload's length (4 bytes, little-endian) and the payload, and closes. Rank 0
// serves until world - 1 distinct ranks have been answered; connections that say
// anything else are dropped unanswered.
#include "cgraph/comm/nccl.h"

#include <cerrno>
#include <cstring>
#include <set>
#include <thread>

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

namespace cgraph::comm {

namespace {

using Clock = std::chrono::steady_clock;

struct Fd {
  int fd = -1;
  explicit Fd(int f = -1) : fd(f) {}
  Fd(const Fd &) = delete;
  Fd &operator=(const Fd &) = delete;
  ~Fd() {
    if (fd >= 0) close(fd);
  }
};

int msLeft(Clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return left <= 0 ? 0 : int(std::min<int64_t>(left, 1 << 30));
}

std::string where(const std::string &host, uint16_t port) { return host + ":" + std::to_string(port); }

Error timeoutError(const std::string &what, std::chrono::milliseconds timeout) {
  return makeError(ErrorCode::Timeout, "rendezvous: " + what + " after " + std::to_string(timeout.count()) + " ms");
}

// Sends or receives exactly n bytes before the deadline.
bool transfer(int fd, char *p, size_t n, bool send, Clock::time_point deadline) {
  while (n > 0) {
    pollfd pf{fd, short(send ? POLLOUT : POLLIN), 0};
    if (poll(&pf, 1, msLeft(deadline)) <= 0) return false;
    const ssize_t k = send ? ::send(fd, p, n, MSG_NOSIGNAL) : ::recv(fd, p, n, 0);
    if (k <= 0) {
      if (k < 0 && (errno == EINTR || errno == EAGAIN)) continue;
      return false;
    }
    p += k;
    n -= size_t(k);
  }
  return true;
}

// The hello line, up to 64 bytes and its newline.
bool readLine(int fd, std::string &line, Clock::time_point deadline) {
  line.clear();
  char c = 0;
  while (line.size() < 64) {
    if (!transfer(fd, &c, 1, false, deadline)) return false;
    if (c == '\n') return true;
    line += c;
  }
  return false;
}

Expected<addrinfo *> resolve(const std::string &host, uint16_t port, bool passive) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = passive ? AI_PASSIVE : 0;
  addrinfo *res = nullptr;
  const int rc = getaddrinfo(host.empty() ? nullptr : host.c_str(), std::to_string(port).c_str(), &hints, &res);
  if (rc != 0) return makeError("rendezvous: cannot resolve " + where(host, port) + ": " + gai_strerror(rc));
  return res;
}

Expected<std::string> serve(const std::string &host, uint16_t port, uint32_t world, const std::string &payload,
                            std::chrono::milliseconds timeout) {
  auto res = resolve(host, port, true);
  if (!res) return res.error();
  Fd listener;
  int lastErr = 0;
  for (addrinfo *a = *res; a && listener.fd < 0; a = a->ai_next) {
    Fd s(socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol));
    if (s.fd < 0) {
      lastErr = errno;
      continue;
    }
    const int one = 1;
    setsockopt(s.fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(s.fd, a->ai_addr, a->ai_addrlen) == 0 && listen(s.fd, int(std::min<uint32_t>(world, 1024))) == 0)
      std::swap(listener.fd, s.fd);
    else
      lastErr = errno;
  }
  freeaddrinfo(*res);
  if (listener.fd < 0)
    return makeIoError(lastErr, "rendezvous: rank 0 cannot listen on " + where(host, port));
  const auto deadline = Clock::now() + timeout;
  const std::string expect = "cgraph-rendezvous 1 " + std::to_string(world) + " ";
  std::set<uint32_t> served;
  while (served.size() + 1 < world) {
    pollfd pf{listener.fd, POLLIN, 0};
    if (poll(&pf, 1, msLeft(deadline)) <= 0)
      return timeoutError("rank 0 served " + std::to_string(served.size()) + " of " + std::to_string(world - 1) +
                              " ranks on " + where(host, port),
                          timeout);
    Fd c(accept4(listener.fd, nullptr, nullptr, SOCK_CLOEXEC));
    if (c.fd < 0) continue;
    std::string hello;
    if (!readLine(c.fd, hello, std::min(deadline, Clock::now() + std::chrono::seconds(5)))) continue;
    if (hello.compare(0, expect.size(), expect) != 0) continue;
    char *end = nullptr;
    const unsigned long r = std::strtoul(hello.c_str() + expect.size(), &end, 10);
    if (!end || *end || r == 0 || r >= world) continue;
    const uint32_t n = uint32_t(payload.size());
    const char len[4] = {char(n), char(n >> 8), char(n >> 16), char(n >> 24)};
    std::string reply(len, 4);
    reply += payload;
    if (transfer(c.fd, reply.data(), reply.size(), true, deadline)) served.insert(uint32_t(r));
  }
  return payload;
}

Expected<std::string> fetch(const std::string &host, uint16_t port, uint32_t rank, uint32_t world,
                            std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  const std::string hello = "cgraph-rendezvous 1 " + std::to_string(world) + " " + std::to_string(rank) + "\n";
  std::string lastWhy = "no answer";
  while (Clock::now() < deadline) {
    auto res = resolve(host, port, false);
    if (!res) return res.error();
    for (addrinfo *a = *res; a; a = a->ai_next) {
      Fd s(socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol));
      if (s.fd < 0) continue;
      if (connect(s.fd, a->ai_addr, a->ai_addrlen) != 0) {
        lastWhy = std::strerror(errno); // rank 0 not listening yet: try again
        continue;
      }
      std::string h = hello;
      char len[4];
      if (!transfer(s.fd, h.data(), h.size(), true, deadline) || !transfer(s.fd, len, 4, false, deadline)) {
        lastWhy = "the connection closed";
        continue;
      }
      const uint32_t n = uint32_t(uint8_t(len[0])) | uint32_t(uint8_t(len[1])) << 8 |
                         uint32_t(uint8_t(len[2])) << 16 | uint32_t(uint8_t(len[3])) << 24;
      if (n > 1 << 16) {
        freeaddrinfo(*res);
        return makeError("rendezvous: " + where(host, port) + " answered with " + std::to_string(n) +
                         " bytes (not a cgraph rendezvous)");
      }
      std::string payload(n, '\0');
      if (transfer(s.fd, payload.data(), n, false, deadline)) {
        freeaddrinfo(*res);
        return payload;
      }
      lastWhy = "the connection closed";
    }
    freeaddrinfo(*res);
    std::this_thread::sleep_for(std::chrono::milliseconds(std::min(50, msLeft(deadline))));
  }
  return timeoutError("rank " + std::to_string(rank) + ": nothing from rank 0 at " + where(host, port) + " (" +
                          lastWhy + ")",
                      timeout);
}

} // namespace

Expected<std::string> tcpRendezvous(const std::string &host, uint16_t port, uint32_t rank, uint32_t world,
                                    const std::string &payload, std::chrono::milliseconds timeout) {
  if (world == 0 || rank >= world)
    return makeError("rendezvous: rank " + std::to_string(rank) + " is not a rank of a world of " +
                     std::to_string(world));
  if (world == 1) return payload;
  return rank == 0 ? serve(host, port, world, payload, timeout) : fetch(host, port, rank, world, timeout);
}

Expected<NcclUniqueId> exchangeUniqueIdTcp(const std::string &host, uint16_t port, uint32_t rank, uint32_t world,
                                           std::chrono::milliseconds timeout) {
  NcclUniqueId id;
  std::string mine;
  if (rank == 0) {
    auto made = ncclNewUniqueId();
    if (!made) return made.error();
    id = *made;
    mine.assign(id.bytes.data(), id.bytes.size());
  }
  auto got = tcpRendezvous(host, port, rank, world, mine, timeout);
  if (!got) return got.error().withContext("nccl unique id");
  if (got->size() != id.bytes.size())
    return makeError("nccl unique id: rank 0 sent " + std::to_string(got->size()) + " bytes, not " +
                     std::to_string(id.bytes.size()));
  std::memcpy(id.bytes.data(), got->data(), id.bytes.size());
  return id;
}

} // namespace cgraph::comm
