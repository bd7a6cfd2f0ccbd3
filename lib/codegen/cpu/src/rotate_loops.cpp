// A barrier region's loops rotated before the work-item guard search (guards.h). A
// region that is one strided loop over its work-items' share of a range,
// `for (i = lid; i < n; i += get_local_size(0))` (each step of a tree reduction over
// more values than work-items), tests `lid < n` only as its loop's exit condition, which
// the search does not take for a guard; rotated, the loop is `if (lid < n) do ... while`,
// a guard like any other, and the x loop runs only the work-items with a share (the
// others would each run an empty trip per region). LLVM's O3 rotates the loops later
// anyway.
#include "lowering_internal.h"

#include <llvm/Transforms/Scalar/LoopPassManager.h>
#include <llvm/Transforms/Scalar/LoopRotation.h>
#include <llvm/Transforms/Utils/LCSSA.h>
#include <llvm/Transforms/Utils/LoopSimplify.h>

namespace cgraph::codegen::cpu {

using namespace llvm;

void rotateLoops(Function &f) {
  FunctionPassManager fpm;
  fpm.addPass(LoopSimplifyPass());
  fpm.addPass(LCSSAPass());
  fpm.addPass(createFunctionToLoopPassAdaptor(LoopRotatePass()));
  runPasses(f, fpm);
}

} // namespace cgraph::codegen::cpu
