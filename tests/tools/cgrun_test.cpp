// cgrun end to end: the real binary on real .cgf files, on the real CPU backend.
#include "cgrun_test_util.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <set>

using namespace cgruntest;
using nlohmann::json;

TEST_CASE("cgrun replays and checks results", "[tools][cgrun]") {
  Saxpy s("run_check");
  // Replays share state: y += a*x per iteration, so after 3 runs y = 2 + 3*2.
  writeFloats(s.dir / "y8.npy", 8.0f);
  Result r = s.run(kSaxpyInputs + "--check y=@y8.npy -n 3");
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
  r = s.run(kSaxpyInputs + "--param a=8 --check y=@y10.bin:f32 --output t=t.npy --output y=y.bin");
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
  Result r = s.run(kSaxpyInputs + "--check y=@y5.npy");
  CHECK(r.code == 1);
  CHECK(r.out.find("check y: FAILED: element 0 differs: 4 vs 5") != std::string::npos);
  CHECK(r.err.find("cgrun: error: check failed") != std::string::npos);
  // Within tolerance it passes.
  r = s.run(kSaxpyInputs + "--check y=@y5.npy --atol 1.5");
  CHECK(r.code == 0);
}

TEST_CASE("cgrun --json puts only results on stdout", "[tools][cgrun]") {
  Saxpy s("run_json");
  writeFloats(s.dir / "y6.npy", 6.0f); // two replays of y += 2
  Result r = s.run(kSaxpyInputs + "--check y=@y6.npy --json -n 2");
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
  Result r = s.run(kSaxpyInputs + "--trace trace.json");
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
  // hip is compiled in where libamdhip64-dev's headers were found, and unavailable: no
  // runtime library, or the runtime (libamdhip64-dev brings it) and no AMD GPU.
#ifdef CGRUN_TEST_HIP
  CHECK((r.out.find("hip: unavailable: libamdhip64.so not found") != std::string::npos ||
         r.out.find("hip: unavailable: no HIP device (libamdhip64.so") != std::string::npos));
#else
  CHECK(r.out.find("hip: not compiled into this cgrun") != std::string::npos);
#endif
  const std::string text = r.out; // the text listing, checked against the JSON below
  r = cgrun("--list-devices --json", dir);
  REQUIRE(r.code == 0);
  json j = json::parse(r.out);
  CHECK(j["backends"][0]["backend"] == "cpu");
  CHECK(j["backends"][0]["available"] == true);
  CHECK(j["backends"][0]["devices"][0].contains("capabilities"));
  bool hipListed = false;
  for (const json &b : j["backends"]) {
    if (b["backend"] != "hip") continue;
    hipListed = true;
    CHECK(b["available"] == false);
#ifdef CGRUN_TEST_HIP
    CHECK(b["compiled_in"] == true);
    const std::string reason = b["reason"];
    CHECK((reason.find("libamdhip64.so not found") == 0 || reason.find("no HIP device (libamdhip64.so") == 0));
#else
    CHECK(b["compiled_in"] == false);
#endif
  }
  CHECK(hipListed);
  // cuda is compiled in wherever cuda.h was found at configure time (CI has the toolkit
  // and no GPU): without a device it says why, in text and JSON alike.
#ifdef CGRUN_TEST_CUDA_STANDIN
  bool cudaListed = false;
  for (const json &b : j["backends"]) {
    if (b["backend"] != "cuda") continue;
    cudaListed = true;
    CHECK(b["compiled_in"] == true);
    if (b["available"] == true) { // a machine with an NVIDIA GPU
      CHECK(!b["devices"].empty());
      continue;
    }
    CHECK(b["devices"].empty());
    const std::string reason = b["reason"];
    CHECK((reason == "libcuda.so.1 not found (no NVIDIA driver installed)" ||
           reason == "no CUDA device (cuInit: CUDA_ERROR_NO_DEVICE)"));
    CHECK(text.find("cuda: unavailable: " + reason + "\n") != std::string::npos);
  }
  CHECK(cudaListed);
#endif
  // The opencl backend names its replay strategy per device (lib/backends/opencl rule).
  for (const json &b : j["backends"]) {
    if (b["backend"] != "opencl" || b["available"] != true) continue;
    REQUIRE(!b["devices"].empty());
    for (const json &d : b["devices"]) {
      const std::string replay = d["replay"];
      CHECK((replay == "pre-resolved" || replay == "command-buffer"));
      CHECK(d["capabilities"]["native_command_buffer"] == (replay == "command-buffer"));
    }
  }
}

TEST_CASE("cgrun bench --json has Google Benchmark's shape", "[tools][cgrun]") {
  Saxpy s("bench");
  Result r = s.run("bench " + kSaxpyInputs + "--warmup 1 --repetitions 3 --json");
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
  r = s.run("bench " + kSaxpyInputs + "--warmup 0 --repetitions 2");
  REQUIRE(r.code == 0);
  CHECK(r.out.find("replay-rebind  total") != std::string::npos);
}

TEST_CASE("cgrun compare cpu vs cpu agrees", "[tools][cgrun]") {
  Saxpy s("compare_cpu");
  Result r = s.run("compare " + kSaxpyInputs + "--backend cpu --backend cpu:0");
  INFO(r.err);
  REQUIRE(r.code == 0);
  CHECK(r.out.find("cpu (replay) and cpu:0 (replay) agree on ") != std::string::npos);
  r = s.run("compare " + kSaxpyInputs + "--backend cpu --backend cpu --json");
  REQUIRE(r.code == 0);
  json j = json::parse(r.out);
  CHECK(j["ok"] == true);
  CHECK(j["nodes"] == 4);
  r = s.run("compare saxpy.cgf --backend cpu --backend cpu --backend cpu");
  CHECK(r.code == 2);
  CHECK(r.err.find("compare needs one or two --backend options") != std::string::npos);
}

