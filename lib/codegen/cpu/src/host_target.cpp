// The host target the lowering compiles for, and the options string of the object
// cache key (hostCompileOptions, cgraph/codegen/cpu.h): everything of the host and of the
// lowering's constants that changes what an object contains.
#include "lowering_internal.h"

#include <llvm/ADT/StringMap.h>
#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/Support/Host.h>
#include <llvm/Support/TargetSelect.h>

#include <algorithm>
#include <functional>
#include <mutex>
#include <string_view>
#include <vector>

namespace cgraph::codegen::cpu {

using namespace llvm;

void initTargets() {
  static std::once_flag once;
  std::call_once(once, [] {
    InitializeNativeTarget();
    InitializeNativeTargetAsmPrinter();
  });
}

Expected<std::unique_ptr<TargetMachine>> hostMachine() {
  initTargets();
  auto jtmb = orc::JITTargetMachineBuilder::detectHost();
  if (!jtmb) return makeError("cannot describe the host target: " + toText(jtmb.takeError()));
  jtmb->setCodeGenOptLevel(CodeGenOpt::Aggressive);
  auto tm = jtmb->createTargetMachine();
  if (!tm) return makeError("cannot create the host target machine: " + toText(tm.takeError()));
  return std::move(*tm);
}

std::string hostCompileOptions() {
  initTargets();
  // The builtin library is linked into every object: a changed library must miss.
  static const size_t builtinsHash = std::hash<std::string_view>{}(
      std::string_view(reinterpret_cast<const char *>(kBuiltinsBitcode), kBuiltinsBitcodeSize));
  // cgraph-cpu-7 names the `.info` layout (nine fields, cgraph/codegen/cpu.h): objects of another
  // layout must miss.
  std::string s = "cgraph-cpu-7 llvm-14 builtins=" + std::to_string(builtinsHash) +
                  " cpu=" + sys::getHostCPUName().str();
  s += " jam=" + std::to_string(unsigned(kJamCount)) + " ilp=" + std::to_string(unsigned(kIlpCount));
  StringMap<bool> features;
  if (sys::getHostCPUFeatures(features)) {
    std::vector<std::string> on;
    for (auto &f : features)
      if (f.second) on.push_back(f.first().str());
    std::sort(on.begin(), on.end());
    s += " +";
    for (auto &f : on)
      s += f + ",";
  }
  return s;
}

} // namespace cgraph::codegen::cpu
