// bench_cases [-n ITERATIONS] [--min] DIR...: every `// cgtest:` case of the kernel test
// files in DIR (tests/cpu/kernels, tests/opencl/kernels), cgraph's cpu backend next to
// PoCL (through the opencl backend), one table. Each case is one graph of one kernel node
// with the case's own range and deterministic inputs, built by the conformance suite's
// own code (tests/conformance/kernel_cases.h): the test sizes, so small launches.
// Per case, two measures (median over the iterations, or the minimum with --min):
//   wall: enqueue + wait of the one-node graph's replay on the host clock, the same
//         measure on both sides (it includes each side's submission cost);
//   node: the node's own time from profiling: on cpu the host clock around the node
//         inside the run, on PoCL the OpenCL event's start/end, which leaves PoCL's
//         submission out (tiny launches look slower on cpu by that alone).
// and cpu/pocl for each. A case that does not build or run on one side prints "-"
// there, and the reason below the table (PoCL 3.1 lacks mem_fence and half_ builtins).
//
// PoCL runs in a child process of this program (the same executable with the hidden
// `--pocl-worker` option), one case at a time on request, while this process waits: a
// kernel that makes PoCL abort the process (PoCL 5 on the GPU host aborts building
// ext_async, its kernel library lacks _Z21_cl_wait_group_events...) costs only that
// case ("pocl crashed: SIGABRT ..." below the table), and a fresh worker takes the next.
// It also keeps the cpu backend's pool threads out of PoCL's process: PoCL's figures are
// lower than when both shared one (benchmarks/cpu/results/2026-11-26-*half*.log).
#include "bench_common.h"

#include "kernel_cases.h"

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

using namespace cgraph;
namespace fs = std::filesystem;

namespace {

[[noreturn]] void die(const std::string &what) { bench::die("bench_cases", what); }

struct Times {
  double wall = -1, node = -1; // us; negative when the case fails on the device
  std::string error;           // why, when it fails
  static Times failed(std::string why) {
    Times t;
    t.error = std::move(why);
    return t;
  }
};

// Wall and node times (see the top), or negative values and the error when the case
// fails on `dev`.
Times measure(rt::Device &dev, const Graph &g, const conformance::ManifestCase &c, int iters) {
  rt::FinalizeOptions fo;
  fo.mode = rt::ExecMode::Replay;
  auto exe = dev.finalize(g, fo);
  if (!exe) return Times::failed(exe.error().message());
  std::vector<std::unique_ptr<rt::Buffer>> bufs;
  rt::BindingTable t;
  for (const std::vector<uint8_t> &in : conformance::caseInputs(c)) {
    auto buf = dev.allocate(std::max<size_t>(in.size(), 4), 64);
    if (!buf) return Times::failed(buf.error().message());
    if (Error e = dev.write(**buf, 0, in.data(), in.size())) return Times::failed(e.message());
    t.slots.push_back({buf->get(), 0, 0});
    bufs.push_back(std::move(*buf));
  }
  rt::SubmitOptions so;
  so.profile = true;
  std::vector<double> us, wall;
  for (int i = 0; i <= iters; ++i) { // the first run warms up (PoCL builds at first launch)
    auto ev = (*exe)->enqueue(t, {}, so);
    if (!ev) return Times::failed(ev.error().message());
    if (Error e = (*ev)->wait()) return Times::failed(e.message());
    const auto timings = (*ev)->nodeTimings();
    if (timings.empty()) return Times::failed("no node timing");
    if (i) us.push_back(double(timings[0].endNs - timings[0].startNs) / 1e3);
  }
  for (int i = 0; i <= iters; ++i) { // without profiling
    auto t0 = std::chrono::steady_clock::now();
    auto ev = (*exe)->enqueue(t, {}, {});
    if (!ev) return Times::failed(ev.error().message());
    if (Error e = (*ev)->wait()) return Times::failed(e.message());
    if (i) wall.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
  }
  return {bench::stat(wall), bench::stat(us), {}};
}

// One case of the kernel files, in the order both processes enumerate them.
struct Case {
  std::shared_ptr<const conformance::ManifestFile> file;
  const conformance::ManifestCase *c;
  std::string label() const { return fs::path(file->path).filename().string() + " " + c->kernel; }
};

// Every case of the .cl files in `dirs` (files sorted per dir).
std::vector<Case> loadCases(const std::vector<std::string> &dirs) {
  auto files = conformance::loadManifestFiles(dirs);
  if (!files) die(files.error().message());
  std::vector<Case> out;
  for (conformance::ManifestFile &f : *files) {
    auto shared = std::make_shared<const conformance::ManifestFile>(std::move(f));
    for (const conformance::ManifestCase &c : shared->cases) out.push_back({shared, &c});
  }
  return out;
}

Times measureCase(rt::Device &dev, const Case &k, int iters) {
  auto g = conformance::caseGraph(*k.file, *k.c);
  if (!g) die(k.c->label() + ": " + g.error().message());
  return measure(dev, *g, *k.c, iters);
}

// The worker's protocol, one line each: the worker first writes "ready" or "none REASON";
// then per request "INDEX" (a case) it writes "ok WALL NODE" or "error MESSAGE".
constexpr int kRequestFd = 3, kReplyFd = 4;

// `--pocl-worker`: runs PoCL cases on request (the top of the file), until its input ends.
int poclWorker(const std::vector<Case> &cases, int iters) {
  FILE *in = fdopen(kRequestFd, "r"), *out = fdopen(kReplyFd, "w");
  if (!in || !out) die("--pocl-worker: fds 3 and 4 must be the request and reply pipes");
  bench::CpuAndPocl d;
  std::string why = bench::openPocl("bench_cases", d);
  std::fprintf(out, d.pocl ? "ready\n" : "none %s\n", why.c_str());
  std::fflush(out);
  if (!d.pocl) return 0;
  size_t index = 0;
  while (std::fscanf(in, "%zu", &index) == 1) {
    if (index >= cases.size()) die("--pocl-worker: no case " + std::to_string(index));
    Times t = measureCase(*d.pocl, cases[index], iters);
    std::replace(t.error.begin(), t.error.end(), '\n', ' ');
    if (t.error.empty()) std::fprintf(out, "ok %.17g %.17g\n", t.wall, t.node);
    else std::fprintf(out, "error %s\n", t.error.c_str());
    std::fflush(out);
  }
  return 0;
}

std::string describeExit(int status) {
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    const char *name = sigabbrev_np(sig);
    return std::string("pocl crashed: SIG") + (name ? name : std::to_string(sig).c_str()) + " (" +
           strsignal(sig) + ")";
  }
  return "pocl worker exited with status " + std::to_string(WEXITSTATUS(status));
}