TEST_CASE("cgrun compare checks replay against eager on one backend", "[tools][cgrun]") {
  Saxpy s("compare_modes");
  // Default with one backend: replay vs eager, every written slot at the end.
  Result r = s.run("compare " + kSaxpyInputs + "--backend cpu");
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  CHECK(r.out.find("cpu (replay) and cpu (eager) agree on the final contents of 2 written slots (4 nodes)") !=
        std::string::npos);
  // Two eager sides: node by node.
  r = s.run("compare " + kSaxpyInputs + "--backend cpu --modes eager");
  REQUIRE(r.code == 0);
  CHECK(r.out.find("cpu (eager) and cpu (eager) agree on every node (4 nodes)") != std::string::npos);
  // Default with two backends: replay at the end, then eager node by node.
  r = s.run("compare " + kSaxpyInputs + "--backend cpu --backend cpu:0");
  REQUIRE(r.code == 0);
  CHECK(r.out.find("cpu (replay) and cpu:0 (replay) agree on the final contents") != std::string::npos);
  CHECK(r.out.find("cpu (eager) and cpu:0 (eager) agree on every node") != std::string::npos);
  // Usage errors.
  r = s.run("compare " + kSaxpyInputs + "--backend cpu --modes replay,lazy");
  CHECK(r.code == 2);
  CHECK(r.err.find("cgrun: error: --modes replay,lazy: 'lazy' is not a mode (replay, eager)") != std::string::npos);
  r = s.run("compare " + kSaxpyInputs + "--backend cpu --norm l1");
  CHECK(r.code == 2);
  CHECK(r.err.find("cgrun: error: --norm l1: expected l2 or none") != std::string::npos);
}

TEST_CASE("cgrun compare --json: one entry per comparison, every compared slot", "[tools][cgrun]") {
  Saxpy s("compare_json");
  Result r = s.run("compare " + kSaxpyInputs + "--backend cpu --json");
  INFO(r.err);
  REQUIRE(r.code == 0);
  json j = json::parse(r.out);
  CHECK(j["ok"] == true);
  CHECK(j["nodes"] == 4);
  CHECK(j["tolerance"]["norm"] == "none");
  CHECK(j["tolerance"]["rtol"].get<double>() == 1e-5);
  REQUIRE(j["comparisons"].size() == 1);
  const json &c = j["comparisons"][0];
  CHECK(c["how"] == "final state");
  CHECK(c["ok"] == true);
  CHECK(c["sides"][0] == json({{"backend", "cpu"}, {"mode", "replay"}}));
  CHECK(c["sides"][1] == json({{"backend", "cpu"}, {"mode", "eager"}}));
  REQUIRE(c["slots"].size() == 2); // y (k0) and t (cp, k2); x is only read
  std::set<std::string> slots;
  for (const json &sl : c["slots"]) {
    slots.insert(sl["slot"]);
    CHECK(sl["type"] == "f32");
    CHECK(sl["elements"] == kN);
    CHECK(sl["ok"] == true);
    CHECK(sl["max_abs_err"] == 0.0);
    CHECK(sl.contains("last_writer"));
  }
  CHECK(slots == std::set<std::string>{"t", "y"});
  // Norm mode reports the norms of every slot.
  r = s.run("compare " + kSaxpyInputs + "--backend cpu --backend cpu --norm l2 --json");
  REQUIRE(r.code == 0);
  j = json::parse(r.out);
  REQUIRE(j["comparisons"].size() == 2);
  CHECK(j["comparisons"][1]["how"] == "per node");
  CHECK(j["comparisons"][1]["nodes_compared"] == 4);
  const json &norm = j["comparisons"][0]["slots"][0]["norm"];
  CHECK(norm["kind"] == "l2");
  CHECK(norm["difference"] == 0.0);
  CHECK(norm["relative"] == 0.0);
  CHECK(norm["reference"].get<double>() > 0);
}

#ifdef CGRUN_TEST_OPENCL
TEST_CASE("cgrun compare cpu vs opencl (PoCL) agrees", "[tools][cgrun][opencl]") {
  Saxpy s("compare_opencl");
  Result r = s.run("compare " + kSaxpyInputs + "--backend cpu --backend opencl --ulp 4");
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  CHECK(r.out.find("cpu (replay) and opencl (replay) agree on ") != std::string::npos);
  CHECK(r.out.find("cpu (eager) and opencl (eager) agree on every node") != std::string::npos);
  // PoCL's command-buffer replay against its own eager path, and cpu replay against
  // PoCL eager.
  r = s.run("compare " + kSaxpyInputs + "--backend opencl");
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  CHECK(r.out.find("opencl (replay) and opencl (eager) agree on the final contents") != std::string::npos);
  r = s.run("compare " + kSaxpyInputs + "--backend cpu --backend opencl --modes replay,eager --ulp 4");
  REQUIRE(r.code == 0);
  CHECK(r.out.find("cpu (replay) and opencl (eager) agree on the final contents") != std::string::npos);
  r = s.run(kSaxpyInputs + "--backend opencl --check y=@y4.npy");
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
  // The replays, at the end: the closing error names the slot, element and both values.
  CHECK(r.err.find("cgrun: error: cpu (replay) vs opencl (replay): slot 'out' (last written by node "
                   "'sizes', i32): element 0 differs: 1024 vs ") != std::string::npos);
  // The eager paths, node by node: the node.
  CHECK(r.err.find("cgrun: note: cpu (eager) vs opencl (eager): node 'sizes' (index 1) writes slot "
                   "'out': element 0 differs: 1024 vs ") != std::string::npos);
  CHECK(r.out.empty());
  r = cgrun("compare ls.cgf --zeros a --zeros out --backend cpu --backend opencl --json", dir);
  CHECK(r.code == 1);
  json j = json::parse(r.out);
  CHECK(j["ok"] == false);
  REQUIRE(j["comparisons"].size() == 2);
  for (const json &c : j["comparisons"]) {
    CHECK(c["ok"] == false);
    CHECK(c["first_difference"]["slot"] == "out");
    CHECK(c["first_difference"]["type"] == "i32");
    CHECK(c["first_difference"]["first_bad"]["element"] == 0);
    CHECK(c["first_difference"]["first_bad"]["values"][0] == "1024");
  }
  CHECK(j["comparisons"][1]["first_difference"]["node"] == "sizes");
  CHECK(j["comparisons"][1]["first_difference"]["index"] == 1);
  // Written slot `a` agrees: only `out` is reported in the final-state comparison.
  const json &slots = j["comparisons"][0]["slots"];
  REQUIRE(slots.size() == 2);
  for (const json &sl : slots) CHECK(sl["ok"] == (sl["slot"] == "a"));
}

