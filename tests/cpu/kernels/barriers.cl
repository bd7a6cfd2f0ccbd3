// Barriers with local memory: a work-group sum (static __local array), the same with a
// __local pointer argument, and a tiled matrix transpose (2D groups).
// cgtest: kernel=reduce_static global=1024 local=64 args=in:f32[1024]:rand, out:f32[16]:w
// cgtest: kernel=reduce_arg global=512 local=128 args=in:i32[512]:rand(-100000..100000), out:i32[4]:w, local(512)
// cgtest: kernel=reduce_arg global=256 local=16 offset=32 args=in:i32[288]:rand, out:i32[18]:w, local(64)
// cgtest: kernel=transpose global=32,16 local=8,8 args=in:f32[512]:rand, out:f32[512]:w, 32:i32, 16:i32
// cgtest: kernel=transpose global=64,64 local=8,8 args=in:f32[4096]:seq, out:f32[4096]:w, 64:i32, 64:i32
// cgtest: kernel=uniform_mix global=256 local=64 args=in:u32[256]:rand, out:u32[256]:w, local(256), 5:u32
// cgtest: kernel=uniform_mix global=96 local=32 args=in:u32[96]:rand, out:u32[96]:w, local(128), 1:u32
// cgtest: kernel=uniform_mix global=64 local=16 args=in:u32[64]:rand, out:u32[64]:w, local(64), 0:u32
#define WG 64
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void reduce_static(__global const float *in, __global float *out) {
  __local float scratch[WG];
  size_t l = get_local_id(0);
  scratch[l] = in[get_global_id(0)];
  barrier(CLK_LOCAL_MEM_FENCE);
  for (size_t s = WG / 2; s > 0; s >>= 1) {
    if (l < s) scratch[l] += scratch[l + s];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (l == 0) out[get_group_id(0)] = scratch[0];
}

__kernel void reduce_arg(__global const int *in, __global int *out, __local int *scratch) {
  size_t l = get_local_id(0), n = get_local_size(0);
  scratch[l] = in[get_global_id(0)];
  barrier(CLK_LOCAL_MEM_FENCE);
  for (size_t s = n / 2; s > 0; s >>= 1) {
    if (l < s) scratch[l] += scratch[l + s];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (l == 0) out[get_group_id(0)] = scratch[0];
}

#define TILE 8
__kernel void transpose(__global const float *in, __global float *out, int w, int h) {
  __local float tile[TILE][TILE + 1];
  int x = get_global_id(0), y = get_global_id(1);
  int lx = get_local_id(0), ly = get_local_id(1);
  tile[ly][lx] = in[y * w + x];
  barrier(CLK_LOCAL_MEM_FENCE);
  int tx = get_group_id(1) * TILE + lx, ty = get_group_id(0) * TILE + ly;
  out[ty * h + tx] = tile[lx][ly];
}

// Values live across barriers (barrier regions keep them per work-item): a private array
// filled before a loop whose body has two barriers, a loop counter and an accumulator
// carried across them, divergent code between barriers, and a neighbour's value read
// through __local memory each step.
__kernel void private_across(__global const float *in, __global float *out, __local float *tile) {
  size_t l = get_local_id(0), n = get_local_size(0), g = get_global_id(0);
  float p[8];
  for (int i = 0; i < 8; ++i) p[i] = in[g] * (float)(i + 1);
  float acc = 0.0f;
  for (int step = 0; step < 8; ++step) {
    tile[l] = p[step];
    barrier(CLK_LOCAL_MEM_FENCE);
    if (l % 3 == 0) acc += 2.0f * tile[(l + 1) % n];
    else acc += tile[(l + 1) % n];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  out[g] = (l % 2) ? acc : -acc;
}

// A large private array live across a barrier: 32 KiB per work-item of context.
__kernel void big_private(__global const int *in, __global int *out) {
  int p[8192];
  size_t g = get_global_id(0);
  for (int i = 0; i < 8192; ++i) p[i] = in[g] + i;
  barrier(CLK_GLOBAL_MEM_FENCE);
  int s = 0;
  for (int i = 0; i < 8192; i += 64) s += p[(i + g) % 8192];
  out[g] = s;
}

// uniform_mix: values live across barriers of both kinds. `u`, `it` and the reduction
// stride `s` are the same in every work-item of the group (the cpu backend carries them
// as one value per group); `c` changes under a branch on the local id and by a load, so
// it must stay one value per work-item. Local size: a power of two.
__kernel void uniform_mix(__global const uint *in, __global uint *out, __local uint *scratch,
                          uint trips) {
  uint lid = get_local_id(0), n = get_local_size(0);
  uint c = in[get_global_id(0)];
  uint u = 5;
  for (uint it = 0; it < trips; ++it) {
    if (lid & 1) c += it;
    u = u * 3 + it;
    scratch[lid] = c + u;
    barrier(CLK_LOCAL_MEM_FENCE);
    c += scratch[(lid + 1) % n] & 7;
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  scratch[lid] = c ^ u;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint s = n / 2; s > 0; s >>= 1) {
    if (lid < s) scratch[lid] += scratch[lid + s];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  out[get_global_id(0)] = c * 1000u + u + scratch[0];
}
