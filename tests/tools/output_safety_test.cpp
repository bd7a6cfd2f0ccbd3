// What the tools do to the files they write and read: cgc -o and cgrun --output /
// --trace onto devices, FIFOs, symbolic links, directories and sockets; writes that
// fail midway (the file size limit, as a full disk); cgc's allowed directories.
#include "tool_test_util.h"

#include "../common/temp_dir.h"

#include <catch2/catch.hpp>

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <thread>

namespace {

namespace fs = std::filesystem;
using tooltest::quote;
using tooltest::Result;
using tooltest::slurp;

// A fresh directory of its own (tests/common/temp_dir.h), removed at the end of the test.
class Scratch {
public:
  const fs::path &dir() const { return tmp_.path(); }
  fs::path operator/(const std::string &leaf) const { return tmp_.path() / leaf; }

private:
  cgraph::test::TempDir tmp_{"cgraph-output-safety"};
};

// Runs `exe args` in `cwd` through the shell; `prefix` goes before it (e.g. a ulimit).
Result run(const std::string &exe, const std::string &args, const fs::path &cwd, const std::string &prefix = "") {
  static int counter = 0;
  static const cgraph::test::TempDir ioDir("cgraph-output-safety-io"); // this process's own
  fs::path io = ioDir.path() / ("io" + std::to_string(counter++));
  fs::path out = io.string() + ".out", err = io.string() + ".err";
  std::string cmd = "cd " + quote(cwd.string()) + " && " + prefix + " exec " + quote(exe) + " " + args + " >" +
                    quote(out.string()) + " 2>" + quote(err.string()) + " </dev/null";
  Result r;
  int status = std::system(("sh -c " + quote(cmd)).c_str());
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = slurp(out);
  r.err = slurp(err);
  fs::remove(out);
  fs::remove(err);
  return r;
}

Result cgc(const std::string &args, const fs::path &cwd, const std::string &prefix = "") {
  return run(CGC_PATH, args, cwd, prefix);
}
Result cgrun(const std::string &args, const fs::path &cwd, const std::string &prefix = "") {
  return run(CGRUN_PATH, args, cwd, prefix);
}
Result cgfuse(const std::string &args, const fs::path &cwd, const std::string &prefix = "") {
  return run(CGFUSE_PATH, args, cwd, prefix);
}

// Files whose name holds ".tmp." (the atomic writer's temporaries) under `dir`.
int temporaries(const fs::path &dir) {
  int n = 0;
  for (const auto &e : fs::recursive_directory_iterator(dir))
    if (e.path().filename().string().find(".tmp.") != std::string::npos) ++n;
  return n;
}

bool isCharDevice(const fs::path &p) {
  struct stat st;
  return ::lstat(p.c_str(), &st) == 0 && S_ISCHR(st.st_mode);
}

// A description with one fill node over `bytes` bytes of an external slot "a".
void writeFillGraph(const fs::path &path, uint64_t bytes) {
  std::ofstream(path) << R"({ "version": 1, "name": "fill",
  "slots": [{ "name": "a", "bytes": )" << bytes << R"(, "external": true }],
  "nodes": [{ "name": "f", "fill": { "dst": "a", "value": 7, "type": "u8" } }] })";
}

// A description embedding `bytes` random (incompressible) bytes from data.bin.
void writeDataGraph(const fs::path &dir, uint64_t bytes) {
  std::string data(bytes, '\0');
  std::mt19937 rng(42);
  for (char &c : data) c = char(rng());
  std::ofstream(dir / "data.bin", std::ios::binary) << data;
  std::ofstream(dir / "g.json") << R"({ "version": 1, "name": "data",
  "slots": [{ "name": "w", "init": { "data_file": "data.bin" } }, { "name": "o", "bytes": 16, "external": true }],
  "nodes": [{ "name": "c", "copy": { "src": "w", "dst": "o", "bytes": 16 } }] })";
}

std::string compileToString(const fs::path &dir, const std::string &desc) {
  Result r = cgc(quote(desc) + " -o -", dir);
  INFO(r.err);
  REQUIRE(r.code == 0);
  return r.out;
}

} // namespace