// A time-stepped 1D stencil of transcendental functions: cpu (libm) and PoCL (its own
// sin/exp) round a few results differently, and 300 dependent steps carry that into a
// relative difference of ~1e-4 in elements near zero, while the whole field agrees to
// ~1e-6 in the L2 norm.
TEST_CASE("cgrun compare --norm l2 accepts a drifting stencil that fails element by element",
          "[tools][cgrun][opencl]") {
  fs::path dir = scratch("compare_norm");
  GraphBuilder b("drift");
  addModule(b,
            "__kernel void init(__global float *u) {\n"
            "  const int i = get_global_id(0);\n  u[i] = sin(0.05f * (float)i) + 0.01f; }\n"
            "__kernel void step(__global float *dst, __global const float *src, int n) {\n"
            "  const int i = get_global_id(0);\n"
            "  const float l = src[i > 0 ? i - 1 : i], c = src[i], r = src[i < n - 1 ? i + 1 : i];\n"
            "  dst[i] = c + 0.2f * (sin(l) - 2.0f * sin(c) + sin(r)) + 0.001f * exp(-c * c); }\n",
            "drift.cl");
  const uint32_t u0 = b.addSlot(slot("u0", 4 * kN)), u1 = b.addSlot(slot("u1", 4 * kN));
  b.addKernelNode("init", b.graph().findKernel("init"), range1D(kN), {Arg::slot(u0)});
  for (int i = 0; i < 300; ++i)
    b.addKernelNode("step." + std::to_string(i), b.graph().findKernel("step"), range1D(kN),
                    {Arg::slot(i % 2 ? u0 : u1), Arg::slot(i % 2 ? u1 : u0), Arg::scalar(ScalarType::I32, kN)});
  writeGraph(b.take(), dir / "drift.cgf");
  const std::string base = "compare drift.cgf --zeros u0 --zeros u1 --backend cpu --backend opencl --modes replay ";
  Result r = cgrun(base, dir);
  INFO(r.out << r.err);
  CHECK(r.code == 1);
  CHECK(r.err.find("cgrun: error: cpu (replay) vs opencl (replay): slot 'u") != std::string::npos);
  CHECK(r.err.find("(last written by node 'step.29") != std::string::npos);
  CHECK(r.err.find(", f32): element ") != std::string::npos);
  r = cgrun(base + "--norm l2 --rtol 1e-5", dir);
  INFO(r.out << r.err);
  CHECK(r.code == 0);
  CHECK(r.out.find("cpu (replay) and opencl (replay) agree on the final contents of 2 written slots (301 nodes)") !=
        std::string::npos);
  r = cgrun(base + "--norm l2 --rtol 1e-5 --json", dir);
  REQUIRE(r.code == 0);
  json j = json::parse(r.out);
  for (const json &sl : j["comparisons"][0]["slots"]) {
    const double rel = sl["norm"]["relative"];
    CHECK(rel > 0);     // they do differ...
    CHECK(rel < 1e-5);  // ...by little, as a whole
    CHECK(sl["worst"]["values"].size() == 2);
  }
  // A norm bound below the drift fails, with the norm figures and the worst element.
  r = cgrun(base + "--norm l2 --rtol 1e-9 --atol 0", dir);
  CHECK(r.code == 1);
  CHECK(r.err.find(": l2 norm of the difference ") != std::string::npos);
  CHECK(r.err.find(" > rtol 1e-09 (largest difference at element ") != std::string::npos);
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
  fails("saxpy.cgf --backend nosuch", 1, "cgrun: error: device 'nosuch': no backend 'nosuch'");
#ifdef CGRUN_TEST_HIP
  {
    // Compiled in, no device here: the probe's reason.
    Result r = s.run("saxpy.cgf --backend hip");
    INFO(r.err);
    CHECK(r.code == 1);
    CHECK((r.err.find("cgrun: error: device 'hip': no HIP device (libamdhip64.so") == 0 ||
           r.err.find("cgrun: error: device 'hip': libamdhip64.so not found") == 0));
  }
#else
  fails("saxpy.cgf --backend hip", 1, "cgrun: error: device 'hip': no backend 'hip'");
#endif
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

// Issue 12: one description whose ranges and arguments are expressions over a parameter
// `$n`, compiled once by the real cgc (the expressions are stored in the .cgf file,
// format 2.0) and run by the real cgrun at several `--param n=...`, each result checked
// against a C++ LU decomposition; a value that makes a range empty is refused before
// anything runs, naming the node and field.
TEST_CASE("cgc stores expressions over parameters; cgrun runs one LU file at several n",
          "[tools][cgrun][cgc][expr]") {
  const fs::path dir = scratch("expr_lu");
  constexpr int kMax = 32;
  fs::create_directories(dir / "kernels");
  std::ofstream(dir / "kernels" / "lu.cl")
      << "__kernel void lu_scale(__global float *a, int k, int first, int n) {\n"
         "  const int i = (int)get_global_id(0) + first;\n"
         "  if (i < n) a[i * n + k] /= a[k * n + k];\n}\n"
         "__kernel void lu_update(__global float *a, int k, int n) {\n"
         "  const int j = (int)get_global_id(0);\n  const int i = (int)get_global_id(1);\n"
         "  if (i < n && j < n) a[i * n + j] -= a[i * n + k] * a[k * n + j];\n}\n";
  // Steps k >= n - 1 have no rows left: max(..., 1) keeps their ranges non-empty (the
  // kernels skip rows and columns >= n), so one file of kMax - 1 steps serves every n.
  const std::string desc = R"J({
  "name": "lu_n",
  "kernels": [{ "file": "kernels/lu.cl" }],
  "params": [{ "name": "n", "type": "i32", "default": 32 }],
  "slots": [{ "name": "a", "count": "32 * 32", "type": "f32", "external": true }],
  "nodes": [
    { "repeat": 31, "var": "k", "nodes": [
      { "name": "scale", "kernel": "lu_scale",
        "global": ["align_up(max($n - $k - 1, 1), 8)"], "local": [8],
        "args": ["a", "$k", "$k + 1", "$n"] },
      { "name": "update", "kernel": "lu_update",
        "global": ["align_up(max($n - $k - 1, 1), 4)", "align_up(max($n - $k - 1, 1), 4)"],
        "local": [4, 4], "offset": ["$k + 1", "$k + 1"], "args": ["a", "$k", "$n"] }
    ] }
  ]
})J";
  std::ofstream(dir / "lu.json") << desc;
  // The same without max(): a step with no rows left is an empty range.
  std::string strict = desc;
  for (size_t at; (at = strict.find("max($n - $k - 1, 1)")) != std::string::npos;)
    strict.replace(at, 19, "$n - $k - 1");
  std::ofstream(dir / "lu_strict.json") << strict;
  tooltest::Result c = tooltest::runTool(CGC_PATH, "lu.json -o lu.cgf", dir, dir / "cgc_std");
  INFO(c.out << c.err);
  REQUIRE(c.code == 0);
  {
    std::ifstream f(dir / "lu.cgf", std::ios::binary);
    char h[10] = {};
    f.read(h, 10);
    CHECK(h[8] == 2); // major version 2: the file stores expressions
  }
  auto matrix = [&](int n) {
    std::vector<float> a(kMax * kMax, 0.f);
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j)
        a[i * n + j] = i == j ? float(n + 2) : float((i * 5 + j * 3) % 13) / 13.f - 0.5f;
    return a;
  };
  auto reference = [&](std::vector<float> a, int n) {
    for (int k = 0; k + 1 < n; ++k) {
      for (int i = k + 1; i < n; ++i)
        a[i * n + k] /= a[k * n + k];
      for (int i = k + 1; i < n; ++i)
        for (int j = k + 1; j < n; ++j)
          a[i * n + j] = std::fma(-a[i * n + k], a[k * n + j], a[i * n + j]);
    }
    return a;
  };
  for (int n : {32, 9, 20, 1}) {
    INFO("n = " << n);
    const std::string in = "a" + std::to_string(n) + ".npy", ex = "e" + std::to_string(n) + ".npy";
    std::vector<float> a = matrix(n), e = reference(a, n);
    REQUIRE_FALSE(rt::writeNpyFile((dir / in).string(), ScalarType::F32, a.data(), a.size() * 4));
    REQUIRE_FALSE(rt::writeNpyFile((dir / ex).string(), ScalarType::F32, e.data(), e.size() * 4));
    Result r = cgrun("lu.cgf --param n=" + std::to_string(n) + " --input a=" + in + " --check a=@" +
                         ex + " --rtol 1e-4 --atol 1e-5",
                     dir);
    INFO(r.out << r.err);
    CHECK(r.code == 0);
    CHECK(r.out.find("check a: ok") != std::string::npos);
  }
  // bench: the same parameter given several times adds a mode cycling through them.
  // --modes all: a whole-graph update from the file leaves the expression fields to the
  // parameters (it once took them for changed literal ranges and refused).
  Result bench = cgrun("bench lu.cgf --zeros a --param n=32 --param n=9 --param n=20 --warmup 1 "
                       "--repetitions 3 --json --modes all",
                       dir);
  INFO(bench.err);
  REQUIRE(bench.code == 0);
  json bj = json::parse(bench.out);
  std::set<std::string> runs;
  for (const json &x : bj["benchmarks"])
    runs.insert(x["run_name"].get<std::string>());
  // Every mode once per value, its rows labelled with it; the reshape mode cycles.
  CHECK(runs.count("lu_n/replay/n=32/total"));
  CHECK(runs.count("lu_n/replay/n=9/total"));
  CHECK(runs.count("lu_n/replay/n=20/total"));
  CHECK(runs.count("lu_n/replay-reshape/n=32|n=9|n=20/total"));
  CHECK(runs.count("lu_n/update-graph/n=9/total"));
  for (const json &x : bj["benchmarks"])
    if (x["run_name"] == "lu_n/eager/n=20/total") CHECK(x["params"] == "n=20");
  Result text = cgrun("bench lu.cgf --zeros a --param n=32 --param n=9 --warmup 0 --repetitions 1", dir);
  INFO(text.err);
  REQUIRE(text.code == 0);
  CHECK(text.out.find("params") != std::string::npos);
  CHECK(text.out.find("replay         n=9   ") != std::string::npos);
  CHECK(text.out.find("replay-reshape n=32|n=9 ") != std::string::npos);
  // n = 20: step k = 19 has n - k - 1 = 0 rows; refused before anything runs.
  c = tooltest::runTool(CGC_PATH, "lu_strict.json -o lu_strict.cgf", dir, dir / "cgc_std");
  INFO(c.out << c.err);
  REQUIRE(c.code == 0);
  Result bad = cgrun("lu_strict.cgf --param n=20 --zeros a", dir);
  CHECK(bad.code != 0);
  CHECK(bad.err.find(
            "node 'scale.19': global[0] = align_up($n - 19 - 1, 8) is 0; it must be at least 1") !=
        std::string::npos);
}

