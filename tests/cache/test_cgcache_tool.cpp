// End to end: 8 processes share one cache directory, then the real cgcache binary
// (CGCACHE_PATH) inspects, verifies and evicts it.
#include "cgraph/cache/persistent_cache.h"
#include "test_util.h"

#include <catch2/catch.hpp>

#include <array>
#include <cstdio>
#include <fstream>
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

RunResult runTool(const std::string &args) {
  RunResult r;
  std::string cmd = std::string(CGCACHE_PATH) + " " + args + " 2>&1";
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
  RunResult verify = runTool("-d " + dir.path() + " --verify");
  INFO(verify.out);
  CHECK(verify.status == 0);
  CHECK(contains(verify.out, " 0 bad"));

  RunResult stats = runTool("-d " + dir.path() + " -s --json");
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
  const std::string d = "-d " + dir.path();

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
  std::ifstream conf(dir.path() + "/cgcache.conf");
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
  std::string bin = dir.path() + "/" + (*entries)[0].id + ".bin";
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
