// A failed allocation of work-group scratch is an error, not a crash (issue 7). A kernel
// with a 32 KiB private array live across a barrier and 16384 work-items per group needs
// 512 MiB of context arrays per thread (1 GiB of fiber stacks when run as fibers:
// cpu_scratch_oom_fibers_test); a child process with its address space limited to what
// it already uses plus 256 MiB cannot get them, and must report it through
// Event::wait(). Built only without
// sanitizers (their shadow memory needs a far larger address space than any limit that
// would make the allocation fail); tests/cpu/CMakeLists.txt says so.
#include "cpu_test_util.h"

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>

using namespace cgtest;

namespace {

uint64_t addressSpaceBytes() {
  std::ifstream f("/proc/self/statm");
  uint64_t pages = 0;
  f >> pages;
  return pages * uint64_t(sysconf(_SC_PAGESIZE));
}

} // namespace

TEST_CASE("cpu: out of memory for work-group scratch is an error", "[cpu][barrier][oom]") {
  const uint64_t wg = 16384, n = wg;
  GraphBuilder b("oom");
  auto k = addKernels(b, "barriers.cl");
  const uint32_t in = addSlot(b, "in", n * 4), out = addSlot(b, "out", n * 4);
  b.addKernelNode("reduce", k.at("big_private"), range1D(n, wg), {Arg::slot(in), Arg::slot(out)});
  Graph g = b.take();
  // Eager: runs on the calling thread, so the forked child (which has no other threads)
  // can run it.
  auto exe = finalizeOrFail(g, rt::ExecMode::Eager);
  Buffers bufs(g);
  bufs.set(in, std::vector<int>(n, 1));

  std::fflush(nullptr);
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    rlimit lim{};
    lim.rlim_cur = lim.rlim_max = addressSpaceBytes() + (256ull << 20);
    if (setrlimit(RLIMIT_AS, &lim) != 0) _exit(3);
    auto ev = exe->enqueue(bufs.table, {});
    if (!ev) _exit(4);
    Error e = (*ev)->wait();
    const bool ok = e &&
                    e.message().find("out of memory for work-group scratch") != std::string::npos &&
                    e.message().find("node 'reduce'") != std::string::npos;
    _exit(ok ? 0 : 5);
  }
  int status = 0;
  REQUIRE(waitpid(pid, &status, 0) == pid);
  INFO("child exit status " << status << " (signal " << (WIFSIGNALED(status) ? WTERMSIG(status) : 0)
                            << ")");
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);

  // Without the limit the same executable runs and computes correctly (in[] is all ones).
  auto ev = exe->enqueue(bufs.table, {});
  REQUIRE(ev);
  REQUIRE(!(*ev)->wait());
  const std::vector<int> got = bufs.get<int>(out);
  for (uint64_t g : {uint64_t(0), uint64_t(1), uint64_t(777), n - 1}) {
    int want = 0;
    for (uint64_t i = 0; i < 8192; i += 64)
      want += 1 + int((i + g) % 8192);
    CHECK(got[g] == want);
  }
}
