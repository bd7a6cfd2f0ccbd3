// Broken descriptions: each tests/tools/data/bad/NAME.json has NAME.expected holding
// the exact first error line cgc must print. Both `cgc lint` and a compile must fail
// with exit code 1, print that line, and write nothing.
#include "cgc_test_util.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <random>

using namespace cgctest;

namespace {

std::string firstErrorLine(const std::string &err) {
  for (const std::string &l : lines(err))
    if (l.find(": error: ") != std::string::npos) return l;
  return "";
}

std::vector<fs::path> badCases() {
  std::vector<fs::path> out;
  for (const auto &e : fs::directory_iterator(sourceDir() / "tests/tools/data/bad"))
    if (e.path().extension() == ".json") out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

} // namespace

TEST_CASE("every broken description gives its exact error line", "[cgc][errors]") {
  fs::path badDir = sourceDir() / "tests/tools/data/bad";
  std::vector<fs::path> cases = badCases();
  REQUIRE(cases.size() >= 20);
  fs::path outDir = scratch("errors_out");
  for (const fs::path &json : cases) {
    DYNAMIC_SECTION(json.filename().string()) {
      fs::path expectedFile = json;
      expectedFile.replace_extension(".expected");
      REQUIRE(fs::exists(expectedFile));
      std::vector<std::string> exp = lines(slurp(expectedFile));
      REQUIRE(exp.size() == 1);
      const std::string name = json.filename().string();
      std::string before = snapshot(badDir);

      Result lint = cgc("lint " + name, badDir);
      INFO(lint.err);
      CHECK(lint.code == 1);
      CHECK(firstErrorLine(lint.err) == exp[0]);

      fs::path out = outDir / (json.stem().string() + ".cgf");
      Result comp = cgc(name + " -o " + quote(out.string()), badDir);
      CHECK(comp.code == 1);
      CHECK(firstErrorLine(comp.err) == exp[0]);
      CHECK_FALSE(fs::exists(out));
      CHECK(snapshot(badDir) == before);
    }
  }
}

TEST_CASE("the required broken-input kinds are all covered", "[cgc][errors]") {
  // malformed JSON, wrong type, unknown slot, unknown kernel, arg count mismatch, cycle,
  // duplicate node name, out-of-range copy, missing kernel file, OpenCL compile error,
  // invalid .spv file
  for (const char *name : {"malformed", "wrong_type", "unknown_slot", "unknown_kernel", "arg_count", "cycle",
                           "duplicate_node", "copy_range", "missing_kernel_file", "cl_error", "bad_spv"}) {
    INFO(name);
    CHECK(fs::exists(sourceDir() / "tests/tools/data/bad" / (std::string(name) + ".json")));
    CHECK(fs::exists(sourceDir() / "tests/tools/data/bad" / (std::string(name) + ".expected")));
  }
}

TEST_CASE("every integer-expression error kind has a broken description", "[cgc][errors][expr]") {
  // syntax error, unknown name, float parameter in an integer context, division by a
  // constant zero, a size that folds to zero or less (node field, global range, slot), a
  // folded argument out of its type's range, a parameter left after folding, and a
  // string with escapes (the error points at its quote)
  for (const char *name : {"expr_syntax", "expr_unknown_name", "expr_float_param", "expr_div_zero",
                           "expr_not_positive", "expr_global_zero", "expr_slot_size",
                           "expr_arg_range", "expr_param", "expr_escaped"}) {
    INFO(name);
    CHECK(fs::exists(sourceDir() / "tests/tools/data/bad" / (std::string(name) + ".json")));
    CHECK(fs::exists(sourceDir() / "tests/tools/data/bad" / (std::string(name) + ".expected")));
  }
}

TEST_CASE("cgc never crashes on truncated or corrupted descriptions with kernels", "[cgc][errors]") {
  // The feature description, cut at many points and with bytes flipped. Every run must
  // end with exit code 0 or 1 (never a signal), and a failure must say `error:`.
  fs::path src = sourceDir() / "tests/tools/data/features";
  fs::path dir = scratch("errors_mutations");
  fs::copy(src, dir, fs::copy_options::recursive);
  std::string text = slurp(src / "graph.json");
  std::mt19937 rng(12345);
  const int kRuns = 24;
  for (int i = 0; i < kRuns; ++i) {
    std::string mutated = text;
    if (i % 2 == 0) {
      mutated.resize(std::uniform_int_distribution<size_t>(0, text.size() - 1)(rng));
    } else {
      for (int k = 0; k < 3; ++k) {
        size_t at = std::uniform_int_distribution<size_t>(0, text.size() - 1)(rng);
        mutated[at] = "{}[],:\"0x-$e\\ \xff"[std::uniform_int_distribution<int>(0, 15)(rng)];
      }
    }
    std::ofstream(dir / "m.json", std::ios::binary) << mutated;
    Result r = cgc("lint m.json", dir);
    INFO("run " << i << ": " << r.err);
    CHECK((r.code == 0 || r.code == 1));
    if (r.code == 1) CHECK(r.err.find("error:") != std::string::npos);
  }
}
