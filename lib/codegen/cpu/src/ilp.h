// Interleaving of vectorized work-item loops whose body is one long dependent chain per
// work-item (a fused chain of kernels: hundreds of `mad`s on one value), sized to the
// vector register file (the lowering, pipeline.cpp, uses it; LLVM types inside the CPU backend only).
//
// Such a body is latency-bound one vector at a time: each operation waits for the one
// before it (4 cycles for an FMA), so the floating-point pipes need several independent
// vectors of work-items in flight, more than the core's reorder window finds in a loop
// body of thousands of instructions. LLVM's loop vectorizer interleaves only by powers
// of two (`llvm.loop.interleave.count`), and on a 16-register AVX2 file 8 work-item
// vectors that each keep two values live (chain1000: x and y) need 17 registers: the
// machine scheduler then reorders to cut register pressure and runs two of the eight
// chains one after the other, alone (the loop ran at a third of the FMA throughput);
// 4 leaves a third of it unused.
//
// So the lowering asks the vectorizer for one vector per iteration (width only) and
// marks the loop (kIlpLoopMarker in its `llvm.loop.vectorize.followup_vectorized`
// attributes); after the O3 pipeline, interleaveMarkedLoops() rewrites each marked
// vector loop whose body is one basic block: K iterations at a time, instruction by
// instruction (the order the vectorizer's own interleaving gives), with K the most
// copies whose live vector values fit in the register file next to the loop's
// invariant ones (at most `maxCopies`). Leftover iterations run as one group of 4, 2
// (as many as apply, each also interleaved) and the original loop for the last one.
// The vectorizer's scalar loop for the work-items after the last full vector is marked
// too: 2 scalar copies where they fit the registers (a 5-work-item remainder of
// long_chain: 2, 2 and 1, not 5 chains in a row; more copies cost more compile time
// than they gained, ilp.cpp's kScalarCopies).
//
// Soundness: the loop runs the work-items of one work-group of a barrier-free kernel.
// Different work-items' plain accesses to one location, one of them a write, are a
// data race (undefined) without a barrier, so any interleaving of work-items is an
// execution OpenCL allows. Bodies with atomics, fences, volatile accesses or calls
// other than intrinsics without memory effects are left alone.
//
// Thread-safety: operates on one llvm::Module, whose context the caller owns.
#pragma once

#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Metadata.h>
#include <llvm/IR/Module.h>
#include <llvm/Target/TargetMachine.h>

namespace cgraph::codegen::cpu {

// The loop attribute (an MDNode holding this string) that marks a loop for
// interleaveMarkedLoops().
constexpr const char *kIlpLoopMarker = "cgraph.cpu.ilp";

// Interleaves every loop marked with kIlpLoopMarker in `m` (see above). Returns how many
// loops it rewrote.
unsigned interleaveMarkedLoops(llvm::Module &m, llvm::TargetMachine &tm, unsigned maxCopies);

} // namespace cgraph::codegen::cpu
