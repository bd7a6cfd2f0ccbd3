// lib/comm/nccl where no GPU is needed: unique ids as text, the id-file rendezvous seen
// from a rank other than 0 (the file appears late, never, or holds no id), and the
// clear error a process without NCCL gets. The collectives themselves run on a GPU
// (tests/cuda/test_cuda_collectives.cpp).
#include "cgraph/comm/nccl.h"

#include "../common/temp_dir.h"

#include <catch2/catch.hpp>

#include <chrono>
#include <fstream>
#include <thread>

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