// The parent's side: spawns a worker when it needs one, again after one died.
class PoclWorker {
public:
  explicit PoclWorker(std::vector<std::string> args) : args_(std::move(args)) {}
  ~PoclWorker() { stop(); }

  // PoCL's times for case `index`; failed (with the reason) when PoCL cannot run it or
  // the worker died on it. After the first worker says there is no PoCL device, every
  // case fails with that reason without a new worker.
  Times run(size_t index) {
    if (!unavailable_.empty()) return Times::failed(unavailable_);
    if (!in_ && !start()) return Times::failed(unavailable_);
    std::fprintf(out_, "%zu\n", index);
    std::fflush(out_);
    std::string line;
    if (!readLine(line)) return Times::failed(stop());
    Times t;
    if (std::sscanf(line.c_str(), "ok %lf %lf", &t.wall, &t.node) == 2) return t;
    return Times::failed(line.rfind("error ", 0) == 0 ? line.substr(6) : "pocl worker: bad reply '" + line + "'");
  }

  const std::string &unavailable() const { return unavailable_; }

private:
  bool start() {
    int req[2], rep[2];
    if (pipe(req) || pipe(rep)) die(std::string("pipe: ") + std::strerror(errno));
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, req[0], kRequestFd);
    posix_spawn_file_actions_adddup2(&fa, rep[1], kReplyFd);
    for (int fd : {req[0], req[1], rep[0], rep[1]})
      if (fd != kRequestFd && fd != kReplyFd) posix_spawn_file_actions_addclose(&fa, fd);
    std::vector<char *> argv;
    for (std::string &a : args_) argv.push_back(a.data());
    argv.push_back(nullptr);
    int rc = posix_spawn(&pid_, "/proc/self/exe", &fa, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&fa);
    close(req[0]);
    close(rep[1]);
    if (rc != 0) die(std::string("posix_spawn: ") + std::strerror(rc));
    out_ = fdopen(req[1], "w");
    in_ = fdopen(rep[0], "r");
    std::string line;
    if (!readLine(line)) {
      unavailable_ = "the pocl worker did not start: " + stop();
      return false;
    }
    if (line.rfind("none ", 0) == 0) {
      unavailable_ = line.substr(5);
      stop();
      return false;
    }
    return true;
  }

  // Ends the worker (closing its input ends it when it is alive); how it ended.
  std::string stop() {
    if (!in_) return {};
    std::fclose(out_);
    std::fclose(in_);
    in_ = out_ = nullptr;
    int status = 0;
    while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    return describeExit(status);
  }

  bool readLine(std::string &line) {
    line.clear();
    for (int ch; (ch = std::fgetc(in_)) != EOF;) {
      if (ch == '\n') return true;
      line.push_back(char(ch));
    }
    return false;
  }

  std::vector<std::string> args_;
  pid_t pid_ = -1;
  FILE *in_ = nullptr, *out_ = nullptr;
  std::string unavailable_;
};

} // namespace

