// lib/comm/nccl where no GPU is needed: unique ids as text, the id-file rendezvous seen
// from a rank other than 0 (the file appears late, never, or holds no id), the TCP
// rendezvous between threads over loopback, and the clear error a process without NCCL
// gets. The collectives themselves run on a GPU
// (tests/cuda/test_cuda_collectives.cpp).
#include "cgraph/comm/nccl.h"

#include "../common/temp_dir.h"

#include <catch2/catch.hpp>

#include <chrono>
#include <fstream>
#include <thread>
#include <vector>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

using namespace cgraph;
using namespace std::chrono_literals;

namespace {

comm::NcclUniqueId someId() {
  comm::NcclUniqueId id;
  for (size_t i = 0; i < id.bytes.size(); ++i) id.bytes[i] = char(i * 37 + 5);
  return id;
}

} // namespace

TEST_CASE("nccl unique ids: hex text and back", "[comm][nccl]") {
  const comm::NcclUniqueId id = someId();
  const std::string hex = comm::toHex(id);
  CHECK(hex.size() == 256);
  CHECK(hex.substr(0, 6) == "052a4f");
  auto back = comm::uniqueIdFromHex(hex);
  REQUIRE(back.ok());
  CHECK(back->bytes == id.bytes);
  auto upper = comm::uniqueIdFromHex("052A4F" + hex.substr(6));
  REQUIRE(upper.ok());
  CHECK(upper->bytes == id.bytes);
  auto shortId = comm::uniqueIdFromHex("abc");
  REQUIRE_FALSE(shortId.ok());
  CHECK(shortId.error().message() == "an NCCL unique id is 256 hex digits, not 3 characters");
  auto bad = comm::uniqueIdFromHex("zz" + hex.substr(2));
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().message().find("character 0 is not one") != std::string::npos);
}

TEST_CASE("nccl id file: a rank other than 0 waits for the file, then reads it", "[comm][nccl]") {
  test::TempDir dir("cgraph-nccl");
  const std::string path = (dir.path() / "world.id").string();
  const comm::NcclUniqueId id = someId();
  std::thread writer([&] {
    std::this_thread::sleep_for(100ms);
    std::ofstream(path + ".tmp") << comm::toHex(id) << "\n";
    std::filesystem::rename(path + ".tmp", path);
  });
  auto got = comm::exchangeUniqueIdFile(path, 1, 10s);
  writer.join();
  REQUIRE(got.ok());
  CHECK(got->bytes == id.bytes);
}

TEST_CASE("nccl id file: no file in time, or a file without an id, is an error", "[comm][nccl]") {
  test::TempDir dir("cgraph-nccl");
  const std::string path = (dir.path() / "none.id").string();
  const auto t0 = std::chrono::steady_clock::now();
  auto late = comm::exchangeUniqueIdFile(path, 3, 150ms);
  REQUIRE_FALSE(late.ok());
  CHECK(late.error().code() == ErrorCode::Timeout);
  CHECK(late.error().message() == "nccl: rank 3: no unique id at " + path + " after 150 ms (rank 0 writes it)");
  CHECK(std::chrono::steady_clock::now() - t0 >= 140ms);
  std::ofstream(path) << "not an id\n";
  auto junk = comm::exchangeUniqueIdFile(path, 1, 1s);
  REQUIRE_FALSE(junk.ok());
  CHECK(junk.error().code() == ErrorCode::Invalid);
  CHECK(junk.error().message().find(path) != std::string::npos);
}

