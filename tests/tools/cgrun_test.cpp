// cgrun end to end: the real binary on real .cgf files, on the real CPU backend.
#include "cgrun_test_util.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <set>

using namespace cgruntest;
using nlohmann::json;

namespace {

struct Saxpy {
  fs::path dir;
  Saxpy(const std::string &name) : dir(scratch(name)) {
    writeSaxpy(dir / "saxpy.cgf");
    writeFloats(dir / "y4.npy", 4.0f);
    writeFloats(dir / "y5.npy", 5.0f);
    writeFloats(dir / "ones.npy", 1.0f);
  }
  Result run(const std::string &args) { return cgrun(args, dir); }
};

const std::string kInputs = "saxpy.cgf --input x=ones.npy --fill y=2 ";

} // namespace

TEST_CASE("cgrun replays and checks results", "[tools][cgrun]") {
  Saxpy s("run_check");
  // Replays share state: y += a*x per iteration, so after 3 runs y = 2 + 3*2.
  writeFloats(s.dir / "y8.npy", 8.0f);
  Result r = s.run(kInputs + "--check y=@y8.npy -n 3");
  INFO(r.err);
  REQUIRE(r.code == 0);
  CHECK(r.out.find("check y: ok (1024 x f32") != std::string::npos);
  CHECK(r.out.find("checksum t: xxh3=") != std::string::npos);
  CHECK(r.out.find("sum=2048 (1024 x f32)") != std::string::npos);
  CHECK(r.out.find("sum=4096 (1024 x f32)") != std::string::npos);
  CHECK(r.out.find("finalize: ") != std::string::npos);
  CHECK(r.out.find("first run: ") != std::string::npos);
  CHECK(r.out.find("per iteration: mean ") != std::string::npos);
  CHECK(r.err.find("\r") == std::string::npos); // no progress when stderr is not a TTY
  // A raw expected file with an explicit type, and a parameter.
  std::vector<float> ten(kN, 10.0f);
  REQUIRE_FALSE(rt::writeBinaryFile((s.dir / "y10.bin").string(), ten.data(), ten.size() * 4));
  r = s.run(kInputs + "--param a=8 --check y=@y10.bin:f32 --output t=t.npy --output y=y.bin");
  INFO(r.err);
  REQUIRE(r.code == 0);
  Expected<rt::NpyArray> t = rt::readNpyFile((s.dir / "t.npy").string());
  REQUIRE(t.ok());
  CHECK(t->type == ScalarType::F32);
  float t0;
  std::memcpy(&t0, t->data.data(), 4);
  CHECK(t0 == 5.0f);
  CHECK(fs::file_size(s.dir / "y.bin") == kN * 4);
}

TEST_CASE("cgrun fails a check with exit code 1", "[tools][cgrun]") {
  Saxpy s("run_check_fail");
  Result r = s.run(kInputs + "--check y=@y5.npy");
  CHECK(r.code == 1);
  CHECK(r.out.find("check y: FAILED: element 0 differs: 4 vs 5") != std::string::npos);
  CHECK(r.err.find("cgrun: error: check failed") != std::string::npos);
  // Within tolerance it passes.
  r = s.run(kInputs + "--check y=@y5.npy --atol 1.5");
  CHECK(r.code == 0);
}

TEST_CASE("cgrun --json puts only results on stdout", "[tools][cgrun]") {
  Saxpy s("run_json");
  writeFloats(s.dir / "y6.npy", 6.0f); // two replays of y += 2
  Result r = s.run(kInputs + "--check y=@y6.npy --json -n 2");
  INFO(r.err);
  REQUIRE(r.code == 0);
  json j = json::parse(r.out);
  CHECK(j["ok"] == true);
  CHECK(j["iterations"] == 2);
  CHECK(j["nodes"] == 4);
  CHECK(j["device"]["backend"] == "cpu");
  REQUIRE(j["checks"].size() == 1);
  CHECK(j["checks"][0]["slot"] == "y");
  CHECK(j["checks"][0]["ok"] == true);
  CHECK(j["timings_ms"]["finalize"].get<double>() > 0);
  REQUIRE(j["host_output"].size() == 2); // one checksum line per iteration
  CHECK(j["host_output"][0].get<std::string>().rfind("checksum t: xxh3=", 0) == 0);
}

TEST_CASE("cgrun --trace writes one event per node", "[tools][cgrun]") {
  Saxpy s("run_trace");
  Result r = s.run(kInputs + "--trace trace.json");
  INFO(r.err);
  REQUIRE(r.code == 0);
  json j = json::parse(slurp(s.dir / "trace.json"));
  std::vector<std::string> names;
  for (const json &e : j["traceEvents"])
    if (e["ph"] == "X") {
      names.push_back(e["name"]);
      CHECK(e["dur"].get<double>() >= 0);
      CHECK(e.contains("tid"));
    }
  std::sort(names.begin(), names.end());
  CHECK(names == std::vector<std::string>{"cp", "k0", "k2", "sum"});
}

