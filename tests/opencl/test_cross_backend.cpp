// The kernel conformance suite (tests/conformance) on PoCL, through the OpenCL backend,
// and on the cpu backend when it is linked, both against the C++ references; the cases
// without a reference are compared cpu against PoCL. The graph conformance suite (node
// kinds, slot initializations, parameters, updates, conditionals) on both.
#include "../conformance/conformance.h"
#include "../conformance/graph_suite.h"
#include "cl_test_util.h"

#ifdef CGRAPH_HAVE_CPU_BACKEND
#include "cgraph/backends/cpu/cpu_backend.h"
#endif

#include <cstdlib>
#include <string>

using namespace cgraph;

TEST_CASE("kernel suite on PoCL: replay and eager against the C++ references", "[opencl]") {
  auto backend = opencl::makeOpenCLBackend();
  conformance::runKernelSuite({"opencl", cltest::openPocl(*backend)});
}

TEST_CASE("graph suite on PoCL: replay and eager", "[opencl][graph]") {
  auto backend = opencl::makeOpenCLBackend();
  conformance::runGraphSuite({"opencl", cltest::openPocl(*backend)});
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

rt::Device *openCpu(rt::Backend &backend) {
  rt::BackendProbe p = backend.probe();
  INFO("cpu probe: " << p.reason);
  REQUIRE(p.available);
  auto d = backend.device(0);
  INFO((d ? std::string() : d.error().message()));
  REQUIRE(d);
  return *d;
}

} // namespace

TEST_CASE("kernel suite on the cpu backend: replay and eager against the C++ references",
          "[opencl][cpu]") {
  auto backend = cpu::makeCpuBackend(cpuOptions());
  conformance::runKernelSuite({"cpu", openCpu(*backend)});
}

TEST_CASE("graph suite on the cpu backend: replay and eager", "[opencl][cpu][graph]") {
  auto backend = cpu::makeCpuBackend(cpuOptions());
  conformance::runGraphSuite({"cpu", openCpu(*backend)});
}

TEST_CASE("kernel suite: cpu backend vs PoCL where no reference exists", "[opencl][cpu][compare]") {
  auto pocl = opencl::makeOpenCLBackend();
  auto cpu = cpu::makeCpuBackend(cpuOptions());
  conformance::compareWithoutReference({"opencl", cltest::openPocl(*pocl)}, {"cpu", openCpu(*cpu)});
}
#endif
