// Cross-backend kernel suite: every `// cgtest:` case of tests/cpu/kernels/*.cl and
// tests/opencl/kernels/*.cl runs with the same inputs on PoCL (through the OpenCL
// backend) and, when it is linked, on the CPU backend, each in replay and in eager mode,
// and each run is checked against the case's independent C++ reference
// (kernel_manifest.cpp); integer outputs must match bit for bit, float outputs within
// the case's ULP bound. Cases without a reference yet are checked replay against eager
// and cpu against PoCL. The manifest convention is in tests/opencl/README.md.
#include "cl_test_util.h"
#include "kernel_manifest.h"

#ifdef CGRAPH_HAVE_CPU_BACKEND
#include "cgraph/backends/cpu/cpu_backend.h"
#endif

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

using namespace cgraph;
using namespace cgraph::cltest;
namespace fs = std::filesystem;

namespace {

// THE skip list (docs/architecture.md, rule 8): every case a backend does not run, and
// why. A case is "FILE" (all its cases) or "FILE:KERNEL"; backend is "cpu", "opencl" or "*".
struct Skip {
  const char *caseId;
  const char *backend;
  const char *reason;
};
const Skip kSkips[] = {
    {"fences.cl", "opencl",
     "PoCL 3.1's kernel library has no mem_fence/read_mem_fence/write_mem_fence "
     "(clBuildProgram: cannot find symbol _Z9mem_fencej); cpu_backend_tests covers fences.cl"},
    {"half_math.cl", "opencl",
     "PoCL 3.1's kernel library has no half_cos/half_exp (cannot find symbol _Z8half_cosf); "
     "cpu_backend_tests covers half_math.cl"},
};

const Skip *findSkip(const ManifestCase &c, const std::string &backend) {
  const std::string file = fs::path(c.file).filename().string();
  for (const Skip &s : kSkips) {
    if (!*s.caseId) continue;
    const std::string id = s.caseId;
    const bool match = id == file || id == file + ":" + c.kernel;
    if (match && (std::string(s.backend) == "*" || backend == s.backend)) return &s;
  }
  return nullptr;
}

struct LoadedFile {
  std::string path;
  std::string source;
  std::vector<ManifestCase> cases;
};

std::vector<LoadedFile> loadKernelFiles() {
  std::vector<LoadedFile> out;
  for (const char *dir : {CGRAPH_CPU_KERNELS_DIR, CGRAPH_OPENCL_KERNELS_DIR}) {
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) continue;
    std::vector<fs::path> files;
    for (const auto &e : fs::directory_iterator(dir, ec))
      if (e.path().extension() == ".cl") files.push_back(e.path());
    std::sort(files.begin(), files.end());
    for (const fs::path &p : files) {
      std::ifstream f(p);
      std::stringstream ss;
      ss << f.rdbuf();
      LoadedFile lf{p.string(), ss.str(), {}};
      auto cases = parseManifest(lf.source, lf.path);
      INFO((cases ? std::string() : cases.error().message()));
      REQUIRE(cases); // a malformed manifest fails the suite, it is never skipped
      lf.cases = std::move(*cases);
      out.push_back(std::move(lf));
    }
  }
  return out;
}

// One graph per case: one kernel node, one external slot per buffer argument.
Graph caseGraph(const LoadedFile &f, const ManifestCase &c) {
  GraphBuilder b(c.label());
  uint32_t k = addKernelSource(b, f.source, fs::path(f.path).filename().string(), c.kernel);
  std::vector<Arg> args;
  for (const ManifestArg &a : c.args) {
    switch (a.kind) {
    case ManifestArg::Buffer:
      args.push_back(Arg::slot(b.addSlot(externalSlot(a.name, a.count * scalarSize(a.type)))));
      break;
    case ManifestArg::Scalar: args.push_back(Arg::scalar(a.type, a.bits)); break;
    case ManifestArg::Local: args.push_back(Arg::localMem(a.bytes)); break;
    }
  }
  NDRange r;
  r.dims = c.dims;
  for (uint32_t d = 0; d < 3; ++d) {
    r.global[d].value = c.global[d];
    r.local[d].value = c.local[d];
    r.offset[d].value = c.offset[d];
  }
  b.addKernelNode(c.kernel, k, r, args);
  return b.take();
}

