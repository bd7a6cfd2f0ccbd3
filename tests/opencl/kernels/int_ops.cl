// Integer builtins and arithmetic: results must match bit for bit.
// cgtest: kernel=int_mix global=256 local=64 args=out:i32[256]:w, a:i32[256]:rand(-100000..100000), b:i32[256]:rand(1..5000), 7:i32
// cgtest: kernel=uint_bits global=128 args=out:u32[128]:w, a:u32[128]:rand(0..4000000000)
// cgtest: kernel=long_mul global=64 offset=16 args=out:i64[96]:w, a:i64[96]:rand(-3000000000..3000000000)
__kernel void int_mix(__global int *out, __global const int *a, __global const int *b, int k) {
  size_t i = get_global_id(0);
  int x = a[i], y = b[i];
  out[i] = (x / y) ^ (x % y) + mad_hi(x, y, k) + abs_diff(x, y) + rotate(x, k) + clamp(x, -500, 500) +
           mul24(x & 0xFFF, y) + add_sat(x, 2147483000) + hadd(x, y) + (int)popcount(x) + clz(y) +
           max(x, y) - min(x, k) + (x >> 3) + (x << 2);
}

__kernel void uint_bits(__global uint *out, __global const uint *a) {
  size_t i = get_global_id(0);
  uint x = a[i];
  out[i] = rotate(x, 13u) ^ (x >> 7) ^ sub_sat(x, 1000000u) ^ (uint)mul_hi(x, 2654435761u) ^ upsample((ushort)x, (ushort)(x >> 16)) ^ popcount(x);
}

__kernel void long_mul(__global long *out, __global const long *a) {
  size_t i = get_global_id(0);
  long x = a[i];
  out[i] = x * 3 - (x >> 5) + mul_hi(x, (long)0x123456789) + (long)get_global_offset(0);
}
