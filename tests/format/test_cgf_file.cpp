// File I/O: atomic writes, failures that leave the old file untouched, mmap reads.
#include "cgf_test_util.h"

#include <catch2/catch.hpp>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <sys/resource.h>
#include "../common/temp_dir.h"

#include <sys/stat.h>
#include <unistd.h>

using namespace cgftest;

namespace {

std::vector<uint8_t> slurp(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

size_t countEntries(const std::string &dir) {
  size_t n = 0;
  for (auto it = std::filesystem::directory_iterator(dir); it != std::filesystem::directory_iterator(); ++it) ++n;
  return n;
}

} // namespace

TEST_CASE("write then read a file", "[format]") {
  cgraph::test::TempDir tmp("cgraph-format-file");
  const std::string dir = tmp.str();
  std::string path = dir + "/g.cgf";
  Graph g = makeFullGraph();
  REQUIRE_FALSE(writeCgfFile(g, path));
  auto back = readCgfFile(path);
  REQUIRE(back.ok());
  CHECK(diffGraphs(g, *back) == "");
  CHECK(slurp(path) == *writeCgf(g));
  CHECK(countEntries(dir) == 1); // no temporary left behind
  // Overwriting replaces the file.
  Graph small;
  small.name = "small";
  REQUIRE_FALSE(writeCgfFile(small, path));
  CHECK(readCgfFile(path)->name == "small");
}

TEST_CASE("file read errors name the path", "[format]") {
  cgraph::test::TempDir tmp("cgraph-format-file");
  const std::string dir = tmp.str();
  auto r = readCgfFile(dir + "/missing.cgf");
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().message() == "cannot open '" + dir + "/missing.cgf': No such file or directory");
  { std::ofstream(dir + "/empty.cgf"); }
  r = readCgfFile(dir + "/empty.cgf");
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().message() == dir + "/empty.cgf: file truncated: the header needs 64 bytes, got 0");
  r = readCgfFile(dir);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().message() == "'" + dir + "' is not a regular file");
}

TEST_CASE("a failed write leaves the existing file untouched", "[format]") {
  cgraph::test::TempDir tmp("cgraph-format-file");
  const std::string dir = tmp.str();
  std::string path = dir + "/g.cgf";
  Graph g = makeFullGraph();
  REQUIRE_FALSE(writeCgfFile(g, path));
  std::vector<uint8_t> before = slurp(path);

  SECTION("missing directory") {
    Error e = writeCgfFile(g, dir + "/nope/g.cgf");
    REQUIRE(e);
    CHECK(e.message().find("cannot create a temporary file in '" + dir + "/nope'") == 0);
    CHECK(e.message().find("No such file or directory") != std::string::npos);
  }
  SECTION("directory is a regular file") {
    Error e = writeCgfFile(g, path + "/g.cgf");
    REQUIRE(e);
    CHECK(e.message() == "cannot create a temporary file in '" + path + "' for '" + path +
                             "/g.cgf': Not a directory");
  }
  SECTION("the disk fills up mid-write (RLIMIT_FSIZE -> EFBIG, like ENOSPC)") {
    Graph big = g;
    big.slots[1].data.assign(big.slots[1].data.size(), 0);
    for (size_t i = 0; i < big.slots[1].data.size(); ++i) big.slots[1].data[i] = uint8_t(i * 2654435761u >> 13);
    WriteOptions wo;
    wo.compressThreshold = UINT64_MAX;
    struct rlimit old;
    REQUIRE(getrlimit(RLIMIT_FSIZE, &old) == 0);
    auto oldHandler = std::signal(SIGXFSZ, SIG_IGN);
    struct rlimit lim = old;
    lim.rlim_cur = 64 * 1024;
    REQUIRE(setrlimit(RLIMIT_FSIZE, &lim) == 0);
    Error e = writeCgfFile(big, path, wo);
    setrlimit(RLIMIT_FSIZE, &old);
    std::signal(SIGXFSZ, oldHandler);
    REQUIRE(e);
    CHECK(e.message().find("cannot write '" + path + "'") == 0);
    CHECK(e.message().find("File too large") != std::string::npos);
  }
  CHECK(slurp(path) == before);
  CHECK(countEntries(dir) == 1);
}
