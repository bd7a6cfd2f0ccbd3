// cgrun end to end: what it refuses, and how it says so (input dtypes, slot sizes,
// option values, device specs, host task updates), and the description reference's
// complete example compiled by cgc and run on the cpu backend.
#include "cgrun_test_util.h"

#include <algorithm>
#include <fstream>

using namespace cgruntest;

// Sanitizer runtimes reserve terabytes of address space for their shadow memory, so
// the sanitized builds run cgrun without an address space limit.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define CGRUN_TEST_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) ||                         \
    __has_feature(memory_sanitizer)
#define CGRUN_TEST_SANITIZED 1
#endif
#endif

namespace {

Result cgc(const std::string &args, const fs::path &cwd) {
  return tooltest::runTool(CGC_PATH, args, cwd, cwd / "cgc");
}

// The first ```json block after `heading` in a Markdown file.
std::string jsonBlockAfter(const fs::path &md, const std::string &heading) {
  const std::string text = slurp(md);
  size_t at = text.find(heading);
  REQUIRE(at != std::string::npos);
  at = text.find("```json\n", at);
  REQUIRE(at != std::string::npos);
  at += 8;
  const size_t end = text.find("```", at);
  REQUIRE(end != std::string::npos);
  return text.substr(at, end - at);
}

} // namespace

TEST_CASE("cgrun --input refuses a .npy whose dtype is not the slot's", "[tools][cgrun][checks]") {
  Saxpy s("input_dtype");
  std::vector<int32_t> ints(kN, 1);
  REQUIRE_FALSE(rt::writeNpyFile((s.dir / "ints.npy").string(), ScalarType::I32, ints.data(),
                                 ints.size() * 4));
  Result r = s.run("saxpy.cgf --input x=ints.npy --fill y=2");
  INFO(r.err);
  CHECK(r.code == 1);
  CHECK(r.err == "cgrun: error: --input x=ints.npy: 'ints.npy' holds i32, slot 'x' is f32 "
                 "(--input x=ints.npy:raw binds the file's bytes as they are)\n");
  // ":raw": the bytes as they are (1 as an i32 is a denormal f32).
  r = s.run("saxpy.cgf --input x=ints.npy:raw --fill y=2");
  INFO(r.err);
  CHECK(r.code == 0);
  r = s.run(kSaxpyInputs);
  CHECK(r.code == 0);
  r = s.run("--help");
  CHECK(r.code == 0);
  CHECK(r.out.find(":raw") != std::string::npos);
}

TEST_CASE("cgrun --help lists its subcommands with an example; --version names the .cgf versions",
          "[tools][cgrun][checks]") {
  Saxpy s("help");
  Result r = s.run("--help");
  CHECK(r.code == 0);
  CHECK(r.out.find("  bench     time eager, replay") != std::string::npos);
  CHECK(r.out.find("  compare   run on two devices") != std::string::npos);
  CHECK(r.out.find("cgrun compare mlp.cgf") != std::string::npos);
  r = s.run("--version");
  CHECK(r.code == 0);
  CHECK(r.out.find("writes .cgf 1.0 to 2.3") != std::string::npos);
  r = s.run("--no-such-option");
  CHECK(r.code == 2);
}

TEST_CASE("cgrun refuses a slot larger than the device before allocating it",
          "[tools][cgrun][checks]") {
  fs::path dir = scratch("huge_slot");
  constexpr uint64_t kHuge = uint64_t(1) << 40;
  for (SlotInit init : {SlotInit::Transient, SlotInit::External}) {
    GraphBuilder b("huge");
    const uint32_t big = b.addSlot(slot("big", kHuge, init));
    FillOp f;
    f.slot = big;
    f.offset = 0;
    f.bytes = 4;
    f.pattern = {1, 2, 3, 4};
    b.addFill("f", f);
    writeGraph(b.take(), dir / "huge.cgf");
    REQUIRE_FALSE(rt::writeBinaryFile((dir / "small.bin").string(), "abcd", 4));
    // Under a 64 GiB address space limit an attempt to allocate the slot fails with
    // std::bad_alloc; the refusal comes first, naming the slot and both sizes.
#ifdef CGRUN_TEST_SANITIZED
    const std::string limit;
#else
    const std::string limit = "ulimit -v 67108864; ";
#endif
    Result r = tooltest::runTool(
        "/bin/sh",
        "-c " + quote(limit + "exec " + quote(CGRUN_PATH) + " huge.cgf" +
                      (init == SlotInit::External ? " --input big=small.bin" : "")),
        dir, dir / "std");
    INFO(r.err);
    CHECK(r.code == 1);
    CHECK(r.err.find("cgrun: error: slot 'big': 1099511627776 bytes is more than ") !=
          std::string::npos);
    CHECK(r.err.find("memory") != std::string::npos);
    CHECK(r.err.find("bad_alloc") == std::string::npos);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  }
}

