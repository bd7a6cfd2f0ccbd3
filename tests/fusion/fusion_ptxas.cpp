// fusion_ptxas FILE.cgf...: every fused kernel module in the files (a module whose name
// starts with "fused_", as cgfuse writes them) is lowered to PTX by the cuda backend's
// lowering (table ABI included) and assembled by ptxas for sm_80 and sm_90, so that
// fused kernels (local tiles, remapped work-items, private intermediates) are known to
// be valid for the CUDA backend without a GPU.
// Exit codes: 0 passed, 1 failed, 77 skipped (no ptxas).
#include "cgraph/codegen/ptx.h"
#include "cgraph/format/reader.h"

#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using namespace cgraph;

namespace {

int runPtxas(const std::string &ptxas, const std::string &arch, const fs::path &in,
             std::string *log) {
  fs::path out = in, err = in;
  out.replace_extension("." + arch + ".cubin");
  err.replace_extension("." + arch + ".log");
  std::string cmd = "'" + ptxas + "' -arch=" + arch + " -o '" + out.string() + "' '" + in.string() +
                    "' > '" + err.string() + "' 2>&1";
  int rc = std::system(cmd.c_str());
  std::ifstream f(err);
  std::stringstream ss;
  ss << f.rdbuf();
  *log = ss.str();
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : 1;
}

} // namespace

int main(int argc, char **argv) {
  const char *env = std::getenv("CGRAPH_PTXAS");
  const std::string ptxas = env ? env : CGRAPH_PTXAS;
  std::error_code ec;
  if (ptxas.empty() || !fs::is_regular_file(ptxas, ec)) {
    std::printf("SKIPPED: ptxas not found (CGRAPH_PTXAS='%s')\n", ptxas.c_str());
    return 77;
  }
  int failures = 0, assembled = 0, modules = 0;
  for (int a = 1; a < argc; ++a) {
    Expected<Graph> g = readCgfFile(argv[a]);
    if (!g) {
      std::printf("FAIL %s: %s\n", argv[a], g.error().message().c_str());
      ++failures;
      continue;
    }
    for (const KernelModule &m : g->modules) {
      if (m.name.rfind("fused_", 0) != 0) continue;
      ++modules;
      const std::vector<uint8_t> &spv = m.forms.at(0).bytes;
      for (unsigned sm : {80u, 86u, 90u}) {
        Expected<codegen::PtxModule> ptx = codegen::lowerSpirvToPtx(spv.data(), spv.size(), m.name, sm);
        if (!ptx) {
          std::printf("FAIL %s %s (sm_%u): %s\n", argv[a], m.name.c_str(), sm,
                      ptx.error().message().c_str());
          ++failures;
          continue;
        }
        fs::path out =
            fs::path(argv[a]).parent_path() / (fs::path(argv[a]).stem().string() + "." + m.name +
                                               ".sm" + std::to_string(sm) + ".ptx");
        std::ofstream(out) << ptx->ptx;
        std::vector<std::string> archs = {"sm_90"};
        if (sm == 80) archs.insert(archs.begin(), "sm_80");
        for (const std::string &archName : archs) {
          const char *arch = archName.c_str();
          std::string log;
          int rc = runPtxas(ptxas, arch, out, &log);
          if (rc != 0) {
            std::printf("FAIL %s: ptxas -arch=%s: exit %d\n%s\n", out.string().c_str(), arch, rc,
                        log.c_str());
            ++failures;
          } else {
            ++assembled;
            std::printf("ok   %s %s: sm_%u PTX -> %s\n", fs::path(argv[a]).filename().c_str(),
                        m.name.c_str(), sm, arch);
          }
        }
      }
    }
  }
  std::printf("%d fused modules, %d assemblies passed, %d failures\n", modules, assembled,
              failures);
  if (modules == 0) {
    std::printf("FAIL: no fused module in the files\n");
    return 1;
  }
  return failures == 0 ? 0 : 1;
}