TEST_CASE("cgrun --list-devices", "[tools][cgrun]") {
  fs::path dir = scratch("list");
  Result r = cgrun("--list-devices", dir);
  REQUIRE(r.code == 0);
  CHECK(r.out.find("cpu: 1 device") != std::string::npos);
  CHECK(r.out.find("  cpu:0  ") != std::string::npos);
  CHECK(r.out.find("cuda: not compiled into this cgrun") != std::string::npos);
  r = cgrun("--list-devices --json", dir);
  REQUIRE(r.code == 0);
  json j = json::parse(r.out);
  CHECK(j["backends"][0]["backend"] == "cpu");
  CHECK(j["backends"][0]["available"] == true);
  CHECK(j["backends"][0]["devices"][0].contains("capabilities"));
}

TEST_CASE("cgrun bench --json has Google Benchmark's shape", "[tools][cgrun]") {
  Saxpy s("bench");
  Result r = s.run("bench " + kInputs + "--warmup 1 --repetitions 3 --json");
  INFO(r.err);
  REQUIRE(r.code == 0);
  json j = json::parse(r.out);
  REQUIRE(j.contains("context"));
  CHECK(j["context"].contains("date"));
  CHECK(j["context"].contains("num_cpus"));
  const json &b = j["benchmarks"];
  REQUIRE(b.size() == 3 * 2 * 3); // modes x (submit, total) x (min, median, max)
  std::set<std::string> runs;
  for (const json &e : b) {
    for (const char *k : {"name", "run_name", "iterations", "real_time", "cpu_time", "time_unit"})
      CHECK(e.contains(k));
    CHECK(e["time_unit"] == "us");
    CHECK(e["iterations"] == 3);
    CHECK(e["real_time"].get<double>() >= 0);
    runs.insert(e["run_name"]);
  }
  CHECK(runs == std::set<std::string>{"saxpy/eager/submit", "saxpy/eager/total",
                                      "saxpy/replay/submit", "saxpy/replay/total",
                                      "saxpy/replay-rebind/submit", "saxpy/replay-rebind/total"});
  r = s.run("bench " + kInputs + "--warmup 0 --repetitions 2");
  REQUIRE(r.code == 0);
  CHECK(r.out.find("replay-rebind  total") != std::string::npos);
}

TEST_CASE("cgrun compare cpu vs cpu agrees", "[tools][cgrun]") {
  Saxpy s("compare_cpu");
  Result r = s.run("compare " + kInputs + "--backend cpu --backend cpu:0");
  INFO(r.err);
  REQUIRE(r.code == 0);
  CHECK(r.out.find("cpu and cpu:0 agree on ") != std::string::npos);
  r = s.run("compare " + kInputs + "--backend cpu --backend cpu --json");
  REQUIRE(r.code == 0);
  json j = json::parse(r.out);
  CHECK(j["ok"] == true);
  CHECK(j["nodes"] == 4);
  r = s.run("compare saxpy.cgf --backend cpu");
  CHECK(r.code == 2);
  CHECK(r.err.find("compare needs exactly two --backend options") != std::string::npos);
}

#ifdef CGRUN_TEST_OPENCL
TEST_CASE("cgrun compare cpu vs opencl (PoCL) agrees", "[tools][cgrun][opencl]") {
  Saxpy s("compare_opencl");
  Result r = s.run("compare " + kInputs + "--backend cpu --backend opencl --ulp 4");
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  CHECK(r.out.find("cpu and opencl agree on ") != std::string::npos);
  r = s.run(kInputs + "--backend opencl --check y=@y4.npy");
  INFO(r.err);
  CHECK(r.code == 0);
}
#endif

#ifdef CGRUN_TEST_OPENCL
// The work-group size a backend picks when the graph gives none is its own choice
// (cpu: one group; PoCL: smaller groups), so a kernel that writes get_local_size(0)
// makes two real backends disagree at a known node and element.
TEST_CASE("cgrun compare reports the first node whose results differ", "[tools][cgrun][opencl]") {
  fs::path dir = scratch("compare_differs");
  GraphBuilder b;
  addModule(b, "__kernel void pre(__global int *a) { a[get_global_id(0)] = 7; }\n"
               "__kernel void ls(__global int *out, __global const int *a) {\n"
               "  out[get_global_id(0)] = (int)get_local_size(0) + a[0] - 7; }\n",
            "ls.cl");
  const uint32_t a = b.addSlot(slot("a", 4 * kN));
  const uint32_t out = b.addSlot(slot("out", 4 * kN));
  b.addKernelNode("fill_a", b.graph().findKernel("pre"), range1D(kN), {Arg::slot(a)});
  b.addKernelNode("sizes", b.graph().findKernel("ls"), range1D(kN), {Arg::slot(out), Arg::slot(a)});
  writeGraph(b.take(), dir / "ls.cgf");
  Result r = cgrun("compare ls.cgf --zeros a --zeros out --backend cpu --backend opencl", dir);
  INFO(r.out << r.err);
  CHECK(r.code == 1);
  CHECK(r.err.find("node 'sizes' (index 1) writes slot 'out': element 0 differs") !=
        std::string::npos);
  r = cgrun("compare ls.cgf --zeros a --zeros out --backend cpu --backend opencl --json", dir);
  CHECK(r.code == 1);
  json j = json::parse(r.out);
  CHECK(j["ok"] == false);
}
#endif

