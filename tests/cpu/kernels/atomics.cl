// Atomics on global and local memory: a global histogram, a local-memory histogram
// merged into global memory, and every atomic_* / atom_* operation on a few counters.
__kernel void hist_global(__global const uint *data, __global int *bins, uint nbins) {
  size_t i = get_global_id(0);
  atomic_inc(&bins[data[i] % nbins]);
}

__kernel void hist_local(__global const uint *data, __global int *bins, __local int *lbins, uint nbins) {
  size_t l = get_local_id(0), n = get_local_size(0);
  for (size_t b = l; b < nbins; b += n) lbins[b] = 0;
  write_mem_fence(CLK_LOCAL_MEM_FENCE);
  barrier(CLK_LOCAL_MEM_FENCE);
  atomic_add(&lbins[data[get_global_id(0)] % nbins], 1);
  mem_fence(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
  barrier(CLK_LOCAL_MEM_FENCE);
  read_mem_fence(CLK_LOCAL_MEM_FENCE);
  for (size_t b = l; b < nbins; b += n) atomic_add(&bins[b], lbins[b]);
}

// c: 10 counters; every work-item i applies each op once with value i.
// (64-bit atomics are left out: the SPIR-V validator rejects Int64Atomics for OpenCL.)
__kernel void atomic_ops(__global int *c, __global uint *u) {
  int i = (int)get_global_id(0);
  atomic_add(&c[0], i);
  atomic_sub(&c[1], i);
  atomic_max(&c[2], i);
  atomic_min(&c[3], i);
  atomic_or(&c[4], 1 << (i % 31));
  atomic_and(&c[5], ~(1 << (i % 31)));
  atomic_xor(&c[6], i);
  atomic_dec(&c[7]);
  atom_add(&c[8], 2);
  if (atomic_cmpxchg(&c[9], 0, i + 1) != 0) atomic_xchg(&c[9], c[9]);
  atomic_max(&u[0], (uint)i * 0x10000001u);
}