// Issue 12, stage 3: slot sizes, copy and fill offsets and sizes and a host task
// argument that depend on `$n` (.cgf 2.2). cgrun sizes its buffers, inputs and outputs
// for the run's parameters; bench binds for the largest shape and cycles through them.
TEST_CASE("cgrun runs copy, fill, host and slot size expressions at several n",
          "[tools][cgrun][cgc][expr]") {
  const fs::path dir = scratch("expr_transfer");
  std::ofstream(dir / "t.json") << R"J({
  "name": "resize",
  "params": [{ "name": "n", "type": "i32", "default": 4 }],
  "slots": [{ "name": "src", "count": "$n", "type": "u32", "external": true },
            { "name": "dst", "count": "$n * 2", "type": "u32", "external": true },
            { "name": "pat", "count": "$n", "type": "u32", "init": { "fill": 7, "type": "u32" } }],
  "nodes": [
    { "name": "c", "copy": { "src": "src", "dst": { "slot": "dst", "offset": "$n * 4" }, "bytes": "$n * 4" } },
    { "name": "f", "copy": { "src": "pat", "dst": "dst", "bytes": "$n * 4" } },
    { "name": "z", "fill": { "dst": { "slot": "dst", "offset": "$n * 8 - 4" }, "value": 9, "type": "u32",
                             "bytes": "min($n - 1, 1) * 4" } },
    { "name": "p", "host": "print", "args": ["dst", { "string": "u32" }, "$n + 1"] }
  ]
})J";
  tooltest::Result c = tooltest::runTool(CGC_PATH, "t.json -o t.cgf", dir, dir / "cgc_std");
  INFO(c.out << c.err);
  REQUIRE(c.code == 0);
  {
    std::ifstream f(dir / "t.cgf", std::ios::binary);
    char h[20] = {};
    f.read(h, 20);
    CHECK(h[8] == 2);  // major 2
    CHECK(h[10] == 2); // minor 2
    CHECK(h[16] == 5); // flags: expressions, and copy/fill/host/slot ones
  }
  std::vector<const char *> backends{"cpu"};
