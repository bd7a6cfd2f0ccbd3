// Clamped x indices (lib/backends/cpu/src/guards.h XClamps): the x loop runs a clone
// without the clamps over the work-items where every clamp is the identity, the
// original function over the others. Edges must still clamp. test_clamps.cpp checks
// these against C++ references; the cross-backend suite compares them with PoCL.
// cgtest: kernel=clamp_stencil global=37,5 args=out:i32[185]:w, in:i32[185]:rand(-1000..1000), 37:u32, 5:u32
// cgtest: kernel=clamp_stencil global=300,3 args=out:i32[900]:w, in:i32[900]:rand(-1000..1000), 300:u32, 3:u32
// cgtest: kernel=clamp_stencil global=1,4 args=out:i32[4]:w, in:i32[4]:rand(-1000..1000), 1:u32, 4:u32
// cgtest: kernel=sobel_clamped global=70,6 args=mag:f32[420]:w, in:f32[420]:rand, 70:u32, 6:u32
// cgtest: kernel=clamp_builtin global=200 offset=3 args=out:i32[200]:w, in:i32[256]:rand(-1000..1000), -5:i32, 10:i32, 180:i32
// cgtest: kernel=clamp_umin_wrap global=64 offset=4294967264 args=out:i32[64]:w, in:i32[16]:rand(-1000..1000), 16:u32
// cgtest: kernel=clamp_max_wrap global=64 offset=4294967264 args=out:u32[64]:w
// cgtest: kernel=clamp_smax_wrap global=64 offset=2147483616 args=out:i32[64]:w
// cgtest: kernel=clamp_forms global=100 args=out:i32[100]:w, in:i32[100]:rand(-1000..1000), 100:i32, 4:i32
// cgtest: kernel=clamp_groups global=112 local=16 args=out:i32[100]:w, in:i32[100]:rand(-1000..1000), 100:u32

static int clampi(int v, int lo, int hi) { return v < lo ? lo : (v > hi ? hi : v); }

static int at(__global const int *img, int x, int y, int w, int h) {
  return img[clampi(y, 0, h - 1) * w + clampi(x, 0, w - 1)];
}

// A 3x3 stencil with clamp-to-edge reads (the shape of examples/image's sobel), with a
// different weight per tap so that a wrong tap changes the result.
__kernel void clamp_stencil(__global int *restrict out, __global const int *restrict in, uint w,
                            uint h) {
  int x = get_global_id(0);
  int y = get_global_id(1);
  if (x >= (int)w || y >= (int)h) return;
  out[y * w + x] = 1 * at(in, x - 1, y - 1, w, h) + 2 * at(in, x, y - 1, w, h) +
                   5 * at(in, x + 1, y - 1, w, h) + 11 * at(in, x - 1, y, w, h) +
                   23 * at(in, x, y, w, h) + 47 * at(in, x + 1, y, w, h) +
                   97 * at(in, x - 1, y + 1, w, h) + 199 * at(in, x, y + 1, w, h) +
                   401 * at(in, x + 1, y + 1, w, h);
}

static float atf(__global const float *img, int x, int y, int w, int h) {
  return img[clampi(y, 0, h - 1) * w + clampi(x, 0, w - 1)];
}

// examples/image/kernels/image.cl's sobel.
__kernel void sobel_clamped(__global float *restrict mag, __global const float *restrict in, uint w,
                            uint h) {
  int x = get_global_id(0);
  int y = get_global_id(1);
  if (x >= (int)w || y >= (int)h) return;
  float p00 = atf(in, x - 1, y - 1, w, h), p10 = atf(in, x, y - 1, w, h), p20 = atf(in, x + 1, y - 1, w, h);
  float p01 = atf(in, x - 1, y, w, h), p21 = atf(in, x + 1, y, w, h);
  float p02 = atf(in, x - 1, y + 1, w, h), p12 = atf(in, x, y + 1, w, h), p22 = atf(in, x + 1, y + 1, w, h);
  float gx = (p20 + 2.0f * p21 + p22) - (p00 + 2.0f * p01 + p02);
  float gy = (p02 + 2.0f * p12 + p22) - (p00 + 2.0f * p10 + p20);
  mag[y * w + x] = sqrt(gx * gx + gy * gy);
}

// The clamp() builtin (min/max) with bounds and a shift from the arguments; a global
// offset.
__kernel void clamp_builtin(__global int *out, __global const int *in, int shift, int lo, int hi) {
  int i = get_global_id(0);
  out[i - (int)get_global_offset(0)] = in[clamp(i + shift, lo, hi)] + 3 * in[clamp(i - shift, lo, hi)];
}

// An unsigned min whose operand wraps past 2^32 inside the group: ids 2^32-32 ..
// 2^32+31 as uint, so i + 3 is small again for the last 35 work-items.
__kernel void clamp_umin_wrap(__global int *out, __global const int *in, uint n) {
  uint i = get_global_id(0);
  out[get_global_id(0) - get_global_offset(0)] = in[min(i + 3u, n - 1u)];
}

// Lower clamps alone of ids that wrap inside the group (past 2^32 as a uint, past
// INT_MAX as an int): where the id wraps, the clamp fires again.
__kernel void clamp_max_wrap(__global uint *out) {
  uint i = get_global_id(0);
  out[get_global_id(0) - get_global_offset(0)] = max(i + 3u, 5u);
}

__kernel void clamp_smax_wrap(__global int *out) {
  int i = get_global_id(0);
  out[get_global_id(0) - get_global_offset(0)] = i < -5 ? -5 : i;
}

// One-sided clamps, written as selects with strict and non-strict compares.
__kernel void clamp_forms(__global int *out, __global const int *in, int n, int lo) {
  int x = get_global_id(0);
  int a = x - 3;
  a = a <= lo ? lo : a;
  int b = x + 2;
  b = b > n - 1 ? n - 1 : b;
  int c = x - 7;
  c = c < 0 ? 0 : c;
  int d = x + 9;
  d = n - 1 < d ? n - 1 : d;
  // Not the identity where it does not fire, and the two arms differ where the compare
  // holds with equality: the clone may only run where x - 20 > lo.
  int e = x - 20;
  e = e <= lo ? lo : 2 * e;
  out[x] = in[a] + 10 * in[b] + 100 * in[c] + 1000 * in[d] + 3 * e;
}

// The x index from the group and local ids (the kernel sees its groups: every group
// has its own range of work-items without clamping, empty at the edges).
__kernel void clamp_groups(__global int *out, __global const int *in, uint n) {
  int x = (int)(get_group_id(0) * get_local_size(0) + get_local_id(0));
  if (x >= (int)n) return;
  out[x] = in[clampi(x - 2, 0, n - 1)] - 7 * in[clampi(x + 2, 0, n - 1)];
}