TEST_CASE("nccl: without libnccl.so.2 every entry point says so", "[comm][nccl]") {
  if (!comm::ncclAvailable()) {
    WARN("NCCL and a CUDA driver are present here: the missing-library errors are not exercised");
    CHECK(comm::ncclVersion() >= 20900);
    return;
  }
  const Error why = comm::ncclAvailable();
  CHECK(why.code() == ErrorCode::Unsupported);
  const bool named = why.message().find("libnccl.so.2 not found") != std::string::npos ||
                     why.message().find("libcuda.so.1 not found") != std::string::npos;
  CHECK(named);
  CHECK(comm::ncclVersion() == 0);
  auto id = comm::ncclNewUniqueId();
  REQUIRE_FALSE(id.ok());
  CHECK(id.error().message() == why.message());
  auto c = comm::makeNcclCommunicator(someId(), 0, 2, 0, 1s);
  REQUIRE_FALSE(c.ok());
  CHECK(c.error().code() == ErrorCode::Unsupported);
  auto w = comm::wrapNcclCommunicator(nullptr);
  REQUIRE_FALSE(w.ok());
  // Rank 0 of an id-file world makes the id: the same error, and no file is left.
  test::TempDir dir("cgraph-nccl");
  auto r0 = comm::exchangeUniqueIdFile((dir.path() / "w.id").string(), 0, 1s);
  REQUIRE_FALSE(r0.ok());
  CHECK_FALSE(std::filesystem::exists(dir.path() / "w.id"));
}

namespace {

// A TCP port nothing listens on right now (bound to port 0, then released).
uint16_t freePort() {
  const int s = socket(AF_INET, SOCK_STREAM, 0);
  REQUIRE(s >= 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(bind(s, reinterpret_cast<sockaddr *>(&a), sizeof a) == 0);
  socklen_t len = sizeof a;
  REQUIRE(getsockname(s, reinterpret_cast<sockaddr *>(&a), &len) == 0);
  close(s);
  return ntohs(a.sin_port);
}

} // namespace

TEST_CASE("tcp rendezvous: rank 0's payload reaches every rank, whoever starts first", "[comm][rendezvous]") {
  const uint16_t port = freePort();
  const std::string payload(128, 'x');
  const uint32_t world = 4;
  std::vector<Expected<std::string>> got(world, makeError("not run"));
  std::vector<std::thread> ranks;
  for (uint32_t r = 1; r < world; ++r) // the others wait for rank 0
    ranks.emplace_back([&, r] { got[r] = comm::tcpRendezvous("127.0.0.1", port, r, world, "", 10s); });
  std::this_thread::sleep_for(100ms);
  // A stray connection that does not speak the protocol is dropped, not served.
  std::thread stray([port] {
    std::this_thread::sleep_for(50ms);
    const int s = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(s, reinterpret_cast<sockaddr *>(&a), sizeof a) == 0) (void)!write(s, "GET / HTTP/1.0\n", 15);
    close(s);
  });
  got[0] = comm::tcpRendezvous("127.0.0.1", port, 0, world, payload, 10s);
  for (std::thread &t : ranks) t.join();
  stray.join();
  for (uint32_t r = 0; r < world; ++r) {
    INFO("rank " << r << ": " << (got[r] ? std::string() : got[r].error().message()));
    REQUIRE(got[r]);
    CHECK(*got[r] == payload);
  }
}

TEST_CASE("tcp rendezvous: a missing rank 0 or a missing rank is a timeout naming it", "[comm][rendezvous]") {
  const uint16_t port = freePort();
  auto alone = comm::tcpRendezvous("127.0.0.1", port, 1, 2, "", 300ms);
  REQUIRE_FALSE(alone);
  CHECK(alone.error().code() == ErrorCode::Timeout);
  CHECK(alone.error().message().find("rank 1: nothing from rank 0 at 127.0.0.1:" + std::to_string(port)) !=
        std::string::npos);

  const uint16_t port2 = freePort();
  Expected<std::string> one = makeError("not run");
  std::thread r1([&] { one = comm::tcpRendezvous("127.0.0.1", port2, 1, 3, "", 5s); });
  auto served = comm::tcpRendezvous("127.0.0.1", port2, 0, 3, "id", 1500ms);
  r1.join();
  REQUIRE(one);
  CHECK(*one == "id");
  REQUIRE_FALSE(served);
  CHECK(served.error().code() == ErrorCode::Timeout);
  CHECK(served.error().message().find("rank 0 served 1 of 2 ranks") != std::string::npos);

  auto single = comm::tcpRendezvous("127.0.0.1", port2, 0, 1, "id", 10ms);
  REQUIRE(single);
  CHECK(*single == "id");
  auto outside = comm::tcpRendezvous("127.0.0.1", port2, 2, 2, "", 10ms);
  REQUIRE_FALSE(outside);
  CHECK(outside.error().message().find("not a rank of a world of 2") != std::string::npos);
}
