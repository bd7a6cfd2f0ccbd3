// Barriers (cpu backend: barrier regions) with values formed by control flow (phis)
// before a barrier and used after it. The region cut demotes every value used outside
// its block to memory; it used to leave out the phis' own uses, so a region starting
// after the barrier saw the phi's block as unreachable (a wrong result, e.g. NaN) or as
// reachable, through a loop's back edge, without dominating the use (invalid IR). At -O0
// clang emits phis only inside expressions, so the cond_* kernels put the barrier inside
// one (comma operator); the loop_* kernels have the shapes of the fused graphs that
// showed the bugs, which their loops take when compiled optimized (cpu_backend_tests
// runs this file at -O0 and at -O2; barriers.cl gives invalid SPIR-V at -O2 through the
// LLVM 14 translator). Local size: any; `tile` holds one uint per item (cond_loop: two).
// cgtest: kernel=loop_result global=256 local=64 args=in:u32[256]:rand, out:u32[256]:w, local(256)
// cgtest: kernel=loop_result global=48 local=16 args=in:u32[48]:rand, out:u32[48]:w, local(64)
// cgtest: kernel=loop_counter global=256 local=64 args=in:u32[256]:rand, out:u32[256]:w, local(256), 5:u32
// cgtest: kernel=loop_counter global=32 local=8 args=in:u32[32]:rand, out:u32[32]:w, local(32), 1:u32
// cgtest: kernel=cond_across global=256 local=64 args=in:u32[256]:rand, out:u32[256]:w, local(256)
// cgtest: kernel=cond_across global=30 local=10 args=in:u32[30]:rand, out:u32[30]:w, local(40)
// cgtest: kernel=cond_loop global=256 local=64 args=in:u32[256]:rand, out:u32[256]:w, local(512), 6:u32
// cgtest: kernel=cond_loop global=24 local=8 args=in:u32[24]:rand, out:u32[24]:w, local(64), 1:u32

// loop_result: a loop's result (a phi at -O2) computed between two barriers, used after
// the second and after a third.
__kernel void loop_result(__global const uint *in, __global uint *out, __local uint *tile) {
  size_t l = get_local_id(0), n = get_local_size(0), g = get_global_id(0);
  tile[l] = in[g];
  barrier(CLK_LOCAL_MEM_FENCE);
  uint s = 0;
  for (size_t k = 0; k < n; ++k) s += tile[k] * (uint)(k + 1);
  barrier(CLK_LOCAL_MEM_FENCE);
  tile[l] = s ^ (uint)l;
  barrier(CLK_LOCAL_MEM_FENCE);
  out[g] = s * 3u + tile[(l + 1) % n];
}

// loop_counter: a loop whose body ends in a barrier after which it steps its counter (a
// phi of the loop header at -O2, used after the barrier), as in a tiled matmul.
__kernel void loop_counter(__global const uint *in, __global uint *out, __local uint *tile,
                           uint trips) {
  size_t l = get_local_id(0), n = get_local_size(0), g = get_global_id(0);
  uint acc = in[g];
  for (uint it = 0; it < trips; ++it) {
    tile[l] = acc + it;
    barrier(CLK_LOCAL_MEM_FENCE);
    acc = ((l & 1) ? acc * 3u : acc + 1u) + tile[(l + 1) % n];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  out[g] = acc;
}

// cond_across: a conditional operator's value (a phi) used after a barrier.
__kernel void cond_across(__global const uint *in, __global uint *out, __local uint *tile) {
  size_t l = get_local_id(0), n = get_local_size(0), g = get_global_id(0);
  uint x = in[g];
  tile[l] = x;
  out[g] = (l % 3 == 0 ? x * 2u : x ^ 0x55u) + (barrier(CLK_LOCAL_MEM_FENCE), tile[(l + 1) % n]);
}

// cond_loop: the same in a loop with one barrier per iteration (two halves of `tile`
// alternate), so the phi's block is reachable again after the barrier without
// dominating the use. `tile`: 2 * local size uints.
__kernel void cond_loop(__global const uint *in, __global uint *out, __local uint *tile,
                        uint trips) {
  size_t l = get_local_id(0), n = get_local_size(0), g = get_global_id(0);
  uint acc = in[g];
  for (uint it = 0; it < trips; ++it) {
    __local uint *cur = tile + (it & 1) * n;
    cur[l] = acc;
    acc = ((l & 1) ? acc * 3u : acc + it) + (barrier(CLK_LOCAL_MEM_FENCE), cur[(l + 1) % n]);
  }
  out[g] = acc;
}