std::vector<std::vector<uint8_t>> caseInputs(const ManifestCase &c) {
  std::vector<std::vector<uint8_t>> in;
  uint64_t seed = std::hash<std::string>()(c.label());
  for (size_t i = 0; i < c.args.size(); ++i)
    if (c.args[i].kind == ManifestArg::Buffer) in.push_back(makeInput(c.args[i], seed + i));
  return in;
}

// Runs the case; returns the buffer contents after the run (one per buffer arg).
std::vector<std::vector<uint8_t>> runCase(rt::Device &d, const Graph &g, const ManifestCase &c,
                                          const std::vector<std::vector<uint8_t>> &inputs,
                                          rt::ExecMode mode) {
  rt::FinalizeOptions fo;
  fo.mode = mode;
  auto exe = d.finalize(g, fo);
  INFO(d.info().backend << ": " << (exe ? std::string() : exe.error().message()));
  REQUIRE(exe);
  std::vector<std::unique_ptr<rt::Buffer>> bufs;
  rt::BindingTable t;
  for (const auto &in : inputs) {
    bufs.push_back(alloc(d, in.size()));
    writeAll(d, *bufs.back(), in);
    t.slots.push_back({bufs.back().get()});
  }
  runAndWait(**exe, t);
  std::vector<std::vector<uint8_t>> out;
  for (auto &b : bufs) out.push_back(readAll<uint8_t>(d, *b));
  return out;
}

std::vector<const ManifestArg *> bufferArgs(const ManifestCase &c) {
  std::vector<const ManifestArg *> v;
  for (const ManifestArg &a : c.args)
    if (a.kind == ManifestArg::Buffer) v.push_back(&a);
  return v;
}

void compareCase(const ManifestCase &c, const std::vector<std::vector<uint8_t>> &ref,
                 const std::vector<std::vector<uint8_t>> &got, uint32_t ulp, const char *what) {
  auto bufs = bufferArgs(c);
  for (size_t i = 0; i < bufs.size(); ++i) {
    if (!bufs[i]->out) continue;
    std::string diff = compareOutputs(*bufs[i], ref[i], got[i], ulp);
    INFO(c.label() << " (" << what << ")");
    CHECK(diff == "");
  }
}

} // namespace

TEST_CASE("kernel manifests parse and at least the opencl suite exists", "[opencl]") {
  auto files = loadKernelFiles();
  size_t cases = 0;
  for (const auto &f : files) cases += f.cases.size();
  CHECK(cases >= 10);
  for (const Skip &s : kSkips)
    if (*s.caseId) WARN("skipped on " << s.backend << ": " << s.caseId << ": " << s.reason);
  std::string missing;
  size_t without = 0;
  for (const auto &f : files)
    for (const ManifestCase &c : f.cases)
      if (!findReference(c)) {
        ++without;
        missing += (missing.empty() ? "" : ", ") + c.label();
      }
  if (without)
    WARN(without << " of " << cases << " cases have no C++ reference yet (checked replay against eager "
                 << "and cpu against PoCL instead): " << missing);
  auto bad = parseManifest("// cgtest: kernel=k global=4 args=x:f32[4]:bogus", "bad.cl");
  REQUIRE_FALSE(bad);
  CHECK(bad.error().message() == "bad.cl:1: unknown initializer 'bogus' (w, zero, seq, rand, rand(LO..HI), fill(V))");
}

