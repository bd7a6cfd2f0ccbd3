// Work-item guards (lib/backends/cpu/src/guards.h): x loops narrowed to the work-items
// that pass a test of their x id against a group-uniform bound, and the tests the
// narrowing must leave alone. Compared with PoCL by the cross-backend suite.
// cgtest: kernel=guard_lt global=1024 local=64 args=in:f32[1024]:rand, out:f32[1024]:w, 1000:u32
// cgtest: kernel=guard_lt global=1000 offset=24 args=in:f32[1024]:rand, out:f32[1024]:w, 700:u32
// cgtest: kernel=guard_lt global=256 local=64 args=in:f32[256]:rand, out:f32[256]:w, 1:u32
// cgtest: kernel=guard_ge_return global=512 local=128 args=in:i32[512]:rand, out:i32[512]:w, 301:i32
// cgtest: kernel=guard_ge_return global=512 args=in:i32[512]:rand, out:i32[512]:w, 3:i32
// cgtest: kernel=guard_le_2d global=48,16 local=16,4 args=out:i32[768]:w, 20:u32
// cgtest: kernel=guard_local_tri global=32,8 local=16,8 args=out:i32[256]:w
// cgtest: kernel=guard_idle_writes global=300 local=100 args=a:i32[300]:w, b:i32[300]:w, 123:u32
// cgtest: kernel=guard_wrap global=64 offset=4294967264 args=out:u32[64]:w
// cgtest: kernel=guard_then_all global=320 local=64 args=in:i32[320]:rand(-1000..1000), a:i32[320]:w, r:i32[320]:w, 150:u32
// cgtest: kernel=guard_then_all global=256 local=64 args=in:i32[256]:rand(-1000..1000), a:i32[256]:w, r:i32[256]:w, 999:u32
// cgtest: kernel=guard_or_uniform global=40,24 local=8,4 args=in:f32[960]:rand, out:f32[960]:w, r:f32[960]:w, 29:u32, 17:u32
// cgtest: kernel=guard_and_uniform global=200 local=50 args=out:i32[200]:w, 77:u32, 1:u32
// cgtest: kernel=guard_and_uniform global=200 local=50 args=out:i32[200]:w, 77:u32, 0:u32
// cgtest: kernel=reduce_odd global=240 local=48 args=in:i32[240]:rand(-1000..1000), out:i32[5]:w, local(192)
// cgtest: kernel=reduce_carry global=256 local=64 args=in:f32[256]:rand, out:f32[256]:w, local(256)

__kernel void guard_lt(__global const float *in, __global float *out, uint n) {
  uint i = get_global_id(0);
  if (i < n) out[i] = in[i] * 2.0f + 1.0f;
}

__kernel void guard_ge_return(__global const int *in, __global int *out, int n) {
  int i = get_global_id(0);
  if (i >= n) return;
  out[i] = in[i] ^ 0x5a5a;
}

// The bound depends on y (uniform within an x loop): a triangle per row.
__kernel void guard_le_2d(__global int *out, uint w) {
  size_t x = get_global_id(0), y = get_global_id(1);
  if (x <= y + w) out[y * get_global_size(0) + x] = (int)(x * 1000 + y);
}

__kernel void guard_local_tri(__global int *out) {
  size_t lx = get_local_id(0), ly = get_local_id(1);
  size_t i = get_global_id(1) * get_global_size(0) + get_global_id(0);
  if (lx > ly) return;
  out[i] = (int)(lx + 100 * ly) + 1;
}

// The work-items that fail the test write too: no narrowing.
__kernel void guard_idle_writes(__global int *a, __global int *b, uint n) {
  uint i = get_global_id(0);
  if (i < n) a[i] = (int)i;
  else b[i] = -(int)i;
}

// The work-items that fail the test skip a part and go on with the rest (a fused
// kernel's shape): the x loop runs the passing ones through the test-free clone, the
// others through the kernel.
__kernel void guard_then_all(__global const int *in, __global int *a, __global int *r, uint n) {
  uint i = get_global_id(0);
  if (i < n) a[i] = in[i] * 3;
  r[i] = a[i] - (int)i;
}