#ifdef CGRUN_TEST_OPENCL
  backends.push_back("opencl");
#endif
  for (const char *backend : backends) {
    for (int n : {3, 17, 1}) {
      INFO(backend << ", n = " << n);
      std::vector<uint32_t> src(n), want(2 * n);
      for (int i = 0; i < n; ++i) {
        src[i] = 100 + i;
        want[i] = 7;
        want[n + i] = 100 + i;
      }
      if (n > 1) want[2 * n - 1] = 9; // the fill is 0 bytes at n = 1
      const std::string in = "s" + std::to_string(n) + ".npy",
                        ex = "w" + std::to_string(n) + ".npy";
      REQUIRE_FALSE(
          rt::writeNpyFile((dir / in).string(), ScalarType::U32, src.data(), src.size() * 4));
      REQUIRE_FALSE(
          rt::writeNpyFile((dir / ex).string(), ScalarType::U32, want.data(), want.size() * 4));
      Result r =
          cgrun(std::string("t.cgf --backend ") + backend + " --param n=" + std::to_string(n) +
                    " --input src=" + in + " --check dst=@" + ex,
                dir);
      INFO(r.out << r.err);
      CHECK(r.code == 0);
      CHECK(r.out.find("check dst: ok") != std::string::npos);
      std::string line = "print dst:";
      for (int i = 0; i <= n && i < 2 * n; ++i)
        line += " " + std::to_string(want[i]);
      CHECK(r.out.find(line) != std::string::npos);
    }
  }
  // An input of the default size does not fit n = 3: sized for the run.
  Result wrong = cgrun("t.cgf --param n=4 --input src=s3.npy", dir);
  CHECK(wrong.code != 0);
  CHECK(wrong.err.find("file has 12 bytes of data, slot 'src' has 16") != std::string::npos);
  Result zero = cgrun("t.cgf --param n=0 --zeros src", dir);
  CHECK(zero.code != 0);
  CHECK(
      zero.err.find("cgrun: error: node 'z': offset = $n * 8 - 4 is -4; it must not be negative") !=
      std::string::npos);
  // bench: buffers for the largest n, a replay that changes shape (and slot sizes) every run.
  Result bench = cgrun("bench t.cgf --zeros src --param n=3 --param n=50 --param n=9 --warmup 1 "
                       "--repetitions 3 --json",
                       dir);
  INFO(bench.err);
  REQUIRE(bench.code == 0);
  json bj = json::parse(bench.out);
  std::set<std::string> runs;
  for (const json &x : bj["benchmarks"])
    runs.insert(x["run_name"].get<std::string>());
  CHECK(runs.count("resize/replay/n=50/total"));
  CHECK(runs.count("resize/replay-reshape/n=3|n=50|n=9/total"));
  CHECK(runs.count("resize/eager/n=3/total"));
}

