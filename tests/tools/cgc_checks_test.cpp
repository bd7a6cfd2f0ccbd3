// cgc on descriptions cgrun would refuse: built-in host tasks with the wrong arguments,
// repeat blocks that run no iteration, and one error in every copy of a repeat block
// (reported once, with the iterations).
#include "cgc_test_util.h"

#include <catch2/catch.hpp>

#include <algorithm>

using namespace cgctest;

namespace {

// A description with slots x and y (64 bytes each) and `nodes` (a JSON array's items).
std::string description(const std::string &nodes) {
  return R"({ "name": "h", "slots": [{ "name": "x", "bytes": 64 }, { "name": "y", "bytes": 64 }],
  "nodes": [)" +
         nodes + "] }\n";
}

size_t errorLines(const std::string &err) {
  size_t n = 0;
  for (const std::string &l : lines(err))
    n += l.find(": error: ") != std::string::npos;
  return n;
}

// Runs `cgc args FILE` and `cgc lint FILE` on `text`; both must fail with `message`.
void refused(const std::string &name, const std::string &text, const std::string &message) {
  fs::path dir = scratch("checks_" + name);
  std::ofstream(dir / "g.json") << text;
  for (const char *cmd : {"g.json -o g.cgf", "lint g.json"}) {
    Result r = cgc(cmd, dir);
    INFO(name << ": cgc " << cmd << "\n" << r.err);
    CHECK(r.code == 1);
    CHECK(r.err.find(message) != std::string::npos);
    CHECK(errorLines(r.err) == 1);
  }
  CHECK_FALSE(fs::exists(dir / "g.cgf"));
}

} // namespace

TEST_CASE("cgc and cgc lint refuse built-in host tasks cgrun refuses", "[cgc][host]") {
  refused("host_system", description(R"({ "name": "s", "host": "system", "args": ["x"] })"),
          "g.json:2:13: error: node 's': unknown built-in host task 'system' (built-ins: checksum, "
          "print, write_file, read_file, compare)");
  refused("checksum_no_slot", description(R"({ "name": "c", "host": "checksum", "args": [] })"),
          "error: node 'c': 'checksum' needs 1 slot argument, got 0 args");
  refused("print_two_slots",
          description(R"({ "name": "show", "host": "print", "args": ["x", "y"] })"),
          "error: node 'show': arg 1: 'print' takes 1 slot argument");
  refused("compare_one_slot",
          description(R"({ "name": "d", "host": "compare", "args": ["x", { "string": "f32" }] })"),
          "error: node 'd': arg 1: 'compare' expects a slot here");
  refused("write_file_scalar",
          description(R"({ "name": "w", "host": "write_file", "args": ["x", 3] })"),
          "error: node 'w': arg 1: 'write_file' takes no scalar argument here");
  refused("print_unknown_string",
          description(R"({ "name": "p", "host": "print", "args": ["x", { "string": "loud" }] })"),
          "error: node 'p': arg 1: 'loud' is not understood by 'print'");
  refused("read_file_no_path",
          description(R"({ "name": "r", "host": "read_file", "args": ["x"] })"),
          "error: node 'r': 'read_file' needs a path argument");
  refused("checksum_scalar",
          description(R"({ "name": "c", "host": "checksum", "args": ["x", 3] })"),
          "error: node 'c': arg 1: 'checksum' takes no scalar argument here");
  refused("compare_bad_tolerance",
          description(
              R"({ "name": "d", "host": "compare", "args": ["x", "y", { "string": "atol=-1" }] })"),
          "error: node 'd': arg 2: tolerance must be >= 0");
  refused("print_negative_count",
          description(R"({ "name": "p", "host": "print", "args": ["x", -2] })"),
          "error: node 'p': arg 1: count must be >= 0");

  // What the built-ins do take, and a plugin's arguments, pass.
  fs::path dir = scratch("checks_host_ok");
  std::ofstream(dir / "g.json") << description(
      R"({ "name": "p", "host": "print", "args": ["x", { "string": "u8" }, 8] },
      { "name": "c", "host": "checksum", "args": ["x", { "string": "i32" }] },
      { "name": "d", "host": "compare", "args": ["x", "y", { "string": "f32" }, { "string": "rtol=0.1" }, 0.5] },
      { "name": "w", "host": "write_file", "args": ["x", { "string": "x.npy" }, { "string": "f32" }] },
      { "name": "m", "host": "anything", "library": "libmine.so", "args": ["x", "y", 3] })");
  Result r = cgc("lint g.json", dir);
  INFO(r.err);
  CHECK(r.code == 0);
}

