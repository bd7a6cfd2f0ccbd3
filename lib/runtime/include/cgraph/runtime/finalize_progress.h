// Reports a finalize's kernel compilation to FinalizeOptions::progress (runtime.h): a
// backend calls ready(m) when module m of the graph is compiled or loaded, and the
// callback sees ("compiling kernels", modules ready so far, modules of the graph) once
// per module, the first time. Nothing happens without a callback.
//
// Ownership: copies the callback; lives for one finalize. Thread-safety: none (a
// finalize runs on one thread). Failure modes: none.
#pragma once

#include "cgraph/runtime/runtime.h"

#include <cstdint>
#include <vector>

namespace cgraph::rt {

class ModuleProgress {
public:
  ModuleProgress() = default;
  ModuleProgress(const FinalizeOptions &opts, size_t modules) : fn_(opts.progress) {
    if (fn_) seen_.assign(modules, 0);
  }
  void ready(uint32_t module) {
    if (!fn_ || module >= seen_.size() || seen_[module]) return;
    seen_[module] = 1;
    fn_("compiling kernels", ++done_, seen_.size());
  }

private:
  FinalizeProgressFn fn_;
  std::vector<char> seen_;
  uint64_t done_ = 0;
};

} // namespace cgraph::rt
