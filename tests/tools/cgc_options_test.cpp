// cgc's command line: every option and subcommand, on the real binary.
#include "cgc_test_util.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

using namespace cgctest;
using nlohmann::json;

namespace {

std::string data(const std::string &rel) {
  return quote((sourceDir() / "tests/tools/data" / rel).string());
}
std::string example(const std::string &rel) { return quote((sourceDir() / "examples" / rel).string()); }

json dumpJson(const fs::path &dir, const std::string &file) {
  Result d = cgc("dump --json " + file, dir);
  REQUIRE(d.code == 0);
  return json::parse(d.out);
}

const std::string kOptDefs = " -D FACTOR=3.0f -I " + quote((sourceDir() / "tests/tools/data/options/inc").string());

} // namespace

TEST_CASE("cgc -o and the default output name", "[cgc][options]") {
  fs::path dir = scratch("opt_output");
  Result r = cgc(example("saxpy/graph.json"), dir);
  REQUIRE(r.code == 0);
  CHECK(fs::exists(dir / "graph.cgf")); // <input stem>.cgf in the current directory
  r = cgc(example("saxpy/graph.json") + " -o sub.cgf", dir);
  REQUIRE(r.code == 0);
  CHECK(slurp(dir / "sub.cgf") == slurp(dir / "graph.cgf")); // deterministic
  r = cgc(example("saxpy/graph.json") + " -o -", dir);
  REQUIRE(r.code == 0);
  CHECK(r.out == slurp(dir / "graph.cgf"));
  r = cgc(example("saxpy/graph.json") + " --emit=json -o saxpy.json", dir);
  REQUIRE(r.code == 0);
  CHECK(json::parse(slurp(dir / "saxpy.json"))["name"] == "saxpy");
  r = cgc(example("saxpy/graph.json") + " -o no/such/dir/x.cgf", dir);
  CHECK(r.code == 1);
  CHECK(r.err.find("error:") != std::string::npos);
  CHECK_FALSE(fs::exists(dir / "no"));
}

TEST_CASE("cgc refuses to overwrite its input", "[cgc][options]") {
  fs::path dir = scratch("opt_overwrite");
  fs::copy_file(sourceDir() / "tests/tools/data/options/warn.json", dir / "warn.json");
  std::string before = slurp(dir / "warn.json");
  Result r = cgc("warn.json --emit=json -o warn.json", dir);
  CHECK(r.code == 1);
  CHECK(r.err.find("is the input file") != std::string::npos);
  CHECK(slurp(dir / "warn.json") == before);
}

TEST_CASE("cgc -I and -D reach the OpenCL C compiler", "[cgc][options]") {
  fs::path dir = scratch("opt_include_define");
  Result r = cgc(data("options/graph.json") + " -o o.cgf", dir);
  CHECK(r.code == 1);
  CHECK(r.err.find("fatal error: 'opt.h' file not found") != std::string::npos);
  CHECK_FALSE(fs::exists(dir / "o.cgf"));

  r = cgc(data("options/graph.json") + " -o o.cgf -I " + data("options/inc"), dir);
  CHECK(r.code == 1);
  CHECK(r.err.find("use of undeclared identifier 'FACTOR'") != std::string::npos);

  r = cgc(data("options/graph.json") + " -o o.cgf" + kOptDefs, dir);
  INFO(r.err);
  REQUIRE(r.code == 0);
  json j = dumpJson(dir, "o.cgf");
  CHECK(j["modules"][0]["forms"][0]["options"].get<std::string>().find("-DFACTOR=3.0f") != std::string::npos);

  // Attached forms, as with clang.
  r = cgc(data("options/graph.json") + " -o o2.cgf -DFACTOR=3.0f -I" + data("options/inc"), dir);
  CHECK(r.code == 0);
}

TEST_CASE("cgc --order stores reverse depth-first or breadth-first order", "[cgc][options]") {
  fs::path dir = scratch("opt_order");
  REQUIRE(cgc(data("options/graph.json") + " -o dfs.cgf" + kOptDefs, dir).code == 0);
  REQUIRE(cgc(data("options/graph.json") + " -o dfs2.cgf --order=dfs" + kOptDefs, dir).code == 0);
  REQUIRE(cgc(data("options/graph.json") + " -o bfs.cgf --order=bfs" + kOptDefs, dir).code == 0);
  // a -> b1 -> b2 -> d and a -> c -> d (nodes a=0, b1=1, c=2, b2=3, d=4)
  CHECK(dumpJson(dir, "dfs.cgf")["order"] == json::array({0, 1, 3, 2, 4}));
  CHECK(dumpJson(dir, "bfs.cgf")["order"] == json::array({0, 1, 2, 3, 4}));
  CHECK(slurp(dir / "dfs.cgf") == slurp(dir / "dfs2.cgf"));
  Result r = cgc(data("options/graph.json") + " --order=random" + kOptDefs, dir);
  CHECK(r.code == 2); // a usage error
  CHECK(r.err.rfind("cgc: error:", 0) == 0);
}