TEST_CASE("cgrun refuses negative or NaN tolerances and times and malformed device specs",
          "[tools][cgrun][checks]") {
  Saxpy s("option_values");
  auto usage = [&](const std::string &args, const std::string &message) {
    Result r = s.run(args);
    INFO(args << "\n" << r.err);
    CHECK(r.code == 2);
    CHECK(r.err.find("cgrun: error: ") == 0);
    CHECK(r.err.find(message) != std::string::npos);
    CHECK(r.out.empty());
  };
  usage("compare " + kSaxpyInputs + "--backend cpu --rtol -1",
        "--rtol: expected a number >= 0, got '-1'");
  usage("compare " + kSaxpyInputs + "--backend cpu --atol nan",
        "--atol: expected a number >= 0, got 'nan'");
  usage("compare " + kSaxpyInputs + "--backend cpu --ulp -3", "--ulp: expected a number >= 0, got '-3'");
  usage(kSaxpyInputs + "--rtol -0.5", "--rtol: expected a number >= 0");
  usage("bench " + kSaxpyInputs + "--min-time -5", "--min-time: expected a number >= 0, got '-5'");
  usage("bench " + kSaxpyInputs + "--min-time NaN", "--min-time: expected a number >= 0, got 'NaN'");
  usage(kSaxpyInputs + "--device -1",
        "--device -1: not a device; give an index (cpu has 1 device (0 to 0)) or a "
        "spec BACKEND[:INDEX] such as cpu, cpu:0, opencl:1");
  usage("bench " + kSaxpyInputs + "--device cpu:x", "--device cpu:x: not a device");
  // The valid forms still run.
  for (const char *d : {"0", "cpu", "cpu:0"}) {
    Result r = s.run(kSaxpyInputs + "--device " + d);
    INFO(d << "\n" << r.err);
    CHECK(r.code == 0);
  }
  Result r = s.run("compare " + kSaxpyInputs + "--backend cpu --rtol 0 --atol 1e-3 --ulp 4");
  INFO(r.err);
  CHECK(r.code == 0);
}

TEST_CASE("cgrun --update-from refuses a host task that differs, naming the node",
          "[tools][cgrun][checks][update]") {
  Saxpy s("update_host");
  writeSaxpy(s.dir / "print.cgf", "print");
  writeSaxpy(s.dir / "typed.cgf", "checksum", {Arg::string("i32")});
  Result r = s.run(kSaxpyInputs + "--update-from print.cgf");
  INFO(r.err);
  CHECK(r.code == 1);
  CHECK(r.err == "cgrun: error: --update-from print.cgf: node 'sum': the host task differs in the "
                 "source graph "
                 "('print' instead of 'checksum'); host tasks cannot be updated\n");
  r = s.run(kSaxpyInputs + "--update-from typed.cgf");
  CHECK(r.code == 1);
  CHECK(r.err.find(
            "node 'sum': the host task differs in the source graph (2 arguments instead of 1)") !=
        std::string::npos);
  // The same graph still updates.
  r = s.run(kSaxpyInputs + "--update-from saxpy.cgf");
  INFO(r.err);
  CHECK(r.code == 0);
}

TEST_CASE("a host task's run-time error names its node once", "[tools][cgrun][checks]") {
  fs::path dir = scratch("host_error_context");
  GraphBuilder b("cmp");
  const uint32_t a = b.addSlot(slot("a", 16));
  const uint32_t c = b.addSlot(slot("c", 16));
  b.addHost("w", HostOp{"compare", ""}, {Arg::slot(a), Arg::slot(c), Arg::string("f32")});
  writeGraph(b.take(), dir / "cmp.cgf");
  Result r = cgrun("cmp.cgf --fill a=1 --fill c=2", dir);
  INFO(r.err);
  CHECK(r.code == 1);
  CHECK(r.err ==
        "cgrun: error: iteration 0: node 'w': compare 'a' vs 'c': element 0 differs: 1 vs 2\n");
}