int main(int argc, char **argv) {
  int iters = 11;
  const bool worker = argc > 1 && std::strcmp(argv[1], "--pocl-worker") == 0;
  if (worker) { // hidden: the child side (the top of the file)
    argv[1] = argv[0];
    --argc;
    ++argv;
  }
  const std::vector<std::string> dirs = bench::parseArgs(argc, argv, "bench_cases", "DIR", &iters);
  const std::vector<Case> cases = loadCases(dirs);
  if (worker) return poclWorker(cases, iters);

  std::signal(SIGPIPE, SIG_IGN); // a dead worker is seen as a failed write or read
  std::vector<std::string> workerArgs = {argv[0], "--pocl-worker", "-n", std::to_string(iters)};
  if (bench::useMinimum()) workerArgs.push_back("--min");
  workerArgs.insert(workerArgs.end(), dirs.begin(), dirs.end());
  PoclWorker pocl(workerArgs);
  bench::CpuAndPocl devs;
  bench::openCpu("bench_cases", devs);
  std::printf("%s of %d runs; one node per case, its time in us\n", bench::statName(), iters);
  std::printf("%-44s %9s %9s %6s %9s %9s %6s\n", "case", "cpu wall", "pocl wall", "ratio", "cpu node",
              "pocl node", "ratio");
  double worst = 0, worstNode = 0;
  std::string worstCase, worstNodeCase;
  int above = 0, aboveNode = 0, both = 0;
  std::vector<std::string> notes; // why a column shows "-"
  for (size_t i = 0; i < cases.size(); ++i) {
    const Case &k = cases[i];
    Times cu = measureCase(*devs.cpu, k, iters);
    Times pu = pocl.run(i); // this process waits meanwhile
    const std::string label = k.label();
    if (!cu.error.empty()) notes.push_back(k.c->label() + ": cpu: " + cu.error);
    if (!pu.error.empty() && pocl.unavailable().empty()) notes.push_back(k.c->label() + ": " + pu.error);
    auto num = [](char *b, size_t n, double v) { std::snprintf(b, n, v < 0 ? "-" : "%.1f", v); };
    auto ratio = [](char *b, size_t n, double a, double d) {
      std::snprintf(b, n, a < 0 || d <= 0 ? "-" : "%.2f", a / d);
    };
    char cw[32], pw[32], rw[32], cn[32], pn[32], rn[32];
    num(cw, sizeof cw, cu.wall);
    num(pw, sizeof pw, pu.wall);
    ratio(rw, sizeof rw, cu.wall, pu.wall);
    num(cn, sizeof cn, cu.node);
    num(pn, sizeof pn, pu.node);
    ratio(rn, sizeof rn, cu.node, pu.node);
    std::printf("%-44s %9s %9s %6s %9s %9s %6s\n", label.c_str(), cw, pw, rw, cn, pn, rn);
    std::fflush(stdout);
    if (cu.wall >= 0 && pu.wall > 0) {
      ++both;
      if (cu.wall > pu.wall) ++above;
      if (cu.node > pu.node) ++aboveNode;
      if (cu.wall / pu.wall > worst) {
        worst = cu.wall / pu.wall;
        worstCase = label;
      }
      if (cu.node / pu.node > worstNode) {
        worstNode = cu.node / pu.node;
        worstNodeCase = label;
      }
    }
  }
  if (!worstCase.empty()) {
    std::printf("cases above PoCL: wall %d of %d, node %d of %d\n", above, both, aboveNode, both);
    std::printf("highest cpu/pocl: wall %.2f (%s), node %.2f (%s)\n", worst, worstCase.c_str(), worstNode,
                worstNodeCase.c_str());
  }
  if (!pocl.unavailable().empty()) std::printf("pocl: %s; cpu figures only\n", pocl.unavailable().c_str());
  for (const std::string &n : notes) // build logs can be long: the start says what failed
    std::printf("-: %s\n", n.size() > 240 ? (n.substr(0, 240) + " ...").c_str() : n.c_str());
  return 0;
}