TEST_CASE("cgc --keep-source and --keep-bitcode add kernel forms", "[cgc][options]") {
  fs::path dir = scratch("opt_keep");
  REQUIRE(cgc(example("saxpy/graph.json") + " -o plain.cgf", dir).code == 0);
  REQUIRE(cgc(example("saxpy/graph.json") + " -o src.cgf --keep-source", dir).code == 0);
  REQUIRE(cgc(example("saxpy/graph.json") + " -o both.cgf --keep-source --keep-bitcode", dir).code == 0);
  CHECK(dumpJson(dir, "plain.cgf")["modules"][0]["forms"].size() == 1);
  json forms = dumpJson(dir, "src.cgf")["modules"][0]["forms"];
  REQUIRE(forms.size() == 2);
  CHECK(forms[0]["kind"] == "spirv");
  CHECK(forms[1]["bytes"]["size"] == fs::file_size(sourceDir() / "examples/saxpy/kernels/saxpy.cl"));
  CHECK(dumpJson(dir, "both.cgf")["modules"][0]["forms"].size() == 3);
}

TEST_CASE("cgc --cl-std selects the OpenCL C version", "[cgc][options]") {
  fs::path dir = scratch("opt_clstd");
  for (const char *std : {"CL1.2", "CL2.0", "CL3.0"}) {
    Result r = cgc(example("saxpy/graph.json") + " -o s.cgf --cl-std=" + std, dir);
    INFO(std << ": " << r.err);
    CHECK(r.code == 0);
    CHECK(dumpJson(dir, "s.cgf")["modules"][0]["forms"][0]["options"].get<std::string>().find(
              std::string("-cl-std=") + std) != std::string::npos);
  }
  Result r = cgc(example("saxpy/graph.json") + " --cl-std=CL9.9", dir);
  CHECK(r.code == 2); // a usage error
}

TEST_CASE("cgc --version, --help and usage errors", "[cgc][options]") {
  fs::path dir = scratch("opt_misc");
  Result v = cgc("--version", dir);
  CHECK(v.code == 0);
  CHECK(v.out.rfind("cgc ", 0) == 0);
  Result h = cgc("--help", dir);
  CHECK(h.code == 0);
  for (const char *opt : {"-o", "-I", "-D", "--emit", "--order", "--keep-source", "--cl-std", "-q", "dump", "lint"})
    CHECK(h.out.find(opt) != std::string::npos);
  CHECK(v.out.find("writes .cgf 1.0 to 2.3") != std::string::npos);
  Result none = cgc("", dir);
  CHECK(none.code == 2); // usage errors exit 2, as in every tool
  CHECK(none.err.find("no input file") != std::string::npos);
  Result bad = cgc("--no-such-option x.json", dir);
  CHECK(bad.code == 2);
  Result missing = cgc("missing.json", dir);
  CHECK(missing.code == 1);
  CHECK(missing.err == "cgc: error: cannot read 'missing.json': No such file or directory\n");
  Result emit = cgc(example("saxpy/graph.json") + " --emit=asm", dir);
  CHECK(emit.code == 2);
}

TEST_CASE("cgc prints warnings unless -q", "[cgc][options]") {
  fs::path dir = scratch("opt_quiet");
  fs::copy_file(sourceDir() / "tests/tools/data/options/warn.json", dir / "warn.json");
  Result r = cgc("warn.json -o w.cgf", dir);
  CHECK(r.code == 0);
  CHECK(r.err == "warn.json:5:5: warning: slot 'unused' is never used\n");
  r = cgc("-q warn.json -o w.cgf", dir);
  CHECK(r.code == 0);
  CHECK(r.err.empty());
  r = cgc("lint warn.json", dir);
  CHECK(r.code == 0); // warnings do not fail lint
  CHECK(r.err.find("warning:") != std::string::npos);
}

