// cgrun: replay a .cgf graph on a device, benchmark it, or compare two devices.
//
//   cgrun [options] FILE.cgf            finalize once, run -n times, outputs and checks
//   cgrun bench [options] FILE.cgf      eager vs replay vs replay with rebinding
//   cgrun compare FILE.cgf --backend A --backend B
//   cgrun --list-devices
//
// Exit codes: 0 success, 1 error or failed check/comparison, 2 usage error. Errors are
// one line `cgrun: error: ...` on stderr; with --json, stdout carries only the results.
#include "common.h"

#include "cgraph/cache/sink.h"
#include "cgraph/format/version_text.h"

#include <CLI/CLI.hpp>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>

using namespace cgraph;
using namespace cgraph::cgrun;

namespace {

enum class Command { Run, Bench, Compare };

struct Flags {
  CLI::Option *rtol = nullptr, *atol = nullptr, *ulp = nullptr;
};

// A number >= 0: tolerances and times (NaN and negative values are usage errors).
std::string nonNegative(std::string &text) {
  char *end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0') return "'" + text + "' is not a number";
  if (!(v >= 0)) return "expected a number >= 0, got '" + text + "'";
  return "";
}

const CLI::Validator kNonNegative(nonNegative, "NUMBER >= 0");

Flags addCommon(CLI::App &app, CommonOptions &o, Command cmd) {
  app.add_option("file", o.file, "the .cgf graph to run");
  app.add_option("--backend", o.backends,
                 cmd == Command::Compare ? "device spec, once or twice: the reference first (cpu, cpu:0, opencl:1)"
                                         : "backend or device spec (default cpu); given more than once, the device "
                                           "list of a graph with placed nodes (node device i runs on the i-th)")
      ->allow_extra_args(false);
  if (cmd != Command::Compare)
    app.add_option("--device", o.device, "device index of --backend, or a full spec (opencl:1)");
  app.add_option("--input", o.inputs,
                 "slot=file.npy|file.bin[:raw]: contents of an external slot; a .npy file's dtype must be "
                 "the slot's element type, unless ':raw' binds the file's bytes as they are")
      ->allow_extra_args(false);
  app.add_option("--random", o.randoms, "slot[:seed]: random contents (floats in [0,1))")
      ->allow_extra_args(false);
  app.add_option("--zeros", o.zeros, "slot: zero contents")->allow_extra_args(false);
  app.add_option("--fill", o.fills, "slot=value[:type]: every element set to value")
      ->allow_extra_args(false);
  app.add_option(
         "--param", o.params,
         "name=value: a graph parameter (bench: give one several times to time shape changes)")
      ->allow_extra_args(false);
  app.add_option("--allow-dir", o.allowDirs,
                 "directory files named by the graph may live in (repeatable; default: the "
                 ".cgf's directory and the current directory)")
      ->allow_extra_args(false);
  app.add_option("--set", o.sets,
                 "NODE.FIELD=VALUE: update a node after finalize (FIELD: argN, global, local, "
                 "offset, kernel, enabled; repeatable)")
      ->allow_extra_args(false);
  app.add_option("--disable", o.disables, "NODE: the node does nothing; its edges still order the rest (repeatable)")
      ->allow_extra_args(false);
  app.add_option("--update-from", o.updateFrom,
                 "OTHER.cgf: whole-graph update from a graph of the same topology");
  app.add_flag("--allow-plugins", o.allowPlugins, "let host tasks load plugin libraries");
  app.add_flag("--check-bounds", o.checkBounds,
               "cpu backend: check every kernel buffer access against its binding (slower; for "
               "untrusted .cgf files): an access outside fails the run naming node, argument and byte");
  app.add_flag("--no-memory-plan", o.noMemoryPlan,
               "give every transient slot its own memory instead of sharing memory between slots "
               "whose lifetimes do not overlap (for comparison)");
  app.add_flag("--json", o.json, "results as JSON on stdout (everything else on stderr)");
  Flags f;
  if (cmd != Command::Bench) {
    f.rtol = app.add_option("--rtol", o.tol.rtol, "relative tolerance (default 1e-5)")->check(kNonNegative);
    f.atol = app.add_option("--atol", o.tol.atol, "absolute tolerance (default 1e-8)")->check(kNonNegative);
    f.ulp = app.add_option("--ulp", o.tol.ulp, "tolerance in units in the last place (floats)")
                ->check(kNonNegative);
  }
  return f;
}

void finishTolerance(const Flags &f, CommonOptions &o) {
  if (f.ulp && f.ulp->count() && !f.rtol->count() && !f.atol->count()) o.tol.relAbsUsed = false;
}

// CLI11 exit conventions, but usage errors as one `cgrun: error:` line and code 2.
int parseOrExit(CLI::App &app, int argc, char **argv, bool *done) {
  try {
    app.parse(argc, argv);
    *done = false;
    return 0;
  } catch (const CLI::CallForHelp &e) {
    *done = true;
    return app.exit(e);
  } catch (const CLI::CallForAllHelp &e) {
    *done = true;
    return app.exit(e);
  } catch (const CLI::ParseError &e) {
    *done = true;
    if (e.get_exit_code() == 0) return app.exit(e);
    std::fprintf(stderr, "cgrun: error: %s\nrun 'cgrun %s--help' for usage\n", e.what(),
                 app.get_name() == "cgrun" ? "" : (app.get_name().substr(6) + " ").c_str());
    return 2;
  }
}

int mainImpl(int argc, char **argv) {
  Command cmd = Command::Run;
  if (argc > 1 && std::strcmp(argv[1], "bench") == 0) cmd = Command::Bench;
  if (argc > 1 && std::strcmp(argv[1], "compare") == 0) cmd = Command::Compare;
  if (cmd != Command::Run) {
    // The subcommand name becomes the program name for CLI11.
    ++argv;
    --argc;
  }
  const std::string name = cmd == Command::Run ? "cgrun" : cmd == Command::Bench ? "cgrun bench" : "cgrun compare";
  CLI::App app(cmd == Command::Run ? "Replay a .cgf command graph on a device"
               : cmd == Command::Bench ? "Benchmark eager, replay and replay with rebinding"
                                       : "Run a graph on two devices or in two modes (replay, eager) and report where the results differ",
               name);
  if (cmd == Command::Run)
    app.footer("\nSubcommands (cgrun SUBCOMMAND --help for their options):\n"
               "  bench     time eager, replay and replay with rebinding side by side\n"
               "  compare   run on two devices or in two modes and report where results differ\n"
               "\nExamples:\n"
               "  cgrun saxpy.cgf --random y --output y=y.npy\n"
               "  cgrun bench chain1000.cgf --backend cpu --backend opencl\n"
               "  cgrun compare mlp.cgf --backend cpu --backend opencl\n");
  CommonOptions o;
  Flags flags = addCommon(app, o, cmd);
  bool version = false, list = false;
  uint32_t iterations = 1;
  std::vector<std::string> outputs, checks;
  std::string trace;
  BenchOptions bench;
  uint64_t memoryMb = 2048;
  CompareOptions compare;
  app.add_flag("--version", version, "print the version and exit");
  RankOptions rankOpts;
  {
    app.add_flag("--mpi", rankOpts.mpi,
                 "one rank per process through MPI (implied under mpirun); sets the graph's rank and "
                 "world parameters");
    app.add_option("--collective-timeout", rankOpts.timeoutSeconds,
                   "seconds a collective node may wait for the other ranks before the run fails (default 60)")
        ->check(kNonNegative);
    app.add_flag("--all-ranks", rankOpts.allRanks, "print results on every rank (default: rank 0 only)");
    app.add_option("--nccl-id-file", rankOpts.ncclIdFile,
                   "cuda ranks started by a launcher without MPI (torchrun): a file every rank sees, through "
                   "which rank 0 hands out NCCL's unique id (default: $CGRAPH_NCCL_ID_FILE)");
    app.add_option("--nccl-rendezvous", rankOpts.ncclRendezvous,
                   "cuda ranks started by a launcher without MPI and without a shared file (several machines): "
                   "HOST:PORT where rank 0 serves NCCL's unique id over TCP (default: $CGRAPH_NCCL_RENDEZVOUS, "
                   "else $MASTER_ADDR and $MASTER_PORT + 1 as torchrun sets them)")
        ->type_name("HOST:PORT");
  }
  if (cmd == Command::Run) {
    app.add_flag("--list-devices", list, "list every backend compiled in, its devices and capabilities");
    app.add_option("-n,--iterations", iterations, "number of replays (default 1)");
    app.add_option("--output", outputs, "slot=file.npy|file.bin: write the slot after the last run")
        ->allow_extra_args(false);
    app.add_option("--check", checks, "slot=@expected.npy or slot=@file.bin:f32: compare the slot")
        ->allow_extra_args(false);
    app.add_option("--trace", trace, "write Chrome trace events (Perfetto) to this file");
  } else if (cmd == Command::Bench) {
    app.add_option("--warmup", bench.warmup, "untimed runs per mode (default 3)");
    app.add_option("--repetitions", bench.repetitions, "timed runs per mode (default 10)");
    app.add_option("--min-time", bench.minTime, "keep repeating until this many seconds per mode")
        ->check(kNonNegative);
    app.add_option("--modes", bench.modes,
                   "comma-separated modes to time: eager, replay, replay-rebind, replay-stream (10 replays "
                   "back to back per sample: throughput), replay-reshape (needs "
                   "a --param given more than once), update-node, update-graph (devices with updates); "
                   "'all' for every mode that applies. Default: eager, replay, replay-rebind and "
                   "replay-reshape where it applies");
  } else {
    app.add_option("--memory-mb", memoryMb, "snapshot memory per round (default 2048)");
    app.add_option("--modes", compare.modes,
                   "M1[,M2]: execution mode (replay, eager) of the first side and of the second; one "
                   "value: both sides. Default: one --backend: replay,eager (replay checked against "
                   "eager on that device); two: replay vs replay at the end, then eager vs eager node "
                   "by node. Node by node only when both sides are eager; else every written slot at "
                   "the end");
    app.add_option("--norm", compare.norm,
                   "l2: compare float ranges by ||b-a||_2 <= atol + rtol*||a||_2 (a: the first side) "
                   "instead of element by element; integer slots stay element by element (default none)");
    app.add_option("--reference-param", compare.referenceParams,
                   "several ranks: NAME=VALUE for the one-process run each rank is checked against, over "
                   "--param (e.g. the global batch size; repeatable)");
    app.add_option("--slot", compare.slots,
                   "several ranks: a slot to compare (repeatable; default: every slot a node writes that has "
                   "the same size in both runs)");
  }
  bool done = false;
  int rc = parseOrExit(app, argc, argv, &done);
  if (done) return rc;
  finishTolerance(flags, o);
  if (version) {
    std::printf("cgrun %s (cgraph; %s)\n", CGRAPH_VERSION, cgfVersionText().c_str());
    return 0;
  }
  if (list) return listDevices(o.json);
  if (o.file.empty()) return usage("no input file (cgrun FILE.cgf; see --help)");
  if (!o.device.empty())
    if (Error e = checkDeviceOption(o.backends.empty() ? "" : o.backends[0], o.device)) return usage(e.message());
  if (cmd == Command::Run || cmd == Command::Bench) {
    if (o.backends.size() > 1 && !o.device.empty()) return usage("--device with more than one --backend");
    if (cmd == Command::Run && iterations == 0) return usage("--iterations must be at least 1");
    if (cmd == Command::Bench && bench.repetitions == 0) return usage("--repetitions must be at least 1");
    RankSetup ranks;
    if (Error e = setupRanks(rankOpts, &ranks)) {
      note("cgrun: error: " + e.message());
      return finishRanks(ranks, 1);
    }
    o.comm = ranks.comm.get();
    o.rank = ranks.rank;
    o.world = ranks.world;
    o.collectiveTimeout = ranks.timeout;
    o.ranks = &ranks;
    if (o.device.empty() && o.backends.size() <= 1)
      o.device = rankDevice(ranks, o.backends.empty() ? "" : o.backends[0]);
    return finishRanks(ranks, cmd == Command::Run ? runCommand(o, iterations, outputs, checks, trace)
                                                  : benchCommand(o, bench));
  }
  compare.memoryBudget = memoryMb << 20;
  RankSetup ranks;
  if (Error e = setupRanks(rankOpts, &ranks)) {
    note("cgrun: error: " + e.message());
    return finishRanks(ranks, 1);
  }
  if (ranks.world == 1) {
    if (!compare.referenceParams.empty() || !compare.slots.empty())
      return finishRanks(ranks, usage("--reference-param and --slot compare several ranks (run under mpirun)"));
    return finishRanks(ranks, compareCommand(o, compare));
  }
  o.comm = ranks.comm.get();
  o.rank = ranks.rank;
  o.world = ranks.world;
  o.collectiveTimeout = ranks.timeout;
  o.ranks = &ranks;
  if (o.device.empty() && o.backends.size() == 1) o.device = rankDevice(ranks, o.backends[0]);
  return finishRanks(ranks, compareRanksCommand(o, compare));
}

} // namespace

int main(int argc, char **argv) {
  // Past the file size limit (ulimit -f) a write fails with EFBIG, reported as an
  // error with the temporary file removed, instead of the signal killing the tool.
  std::signal(SIGXFSZ, SIG_IGN);
  // lib/ never prints: the binary cache's warnings (and CGRAPH_CACHE_TRACE events)
  // reach stderr through this sink. Host task text is printed by run_cmd's output.
  cgraph::cache::setProcessSink([](cgraph::cache::CacheEvent event, const std::string &message) {
    std::fprintf(stderr, event == cgraph::cache::CacheEvent::Warning ? "cgrun: warning: cache: %s\n"
                                                                       : "cgrun: cache: %s\n",
                 message.c_str());
  });
  try {
    return mainImpl(argc, argv);
  } catch (const std::exception &e) {
    // Libraries return errors as values; this catches what a third-party call threw.
    std::fprintf(stderr, "cgrun: error: %s\n", e.what());
    return 1;
  }
}