// The same fields in a runtime-driven graph (an `if` node: stages and a body executable)
// and in a graph placed on two devices (segments): every part sees this run's sizes.
TEST_CASE("copy, fill and slot size expressions in staged and multi-device graphs",
          "[tools][cgrun][cgc][expr]") {
  const fs::path dir = scratch("expr_staged");
  const std::string desc = R"J({
  "name": "staged",
  "params": [{ "name": "n", "type": "i32", "default": 4 }],
  "slots": [{ "name": "flag", "count": 1, "type": "u32", "init": { "fill": 1, "type": "u32" } },
            { "name": "a", "count": "$n", "type": "u32", "external": true },
            { "name": "t", "count": "$n", "type": "u32", "init": "transient" }],
  "nodes": [
    { "name": "f", "fill": { "dst": "t", "value": 3, "type": "u32", "bytes": "$n * 4" } },
    { "name": "c", DEVICE"copy": { "src": "t", "dst": "a", "bytes": "$n * 4" } },
    { "name": "cond", "if": "flag", "body": [
      { "name": "g", "fill": { "dst": { "slot": "a", "offset": "$n * 4 - 4" }, "value": 5, "type": "u32", "bytes": 4 } }
    ] },
    { "name": "p", "host": "print", "args": ["a", { "string": "u32" }] }
  ]
})J";
  std::string one = desc, two = desc;
  one.replace(one.find("DEVICE"), 6, "");
  two.replace(two.find("DEVICE"), 6, "\"device\": 1, ");
  std::ofstream(dir / "one.json") << one;
  std::ofstream(dir / "two.json") << two;
  for (const char *name : {"one", "two"}) {
    tooltest::Result c = tooltest::runTool(
        CGC_PATH, std::string(name) + ".json -o " + name + ".cgf", dir, dir / "cgc_std");
    INFO(c.out << c.err);
    REQUIRE(c.code == 0);
  }
  std::vector<std::string> runs{"one.cgf", "one.cgf --backend cpu --backend cpu"};
#ifdef CGRUN_TEST_OPENCL
  runs.push_back("one.cgf --backend opencl");
  runs.push_back("two.cgf --backend cpu --backend opencl");
#endif
  for (const std::string &run : runs)
    for (int n : {3, 9}) {
      INFO(run << ", n = " << n);
      Result r = cgrun(run + " --param n=" + std::to_string(n) + " --zeros a", dir);
      INFO(r.out << r.err);
      CHECK(r.code == 0);
      std::string line = "print a:";
      for (int i = 0; i < n; ++i)
        line += i + 1 < n ? " 3" : " 5";
      CHECK(r.out.find(line + " (" + std::to_string(n) + " x u32)") != std::string::npos);
    }
}

TEST_CASE("cgrun --set, --disable and --update-from update the executable", "[tools][cgrun][update]") {
  Saxpy s("update");
  // x = 1, y = 2, a = 2: y = 4, t = y * 0.5 = 2 per element (checksum sum=2048).
  Result r = s.run(kSaxpyInputs + "--set k2.arg1=0.25 --check y=@y4.npy");
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  CHECK(r.out.find("check y: ok") != std::string::npos);
  CHECK(r.out.find("sum=1024 (1024 x f32)") != std::string::npos);

  r = s.run(kSaxpyInputs + "--disable k2");
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  CHECK(r.out.find("sum=4096 (1024 x f32)") != std::string::npos);

  // k0 over the first half only (global 512, local 64 kept): y = 4 there, 2 after.
  r = s.run(kSaxpyInputs + "--set k0.global=512 --set k2.enabled=1");
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  CHECK(r.out.find("sum=1536 (1024 x f32)") != std::string::npos);

  // A whole-graph update from a file of the same topology.
  r = s.run(kSaxpyInputs + "--update-from saxpy.cgf --check y=@y4.npy");
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);

  struct Bad {
    std::string args, message;
  };
  const Bad bad[] = {
      {"--set nope.arg0=1", "--set nope.arg0=1: no node named 'nope'"},
      {"--set k2.arg1=abc", "--set k2.arg1=abc"},
      {"--set k2.arg5=1", "node 'k2' has 2 arguments"},
      {"--set k2.speed=1", "unknown field 'speed'"},
      {"--set cp.global=4", "not a kernel node"},
      {"--set k0.global=0", "node 'k0': global size in dimension 0 is 0"},
      {"--set k0.local=32768", "larger than the device's maximum"},
      {"--disable k9", "--disable k9: no node named 'k9'"},
      {"--update-from missing.cgf", "missing.cgf"},
  };
  for (const Bad &b : bad) {
    r = s.run(kSaxpyInputs + b.args);
    INFO(b.args << "\n" << r.out << r.err);
    CHECK(r.code != 0);
    CHECK(r.err.find(b.message) != std::string::npos);
  }

  // bench: the cost of a node update and of a whole-graph update next to replay.
  // They run when asked (--modes all, or by name), not by default.
  r = s.run("bench " + kSaxpyInputs + "--warmup 1 --repetitions 3");
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  CHECK(r.out.find("update-node") == std::string::npos);
  CHECK(r.out.find("replay-stream") == std::string::npos);
  CHECK(r.out.find("replay-rebind") != std::string::npos);
  r = s.run("bench " + kSaxpyInputs + "--warmup 1 --repetitions 3 --modes all");
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  CHECK(r.out.find("update-node    update") != std::string::npos);
  CHECK(r.out.find("update-graph   update") != std::string::npos);
  r = s.run("bench " + kSaxpyInputs + "--warmup 1 --repetitions 3 --modes update-graph,replay");
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  CHECK(r.out.find("update-graph   update") != std::string::npos);
  CHECK(r.out.find("eager") == std::string::npos);
  // replay-stream: 10 replays back to back per sample, asked for by name only.
  r = s.run("bench " + kSaxpyInputs + "--warmup 1 --repetitions 3 --modes replay-stream --json");
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  {
    auto j = nlohmann::json::parse(r.out);
    std::set<std::string> runs;
    for (const auto &bm : j["benchmarks"]) {
      runs.insert(bm["run_name"].get<std::string>());
      CHECK(bm["repetitions"].get<size_t>() == 3);
      CHECK(bm["real_time"].get<double>() > 0);
    }
    CHECK(runs.size() == 2);
    CHECK(std::any_of(runs.begin(), runs.end(),
                      [](const std::string &n) { return n.find("/replay-stream/total") != std::string::npos; }));
  }
  r = s.run("bench " + kSaxpyInputs + "--modes replay,lazy");
  CHECK(r.code == 2);
  CHECK(r.err.find("--modes: unknown mode 'lazy'") != std::string::npos);
  r = s.run("bench " + kSaxpyInputs + "--modes replay-reshape");
  CHECK(r.code == 2);
  CHECK(r.err.find("replay-reshape: it needs a --param given more than once") != std::string::npos);
}