TEST_CASE("cgc -o writes through devices and FIFOs instead of replacing them", "[tools][output]") {
  Scratch s;
  writeFillGraph(s / "g.json", 64);
  const std::string expected = compileToString(s.dir(), "g.json");

  SECTION("a character device made with mknod stays a device") {
    REQUIRE(::mknod((s / "null").c_str(), S_IFCHR | 0666, makedev(1, 3)) == 0);
    Result r = cgc("g.json -o null", s.dir());
    INFO(r.err);
    CHECK(r.code == 0);
    CHECK(isCharDevice(s / "null"));
  }
  SECTION("a symbolic link to a device stays a link to it") {
    REQUIRE(::mknod((s / "null").c_str(), S_IFCHR | 0666, makedev(1, 3)) == 0);
    fs::create_symlink(s / "null", s / "out.cgf");
    Result r = cgc("g.json -o out.cgf", s.dir());
    INFO(r.err);
    CHECK(r.code == 0);
    CHECK(fs::is_symlink(s / "out.cgf"));
    CHECK(isCharDevice(s / "null"));
  }
  SECTION("a FIFO receives the bytes and stays a FIFO") {
    REQUIRE(::mkfifo((s / "pipe").c_str(), 0666) == 0);
    std::string got;
    std::thread reader([&] { got = slurp(s / "pipe"); });
    Result r = cgc("g.json -o pipe", s.dir());
    reader.join();
    INFO(r.err);
    CHECK(r.code == 0);
    CHECK(fs::is_fifo(fs::symlink_status(s / "pipe")));
    CHECK(got == expected);
  }
  SECTION("a link to the open standard output writes to it") {
    fs::create_symlink("/dev/stdout", s / "stdout.cgf");
    Result r = cgc("g.json -o stdout.cgf", s.dir());
    INFO(r.err);
    CHECK(r.code == 0);
    CHECK(r.out == expected);
    CHECK(fs::is_symlink(s / "stdout.cgf"));
  }
  CHECK(temporaries(s.dir()) == 0);
}

TEST_CASE("cgc -o follows a symbolic link to a regular file and keeps the link", "[tools][output]") {
  Scratch s;
  writeFillGraph(s / "g.json", 64);
  const std::string expected = compileToString(s.dir(), "g.json");
  fs::create_directories(s / "real");
  std::ofstream(s / "real" / "target.cgf") << "old";
  fs::create_symlink("real/target.cgf", s / "link.cgf");
  Result r = cgc("g.json -o link.cgf", s.dir());
  INFO(r.err);
  CHECK(r.code == 0);
  CHECK(fs::is_symlink(s / "link.cgf"));
  CHECK(slurp(s / "real" / "target.cgf") == expected);
  // A dangling link: the file it names is created.
  fs::create_symlink("real/new.cgf", s / "dangling.cgf");
  r = cgc("g.json -o dangling.cgf", s.dir());
  CHECK(r.code == 0);
  CHECK(fs::is_symlink(s / "dangling.cgf"));
  CHECK(slurp(s / "real" / "new.cgf") == expected);
  CHECK(temporaries(s.dir()) == 0);
}

