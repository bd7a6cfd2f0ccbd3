// End to end: 8 processes share one cache directory, then the real cgcache binary
// (CGCACHE_PATH) inspects, verifies and evicts it.
#include "cgraph/cache/persistent_cache.h"
#include "test_util.h"

#include <catch2/catch.hpp>

#include <array>
#include <cstdio>
#include <fstream>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace cgraph;
using namespace cgraph::cache;
using namespace cgraph::cache::test;

namespace {

struct RunResult {
  int status = -1;
  std::string out;
};

// `prefix` is shell text put before the command (limits, a timeout).
RunResult runTool(const std::string &args, const std::string &prefix = "") {
  RunResult r;
  std::string cmd = prefix + std::string(CGCACHE_PATH) + " " + args + " 2>&1";
  FILE *p = ::popen(cmd.c_str(), "r");
  REQUIRE(p);
  std::array<char, 4096> buf;
  size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  int st = ::pclose(p);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

bool contains(const std::string &s, const std::string &part) { return s.find(part) != std::string::npos; }

} // namespace

TEST_CASE("cgcache: 8 processes x 200 inserts and lookups on one directory, then --verify",
          "[cache][tool][processes]") {
  TempDir dir;
  constexpr int kProcesses = 8, kOps = 200, kKeys = 64;
  std::vector<pid_t> children;
  for (int p = 0; p < kProcesses; ++p) {
    pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      CacheConfig config = testConfig(dir.path());
      config.trace = false;
      config.maxSize = 150 * 1024; // small: evictions run while others insert and read
      PersistentCache cache(config, silentSink());
      int wrong = 0;
      for (int i = 0; i < kOps; ++i) {
        int k = (i * 13 + p * 7) % kKeys;
        CacheKey key = makeKey(k, k % 2 ? "Device A" : "Device B");
        std::vector<uint8_t> expect = makePayload(k, 4000 + static_cast<size_t>(k) * 37);
        auto r = cache.load(key);
        if (!r) ++wrong;
        else if (!r->has_value()) cache.store(key, expect.data(), expect.size(), "elf-relocatable");
        else if (**r != expect) ++wrong;
      }
      ::_exit(wrong == 0 && cache.counters().badEntries == 0 ? 0 : 1);
    }
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    REQUIRE(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
  }
  RunResult verify = runTool("-d " + dir.str() + " --verify");
  INFO(verify.out);
  CHECK(verify.status == 0);
  CHECK(contains(verify.out, " 0 bad"));

  RunResult stats = runTool("-d " + dir.str() + " -s --json");
  INFO(stats.out);
  REQUIRE(stats.status == 0);
  // Every lookup of every process was counted once, in the shared stats file.
  PersistentCache cache(testConfig(dir.path()), silentSink());
  auto s = cache.stats();
  REQUIRE(s.ok());
  CHECK(s->hits + s->misses == kProcesses * kOps);
  CHECK(s->hits > 0);
  CHECK(s->evictions > 0);
  CHECK(s->devices.size() == 2);
  CHECK(contains(stats.out, "\"hits\": " + std::to_string(s->hits)));
}

TEST_CASE("cgcache: stats, list, show, max size, eviction, clear, verify", "[cache][tool]") {
  TempDir dir;
  {
    PersistentCache cache(testConfig(dir.path()), silentSink());
    for (int i = 0; i < 5; ++i) {
      auto v = makePayload(i, 10000);
      cache.store(makeKey(i), v.data(), v.size(), "elf-relocatable");
      REQUIRE(cache.load(makeKey(i))->has_value());
    }
  }
  const std::string d = "-d " + dir.str();

  RunResult version = runTool("--version");
  CHECK(version.status == 0);
  CHECK(contains(version.out, "cgcache 0.1.0"));
  RunResult help = runTool("--help");
  CHECK(help.status == 0);
  CHECK(contains(help.out, "--evict-older-than"));
  CHECK(runTool("--bogus").status == 2);

  RunResult stats = runTool(d + " -s");
  INFO(stats.out);
  CHECK(stats.status == 0);
  CHECK(contains(stats.out, "entries           5"));
  CHECK(contains(stats.out, "hits              5"));
  CHECK(contains(stats.out, "cpu 'Test Device'"));

  RunResult list = runTool(d + " list");
  INFO(list.out);
  CHECK(list.status == 0);
  CHECK(contains(list.out, "kernels: k3"));
  std::string firstId = list.out.substr(0, list.out.find(' '));

  RunResult show = runTool(d + " show " + firstId);
  INFO(show.out);
  CHECK(show.status == 0);
  CHECK(contains(show.out, "binary kind       elf-relocatable"));
  CHECK(contains(show.out, "binary size       10000 bytes"));
  CHECK(contains(show.out, "spec constants    \\x01\\x00\\x02"));
  CHECK(runTool(d + " show nosuchentry").status == 1);

  RunResult listJson = runTool(d + " list --json");
  CHECK(contains(listJson.out, "\"binary_kind\": \"elf-relocatable\""));

  RunResult maxSize = runTool(d + " -M 2G");
  CHECK(maxSize.status == 0);
  CHECK(contains(runTool(d + " -s").out, "max size          2.0 GiB"));
  std::ifstream conf(dir.str() + "/cgcache.conf");
  std::string confText((std::istreambuf_iterator<char>(conf)), std::istreambuf_iterator<char>());
  CHECK(contains(confText, "max_size = 2147483648"));

  RunResult dryEvict = runTool(d + " --evict-to 25K --dry-run");
  INFO(dryEvict.out);
  CHECK(dryEvict.status == 0);
  CHECK(contains(dryEvict.out, "would evict: 3 entries"));
  CHECK(contains(runTool(d + " -s").out, "entries           5"));
  RunResult evict = runTool(d + " --evict-to 25K");
  CHECK(contains(evict.out, "evicted: 3 entries"));
  CHECK(contains(runTool(d + " -s").out, "entries           2"));

  CHECK(contains(runTool(d + " --evict-older-than 1d").out, "evicted: 0 entries"));
  CHECK(runTool(d + " --evict-older-than 1y").status == 2);

  // Damage one entry: --verify fails, --verify --fix --dry-run keeps it, --fix removes it.
  PersistentCache cache(testConfig(dir.path()), silentSink());
  auto entries = cache.list();
  REQUIRE(entries.ok());
  REQUIRE(entries->size() == 2);
  std::string bin = dir.str() + "/" + (*entries)[0].id + ".bin";
  std::filesystem::resize_file(bin, 500);
  RunResult bad = runTool(d + " --verify");
  INFO(bad.out);
  CHECK(bad.status == 1);
  CHECK(contains(bad.out, "1 bad"));
  CHECK(runTool(d + " --verify --fix --dry-run").status == 1);
  CHECK(runTool(d + " --verify --fix").status == 0);
  CHECK(runTool(d + " --verify").status == 0);

  CHECK(contains(runTool(d + " -C --dry-run").out, "would remove: 1 entries"));
  CHECK(contains(runTool(d + " -C").out, "removed: 1 entries"));
  CHECK(contains(runTool(d + " -s").out, "entries           0"));
}

TEST_CASE("cgcache: hostile cache contents", "[cache][tool][hostile]") {
  TempDir dir, outside;
  const std::string root = dir.sub("cache");
  CacheKey key = makeKey(1);
  {
    PersistentCache cache(testConfig(root), silentSink());
    auto v = makePayload(1, 3000);
    cache.store(key, v.data(), v.size(), "elf-relocatable");
  }
  PersistentCache cache(testConfig(root), silentSink());
  const std::string leaf = root + "/" + cache.leafDirectory(key);
  const std::string d = "-d " + root;
  // A guard against a hang (a killed tool exits 137 and fails the checks) and a 1 GiB
  // address space, in which reading a huge entry whole would fail.
  auto guarded = [](const std::string &args) {
    return runTool(args, kSanitizedBuild ? "timeout -s KILL 120 " : "ulimit -v 1048576; timeout -s KILL 120 ");
  };

  SECTION("a FIFO as .bin") {
    REQUIRE(::unlink((leaf + "/0.bin").c_str()) == 0);
    REQUIRE(::mkfifo((leaf + "/0.bin").c_str(), 0644) == 0);
    RunResult v = guarded(d + " --verify");
    INFO(v.out);
    CHECK(v.status == 1);
    CHECK(contains(v.out, "not a regular file"));
    RunResult f = guarded(d + " --verify --fix");
    INFO(f.out);
    CHECK(f.status == 0);
    CHECK(contains(f.out, "removed 1"));
    CHECK_FALSE(std::filesystem::exists(std::filesystem::symlink_status(leaf + "/0.bin")));
  }
  SECTION("a 4 GiB sparse .bin under a 1 GiB address space") {
    std::filesystem::resize_file(leaf + "/0.bin", 4ull << 30);
    RunResult v = guarded(d + " --verify");
    INFO(v.out);
    CHECK(v.status == 1);
    CHECK(contains(v.out, "more than the limit"));
  }
  SECTION("a symbolic link to a directory outside the root") {
    for (const char *name : {"0.bin", "0.src", "7.bin.tmp.1.2"}) {
      std::ofstream f(outside.str() + "/" + name);
      f << "not the cache's";
    }
    std::filesystem::remove_all(leaf);
    std::filesystem::create_symlink(outside.path(), leaf);
    RunResult v = guarded(d + " --verify");
    INFO(v.out);
    CHECK(v.status == 1);
    CHECK(contains(v.out, "symbolic link"));
    RunResult c = guarded(d + " -C");
    INFO(c.out);
    CHECK(c.status == 0);
    RunResult f = guarded(d + " --verify --fix");
    INFO(f.out);
    CHECK(f.status == 0);
    for (const char *name : {"0.bin", "0.src", "7.bin.tmp.1.2"})
      CHECK(std::filesystem::exists(outside.str() + "/" + name));
    CHECK_FALSE(std::filesystem::exists(std::filesystem::symlink_status(leaf)));
  }
  SECTION("a directory as .src is reported, not removed") {
    std::filesystem::remove(leaf + "/0.src");
    std::filesystem::create_directory(leaf + "/0.src");
    RunResult f = guarded(d + " --verify --fix");
    INFO(f.out);
    CHECK(f.status == 1);
    CHECK(contains(f.out, "not removed: "));
    CHECK(contains(f.out, "removed 0"));
    CHECK(std::filesystem::is_directory(leaf + "/0.src"));
  }
  SECTION("durations out of range are usage errors naming the flag") {
    RunResult big = guarded(d + " --evict-older-than 999999999999999w");
    INFO(big.out);
    CHECK(big.status == 2);
    CHECK(contains(big.out, "--evict-older-than"));
    CHECK(contains(big.out, "too large"));
    RunResult zero = guarded(d + " --evict-older-than 0");
    INFO(zero.out);
    CHECK(zero.status == 2);
    CHECK(contains(zero.out, "--evict-older-than"));
    CHECK(guarded(d + " --evict-to 99999999999999999999T").status == 2);
  }
}