TEST_CASE("cgc stores kernel alternatives; cgrun --set NODE.kernel switches", "[tools][cgrun][update]") {
  fs::path dir = scratch("alternatives");
  fs::create_directories(dir / "kernels");
  std::ofstream(dir / "kernels" / "scale.cl")
      << "__kernel void scale_mul(__global float *x, float s) { x[get_global_id(0)] *= s; }\n"
         "__kernel void scale_add(__global float *x, float s) { x[get_global_id(0)] += s; }\n"
         "__kernel void scale_int(__global int *x, int s) { x[get_global_id(0)] *= s; }\n";
  std::ofstream(dir / "alt.json") << R"J({
  "name": "alt",
  "kernels": ["kernels/scale.cl"],
  "slots": [{ "name": "x", "count": 256, "type": "f32", "external": true }],
  "nodes": [
    { "name": "s", "kernel": "scale_mul", "alternatives": ["scale_add"], "global": [256],
      "args": ["x", { "f32": 3.0 }] }
  ]
})J";
  tooltest::Result c = tooltest::runTool(CGC_PATH, "alt.json -o alt.cgf", dir, dir / "cgc_std");
  INFO(c.out << c.err);
  REQUIRE(c.code == 0);
  c = tooltest::runTool(CGC_PATH, "dump --json alt.cgf", dir, dir / "cgc_std");
  REQUIRE(c.code == 0);
  json j = json::parse(c.out);
  CHECK(j["nodes"][0]["alternatives"] == json::array({"scale_mul", "scale_add"}));
  writeFloats(dir / "two.npy", 2.0f, 256);
  writeFloats(dir / "six.npy", 6.0f, 256);
  writeFloats(dir / "five.npy", 5.0f, 256);
  std::vector<std::string> backends{"cpu"};
#ifdef CGRUN_TEST_OPENCL
  backends.push_back("opencl"); // PoCL cannot load in sanitizer builds (CMakeLists.txt)
#endif
  for (const std::string &backend : backends) {
    INFO(backend);
    const std::string base = "alt.cgf --backend " + backend + " --input x=two.npy ";
    Result r = cgrun(base + "--check x=@six.npy", dir);
    INFO(r.out << r.err);
    CHECK(r.code == 0);
    r = cgrun(base + "--set s.kernel=scale_add --check x=@five.npy", dir);
    INFO(r.out << r.err);
    CHECK(r.code == 0);
    r = cgrun(base + "--set s.kernel=scale_int", dir);
    CHECK(r.code != 0);
    CHECK(r.err.find("kernel 'scale_int' is not one of its alternatives (scale_mul, scale_add)") !=
          std::string::npos);
    r = cgrun(base + "--set s.kernel=nope", dir);
    CHECK(r.code != 0);
    CHECK(r.err.find("nope") != std::string::npos);
  }
}

TEST_CASE("cgc places nodes (\"device\", --place); cgrun runs them on a device list", "[tools][cgrun][multi-device]") {
  fs::path dir = scratch("multi_device");
  fs::create_directories(dir / "kernels");
  std::ofstream(dir / "kernels" / "k.cl")
      << "__kernel void step(__global float *x, float s) { size_t i = get_global_id(0); x[i] = x[i] * s + 1.0f; }\n";
  std::ofstream(dir / "chain.json") << R"J({
  "name": "placed",
  "kernels": ["kernels/k.cl"],
  "slots": [{ "name": "x", "count": 1024, "type": "f32", "external": true }],
  "nodes": [
    { "repeat": 8, "var": "i", "nodes": [
      { "name": "s", "kernel": "step", "device": "$i % 2", "global": [1024], "args": ["x", 0.5] } ] }
  ]
})J";
  tooltest::Result c = tooltest::runTool(CGC_PATH, "chain.json -o chain.cgf", dir, dir / "cgc_std");
  INFO(c.out << c.err);
  REQUIRE(c.code == 0);
  c = tooltest::runTool(CGC_PATH, "dump --json chain.cgf", dir, dir / "cgc_std");
  REQUIRE(c.code == 0);
  json j = json::parse(c.out);
  CHECK(j["nodes"][1]["device"] == 1);
  CHECK(!j["nodes"][0].contains("device"));
  c = tooltest::runTool(CGC_PATH, "chain.json -o cost.cgf --place cost:2", dir, dir / "cgc_std");
  REQUIRE(c.code == 0);
  c = tooltest::runTool(CGC_PATH, "dump --json cost.cgf", dir, dir / "cgc_std");
  json k = json::parse(c.out);
  CHECK(!k["nodes"][3].contains("device")); // first half on device 0, second on 1
  CHECK(k["nodes"][4]["device"] == 1);
  c = tooltest::runTool(CGC_PATH, "chain.json --place split:2", dir, dir / "cgc_std");
  CHECK(c.code != 0);
  CHECK(c.err.find("expected round-robin:N, cost:N or min-bytes:N, found 'split:2'") != std::string::npos);
  // min-bytes: the same runs here (x, the only slot, is used on both sides of any cut),
  // and dump shows what crosses.
  c = tooltest::runTool(CGC_PATH, "chain.json -o few.cgf --place min-bytes:2", dir, dir / "cgc_std");
  REQUIRE(c.code == 0);
  c = tooltest::runTool(CGC_PATH, "dump --json few.cgf", dir, dir / "cgc_std");
  json m = json::parse(c.out);
  CHECK(!m["nodes"][3].contains("device"));
  CHECK(m["nodes"][4]["device"] == 1);
  CHECK(m["placement"]["devices"] == 2);
  CHECK(m["placement"]["bytes_crossing"] == 4096);
  CHECK(m["placement"]["slots_crossing"][0]["slot"] == "x");
  c = tooltest::runTool(CGC_PATH, "dump few.cgf", dir, dir / "cgc_std");
  CHECK(c.out.find("placement: 2 devices, work 50.0% / 50.0%; 4096 bytes cross devices") != std::string::npos);
  CHECK(c.out.find("  x (4096 bytes) on devices 0, 1") != std::string::npos);

  writeFloats(dir / "two.npy", 2.0f, 1024);
  Result one = cgrun("chain.cgf --input x=two.npy --output x=one.bin", dir);
  INFO(one.err);
  REQUIRE(one.code == 0);
  std::vector<std::string> lists{"--backend cpu --backend cpu"};
