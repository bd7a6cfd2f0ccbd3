// Explicit memory fences (mem_fence, read_mem_fence, write_mem_fence) around a
// local-memory histogram. Kept apart from atomics.cl: PoCL 3.1's kernel library lacks
// _Z9mem_fencej and friends, so any module calling them fails to build there (see the
// skip table in tests/conformance/skips.cpp); cpu_backend_tests checks it.
// cgtest: kernel=hist_fenced global=512 local=64 args=data:u32[512]:rand(0..1000), bins:i32[10]:w, local(40), 10:u32
__kernel void hist_fenced(__global const uint *data, __global int *bins, __local int *lbins, uint nbins) {
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