TEST_CASE("cgrun reports bad inputs with one error line", "[tools][cgrun]") {
  Saxpy s("bad_inputs");
  writeFloats(s.dir / "short.npy", 1.0f, 100);
  auto fails = [&](const std::string &args, int code, const std::string &message) {
    Result r = s.run(args);
    INFO(args << "\n" << r.err);
    CHECK(r.code == code);
    CHECK(r.err.find(message) != std::string::npos);
    CHECK(r.out.empty());
  };
  fails("missing.cgf", 1, "cgrun: error: cannot open 'missing.cgf'");
  fails("saxpy.cgf --input x=nope.npy", 1, "cgrun: error: --input x: nope.npy: cannot open: ");
  fails("saxpy.cgf --input x=short.npy", 1,
        "cgrun: error: --input x=short.npy: file has 400 bytes of data, slot 'x' has 4096");
  fails("saxpy.cgf --input zz=ones.npy", 1, "cgrun: error: --input zz=ones.npy: graph has no slot 'zz' (slots: x, y, t)");
  fails("saxpy.cgf --zeros t", 1, "cgrun: error: --zeros t: slot 't' is initialized by the graph");
  fails("saxpy.cgf --param b=1", 1, "cgrun: error: --param b=1: graph has no param 'b' (params: a)");
  fails("saxpy.cgf --param a=x", 1, "cgrun: error: --param a=x: param 'a': 'x' is not a valid f32");
  fails("saxpy.cgf --fill y=abc", 1, "cgrun: error: --fill y=abc: 'abc' is not a valid f32");
  fails("saxpy.cgf --check y=@short.npy", 1, "cgrun: error: --check y=@short.npy: file has 400 bytes");
  fails("saxpy.cgf --backend cuda", 1, "cgrun: error: device 'cuda': no backend 'cuda'");
  fails("saxpy.cgf --no-such-flag", 2, "cgrun: error: The following argument was not expected: --no-such-flag");
  fails("saxpy.cgf -n 0", 2, "cgrun: error: --iterations must be at least 1");
  Result r = s.run("saxpy.cgf --random x:7 --zeros y");
  CHECK(r.code == 0);
  CHECK(r.err.find("note") == std::string::npos);
  // Missing inputs are zeros, with a note.
  r = s.run("saxpy.cgf");
  CHECK(r.code == 0);
  CHECK(r.err.find("cgrun: note: slot 'x' has no input; using zeros") != std::string::npos);
}

TEST_CASE("cgrun keeps graph file paths inside the allowed directories", "[tools][cgrun]") {
  fs::path dir = scratch("paths");
  fs::create_directories(dir / "sub");
  writeSaxpy(dir / "sub" / "escape.cgf", "write_file", {Arg::string("../escaped.bin")});
  writeSaxpy(dir / "sub" / "inside.cgf", "write_file", {Arg::string("t.bin")});
  writeFloats(dir / "ones.npy", 1.0f);
  // cwd (dir) is allowed by default, so run from sub/ to keep only sub/ and sub/.
  Result r = cgrun("escape.cgf --input x=../ones.npy", dir / "sub");
  CHECK(r.code == 1);
  CHECK(r.err.find("cgrun: error: node 'sum': path '../escaped.bin' resolves to '" +
                   (dir / "escaped.bin").string() + "', outside the allowed directories") !=
        std::string::npos);
  CHECK_FALSE(fs::exists(dir / "escaped.bin"));
  // Allowing the parent lets it through.
  r = cgrun("escape.cgf --input x=../ones.npy --allow-dir ..", dir / "sub");
  INFO(r.err);
  CHECK(r.code == 0);
  CHECK(fs::file_size(dir / "escaped.bin") == kN * 4);
  r = cgrun("sub/inside.cgf --input x=ones.npy", dir);
  INFO(r.err);
  CHECK(r.code == 0);
  CHECK(fs::exists(dir / "sub" / "t.bin"));
}

TEST_CASE("cgrun loads plugin host tasks only with --allow-plugins", "[tools][cgrun]") {
  fs::path dir = scratch("plugins");
  writeSaxpy(dir / "plugin.cgf", "no_such_symbol", {}, "libnothing.so");
  Result r = cgrun("plugin.cgf", dir);
  CHECK(r.code == 1);
  CHECK(r.err.find("cgrun: error: node 'sum': host task 'libnothing.so:no_such_symbol' is a plugin, "
                   "and plugins are not allowed (cgrun --allow-plugins)") != std::string::npos);
  r = cgrun("plugin.cgf --allow-plugins", dir);
  CHECK(r.code == 1);
  CHECK(r.err.find("cgrun: error: node 'sum': cannot load plugin 'libnothing.so'") != std::string::npos);
}