// The test as one side of `||`, the other side group-uniform (a 2-D range check).
__kernel void guard_or_uniform(__global const float *in, __global float *out, __global float *r, uint nx,
                               uint ny) {
  size_t x = get_global_id(0), y = get_global_id(1), i = y * get_global_size(0) + x;
  if (!(x >= nx || y >= ny)) out[i] = in[i] * 0.5f + 1.0f;
  r[i] = out[i] + (float)x;
}

// The test as one side of `&&`, the other side a uniform argument.
__kernel void guard_and_uniform(__global int *out, uint n, uint on) {
  uint i = get_global_id(0);
  int v = -1;
  if (i < n && on != 0) v = (int)(i * 7);
  out[i] = v;
}

// The global id as a uint wraps past 2^32 inside the group: the count is not usable
// (work-items 32..38 pass the test, 0..31 do not).
__kernel void guard_wrap(__global uint *out) {
  uint i = get_global_id(0);
  if (i < 7u) out[get_global_id(0) - get_global_offset(0)] = i + 1;
}

// A tree reduction over a group that is not a power of two (48: strides 24, 12, 6, 3,
// then a last odd step).
__kernel void reduce_odd(__global const int *in, __global int *out, __local int *scratch) {
  uint l = get_local_id(0), n = get_local_size(0);
  scratch[l] = in[get_global_id(0)];
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint s = n; s > 1;) {
    uint h = (s + 1) / 2;
    if (l < s - h) scratch[l] += scratch[l + h];
    barrier(CLK_LOCAL_MEM_FENCE);
    s = h;
  }
  if (l == 0) out[get_group_id(0)] = scratch[0];
}

// A value set only by the work-items that pass a test and read after the barrier by all.
__kernel void reduce_carry(__global const float *in, __global float *out, __local float *scratch) {
  uint l = get_local_id(0);
  float v = -1.0f;
  scratch[l] = in[get_global_id(0)];
  barrier(CLK_LOCAL_MEM_FENCE);
  if (l < 10) v = scratch[l] + scratch[63 - l];
  barrier(CLK_LOCAL_MEM_FENCE);
  out[get_global_id(0)] = v + scratch[(l + 1) % 64];
}

// Division of an x-affine value by a group-uniform one (guards.h XDivision): runs of
// one quotient, with and without a guard, 32- and 64-bit, divisors below and above the
// group size, a global offset, and a uint id that wraps (runs not usable).
// cgtest: kernel=div_rows global=1024 local=256 args=in:f32[1024]:rand, bias:f32[1024]:rand, out:f32[1024]:w, 3:u32, 1000:u32
// cgtest: kernel=div_rows global=1000 offset=8 args=in:f32[1024]:rand, bias:f32[1024]:rand, out:f32[1024]:w, 300:u32, 1008:u32
// cgtest: kernel=div_rows global=512 args=in:f32[512]:rand, bias:f32[512]:rand, out:f32[512]:w, 1:u32, 512:u32
// cgtest: kernel=div_rows global=640 local=64 args=in:f32[640]:rand, bias:f32[640]:rand, out:f32[640]:w, 700:u32, 640:u32
// cgtest: kernel=div_rows64 global=777 args=out:u64[777]:w, 17:u64
// cgtest: kernel=div_rows64 global=256 local=128 offset=100 args=out:u64[356]:w, 64:u64
// cgtest: kernel=div_wrap global=64 offset=4294967264 args=out:u32[64]:w, 5:u32
__kernel void div_rows(__global const float *in, __global const float *bias, __global float *out,
                       uint cols, uint count) {
  uint i = get_global_id(0);
  if (i < count) out[i] = in[i] + bias[i % cols] + (float)(i / cols);
}

__kernel void div_rows64(__global ulong *out, ulong cols) {
  size_t i = get_global_id(0);
  out[i] = (i / cols) * 1000 + i % cols + 1;
}

__kernel void div_wrap(__global uint *out, uint d) {
  uint i = get_global_id(0);
  out[get_global_id(0) - get_global_offset(0)] = (i % d) * 100 + i / d % 97 + 1;
}