namespace {

// Every case in both modes on `d`: against the case's C++ reference where it has one
// (integers bit for bit, floats within the case's ulp), else replay against eager bit
// for bit (and, in the [compare] case below, against the other backend). Returns the
// number of cases checked against a reference.
size_t runSuite(rt::Device &d, const std::string &backend) {
  size_t withReference = 0, without = 0;
  for (const LoadedFile &f : loadKernelFiles())
    for (const ManifestCase &c : f.cases) {
      if (findSkip(c, backend)) continue;
      const Reference ref = findReference(c);
      if (ref) ++withReference;
      else ++without;
      DYNAMIC_SECTION(backend << ": " << c.label()) {
        Graph g = caseGraph(f, c);
        auto in = caseInputs(c);
        auto replay = runCase(d, g, c, in, rt::ExecMode::Replay);
        auto eager = runCase(d, g, c, in, rt::ExecMode::Eager);
        if (ref) {
          auto expected = in;
          ref(c, expected);
          compareCase(c, expected, replay, c.ulp, (backend + " replay vs C++ reference").c_str());
          compareCase(c, expected, eager, c.ulp, (backend + " eager vs C++ reference").c_str());
        } else {
          compareCase(c, replay, eager, 0, (backend + " replay vs " + backend + " eager").c_str());
        }
        // Every output buffer was written by the kernel (an all-zero output means the
        // kernel never ran).
        auto bufs = bufferArgs(c);
        for (size_t i = 0; i < bufs.size(); ++i)
          if (bufs[i]->out && bufs[i]->init == ManifestArg::Zero) {
            INFO(c.label() << ": " << bufs[i]->name);
            CHECK(std::any_of(replay[i].begin(), replay[i].end(), [](uint8_t v) { return v != 0; }));
            CHECK(std::any_of(eager[i].begin(), eager[i].end(), [](uint8_t v) { return v != 0; }));
          }
      }
    }
  (void)without; // listed once, by the manifest test case
  return withReference;
}

} // namespace

TEST_CASE("kernel suite on PoCL: replay and eager against the C++ references", "[opencl]") {
  auto backend = opencl::makeOpenCLBackend();
  rt::Device &d = *openPocl(*backend);
  CHECK(runSuite(d, "opencl") >= 10);
}

#ifdef CGRAPH_HAVE_CPU_BACKEND
namespace {
// CGRAPH_TEST_CPU_CHECK_BOUNDS=1: the cpu backend's kernels are bounds-checked
// (CpuOptions::checkBounds), so an access of a suite kernel outside its buffers fails its
// case (ctest's test_opencl_kernels_cpu_check_bounds).
cpu::CpuOptions cpuOptions() {
  cpu::CpuOptions o;
  const char *v = std::getenv("CGRAPH_TEST_CPU_CHECK_BOUNDS");
  o.checkBounds = v && std::string(v) == "1";
  return o;
}
} // namespace

TEST_CASE("kernel suite on the cpu backend: replay and eager against the C++ references", "[opencl][cpu]") {
  auto cpu = cpu::makeCpuBackend(cpuOptions());
  rt::BackendProbe cp = cpu->probe();
  INFO("cpu probe: " << cp.reason);
  REQUIRE(cp.available);
  auto cdOr = cpu->device(0);
  REQUIRE(cdOr);
  CHECK(runSuite(**cdOr, "cpu") >= 10);
}

// Cases without a C++ reference are still checked across backends.
TEST_CASE("kernel suite: cpu backend vs PoCL where no reference exists", "[opencl][cpu][compare]") {
  auto pocl = opencl::makeOpenCLBackend();
  auto cpu = cpu::makeCpuBackend(cpuOptions());
  rt::Device &pd = *openPocl(*pocl);
  rt::BackendProbe cp = cpu->probe();
  INFO("cpu probe: " << cp.reason);
  REQUIRE(cp.available);
  auto cdOr = cpu->device(0);
  REQUIRE(cdOr);
  rt::Device &cd = **cdOr;
  for (const LoadedFile &f : loadKernelFiles())
    for (const ManifestCase &c : f.cases) {
      if (findSkip(c, "opencl") || findSkip(c, "cpu") || findReference(c)) continue;
      DYNAMIC_SECTION(c.label()) {
        Graph g = caseGraph(f, c);
        auto in = caseInputs(c);
        auto ref = runCase(pd, g, c, in, rt::ExecMode::Replay);
        auto got = runCase(cd, g, c, in, rt::ExecMode::Replay);
        compareCase(c, ref, got, c.ulp, "pocl vs cpu");
      }
    }
}
#endif