TEST_CASE("cgc reports one error of every copy of a repeat block once", "[cgc][repeat]") {
  fs::path dir = scratch("checks_repeat_once");
  std::ofstream(dir / "g.json") << description(
      R"({ "repeat": 1000, "var": "r", "nodes": [{ "name": "w", "host": "print", "args": ["x", "y"] }] })");
  for (const char *cmd : {"g.json -o g.cgf", "lint g.json"}) {
    Result r = cgc(cmd, dir);
    INFO(r.err);
    CHECK(r.code == 1);
    CHECK(
        r.err ==
        "g.json:2:53: error: nodes 'w' (repeat 'r', iterations 0-999): arg 1: 'print' takes 1 slot "
        "argument\n");
  }

  // The example chain of 1000 launches with a local size that does not divide the
  // global one: one line, not 1000.
  fs::path chain = scratch("checks_repeat_chain");
  fs::copy(sourceDir() / "examples/chain1000", chain, fs::copy_options::recursive);
  std::string text = slurp(chain / "graph.json");
  const size_t at = text.find("\"local\": [64]");
  REQUIRE(at != std::string::npos);
  text.replace(at, 13, "\"local\": [48]");
  std::ofstream(chain / "graph.json", std::ios::trunc) << text;
  Result r = cgc("graph.json -o g.cgf", chain);
  INFO(r.err);
  CHECK(r.code == 1);
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  CHECK(r.err.find("error: nodes 'axpy' (repeat block, iterations 0-999): ") != std::string::npos);
  CHECK(r.err.find("axpy.") == std::string::npos);

  // Copies that fail differently (a rotated slot) are reported apart; one copy alone
  // keeps its own name.
  std::ofstream(dir / "h.json", std::ios::trunc) << R"({ "name": "h",
  "slots": [{ "name": "x", "bytes": 64 }, { "name": "y", "bytes": 16 }],
  "nodes": [{ "repeat": 5, "var": "i", "swap": [["x", "y"]],
    "nodes": [{ "name": "c", "copy": { "src": "x", "dst": "y", "bytes": 32 } }] },
    { "repeat": 1, "nodes": [{ "name": "one", "host": "checksum", "args": [] }] }] }
)";
  r = cgc("lint h.json", dir);
  INFO(r.err);
  CHECK(r.code == 1);
  CHECK(r.err.find("nodes 'c' (repeat 'i', iterations 0, 2, 4): ") != std::string::npos);
  CHECK(r.err.find("nodes 'c' (repeat 'i', iterations 1, 3): ") != std::string::npos);
  CHECK(r.err.find("error: node 'one.0': 'checksum' needs 1 slot argument") != std::string::npos);
}

TEST_CASE("cgc refuses a repeat block of 0 iterations", "[cgc][repeat]") {
  refused(
      "repeat_zero",
      description(
          R"({ "repeat": 0, "var": "r", "nodes": [{ "name": "w", "host": "checksum", "args": ["x"] }] })"),
      "g.json:2:25: error: repeat 'r': 'repeat' is 0; a repeat block runs at least once");
  refused("repeat_zero_novar",
          description(
              R"({ "repeat": 0, "nodes": [{ "name": "w", "host": "checksum", "args": ["x"] }] })"),
          "error: repeat block: 'repeat' is 0; a repeat block runs at least once");
}
