// THE skip list of the kernel conformance suite (docs/architecture.md, rule 8): every
// case a backend does not run, and why. Each entry is reported with its reason on every
// run that skips it, and conformance_manifest_test fails on an entry that names no case.
#include "conformance.h"

#include <filesystem>

namespace cgraph::conformance {

const std::vector<Skip> &skips() {
  static const std::vector<Skip> table = {
      {"fences.cl", "opencl",
       "PoCL 3.1's kernel library has no mem_fence/read_mem_fence/write_mem_fence "
       "(clBuildProgram: cannot find symbol _Z9mem_fencej); cpu_backend_tests covers fences.cl"},
      {"half_math.cl", "opencl",
       "PoCL 3.1's kernel library has no half_cos/half_exp (cannot find symbol _Z8half_cosf); "
       "cpu_backend_tests covers half_math.cl"},
      {"extras.cl:8 ext_half", "cuda",
       "libclc's nvptx vstore_half_rtp/rte of floats below the half subnormal range round "
       "differently from cpu and PoCL (h[8]: 1 vs 0)"},
      {"extras.cl:9 ext_half", "cuda",
       "same libclc nvptx half-conversion difference (h[59]: 1 vs 0)"},
  };
  return table;
}

const Skip *findSkip(const ManifestCase &c, const std::string &backend) {
  const std::string file = std::filesystem::path(c.file).filename().string();
  for (const Skip &s : skips()) {
    const std::string id = s.caseId;
    const bool match = id == file || id == file + ":" + c.kernel || id == c.label();
    if (match && (std::string(s.backend) == "*" || backend == s.backend)) return &s;
  }
  return nullptr;
}

} // namespace cgraph::conformance
