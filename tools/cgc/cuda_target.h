// `cgc --target cuda:sm_XY` (repeatable): PTX, and a cubin where the toolkit's ptxas is
// found, added to every kernel module as extra forms (the SPIR-V stays forms[0]).
// PTX forms are named `nvptx64-sm_<PTX target>` (the newest LLVM 14 emits at or below
// sm_XY, sm_86 at most), cubins `nvptx64-sm_XY`; the CUDA backend loads a cubin whose
// sm equals the device's compute capability, else the newest PTX it can JIT.
// Thread-safety: none needed (cgc is single-threaded). Failures: an unknown target, a
// lowering error naming the module, ptxas failing; "ptxas not found" is a warning.
#pragma once

#include "cgraph/error.h"
#include "cgraph/model.h"

#include <string>
#include <vector>

namespace cgraph::cgc {

Error addTargetForms(Graph &g, const std::vector<std::string> &targets, std::vector<std::string> *warnings);

} // namespace cgraph::cgc