#ifdef CGRUN_TEST_OPENCL
  lists.push_back("--backend cpu --backend opencl");
  lists.push_back("--backend opencl --backend cpu");
#endif
  for (const std::string &l : lists)
    for (const char *file : {"chain.cgf", "cost.cgf"}) {
      INFO(l << " " << file);
      Result r = cgrun(std::string(file) + " --input x=two.npy --output x=two.bin " + l, dir);
      INFO(r.err);
      REQUIRE(r.code == 0);
      CHECK(slurp(dir / "two.bin") == slurp(dir / "one.bin"));
    }
  // One device runs every node (as a reader without placement would); a list shorter
  // than the placement is an error.
  c = tooltest::runTool(CGC_PATH, "chain.json -o three.cgf --place cost:3", dir, dir / "cgc_std");
  REQUIRE(c.code == 0);
  Result r = cgrun("three.cgf --input x=two.npy --backend cpu --output x=three.bin", dir);
  REQUIRE(r.code == 0);
  CHECK(slurp(dir / "three.bin") == slurp(dir / "one.bin"));
  r = cgrun("three.cgf --input x=two.npy --backend cpu --backend cpu", dir);
  CHECK(r.code != 0);
  CHECK(r.err.find("is placed on device 2 but 2 devices were given") != std::string::npos);
  r = cgrun("chain.cgf --input x=two.npy --backend cpu --backend cpu --device 1", dir);
  CHECK(r.code == 2);
  CHECK(r.err.find("--device with more than one --backend") != std::string::npos);
  // bench takes the device list too, update modes included.
  r = cgrun("bench chain.cgf --input x=two.npy --backend cpu --backend cpu --warmup 1 --repetitions 2 "
            "--modes replay,update-node,update-graph",
            dir);
  INFO(r.err);
  REQUIRE(r.code == 0);
  CHECK(r.out.find(") + cpu (") != std::string::npos);
  CHECK(r.out.find("update-graph   update") != std::string::npos);
}

#ifdef CGRUN_TEST_CUDA_STANDIN
// The other reasons a machine can have no cuda device, given by a stand-in libcuda.so.1
// found first on LD_LIBRARY_PATH (tests/tools/standin_cuda): it exports the entry points
// the backend looks up, says CUDA_ERROR_NO_DEVICE to cuInit and reports the driver
// version it is told to.
TEST_CASE("cgrun --list-devices says why there is no cuda device", "[tools][cgrun]") {
  fs::path dir = scratch("list_cuda");
  auto list = [&](const std::string &variant, const std::string &version, const std::string &flags) {
    const std::string env = "LD_LIBRARY_PATH=" + tooltest::quote(CGRUN_TEST_CUDA_STANDIN "/" + variant) +
                            ":\"$LD_LIBRARY_PATH\" CGRAPH_STANDIN_CUDA_VERSION=" + version;
    return tooltest::runTool("env", env + " " + tooltest::quote(CGRUN_PATH) + " --list-devices " + flags,
                             dir, dir / "std");
  };
  struct Case {
    const char *variant, *version, *reason;
  };
  const Case cases[] = {
      {"full", "13000", "no CUDA device (cuInit: CUDA_ERROR_NO_DEVICE)"},
      {"full", "11080", "driver too old: CUDA 11.8, the cuda backend needs 12.0 or newer"},
      {"partial", "13000", "driver too old: libcuda.so.1 has no cuDeviceGetCount"},
  };
  for (const Case &c : cases) {
    INFO(c.variant << " " << c.version);
    Result r = list(c.variant, c.version, "");
    INFO(r.err);
    REQUIRE(r.code == 0);
    CHECK(r.out.find("cpu: 1 device") != std::string::npos); // the other backends are unaffected
    CHECK(r.out.find(std::string("cuda: unavailable: ") + c.reason + "\n") != std::string::npos);
    r = list(c.variant, c.version, "--json");
    REQUIRE(r.code == 0);
    json j = json::parse(r.out);
    bool listed = false;
    for (const json &b : j["backends"]) {
      if (b["backend"] != "cuda") continue;
      listed = true;
      CHECK(b["compiled_in"] == true);
      CHECK(b["available"] == false);
      CHECK(b["devices"].empty());
      CHECK(b["reason"] == c.reason);
    }
    CHECK(listed);
  }
}
#endif