TEST_CASE("the description reference's complete example compiles and runs on the cpu backend",
          "[tools][cgrun][checks][cgc]") {
  const fs::path src = fs::path(CGRAPH_SOURCE_DIR);
  fs::path dir = scratch("docs_example");
  fs::copy(src / "tests/tools/data/features", dir, fs::copy_options::recursive);
  // The example as the documentation shows it is the file the tests use.
  const std::string doc = jsonBlockAfter(src / "docs/graph-json.md", "## Complete example");
  CHECK(doc == slurp(dir / "graph.json"));
  std::ofstream(dir / "doc.json", std::ios::binary) << doc;
  Result c = cgc("doc.json -o doc.cgf", dir);
  INFO(c.err);
  REQUIRE(c.code == 0);
  Result l = cgc("lint doc.json", dir);
  INFO(l.err);
  CHECK(l.code == 0);
  std::vector<float> ext(1024, 0.25f);
  REQUIRE_FALSE(
      rt::writeNpyFile((dir / "c.npy").string(), ScalarType::F32, ext.data(), ext.size() * 4));
  Result r = cgrun("doc.cgf --input c=c.npy --backend cpu", dir);
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  CHECK(r.out.find("print blob: ") != std::string::npos);
  CHECK(r.out.find("print tile: ") != std::string::npos);
  CHECK(r.out.find("checksum c: xxh3=") != std::string::npos);
  CHECK(fs::file_size(dir / "out.bin") == 4096);
}

TEST_CASE("collective nodes: one rank without mpirun, errors naming node and rank, other backends refuse",
          "[tools][cgrun][collective]") {
  const fs::path src = fs::path(CGRAPH_SOURCE_DIR);
  fs::path dir = scratch("collectives");
  Result c = cgc(quote((src / "examples/data-parallel/graph.json").string()) + " -o dp.cgf", dir);
  INFO(c.err);
  REQUIRE(c.code == 0);
  // A world of one rank: all_reduce is the identity; rank and world come from cgrun.
  Result r = cgrun("dp.cgf -n 3 --output w=w.bin", dir);
  INFO(r.out << r.err);
  CHECK(r.code == 0);
  CHECK(fs::file_size(dir / "w.bin") == 64);
  // collectives.json sends to ($rank + 1) % $world: in a world of one, its own rank.
  Result d = cgc(quote((src / "tests/tools/data/collectives.json").string()) + " -o coll.cgf", dir);
  REQUIRE(d.code == 0);
  Result s = cgrun("coll.cgf --zeros whole --zeros act", dir);
  CHECK(s.code == 1);
  CHECK(s.err.find("cgrun: error: iteration 0: node 'tx' (rank 0 of 1): send to its own rank 0\n") !=
        std::string::npos);
  // A launcher's world of several ranks (no MPI) runs host collectives through nothing:
  // refused by name; a rank outside the world is refused too.
  Result w = tooltest::runTool("env", "WORLD_SIZE=2 RANK=1 " + quote(CGRUN_PATH) + " dp.cgf", dir, dir / "ws");
  CHECK(w.code == 1);
  CHECK(w.err == "cgrun: error: collective nodes on the cpu backend with 2 ranks need MPI (run cgrun under mpirun)\n");
  Result x = tooltest::runTool("env", "WORLD_SIZE=2 RANK=2 " + quote(CGRUN_PATH) + " dp.cgf", dir, dir / "ws2");
  CHECK(x.code == 1);
  CHECK(x.err.find("RANK=2 is not a rank of WORLD_SIZE=2") != std::string::npos);
#ifdef CGRUN_TEST_OPENCL
  Result o = cgrun("dp.cgf --backend opencl", dir);
  CHECK(o.code == 1);
  CHECK(o.err == "cgrun: error: collective nodes are not supported by the opencl backend yet\n");
#endif
}
