#include "cgraph/kernel/module_info.h"

#include <utility>

namespace cgraph {

KernelModule makeKernelModule(std::string name, const CompileResult &result,
                              const std::string *source, bool keepBitcode) {
  KernelModule m;
  m.name = std::move(name);
  KernelForm spirv;
  spirv.kind = FormKind::SpirV;
  spirv.target = "spirv64";
  spirv.options = result.buildOptions;
  spirv.bytes = result.spirv;
  m.forms.push_back(std::move(spirv));
  if (source != nullptr) {
    KernelForm src;
    src.kind = FormKind::OpenCLC;
    src.target = "opencl-c";
    src.options = result.buildOptions;
    src.bytes.assign(source->begin(), source->end());
    m.forms.push_back(std::move(src));
  }
  if (keepBitcode && !result.spirBitcode.empty()) {
    KernelForm bc;
    bc.kind = FormKind::LLVMBitcode;
    bc.target = "spir64";
    bc.options = result.buildOptions;
    bc.bytes = result.spirBitcode;
    m.forms.push_back(std::move(bc));
  }
  return m;
}

} // namespace cgraph
