// 64-bit atomics (cl_khr_int64_base_atomics / cl_khr_int64_extended_atomics): every
// atom_* operation on long and ulong counters in global memory, and a local-memory sum.
// The SPIR-V declares Int64Atomics (lib/kernel validates it in the universal env).
// cgtest: kernel=atomics64 global=512 args=c:i64[8]:fill(7):out, u:u64[4]:fill(3):out
// cgtest: kernel=atomics64 global=256 local=64 offset=64 args=c:i64[8]:fill(-1):out, u:u64[4]:zero:out
// cgtest: kernel=atomics64_local global=512 local=128 args=in:i64[512]:rand(-4000000000000..4000000000000), out:i64[1]:w
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
#pragma OPENCL EXTENSION cl_khr_int64_extended_atomics : enable
__kernel void atomics64(__global long *c, __global ulong *u) {
  long i = (long)get_global_id(0);
  atom_add(&c[0], i * 0x100000001L);
  atom_sub(&c[1], i << 33);
  atom_max(&c[2], i * -3000000000L);
  atom_min(&c[3], i * -3000000000L);
  atom_or(&c[4], 1L << (i % 63));
  atom_and(&c[5], ~(1L << (i % 63)));
  atom_xor(&c[6], i * 0x123456789L);
  atom_inc(&c[7]);
  atom_dec(&u[0]);
  atom_max(&u[1], (ulong)i * 0x9000000000000001UL);
  // Reads of counters other work-items change are atomic too (an `or` with 0): a plain
  // read would race with them (ThreadSanitizer checks these kernels on several threads).
  ulong old;
  do { old = atom_or(&u[2], 0UL); } while (atom_cmpxchg(&u[2], old, old + (ulong)i * 0x100000000UL) != old);
  ulong cur = atom_or(&u[3], 0UL);
  if (atom_xchg(&u[3], cur) != cur) atom_add(&c[7], 1000000L); // never taken: xchg with itself
}

__kernel void atomics64_local(__global const long *in, __global long *out) {
  __local long sum;
  if (get_local_id(0) == 0) sum = 0;
  barrier(CLK_LOCAL_MEM_FENCE);
  atom_add(&sum, in[get_global_id(0)]);
  barrier(CLK_LOCAL_MEM_FENCE);
  if (get_local_id(0) == 0) atom_add(&out[0], sum);
}
