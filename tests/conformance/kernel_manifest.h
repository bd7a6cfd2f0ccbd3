// The `// cgtest:` manifest convention of kernel test files (tests/conformance/README.md
// has the grammar), parsed into cases, plus deterministic inputs and the comparison rules.
#pragma once

#include "cgraph/error.h"
#include "cgraph/model.h"

#include <cstdint>
#include <string>
#include <vector>

namespace cgraph::conformance {

struct ManifestArg {
  enum Kind { Buffer, Scalar, Local } kind = Buffer;
  std::string name;
  ScalarType type = ScalarType::I32;
  uint64_t count = 0; // Buffer: elements
  enum Init { Zero, Seq, Rand, Fill } init = Zero;
  double lo = 0, hi = 0; // Rand range (inclusive for integers); Fill: lo
  bool hasRange = false;
  bool out = false;  // compared after the run
  uint64_t bits = 0; // Scalar value bits
  uint64_t bytes = 0; // Local
};

struct ManifestCase {
  std::string file;  // path
  int line = 0;
  std::string kernel;
  uint32_t dims = 1;
  uint64_t global[3] = {1, 1, 1}, local[3] = {0, 0, 0}, offset[3] = {0, 0, 0};
  uint32_t ulp = 2;
  std::vector<ManifestArg> args;
  std::string label() const; // `file.cl:3 kernel`
};

// Every `// cgtest:` line of `source`; errors name the file and line.
Expected<std::vector<ManifestCase>> parseManifest(const std::string &source, const std::string &file);

// Initial contents of buffer arg `a` (deterministic in `seed`).
std::vector<uint8_t> makeInput(const ManifestArg &a, uint64_t seed);

// Empty when equal within the rules (integers bit-exact, floats within `ulp`), else
// the first difference: `out[17]: 1.5 vs 1.5000001 (1 ulp > 0)`.
std::string compareOutputs(const ManifestArg &a, const std::vector<uint8_t> &ref,
                           const std::vector<uint8_t> &got, uint32_t ulp);

// The independent C++ reference of a case: `bufs` holds the initial contents of the
// case's buffer arguments, in argument order; the reference writes into them what the
// kernel must leave there. Written from the OpenCL C semantics of the kernel, not from
// either backend. Null when the case has none yet (kernel_manifest.cpp lists them).
using Reference = void (*)(const ManifestCase &c, std::vector<std::vector<uint8_t>> &bufs);
Reference findReference(const ManifestCase &c);

} // namespace cgraph::conformance