TEST_CASE("cgc -o refuses directories and sockets", "[tools][output]") {
  Scratch s;
  writeFillGraph(s / "g.json", 64);
  fs::create_directories(s / "out.cgf");
  Result r = cgc("g.json -o out.cgf", s.dir());
  CHECK(r.code == 1);
  CHECK(r.err == "cgc: error: cannot write 'out.cgf': it is a directory\n");
  CHECK(fs::is_directory(s / "out.cgf"));

  int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  REQUIRE(fd >= 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  const std::string sock = (s / "sock").string();
  REQUIRE(sock.size() < sizeof addr.sun_path);
  std::strcpy(addr.sun_path, sock.c_str());
  REQUIRE(::bind(fd, reinterpret_cast<sockaddr *>(&addr), sizeof addr) == 0);
  r = cgc("g.json -o sock", s.dir());
  ::close(fd);
  CHECK(r.code == 1);
  CHECK(r.err == "cgc: error: cannot write 'sock': it is a socket\n");
  CHECK(fs::is_socket(fs::symlink_status(s / "sock")));

  fs::create_symlink("out.cgf", s / "to_dir");
  r = cgc("g.json --emit=json -o to_dir", s.dir());
  CHECK(r.code == 1);
  CHECK(r.err == "cgc: error: cannot write 'out.cgf' (through the symbolic link 'to_dir'): it is a directory\n");
  CHECK(temporaries(s.dir()) == 0);
}

TEST_CASE("cgc past the file size limit reports EFBIG and keeps the old output", "[tools][output]") {
  Scratch s;
  writeDataGraph(s.dir(), 1 << 20);
  std::ofstream(s / "g.cgf") << "the previous output";
  // ulimit -f counts 512- or 1024-byte blocks: 64 is well below the 1 MiB output.
  Result r = cgc("g.json -o g.cgf", s.dir(), "ulimit -f 64 &&");
  INFO(r.err);
  CHECK(r.code == 1); // not 128 + SIGXFSZ
  CHECK(r.err.find("cgc: error: cannot write 'g.cgf'") == 0);
  CHECK(r.err.find("File too large (the file size limit, ulimit -f)") != std::string::npos);
  CHECK(slurp(s / "g.cgf") == "the previous output");
  CHECK(temporaries(s.dir()) == 0);
}

TEST_CASE("cgrun --output and --trace past the file size limit keep the old files", "[tools][output]") {
  Scratch s;
  writeFillGraph(s / "g.json", 1 << 20);
  Result c = cgc("g.json -o g.cgf", s.dir());
  REQUIRE(c.code == 0);
  for (const char *name : {"a.npy", "a.bin", "trace.json"}) std::ofstream(s / name) << "the previous contents";
  for (const char *out : {"a.npy", "a.bin"}) {
    INFO(out);
    Result r = cgrun(std::string("g.cgf --zeros a --output a=") + out, s.dir(), "ulimit -f 64 &&");
    INFO(r.err);
    CHECK(r.code == 1); // not 128 + SIGXFSZ
    CHECK(r.err.find("File too large (the file size limit, ulimit -f)") != std::string::npos);
    CHECK(slurp(s / out) == "the previous contents");
  }
  // A trace of 2000 runs is far larger than 4 blocks.
  Result r = cgrun("g.cgf --zeros a --iterations 2000 --trace trace.json", s.dir(), "ulimit -f 4 &&");
  INFO(r.err);
  CHECK(r.code == 1);
  CHECK(r.err.find("File too large") != std::string::npos);
  CHECK(slurp(s / "trace.json") == "the previous contents");
  CHECK(temporaries(s.dir()) == 0);
  // Without the limit the same commands write complete files.
  r = cgrun("g.cgf --zeros a --output a=a.bin --trace trace.json", s.dir());
  CHECK(r.code == 0);
  CHECK(fs::file_size(s / "a.bin") == (1u << 20));
}

TEST_CASE("cgrun --output and --trace follow the output rules", "[tools][output]") {
  Scratch s;
  writeFillGraph(s / "g.json", 64);
  REQUIRE(cgc("g.json -o g.cgf", s.dir()).code == 0);
  REQUIRE(::mknod((s / "null").c_str(), S_IFCHR | 0666, makedev(1, 3)) == 0);
  fs::create_symlink(s / "null", s / "a.bin");
  Result r = cgrun("g.cgf --zeros a --output a=a.bin --trace null", s.dir());
  INFO(r.err);
  CHECK(r.code == 0);
  CHECK(fs::is_symlink(s / "a.bin"));
  CHECK(isCharDevice(s / "null"));
  r = cgrun("g.cgf --zeros a --output a=-", s.dir());
  CHECK(r.code == 0);
  CHECK(r.out.find(std::string(64, '\7')) != std::string::npos); // stdout also has cgrun's report
  fs::create_directories(s / "d.npy");
  r = cgrun("g.cgf --zeros a --output a=d.npy", s.dir());
  CHECK(r.code == 1);
  CHECK(r.err.find("cannot write 'd.npy': it is a directory") != std::string::npos);
  CHECK(temporaries(s.dir()) == 0);
}

TEST_CASE("cgc reads files only inside the allowed directories", "[tools][paths]") {
  Scratch s;
  fs::create_directories(s / "g" / "kernels");
  fs::create_directories(s / "other");
  std::ofstream(s / "other" / "secret.bin") << "top secret line\n";
  std::ofstream(s / "other" / "k.cl") << "__kernel void k(__global int *a) { a[0] = 1; }\n";
  std::ofstream(s / "other" / "sub.json") << R"({ "version": 1, "slots": [{ "name": "a", "bytes": 64 }],
    "nodes": [{ "name": "f", "fill": { "dst": "a", "value": 1, "type": "u8" } }] })";
  std::ofstream(s / "g" / "kernels" / "k.cl") << "__kernel void k(__global int *a) { a[0] = 1; }\n";
  const std::string slots = R"("slots": [{ "name": "a", "bytes": 64, "external": true }])";
  auto desc = [&](const std::string &name, const std::string &body) {
    std::ofstream(s / "g" / name) << R"({ "version": 1, )" << body << "}";
  };
  const std::string copyW = R"(, "nodes": [{ "name": "c", "copy": { "src": "w", "dst": "a", "bytes": 16 } }])";
  desc("data.json", R"("slots": [{ "name": "a", "bytes": 64, "external": true },
                                 { "name": "w", "init": { "data_file": "../other/secret.bin" } }])" + copyW);
  desc("kernel.json", R"("kernels": [")" + (s / "other" / "k.cl").string() + R"("], )" + slots +
                          R"(, "nodes": [{ "name": "n", "kernel": "k", "global": [1], "args": ["a"] }])");
  desc("sub.json", slots + R"(, "nodes": [{ "name": "s", "subgraph": "../other/sub.json" }])");
  desc("include.json", R"("kernels": [{ "file": "kernels/k.cl", "include": ["../other"] }], )" + slots +
                           R"(, "nodes": [{ "name": "n", "kernel": "k", "global": [1], "args": ["a"] }])");
  fs::create_symlink("../other/secret.bin", s / "g" / "link.bin");
  desc("link.json", R"("slots": [{ "name": "a", "bytes": 64, "external": true },
                                 { "name": "w", "init": { "data_file": "link.bin" } }])" + copyW);
  const std::string outside = (s / "other").string();

  struct Case {
    const char *file;
    std::string message; // after "<file>:<line>:<col>: error: "
  };
  const Case cases[] = {
      {"data.json", "slot 'w': 'data_file' '" + (s / "g" / "../other/secret.bin").lexically_normal().string() +
                        "' resolves to '" + outside + "/secret.bin'"},
      {"kernel.json", "kernel file '" + outside + "/k.cl' resolves to '" + outside + "/k.cl'"},
      {"sub.json", "subgraph file '" + (s / "g" / "../other/sub.json").lexically_normal().string() +
                       "' resolves to '" + outside + "/sub.json'"},
      {"include.json", "'include' directory '" + (s / "g" / "../other").lexically_normal().string() +
                           "' resolves to '" + outside + "'"},
      {"link.json", "slot 'w': 'data_file' '" + (s / "g" / "link.bin").string() + "' resolves to '" + outside +
                        "/secret.bin'"},
  };
  for (const Case &c : cases) {
    INFO(c.file);
    const std::string input = quote((s / "g" / c.file).string());
    Result r = cgc(input + " -o out.cgf", s.dir());
    CHECK(r.code == 1);
    CHECK(r.err.find(": error: " + c.message + ", outside the allowed directories (" + (s / "g").string() +
                     "); add its directory with --allow-dir") != std::string::npos);
    CHECK(r.err.find("top secret") == std::string::npos);
    CHECK_FALSE(fs::exists(s / "out.cgf"));
    // Allowed explicitly, or as an -I directory: the same description compiles.
    Result ok = cgc(input + " -o out.cgf --allow-dir other", s.dir());
    INFO(ok.err);
    CHECK(ok.code == 0);
    Result viaI = cgc(input + " --emit=json -o out.json -I other", s.dir());
    CHECK(viaI.code == 0);
    fs::remove(s / "out.cgf");
  }
  // Relative paths inside the description's folder need nothing.
  desc("inside.json", R"("kernels": ["kernels/k.cl"], )" + slots +
                          R"(, "nodes": [{ "name": "n", "kernel": "k", "global": [1], "args": ["a"] }])");
  Result r = cgc(quote((s / "g" / "inside.json").string()) + " -o out.cgf", s.dir());
  INFO(r.err);
  CHECK(r.code == 0);
  // lint reads the same files under the same rule.
  r = cgc("lint " + quote((s / "g" / "data.json").string()), s.dir());
  CHECK(r.code == 1);
  CHECK(r.err.find("outside the allowed directories") != std::string::npos);
}

