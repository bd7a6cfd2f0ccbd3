// The kernel conformance suite, written once and run on every backend: each
// `// cgtest:` case of tests/cpu/kernels and tests/opencl/kernels (README.md in this
// folder) runs on the backend's device in replay and in eager mode, and its outputs are
// checked. A backend joins with one call of runKernelSuite in its test; what it does not
// run is an entry of the skip table (skips.cpp), reported with its reason on every run.
//
// Catch2 assertions inside: call from a TEST_CASE only. Every case is a
// DYNAMIC_SECTION named "BACKEND: FILE.cl:LINE KERNEL", so a failure names its case and
// the other cases still run; a skipped case is a section of its own that WARNs the reason.
#pragma once

#include "kernel_cases.h"

#include "cgraph/runtime/runtime.h"

#include <string>
#include <vector>

namespace cgraph::conformance {

// A device under test, under the name the skip table knows its backend by ("cpu",
// "opencl", "cuda", "level_zero", ...). The device outlives the call.
struct Target {
  std::string backend;
  rt::Device *device = nullptr;
};

// Every case not skipped on `t.backend` (nor on `peer.backend`, where given), run in
// replay and in eager mode on `t.device`, with the inputs of caseInputs(). Checked:
// - without a peer (`peer.device` null): each mode against the case's C++ reference
//   (kernel_manifest.h: integers bit for bit, floats within the case's ulp); a case
//   without a reference, replay against eager (0 ulp); every output that starts zeroed
//   was written in both modes. At least 10 cases are checked against a reference.
// - with a peer: replay against the peer's replay within the case's ulp, and replay
//   against eager byte for byte.
// At least one case runs.
void runKernelSuite(const Target &t, const Target &peer = {});

// The cases without a C++ reference (skipped on neither backend): `a`'s replay against
// `b`'s within the case's ulp, so they are still checked across backends.
void compareWithoutReference(const Target &a, const Target &b);

// The directories the suite reads: tests/cpu/kernels and tests/opencl/kernels of the
// source tree, or of CGRAPH_TEST_SOURCE_DIR where set (a copy of the tree on another
// machine: scripts/gpu-bundle.sh).
std::vector<std::string> kernelDirs();

// Every kernel file of kernelDirs() (REQUIREs that they load).
std::vector<ManifestFile> loadSuite();

// A case a backend does not run, and why. `caseId` is "FILE.cl" (each of its cases),
// "FILE.cl:KERNEL" or a case label "FILE.cl:LINE KERNEL"; `backend` a backend's name, or
// "*" for all.
struct Skip {
  const char *caseId;
  const char *backend;
  const char *reason;
};

// The one skip table (skips.cpp).
const std::vector<Skip> &skips();

// The entry that skips `c` on `backend`, or null.
const Skip *findSkip(const ManifestCase &c, const std::string &backend);

} // namespace cgraph::conformance
