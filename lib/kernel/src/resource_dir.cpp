#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>
#include <system_error>
#include <vector>

#include <clang/Basic/Version.h>
#include <clang/Frontend/CompilerInstance.h>

#include "internal.h"

namespace cgraph::kernel_detail {
namespace {

bool hasOpenCLHeader(const std::string &dir) {
  std::error_code ec;
  return !dir.empty() && std::filesystem::exists(dir + "/include/opencl-c.h", ec);
}

// The resource dir sits beside the loaded libclang-cpp (<prefix>/lib/clang/<version>),
// which survives moving the whole LLVM prefix after we were built.
std::string besideLoadedClang() {
  Dl_info info{};
  auto *anchor = reinterpret_cast<void *>(&clang::getClangFullVersion);
  if (dladdr(anchor, &info) == 0 || info.dli_fname == nullptr) return {};
  std::error_code ec;
  std::filesystem::path lib = std::filesystem::canonical(info.dli_fname, ec);
  if (ec) return {};
  return (lib.parent_path() / "clang" / CLANG_VERSION_STRING).string();
}

std::string findResourceDir() {
  std::vector<std::string> candidates;
  if (const char *env = std::getenv("CGRAPH_CLANG_RESOURCE_DIR")) candidates.push_back(env);
#ifdef CGRAPH_CLANG_RESOURCE_DIR
  candidates.push_back(CGRAPH_CLANG_RESOURCE_DIR);
#endif
  candidates.push_back(besideLoadedClang());
  candidates.push_back(std::string("/usr/lib/llvm-14/lib/clang/") + CLANG_VERSION_STRING);
  for (const std::string &dir : candidates)
    if (hasOpenCLHeader(dir)) return dir;
  return {};
}

} // namespace

const std::string &clangResourceDir() {
  static const std::string dir = findResourceDir();
  return dir;
}

} // namespace cgraph::kernel_detail