TEST_CASE("cgc refuses kernel options that name files", "[tools][paths]") {
  Scratch s;
  std::ofstream(s / "secret.txt") << "top secret line\n";
  std::ofstream(s / "k.cl") << "__kernel void k(__global int *a) { a[0] = N; }\n";
  auto compile = [&](const std::string &options) {
    std::ofstream(s / "g.json") << R"({ "version": 1,
      "kernels": [{ "file": "k.cl", "options": [)" << options << R"(] }],
      "slots": [{ "name": "a", "bytes": 64, "external": true }],
      "nodes": [{ "name": "n", "kernel": "k", "global": [1], "args": ["a"] }] })";
    return cgc("g.json --emit=json -o out.json", s.dir());
  };
  for (const char *bad : {R"("-include", "secret.txt")", R"("-DN=1", "-I", "/etc")", R"("-o", "x")",
                          R"("-fplugin=x.so")", R"("-DN=1", "-load", "x.so")"}) {
    INFO(bad);
    Result r = compile(bad);
    CHECK(r.code == 1);
    CHECK(r.err.find("is not allowed in a description") != std::string::npos);
    CHECK(r.err.find("top secret") == std::string::npos);
  }
  Result ok = compile(R"("-cl-mad-enable", "-D", "N=2", "-Wall", "-ffp-contract=fast", "-O2")");
  INFO(ok.err);
  CHECK(ok.code == 0);
}

