// Atomics on global and local memory: a global histogram, a local-memory histogram
// merged into global memory, and every atomic_* / atom_* operation on a few counters.
// cgtest: kernel=hist_global global=1024 args=data:u32[1024]:rand(0..100000), bins:i32[16]:w, 16:u32
// cgtest: kernel=hist_global global=1000 offset=24 args=data:u32[1024]:rand(0..100000), bins:i32[7]:w, 7:u32
// cgtest: kernel=hist_local global=512 local=64 args=data:u32[512]:rand(0..1000), bins:i32[10]:w, local(40), 10:u32
// cgtest: kernel=hist_local global=512 local=128 args=data:u32[512]:rand(0..1000), bins:i32[200]:w, local(800), 200:u32
// atomic_ops: c[9] starts non-zero, so every atomic_cmpxchg fails and the result does not
// depend on which work-item comes first (that order is free: see extras.cl cas_add).
// cgtest: kernel=atomic_ops global=256 args=c:i32[10]:fill(7):out, u:u32[1]:w
// cgtest: kernel=atomic_ops global=96 local=32 args=c:i32[10]:fill(-1):out, u:u32[1]:zero:out
__kernel void hist_global(__global const uint *data, __global int *bins, uint nbins) {
  size_t i = get_global_id(0);
  atomic_inc(&bins[data[i] % nbins]);
}

__kernel void hist_local(__global const uint *data, __global int *bins, __local int *lbins, uint nbins) {
  size_t l = get_local_id(0), n = get_local_size(0);
  for (size_t b = l; b < nbins; b += n) lbins[b] = 0;
  barrier(CLK_LOCAL_MEM_FENCE);
  atomic_add(&lbins[data[get_global_id(0)] % nbins], 1);
  barrier(CLK_LOCAL_MEM_FENCE);
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