TEST_CASE("cgc lint and dump on .cgf files", "[cgc][options]") {
  fs::path dir = scratch("opt_lint_dump");
  REQUIRE(cgc(example("saxpy/graph.json") + " -o s.cgf", dir).code == 0);
  std::string before = snapshot(dir);
  Result l = cgc("lint s.cgf", dir);
  CHECK(l.code == 0);
  CHECK(snapshot(dir) == before);

  // A truncated file: both commands fail with one error naming the file, no crash.
  std::string bytes = slurp(dir / "s.cgf");
  std::ofstream(dir / "t.cgf", std::ios::binary).write(bytes.data(), std::streamsize(bytes.size() / 2));
  Result d = cgc("dump t.cgf", dir);
  CHECK(d.code == 1);
  CHECK(d.err.rfind("t.cgf: error: ", 0) == 0);
  l = cgc("lint t.cgf", dir);
  CHECK(l.code == 1);
  CHECK(l.err.rfind("t.cgf: error: ", 0) == 0);
  Result m = cgc("dump nothing.cgf", dir);
  CHECK(m.code == 1);
  // dump of a JSON description is not a .cgf file
  Result j = cgc("dump " + example("saxpy/graph.json"), dir);
  CHECK(j.code == 1);
}

TEST_CASE("cgc given a compiled file says so, and converts it with --emit", "[cgc][options]") {
  fs::path dir = scratch("opt_compiled_input");
  REQUIRE(cgc(example("saxpy/graph.json") + " -o s.cgf", dir).code == 0);
  Result r = cgc("s.cgf -o t.cgf", dir);
  CHECK(r.code == 1);
  CHECK(r.err.find("this is a compiled graph (.cgf), not a description") != std::string::npos);
  CHECK_FALSE(fs::exists(dir / "t.cgf"));
  Result dot = cgc("s.cgf --emit=dot", dir);
  INFO(dot.err);
  CHECK(dot.code == 0);
  CHECK(dot.out.find("digraph") != std::string::npos);
  CHECK(dot.out.find("saxpy") != std::string::npos);
  Result js = cgc("s.cgf --emit=json", dir);
  CHECK(js.code == 0);
  CHECK(json::parse(js.out)["name"] == "saxpy");
}

TEST_CASE("cgc dump shows stored expressions as written, in text and JSON", "[cgc][options]") {
  fs::path dir = scratch("opt_dump_exprs");
  REQUIRE(cgc(example("lu/lu_n.json") + " -o lu.cgf -q", dir).code == 0);
  Result d = cgc("dump lu.cgf", dir);
  REQUIRE(d.code == 0);
  CHECK(d.out.find("  [0] scale.0  kernel lu_scale  global (256) local (64)  args: a i32 0 i32 1 $n\n"
                   "      global[0] = align_up(max($n - 0 - 1, 1), 64)\n") != std::string::npos);
  json j = dumpJson(dir, "lu.cgf");
  REQUIRE(j["exprs"].is_array());
  CHECK(j["exprs"][0]["node"] == 0);
  CHECK(j["exprs"][0]["field"] == "global[0]");
  CHECK(j["exprs"][0]["expr"] == "align_up(max($n - 0 - 1, 1), 64)");
  REQUIRE(cgc(example("mlp/mlp_batch.json") + " -o mlp.cgf -q", dir).code == 0);
  d = cgc("dump mlp.cgf", dir);
  CHECK(d.out.find("size = $batch * ") != std::string::npos); // slot sizes too
}

TEST_CASE("cgc --progress names each kernel file; none by default off a terminal", "[cgc][options]") {
  fs::path dir = scratch("opt_progress");
  Result r = cgc(example("mlp/graph.json") + " -o a.cgf --progress", dir);
  REQUIRE(r.code == 0);
  CHECK(r.err == "cgc: compiling kernel files 1/3: kernels/matmul.cl\n"
                 "cgc: compiling kernel files 2/3: kernels/elementwise.cl\n"
                 "cgc: compiling kernel files 3/3: kernels/norm.cl\n");
  r = cgc(example("mlp/graph.json") + " -o b.cgf", dir); // stderr is a pipe here
  REQUIRE(r.code == 0);
  CHECK(r.err.empty());
  r = cgc(example("mlp/graph.json") + " -o c.cgf --no-progress", dir);
  REQUIRE(r.code == 0);
  CHECK(r.err.empty());
  CHECK(slurp(dir / "a.cgf") == slurp(dir / "b.cgf")); // progress changes nothing written
}
