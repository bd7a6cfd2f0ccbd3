// Barriers with local memory, local-pointer arguments, atomics, 2-D ranges with offsets.
// cgtest: kernel=block_sum global=256 local=64 args=out:i32[4]:w, in:i32[256]:rand(-1000..1000), local(256)
// cgtest: kernel=reverse_tile global=128 local=32 args=out:f32[128]:w, in:f32[128]:rand
// cgtest: kernel=histogram global=512 local=64 args=hist:u32[16]:w, in:u32[512]:rand(0..1000)
// cgtest: kernel=grid2d global=16,8 local=4,4 offset=2,1 args=out:i32[256]:w, 18:i32
__kernel void block_sum(__global int *out, __global const int *in, __local int *tmp) {
  size_t l = get_local_id(0), n = get_local_size(0);
  tmp[l] = in[get_global_id(0)];
  barrier(CLK_LOCAL_MEM_FENCE);
  for (size_t s = n / 2; s > 0; s >>= 1) {
    if (l < s) tmp[l] += tmp[l + s];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (l == 0) out[get_group_id(0)] = tmp[0];
}

__kernel void reverse_tile(__global float *out, __global const float *in) {
  __local float tile[32];
  size_t l = get_local_id(0);
  tile[l] = in[get_global_id(0)];
  barrier(CLK_LOCAL_MEM_FENCE);
  out[get_global_id(0)] = tile[get_local_size(0) - 1 - l] * 2.0f;
}

__kernel void histogram(__global uint *hist, __global const uint *in) {
  __local uint bins[16];
  size_t l = get_local_id(0);
  if (l < 16) bins[l] = 0;
  barrier(CLK_LOCAL_MEM_FENCE);
  atomic_inc(&bins[in[get_global_id(0)] % 16]);
  barrier(CLK_LOCAL_MEM_FENCE);
  if (l < 16) atomic_add(&hist[l], bins[l]);
}

__kernel void grid2d(__global int *out, int width) {
  size_t x = get_global_id(0), y = get_global_id(1);
  out[y * width + x] = (int)(x * 1000 + y * 10 + get_local_id(0) + get_group_id(1) * 100000);
}
