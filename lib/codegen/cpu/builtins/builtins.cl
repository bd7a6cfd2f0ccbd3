// OpenCL builtins for the host CPU, compiled at build time for spir64 so that names
// (Itanium mangling of the overloadable declarations in opencl-c.h) and address spaces
// match what the SPIR-V translator gives back. Linked into each kernel module, then
// internalized and inlined; the module is retargeted to the host afterwards.
//
// Work-item functions and barriers are NOT here: the work-group wrapper (wrappers.cpp)
// replaces them with loop variables and fiber switches.
//
// Vector forms apply the scalar form per component; after inlining, SLP/loop
// vectorization turns them back into vector instructions where the target has them.
#define OVL __attribute__((overloadable))
#define INL __attribute__((overloadable, always_inline))

#include "builtins_math.h"
#include "builtins_integer.h"
#include "builtins_relational.h"
#include "builtins_vload.h"
#include "builtins_convert.h"
#include "builtins_atomic.h"
#include "builtins_half.h"
#include "builtins_misc.h"

// OpenCL 2.0 defines the 1.2 fences as atomic_work_item_fence(flags, order,
// memory_scope_work_group) with acq_rel (mem_fence), acquire (read_) and release
// (write_): C11 fences of those orders, which on x86 order the compiler only (a
// sequentially consistent fence, `__sync_synchronize`, is an mfence: three per
// work-item made hist_fenced 1.5x PoCL's time on two Xeon cores).
void OVL mem_fence(cl_mem_fence_flags f) { __atomic_thread_fence(__ATOMIC_ACQ_REL); }
void OVL read_mem_fence(cl_mem_fence_flags f) { __atomic_thread_fence(__ATOMIC_ACQUIRE); }
void OVL write_mem_fence(cl_mem_fence_flags f) { __atomic_thread_fence(__ATOMIC_RELEASE); }
