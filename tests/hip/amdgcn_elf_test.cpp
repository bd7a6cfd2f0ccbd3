// CI test without an AMD GPU: every kernel of the test suites and examples is lowered to
// an amdgcn code object (the hip backend's lowering, the table ABI included, linked by
// ld.lld) for gfx90a, gfx908 and gfx1030, and llvm-readobj-14 must show:
//   - an ELF64 object for EM_AMDGPU whose e_flags name the processor,
//   - a shared object (ET_DYN, what hipModuleLoadData loads),
//   - for every kernel `k`: a function symbol `k` and an object symbol `k.kd` (the
//     kernel descriptor),
//   - the NT_AMDGPU_METADATA note (amdhsa.kernels) listing every kernel by .name and
//     .symbol `k.kd`.
// Any lowering, link or check failure fails the test.
// Exit codes: 0 passed, 1 failed, 77 skipped (no llvm-readobj-14 or ld.lld: ctest
// reports SKIPPED, never passed).
#include "cgraph/codegen/amdgcn.h"
#include "cgraph/kernel/opencl_compiler.h"

#include "../common/example_defines.h"

#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using namespace cgraph;

namespace {

std::string readText(const fs::path &p) {
  std::ifstream f(p);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

struct Target {
  const char *gfx;
  const char *mach; // llvm-readobj's e_flags name
};

// Checks llvm-readobj's output for one code object; returns the problems found.
std::vector<std::string> checkReadobj(const std::string &out, const Target &t,
                                      const std::vector<std::string> &kernels) {
  std::vector<std::string> bad;
  auto need = [&](const std::string &re, const std::string &what) {
    if (!std::regex_search(out, std::regex(re))) bad.push_back("no " + what);
  };
  need("Class: 64-bit", "ELF64 class");
  need("Type: SharedObject", "ET_DYN type (a loadable code object)");
  need("Machine: EM_AMDGPU", "EM_AMDGPU machine");
  need(std::string("EF_AMDGPU_MACH_AMDGCN_") + t.mach + " \\(0x",
       std::string("e_flags mach ") + t.mach);
  need("OS/ABI: AMDGPU_HSA", "AMDGPU_HSA OS/ABI");
  need("NT_AMDGPU_METADATA", "NT_AMDGPU_METADATA note");
  need("amdhsa.version", "amdhsa.version in the metadata");
  need(std::string("amdhsa.target:\\s+amdgcn-amd-amdhsa--") + t.gfx,
       std::string("amdhsa.target ") + t.gfx);
  for (const std::string &k : kernels) {
    // Symbols: `Name: k (` ... `Type: Function`, and `Name: k.kd (` ... `Type: Object`.
    need("Name: " + k +
             " \\([0-9]+\\)\\s+Value: 0x[0-9A-Fa-f]+\\s+Size: [1-9][0-9]*\\s+Binding: Global "
             "[^\\n]*\\s+Type: Function ",
         "global function symbol " + k);
    need("Name: " + k +
             "\\.kd \\([0-9]+\\)\\s+Value: 0x[0-9A-Fa-f]+\\s+Size: 64\\s+Binding: Global "
             "[^\\n]*\\s+Type: Object ",
         "64-byte kernel descriptor symbol " + k + ".kd");
    need("\\.name:\\s+" + k + "\\s", "metadata .name " + k);
    need("\\.symbol:\\s+" + k + "\\.kd\\s", "metadata .symbol " + k + ".kd");
  }
  // Exactly as many kernels in the metadata as the module has.
  size_t n = 0;
  const std::regex sym("\\.symbol:\\s+\\S+\\.kd");
  for (auto it = std::sregex_iterator(out.begin(), out.end(), sym); it != std::sregex_iterator();
       ++it)
    ++n;
  if (n != kernels.size())
    bad.push_back("metadata lists " + std::to_string(n) + " kernels, the module has " +
                  std::to_string(kernels.size()));
  return bad;
}

} // namespace

int main() {
  const char *envReadobj = std::getenv("CGRAPH_LLVM_READOBJ");
  const std::string readobj = envReadobj ? envReadobj : CGRAPH_LLVM_READOBJ;
  std::error_code ec;
  if (readobj.empty() || !fs::is_regular_file(readobj, ec)) {
    std::printf("SKIPPED: llvm-readobj-14 not found (CGRAPH_LLVM_READOBJ='%s'; install llvm-14)\n",
                readobj.c_str());
    return 77;
  }
  if (codegen::lldPath().empty()) {
    std::printf("SKIPPED: ld.lld not found (install lld-14 or set CGRAPH_LLD)\n");
    return 77;
  }
  std::vector<fs::path> files;
  const char *env = std::getenv("CGRAPH_TEST_SOURCE_DIR");
  const fs::path src = env ? env : CGRAPH_SOURCE_DIR;
  for (const fs::path &dir : {src / "tests/cpu/kernels", src / "tests/opencl/kernels"})
    for (const auto &e : fs::directory_iterator(dir, ec))
      if (e.path().extension() == ".cl") files.push_back(e.path());
  for (const auto &ex : fs::directory_iterator(src / "examples", ec))
    if (fs::is_directory(ex.path() / "kernels"))
      for (const auto &e : fs::directory_iterator(ex.path() / "kernels", ec))
        if (e.path().extension() == ".cl") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  // CGRAPH_TEST_FILTER=substring: only matching files (debugging one kernel file).
  if (const char *filter = std::getenv("CGRAPH_TEST_FILTER"))
    files.erase(std::remove_if(files.begin(), files.end(),
                               [&](const fs::path &p) {
                                 return p.string().find(filter) == std::string::npos;
                               }),
                files.end());
  const char *envOut = std::getenv("CGRAPH_TEST_OUT_DIR");
  const fs::path tmp =
      envOut ? fs::path(envOut) : fs::path(CGRAPH_BINARY_DIR) / "tests/hip/amdgcn-out";
  fs::create_directories(tmp, ec);
  const Target targets[] = {{"gfx90a", "GFX90A"}, {"gfx908", "GFX908"}, {"gfx1030", "GFX1030"}};
  int failures = 0, checked = 0;
  size_t kernelsChecked = 0;
  for (const fs::path &f : files) {
    CompileOptions co;
    co.includeDirs.push_back(f.parent_path().string());
    co.defines = cgraph::testutil::exampleDefines(f);
    auto spv = compileOpenCL(readText(f), f.filename().string(), co);
    if (!spv) {
      std::printf("FAIL %s: OpenCL C -> SPIR-V: %s\n", f.string().c_str(),
                  spv.error().message().c_str());
      ++failures;
      continue;
    }
    for (const Target &t : targets) {
      auto mod = codegen::lowerSpirvToAmdgcn(spv->spirv.data(), spv->spirv.size(),
                                         f.filename().string(), t.gfx);
      if (!mod) {
        std::printf("FAIL %s (%s): %s\n", f.string().c_str(), t.gfx, mod.error().message().c_str());
        ++failures;
        continue;
      }
      std::string rel = fs::relative(f, src).replace_extension().string();
      std::replace(rel.begin(), rel.end(), '/', '_');
      const fs::path co = tmp / (rel + "_" + t.gfx + ".co");
      const fs::path log = tmp / (rel + "_" + t.gfx + ".readobj");
      std::ofstream(co, std::ios::binary)
          .write(reinterpret_cast<const char *>(mod->codeObject.data()),
                 std::streamsize(mod->codeObject.size()));
      const std::string cmd = "'" + readobj + "' --file-headers --notes --symbols '" + co.string() +
                              "' > '" + log.string() + "' 2>&1";
      const int rc = std::system(cmd.c_str());
      const std::string out = readText(log);
      if (!WIFEXITED(rc) || WEXITSTATUS(rc) != 0) {
        std::printf("FAIL %s (%s): llvm-readobj failed:\n%s\n", f.string().c_str(), t.gfx,
                    out.c_str());
        ++failures;
        continue;
      }
      if (mod->kernels.empty()) {
        std::printf("FAIL %s (%s): no kernels\n", f.string().c_str(), t.gfx);
        ++failures;
        continue;
      }
      std::vector<std::string> bad = checkReadobj(out, t, mod->kernels);
      if (!bad.empty()) {
        std::printf("FAIL %s (%s, %s):", f.string().c_str(), t.gfx, log.string().c_str());
        for (const std::string &b : bad)
          std::printf(" [%s]", b.c_str());
        std::printf("\n");
        ++failures;
        continue;
      }
      ++checked;
      kernelsChecked += mod->kernels.size();
      std::printf("ok   %s (%s): %zu kernel(s), %zu-byte code object\n",
                  f.filename().string().c_str(), t.gfx, mod->kernels.size(),
                  mod->codeObject.size());
      std::fflush(stdout);
    }
  }
  std::printf("%zu files, %d code objects checked (%zu kernels), %d failures\n", files.size(),
              checked, kernelsChecked, failures);
  if (files.size() < 15 && !std::getenv("CGRAPH_TEST_FILTER")) {
    std::printf("FAIL: expected at least 15 kernel files\n");
    return 1;
  }
  return failures == 0 && checked > 0 ? 0 : 1;
}
