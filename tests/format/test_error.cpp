// Error values: codes survive context, I/O failures carry errno, and file functions
// report the code a caller can branch on.
#include "cgraph/error.h"
#include "cgraph/format/reader.h"

#include <catch2/catch.hpp>

#include <cerrno>
#include <string>

using namespace cgraph;

TEST_CASE("an error keeps its code and errno through added context", "[format][error]") {
  Error e = makeError(ErrorCode::OutOfMemory, "allocating 4096 bytes");
  Error c = e.withContext("slot 'x'").withContext("node 'k'");
  CHECK(c.failed());
  CHECK(c.code() == ErrorCode::OutOfMemory);
  CHECK(c.message() == "node 'k': slot 'x': allocating 4096 bytes");
  Error io = makeIoError(ENOSPC, "cannot write 'a.cgf'").withContext("cgc");
  CHECK(io.code() == ErrorCode::Io);
  CHECK(io.sysErrno() == ENOSPC);
  CHECK(makeError("a plain error").code() == ErrorCode::Invalid);
  CHECK(std::string(errorCodeName(ErrorCode::DeviceLost)) == "device_lost");
  CHECK(Error::success().withContext("nothing").failed() == false);
  Expected<int> x = makeError(ErrorCode::Unsupported, "no such thing here");
  CHECK(x.error().code() == ErrorCode::Unsupported);
}

TEST_CASE("reading a missing .cgf is an I/O error with errno ENOENT", "[format][error]") {
  auto g = readCgfFile("/nonexistent-dir-for-cgraph-tests/x.cgf");
  REQUIRE_FALSE(g);
  CHECK(g.error().code() == ErrorCode::Io);
  CHECK(g.error().sysErrno() == ENOENT);
}
