// Built-in and plugin host tasks, and the allowed-directory policy.
#include "../common/temp_dir.h"

#include "cgraph/graph/builder.h"
#include "cgraph/runtime/host_tasks.h"
#include "cgraph/runtime/npy.h"
#include "cgraph/runtime/paths.h"

#include <catch2/catch.hpp>
#include <xxhash.h>

#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace cgraph;
using namespace cgraph::rt;
using cgraph::test::TempDir;
namespace fs = std::filesystem;

namespace {

struct HostFixture {
  TempDir dir;
  Graph g;
  HostPolicy policy;
  std::vector<std::string> lines;
  std::vector<std::vector<uint8_t>> memory;

  HostFixture() {
    policy.allowedDirs = {dir.str()};
    policy.baseDir = dir.str();
    policy.output = [this](const std::string &l) { lines.push_back(l); };
    addSlot("a", {1.0f, 2.0f, 3.0f, 4.0f});
    addSlot("b", {1.0f, 2.0f, 3.5f, 4.0f});
  }
  uint32_t addSlot(const std::string &name, std::vector<float> values) {
    Slot s;
    s.name = name;
    s.size = values.size() * 4;
    g.slots.push_back(s);
    std::vector<uint8_t> bytes(s.size);
    std::memcpy(bytes.data(), values.data(), bytes.size());
    memory.push_back(bytes);
    return uint32_t(g.slots.size() - 1);
  }
  uint32_t addHost(const std::string &name, const std::string &op, std::vector<Arg> args,
                   const std::string &library = "") {
    Node n;
    n.name = name;
    n.kind = NodeKind::Host;
    n.host.op = op;
    n.host.library = library;
    n.args = std::move(args);
    g.nodes.push_back(n);
    return uint32_t(g.nodes.size() - 1);
  }
  std::vector<HostSpan> spans() {
    std::vector<HostSpan> s;
    for (auto &m : memory) s.push_back({m.data(), m.size()});
    return s;
  }
  Expected<std::unique_ptr<HostTasks>> prepare() { return HostTasks::prepare(g, policy); }
  // Prepares and runs node `n`; returns the error message ("" on success).
  std::string run(uint32_t n) {
    auto t = prepare();
    if (!t) return "prepare: " + t.error().message();
    Error e = (*t)->run(n, spans(), {});
    return e ? e.message() : "";
  }
  std::vector<float> floats(uint32_t slot) {
    std::vector<float> v(memory[slot].size() / 4);
    std::memcpy(v.data(), memory[slot].data(), memory[slot].size());
    return v;
  }
};

std::string slurp(const fs::path &p) {
  std::ifstream in(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

size_t countEntries(const fs::path &dir) {
  size_t n = 0;
  for (auto it = fs::directory_iterator(dir); it != fs::directory_iterator(); ++it) ++n;
  return n;
}

// Runs `body` in a forked child whose file size limit is `limit` bytes, with SIGXFSZ
// ignored (so a write past the limit fails with EFBIG, as on a full disk, instead of
// killing the process). Returns the child's exit status: body's result, or -1 when
// the child did not exit normally.
int withFileSizeLimit(rlim_t limit, const std::function<int()> &body) {
  std::fflush(nullptr);
  pid_t pid = fork();
  if (pid == 0) {
    std::signal(SIGXFSZ, SIG_IGN);
    struct rlimit lim;
    getrlimit(RLIMIT_FSIZE, &lim);
    lim.rlim_cur = limit;
    if (setrlimit(RLIMIT_FSIZE, &lim) != 0) _exit(100);
    _exit(body());
  }
  int status = 0;
  if (pid < 0 || waitpid(pid, &status, 0) != pid) return -2;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string hex(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

} // namespace

TEST_CASE("checksum prints xxh3 and the sum", "[runtime][host]") {
  HostFixture f;
  uint32_t n0 = f.addHost("c0", "checksum", {Arg::slot(0)});
  uint32_t n1 = f.addHost("c1", "checksum", {Arg::slot(0, 4), Arg::string("i32")});
  REQUIRE(f.run(n0) == "");
  REQUIRE(f.run(n1) == "");
  REQUIRE(f.lines.size() == 2);
  CHECK(f.lines[0] == "checksum a: xxh3=" + hex(XXH3_64bits(f.memory[0].data(), 16)) +
                          " sum=10 (4 x f32)");
  int32_t ints[3];
  std::memcpy(ints, f.memory[0].data() + 4, 12);
  CHECK(f.lines[1] == "checksum a: xxh3=" + hex(XXH3_64bits(f.memory[0].data() + 4, 12)) +
                          " sum=" + std::to_string(int64_t(ints[0]) + ints[1] + ints[2]) +
                          " (3 x i32)");
}

TEST_CASE("print shows the first elements", "[runtime][host]") {
  HostFixture f;
  uint32_t n0 = f.addHost("p0", "print", {Arg::slot(1)});
  uint32_t n1 = f.addHost("p1", "print", {Arg::slot(1), Arg::scalar(ScalarType::I32, 2)});
  uint32_t n2 = f.addHost("p2", "print", {Arg::slot(1), Arg::string("u8"), Arg::string("3")});
  REQUIRE(f.run(n0) == "");
  REQUIRE(f.run(n1) == "");
  REQUIRE(f.run(n2) == "");
  CHECK(f.lines[0] == "print b: 1 2 3.5 4 (4 x f32)");
  CHECK(f.lines[1] == "print b: 1 2 ... (4 x f32)");
  CHECK(f.lines[2] == "print b: 0 0 128 ... (16 x u8)");
}

TEST_CASE("write_file and read_file move slot bytes through files", "[runtime][host]") {
  HostFixture f;
  uint32_t w = f.addHost("w", "write_file", {Arg::slot(1), Arg::string("out.bin")});
  uint32_t wn = f.addHost("wn", "write_file", {Arg::slot(1), Arg::string("sub/../out.npy"), Arg::string("f32")});
  uint32_t r = f.addHost("r", "read_file", {Arg::slot(0), Arg::string("out.bin")});
  uint32_t rn = f.addHost("rn", "read_file", {Arg::slot(0), Arg::string("out.npy")});
  fs::create_directories(f.dir.path() / "sub");
  REQUIRE(f.run(w) == "");
  REQUIRE(f.run(wn) == "");
  Expected<NpyArray> npy = readNpyFile(f.dir.str("out.npy"));
  REQUIRE(npy.ok());
  CHECK(npy->type == ScalarType::F32);
  CHECK(npy->shape == std::vector<uint64_t>{4});
  CHECK(npy->data == f.memory[1]);
  REQUIRE(f.run(r) == "");
  CHECK(f.floats(0) == std::vector<float>{1, 2, 3.5f, 4});
  f.memory[0].assign(16, 0);
  REQUIRE(f.run(rn) == "");
  CHECK(f.floats(0) == std::vector<float>{1, 2, 3.5f, 4});
}

TEST_CASE("only read_file (and plugins) write their slots; the others leave the bytes alone", "[runtime][host]") {
  HostFixture f;
  uint32_t w = f.addHost("w", "write_file", {Arg::slot(1), Arg::string("ro.bin")});
  uint32_t c = f.addHost("c", "checksum", {Arg::slot(0)});
  uint32_t p = f.addHost("p", "print", {Arg::slot(0), Arg::string("f32")});
  uint32_t cmp = f.addHost("cmp", "compare", {Arg::slot(0), Arg::slot(0)});
  uint32_t r = f.addHost("r", "read_file", {Arg::slot(0), Arg::string("ro.bin")});
  auto t = f.prepare();
  REQUIRE(t.ok());
  for (uint32_t n : {w, c, p, cmp}) {
    INFO(f.g.nodes[n].name);
    CHECK_FALSE((*t)->writesSlots(n));
    const auto before = f.memory;
    REQUIRE(f.run(n) == "");
    CHECK(f.memory == before); // what writesSlots promises the GPU backends
  }
  CHECK((*t)->writesSlots(r));
  REQUIRE(f.run(r) == "");
  CHECK(f.floats(0) == std::vector<float>{1, 2, 3.5f, 4}); // slot b's bytes, read back into a
  CHECK_FALSE((*t)->writesSlots(uint32_t(f.g.nodes.size()))); // not a node
}

TEST_CASE("read_file refuses a file that is too small", "[runtime][host]") {
  HostFixture f;
  REQUIRE_FALSE(writeBinaryFile(f.dir.str("short.bin"), "abcdefgh", 8));
  uint32_t r = f.addHost("r", "read_file", {Arg::slot(0), Arg::string("short.bin")});
  CHECK(f.run(r) == "node 'r': short.bin: file has 8 bytes of data, slot 'a' needs 16");
  uint32_t m = f.addHost("m", "read_file", {Arg::slot(0), Arg::string("missing.bin")});
  CHECK(f.run(m).rfind("node 'm': " + f.dir.str("missing.bin") + ": cannot open: ", 0) == 0);
}

TEST_CASE("compare reports the first differing element", "[runtime][host]") {
  HostFixture f;
  uint32_t same = f.addHost("same", "compare", {Arg::slot(0), Arg::slot(0)});
  uint32_t diff = f.addHost("diff", "compare", {Arg::slot(0), Arg::slot(1)});
  uint32_t tol = f.addHost("tol", "compare", {Arg::slot(0), Arg::slot(1), Arg::string("atol=0.5")});
  uint32_t rtol = f.addHost("rtol", "compare", {Arg::slot(0), Arg::slot(1), Arg::string("rtol=0.2")});
  uint32_t ints = f.addHost("ints", "compare", {Arg::slot(0), Arg::slot(1), Arg::string("i32")});
  CHECK(f.run(same) == "");
  CHECK(f.run(diff) == "node 'diff': compare 'a' vs 'b': element 2 differs: 3 vs 3.5");
  CHECK(f.run(tol) == "");
  CHECK(f.run(rtol) == "");
  uint32_t rtolSmall = f.addHost("rtol2", "compare", {Arg::slot(0), Arg::slot(1), Arg::string("rtol=0.1")});
  CHECK(f.run(rtolSmall) == "node 'rtol2': compare 'a' vs 'b': element 2 differs: 3 vs 3.5");
  CHECK(f.run(ints) == "node 'ints': compare 'a' vs 'b': element 2 differs: 1077936128 vs 1080033280");
}

TEST_CASE("host task arguments are checked at prepare", "[runtime][host]") {
  HostFixture f;
  f.addHost("u", "explode", {Arg::slot(0)});
  auto t = f.prepare();
  REQUIRE_FALSE(t.ok());
  CHECK(t.error().message() ==
        "node 'u': unknown built-in host task 'explode' (built-ins: checksum, print, write_file, read_file, compare)");
  f.g.nodes.clear();
  f.addHost("c", "compare", {Arg::slot(0), Arg::string("f32")});
  CHECK(f.prepare().error().message() == "node 'c': arg 1: 'compare' expects a slot here");
  f.g.nodes.clear();
  f.addHost("w", "write_file", {Arg::slot(0)});
  CHECK(f.prepare().error().message() == "node 'w': 'write_file' needs a path argument");
  f.g.nodes.clear();
  f.addHost("p", "print", {Arg::slot(0), Arg::string("bogus")});
  CHECK(f.prepare().error().message() == "node 'p': arg 1: 'bogus' is not understood by 'print'");
}

TEST_CASE("paths must stay inside the allowed directories", "[runtime][host][paths]") {
  HostFixture f;
  TempDir outside;
  SECTION("dot-dot escape") {
    uint32_t n = f.addHost("w", "write_file", {Arg::slot(0), Arg::string("../escape.bin")});
    std::string m = f.run(n);
    CHECK(m.rfind("prepare: node 'w': path '../escape.bin' resolves to '", 0) == 0);
    CHECK(m.find("', outside the allowed directories (" + f.dir.str() + ")") != std::string::npos);
    CHECK_FALSE(fs::exists(f.dir.path().parent_path() / "escape.bin"));
  }
  SECTION("absolute path elsewhere") {
    uint32_t n = f.addHost("w", "write_file", {Arg::slot(0), Arg::string(outside.str("x.bin"))});
    CHECK(f.run(n).find("outside the allowed directories") != std::string::npos);
  }
  SECTION("symlink out of the allowed directory") {
    fs::create_directory_symlink(outside.path(), f.dir.path() / "link");
    REQUIRE_FALSE(writeBinaryFile(outside.str("data.bin"), "0123456789abcdef", 16));
    uint32_t n = f.addHost("r", "read_file", {Arg::slot(0), Arg::string("link/data.bin")});
    std::string m = f.run(n);
    CHECK(m == "prepare: node 'r': path 'link/data.bin' resolves to '" + outside.str("data.bin") +
                   "', outside the allowed directories (" + f.dir.str() + ")");
  }
  SECTION("symlinked file out of the allowed directory") {
    REQUIRE_FALSE(writeBinaryFile(outside.str("data.bin"), "0123456789abcdef", 16));
    fs::create_symlink(outside.path() / "data.bin", f.dir.path() / "data.bin");
    uint32_t n = f.addHost("r", "read_file", {Arg::slot(0), Arg::string("data.bin")});
    CHECK(f.run(n).find("outside the allowed directories") != std::string::npos);
  }
  SECTION("a symlink inside the allowed directory is fine") {
    fs::create_directories(f.dir.path() / "real");
    fs::create_directory_symlink(f.dir.path() / "real", f.dir.path() / "alias");
    uint32_t n = f.addHost("w", "write_file", {Arg::slot(0), Arg::string("alias/x.bin")});
    CHECK(f.run(n) == "");
    CHECK(fs::file_size(f.dir.path() / "real" / "x.bin") == 16);
  }
  SECTION("resolveAllowedPath with several dirs") {
    HostPolicy p;
    p.allowedDirs = {f.dir.str(), outside.str()};
    Expected<std::string> r = resolveAllowedPath(outside.str("a/../b.bin"), p);
    REQUIRE(r.ok());
    CHECK(*r == outside.str("b.bin"));
    // A sibling whose name extends the allowed one is not inside it.
    p.allowedDirs = {f.dir.str()};
    CHECK_FALSE(resolveAllowedPath(f.dir.str() + "x/y.bin", p).ok());
  }
}

TEST_CASE("plugin host tasks load only when allowed", "[runtime][host][plugin]") {
  HostFixture f;
  fs::copy_file(CGRAPH_TEST_PLUGIN, f.dir.path() / "plugin.so");
  Slot s;
  s.name = "ints";
  s.size = 8;
  f.g.slots.push_back(s);
  int32_t init[2] = {10, 20};
  f.memory.emplace_back(reinterpret_cast<uint8_t *>(init), reinterpret_cast<uint8_t *>(init) + 8);
  uint32_t n = f.addHost("plug", "cgraph_test_add_i32",
                         {Arg::slot(2), Arg::scalar(ScalarType::I32, 5)}, "plugin.so");
  SECTION("refused without the flag") {
    CHECK(f.run(n) == "prepare: node 'plug': host task 'plugin.so:cgraph_test_add_i32' is a "
                      "plugin, and plugins are not allowed (cgrun --allow-plugins)");
  }
  SECTION("runs with the flag") {
    f.policy.allowPlugins = true;
    REQUIRE(f.run(n) == "");
    int32_t out[2];
    std::memcpy(out, f.memory[2].data(), 8);
    CHECK(out[0] == 15);
    CHECK(out[1] == 25);
  }
  SECTION("plugin failure carries its message") {
    f.policy.allowPlugins = true;
    uint32_t bad = f.addHost("bad", "cgraph_test_fail", {Arg::slot(2)}, "plugin.so");
    CHECK(f.run(bad) == "node 'bad': plugin 'plugin.so:cgraph_test_fail': deliberate failure with 1 slots");
  }
  SECTION("missing symbol") {
    f.policy.allowPlugins = true;
    uint32_t bad = f.addHost("nosym", "no_such_fn", {Arg::slot(2)}, "plugin.so");
    CHECK(f.run(bad) == "prepare: node 'nosym': plugin 'plugin.so' has no symbol 'no_such_fn'");
  }
  SECTION("library outside the allowed directories") {
    f.policy.allowPlugins = true;
    f.g.nodes[n].host.library = CGRAPH_TEST_PLUGIN;
    CHECK(f.run(n).find("prepare: node 'plug': plugin library: path '") == 0);
  }
}

TEST_CASE("write_file does not follow a dangling symlink out of the allowed directory", "[runtime][host][paths]") {
  HostFixture f;
  TempDir outside;
  const fs::path target = outside.path() / "planted.bin";
  fs::create_symlink(target, f.dir.path() / "out.bin");
  SECTION("the task is refused, naming where the link leads") {
    uint32_t n = f.addHost("w", "write_file", {Arg::slot(0), Arg::string("out.bin")});
    CHECK(f.run(n) == "prepare: node 'w': path 'out.bin' resolves to '" + target.string() +
                          "', outside the allowed directories (" + f.dir.str() + ")");
    uint32_t m = f.addHost("w2", "write_file", {Arg::slot(0), Arg::string("nope/../out.bin")});
    CHECK(f.run(m).find("outside the allowed directories") != std::string::npos);
  }
  SECTION("a link planted after prepare is refused at run") {
    fs::remove(f.dir.path() / "out.bin");
    uint32_t n = f.addHost("w", "write_file", {Arg::slot(0), Arg::string("out.bin")});
    auto t = f.prepare();
    REQUIRE(t.ok());
    fs::create_symlink(target, f.dir.path() / "out.bin");
    Error e = (*t)->run(n, f.spans(), {});
    REQUIRE(e);
    CHECK(e.message().find("outside the allowed directories") != std::string::npos);
  }
  SECTION("the writer replaces a link at the final name instead of following it") {
    REQUIRE_FALSE(writeBinaryFile(f.dir.str("out.bin"), "0123456789abcdef", 16));
    CHECK_FALSE(fs::is_symlink(f.dir.path() / "out.bin"));
    CHECK(slurp(f.dir.path() / "out.bin") == "0123456789abcdef");
  }
  SECTION("a dangling link inside the allowed directory writes its target") {
    fs::create_symlink(f.dir.path() / "real.bin", f.dir.path() / "alias.bin");
    uint32_t n = f.addHost("w", "write_file", {Arg::slot(0), Arg::string("alias.bin")});
    CHECK(f.run(n) == "");
    CHECK(fs::is_symlink(f.dir.path() / "alias.bin"));
    CHECK(fs::file_size(f.dir.path() / "real.bin") == 16);
  }
  CHECK_FALSE(fs::exists(fs::symlink_status(target)));
  CHECK(countEntries(outside.path()) == 0);
}

TEST_CASE("a write that fails midway leaves the old file and no temporary files", "[runtime][host]") {
  HostFixture f;
  uint32_t big = f.addSlot("big", std::vector<float>(256 * 1024, 1.5f)); // 1 MiB
  const std::string old = "the previous contents";
  for (const char *name : {"out.bin", "out.npy", "direct.bin", "direct.npy"}) {
    std::ofstream(f.dir.path() / name, std::ios::binary) << old;
  }
  uint32_t w = f.addHost("w", "write_file", {Arg::slot(big), Arg::string("out.bin")});
  uint32_t wn = f.addHost("wn", "write_file", {Arg::slot(big), Arg::string("out.npy"), Arg::string("f32")});
  auto t = f.prepare();
  REQUIRE(t.ok());
  std::vector<HostSpan> spans = f.spans();
  auto failsWithEfbig = [](const Error &e) {
    return e && e.message().find("File too large") != std::string::npos &&
           e.message().find("ulimit -f") != std::string::npos;
  };
  int rc = withFileSizeLimit(64 * 1024, [&] {
    int bad = 0;
    if (!failsWithEfbig((*t)->run(w, spans, {}))) bad |= 1;
    if (!failsWithEfbig((*t)->run(wn, spans, {}))) bad |= 2;
    const std::vector<uint8_t> &bytes = f.memory[big];
    if (!failsWithEfbig(writeBinaryFile(f.dir.str("direct.bin"), bytes.data(), bytes.size()))) bad |= 4;
    if (!failsWithEfbig(writeNpyFile(f.dir.str("direct.npy"), ScalarType::F32, bytes.data(), bytes.size())))
      bad |= 8;
    return bad;
  });
  CHECK(rc == 0);
  for (const char *name : {"out.bin", "out.npy", "direct.bin", "direct.npy"}) {
    INFO(name);
    CHECK(slurp(f.dir.path() / name) == old);
  }
  CHECK(countEntries(f.dir.path()) == 4);
}

// runStagedHostTask with the fixture's memory standing for a device's: the copies go
// through a HostStaging whose blocks outlive the run.
namespace {

struct StagedRun {
  StagedRun(HostFixture &fixture, HostStaging &st) : f(fixture), staging(st) {}
  HostFixture &f;
  HostStaging &staging;
  std::vector<const void *> toHostDst; // where each toHost copy went
  int toDevice = 0, syncs = 0;

  Error run(const HostTasks &tasks, uint32_t n) {
    return runStagedHostTask(
        f.g, n, uint32_t(f.g.slots.size()), tasks, {}, staging,
        [&](uint32_t slot) { return uint64_t(f.memory[slot].size()); },
        [&] {
          ++syncs;
          return Error::success();
        },
        [&](void *dst, uint32_t slot, size_t bytes) {
          toHostDst.push_back(dst);
          std::memcpy(dst, f.memory[slot].data(), bytes);
          return Error::success();
        },
        [&](uint32_t slot, const void *src, size_t bytes) {
          ++toDevice;
          std::memcpy(f.memory[slot].data(), src, bytes);
          return Error::success();
        });
  }
};

} // namespace

TEST_CASE("a staged host task reuses its host blocks from run to run", "[runtime][host][staging]") {
  HostFixture f;
  const uint32_t n = f.addHost("c", "checksum", {Arg::slot(0)});
  auto tasks = f.prepare();
  REQUIRE(tasks);
  int allocations = 0;
  HostStaging staging([&](size_t bytes) -> Expected<std::shared_ptr<void>> {
    ++allocations;
    return std::shared_ptr<void>(std::malloc(bytes), [](void *p) { std::free(p); });
  });
  StagedRun r{f, staging};
  REQUIRE_FALSE(r.run(**tasks, n));
  REQUIRE_FALSE(r.run(**tasks, n));
  CHECK(allocations == 1);
  REQUIRE(r.toHostDst.size() == 2);
  CHECK(r.toHostDst[0] == r.toHostDst[1]);
  CHECK(r.toDevice == 0); // checksum writes nothing back
  CHECK(r.syncs == 4);
  REQUIRE(f.lines.size() == 2);
  CHECK(f.lines[0] == f.lines[1]);
  CHECK(f.lines[0].find("sum=10 ") != std::string::npos);
}

TEST_CASE("a staged host task that writes its slot copies it back", "[runtime][host][staging]") {
  HostFixture f;
  const fs::path src = f.dir.path() / "in.bin";
  const float values[4] = {5.0f, 6.0f, 7.0f, 8.0f};
  {
    std::ofstream out(src, std::ios::binary);
    out.write(reinterpret_cast<const char *>(values), sizeof values);
  }
  const uint32_t n = f.addHost("r", "read_file", {Arg::slot(1), Arg::string(src.string())});
  auto tasks = f.prepare();
  REQUIRE(tasks);
  HostStaging staging; // plain host memory
  StagedRun r{f, staging};
  REQUIRE_FALSE(r.run(**tasks, n));
  CHECK(r.toDevice == 1);
  CHECK(f.floats(1) == std::vector<float>{5.0f, 6.0f, 7.0f, 8.0f});
  CHECK(f.floats(0) == std::vector<float>{1.0f, 2.0f, 3.0f, 4.0f});
}

TEST_CASE("host staging grows a block for a longer binding and falls back to host memory", "[runtime][host][staging]") {
  int calls = 0;
  HostStaging staging([&](size_t) -> Expected<std::shared_ptr<void>> {
    ++calls;
    return makeError(ErrorCode::OutOfMemory, "no pinned memory left");
  });
  auto a = staging.block(3, 64);
  REQUIRE(a);
  REQUIRE(*a != nullptr);
  std::memset(*a, 0xab, 64); // usable memory
  auto b = staging.block(3, 16);
  REQUIRE(b);
  CHECK(*b == *a); // a shorter binding fits the block it has
  auto c = staging.block(3, 4096);
  REQUIRE(c);
  std::memset(*c, 0xcd, 4096);
  CHECK(calls == 2); // asked each time a block was made, then plain memory
  auto d = staging.block(0, 8); // another slot: its own block
  REQUIRE(d);
  CHECK(*d != *c);
}
