// OpenCL 1.x atomics (atomic_* and atom_*, which the translator returns as atomic_*)
// on global and local memory. Sequentially consistent: the spec leaves 1.x atomics
// unordered, but kernels use atomic_cmpxchg as a lock and expect it to order.
#pragma once

// __sync builtins: spir64 reports no lock-free sizes, so __atomic_* would become libcalls.
// __sync_fetch_and_{min,max,umin,umax} are declared for int only (clang truncates a
// long argument), so 64-bit min/max are compare-and-swap loops. Their first read is
// atomic too: a plain read races with the other work-items' swaps (ThreadSanitizer
// reports it once the launch runs on several threads). It is a relaxed atomic load,
// which OpenCL C cannot write for spir64 either: the lowering (builtin_library.cpp) replaces the calls of
// these two undefined functions by `load atomic monotonic`. Only a guess that the swap
// checks (a stale value costs one more round), so it needs no order of its own; an
// `or` with 0, a full barrier on x86, made atomics64.cl's 3 min/max a third slower.
long cgraph_cpu_atomic_peek_global(volatile __global long *p);
long cgraph_cpu_atomic_peek_local(volatile __local long *p);
#define CG_MINMAX64(T, AS, S)                                                                 \
  static T OVL cg_amin(volatile AS T *p, T v) { T o = (T)cgraph_cpu_atomic_peek_##S((volatile AS long *)p); \
    for (;;) { T w = __sync_val_compare_and_swap(p, o, v < o ? v : o); if (w == o) return o; o = w; } } \
  static T OVL cg_amax(volatile AS T *p, T v) { T o = (T)cgraph_cpu_atomic_peek_##S((volatile AS long *)p); \
    for (;;) { T w = __sync_val_compare_and_swap(p, o, v > o ? v : o); if (w == o) return o; o = w; } }
CG_MINMAX64(long, __global, global) CG_MINMAX64(long, __local, local)
CG_MINMAX64(ulong, __global, global) CG_MINMAX64(ulong, __local, local)
#define CG_MINMAX32(T, AS, MIN, MAX)                                                          \
  static T OVL cg_amin(volatile AS T *p, T v) { return MIN(p, v); }                            \
  static T OVL cg_amax(volatile AS T *p, T v) { return MAX(p, v); }
CG_MINMAX32(int, __global, __sync_fetch_and_min, __sync_fetch_and_max)
CG_MINMAX32(int, __local, __sync_fetch_and_min, __sync_fetch_and_max)
CG_MINMAX32(uint, __global, __sync_fetch_and_umin, __sync_fetch_and_umax)
CG_MINMAX32(uint, __local, __sync_fetch_and_umin, __sync_fetch_and_umax)
#define CG_MIN_OP(p, v) cg_amin(p, v)
#define CG_MAX_OP(p, v) cg_amax(p, v)
#define CG_ATOMIC_AS(T, AS)                                                                   \
  T OVL atomic_add(volatile AS T *p, T v) { return __sync_fetch_and_add(p, v); }        \
  T OVL atomic_sub(volatile AS T *p, T v) { return __sync_fetch_and_sub(p, v); }        \
  T OVL atomic_xchg(volatile AS T *p, T v) { return __sync_swap(p, v); }      \
  T OVL atomic_min(volatile AS T *p, T v) { return CG_MIN_OP(p, v); }        \
  T OVL atomic_max(volatile AS T *p, T v) { return CG_MAX_OP(p, v); }        \
  T OVL atomic_and(volatile AS T *p, T v) { return __sync_fetch_and_and(p, v); }        \
  T OVL atomic_or(volatile AS T *p, T v) { return __sync_fetch_and_or(p, v); }          \
  T OVL atomic_xor(volatile AS T *p, T v) { return __sync_fetch_and_xor(p, v); }        \
  T OVL atomic_inc(volatile AS T *p) { return __sync_fetch_and_add(p, (T)1); }          \
  T OVL atomic_dec(volatile AS T *p) { return __sync_fetch_and_sub(p, (T)1); }          \
  T OVL atomic_cmpxchg(volatile AS T *p, T cmp, T v) {                                       \
    return __sync_val_compare_and_swap(p, cmp, v); }                  \
  T OVL atom_add(volatile AS T *p, T v) { return atomic_add(p, v); }                         \
  T OVL atom_sub(volatile AS T *p, T v) { return atomic_sub(p, v); }                         \
  T OVL atom_xchg(volatile AS T *p, T v) { return atomic_xchg(p, v); }                       \
  T OVL atom_min(volatile AS T *p, T v) { return atomic_min(p, v); }                         \
  T OVL atom_max(volatile AS T *p, T v) { return atomic_max(p, v); }                         \
  T OVL atom_and(volatile AS T *p, T v) { return atomic_and(p, v); }                         \
  T OVL atom_or(volatile AS T *p, T v) { return atomic_or(p, v); }                           \
  T OVL atom_xor(volatile AS T *p, T v) { return atomic_xor(p, v); }                         \
  T OVL atom_inc(volatile AS T *p) { return atomic_inc(p); }                                 \
  T OVL atom_dec(volatile AS T *p) { return atomic_dec(p); }                                 \
  T OVL atom_cmpxchg(volatile AS T *p, T c, T v) { return atomic_cmpxchg(p, c, v); }
#define CG_ATOMIC(T) CG_ATOMIC_AS(T, __global) CG_ATOMIC_AS(T, __local)
CG_ATOMIC(int) CG_ATOMIC(uint) CG_ATOMIC(long) CG_ATOMIC(ulong)

float OVL atomic_xchg(volatile __global float *p, float v) {
  return as_float(__sync_swap((volatile __global uint *)p, as_uint(v))); }
float OVL atomic_xchg(volatile __local float *p, float v) {
  return as_float(__sync_swap((volatile __local uint *)p, as_uint(v))); }