TEST_CASE("cgfuse -o follows the output rules and survives the file size limit", "[tools][output]") {
  Scratch s;
  writeDataGraph(s.dir(), 1 << 20);
  Result c = cgc("g.json -o g.cgf", s.dir());
  INFO(c.err);
  REQUIRE(c.code == 0);
  SECTION("a character device stays a device") {
    REQUIRE(::mknod((s / "null").c_str(), S_IFCHR | 0666, makedev(1, 3)) == 0);
    Result r = cgfuse("g.cgf --auto -o null", s.dir());
    INFO(r.err);
    CHECK(r.code == 0);
    CHECK(isCharDevice(s / "null"));
  }
  SECTION("a directory is refused") {
    fs::create_directory(s / "d");
    Result r = cgfuse("g.cgf --auto -o d", s.dir());
    CHECK(r.code == 1);
    CHECK(r.err.find("it is a directory") != std::string::npos);
    CHECK(fs::is_directory(s / "d"));
  }
  SECTION("past the file size limit: EFBIG, the old output kept, no temporaries") {
    std::ofstream(s / "f.cgf") << "the previous output";
    Result r = cgfuse("g.cgf --auto -o f.cgf", s.dir(), "ulimit -f 64 &&");
    INFO(r.err);
    CHECK(r.code == 1); // not 128 + SIGXFSZ
    CHECK(r.err.find("File too large") != std::string::npos);
    CHECK(slurp(s / "f.cgf") == "the previous output");
    CHECK(temporaries(s.dir()) == 0);
  }
}
