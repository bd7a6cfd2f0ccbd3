// Integer builtins on int (scalar), int4, uchar, short and long.
// cgtest: kernel=int_ops global=256 args=x:i32[256]:rand(-2000000000..2000000000), y:i32[256]:rand(-2000000000..2000000000), out:i32[4096]:w
// cgtest: kernel=int_ops global=128 local=32 args=x:i32[128]:rand(-300..300), y:i32[128]:rand(0..40), out:i32[2048]:w
// cgtest: kernel=int_ops_vec global=64 args=x:i32[256]:rand(-2000000000..2000000000), y:i32[256]:rand(-2000000000..2000000000), out:i32[1024]:w
// cgtest: kernel=int_small_long global=128 args=x:i32[128]:rand(-2000000000..2000000000), y:i32[128]:rand(-2000000000..2000000000), out:i64[512]:w
__kernel void int_ops(__global const int *x, __global const int *y, __global int *out) {
  size_t i = get_global_id(0);
  int a = x[i], b = y[i];
  __global int *o = out + i * 16;
  o[0] = (int)abs(a); o[1] = min(a, b); o[2] = max(a, b); o[3] = clamp(a, -100, 100);
  o[4] = mul_hi(a, b); o[5] = rotate(a, b); o[6] = popcount(a); o[7] = clz(a);
  o[8] = add_sat(a, b); o[9] = sub_sat(a, b); o[10] = mad24(a & 0x7fffff, b & 0x7fff, 7);
  o[11] = mul24(a & 0x7fffff, b & 0x7fff); o[12] = hadd(a, b); o[13] = rhadd(a, b);
  o[14] = (int)abs_diff(a, b); o[15] = mad_hi(a, b, 3);
}

__kernel void int_ops_vec(__global const int *x, __global const int *y, __global int *out) {
  size_t i = get_global_id(0);
  int4 a = vload4(i, x), b = vload4(i, y);
  vstore4(max(a, b), 4 * i + 0, out);
  vstore4(add_sat(a, b), 4 * i + 1, out);
  vstore4(popcount(a), 4 * i + 2, out);
  vstore4(clamp(a, (int4)(-5), (int4)(5)), 4 * i + 3, out);
}

// uchar/short saturation and long mul_hi, 4 longs per work-item.
__kernel void int_small_long(__global const int *x, __global const int *y, __global long *out) {
  size_t i = get_global_id(0);
  uchar ua = (uchar)x[i], ub = (uchar)y[i];
  short sa = (short)x[i], sb = (short)y[i];
  long la = (long)x[i] * 1000003L, lb = (long)y[i] * -999983L;
  __global long *o = out + i * 4;
  o[0] = add_sat(ua, ub); o[1] = sub_sat(sa, sb); o[2] = mul_hi(la, lb); o[3] = (long)mul_hi((ulong)la, (ulong)lb);
}

// Division and remainder by a divisor every work-item shares (the cpu backend turns
// them into a multiply by a magic number computed once per group call): edge divisors,
// and dividends from the top of the range down and spread over it.
// cgtest: kernel=div_uniform global=1024 args=q:u32[1024]:w, r:u32[1024]:w, 1:u32
// cgtest: kernel=div_uniform global=1024 args=q:u32[1024]:w, r:u32[1024]:w, 2:u32
// cgtest: kernel=div_uniform global=1024 args=q:u32[1024]:w, r:u32[1024]:w, 3:u32
// cgtest: kernel=div_uniform global=1024 args=q:u32[1024]:w, r:u32[1024]:w, 7:u32
// cgtest: kernel=div_uniform global=1024 args=q:u32[1024]:w, r:u32[1024]:w, 641:u32
// cgtest: kernel=div_uniform global=1024 args=q:u32[1024]:w, r:u32[1024]:w, 4096:u32
// cgtest: kernel=div_uniform global=1024 args=q:u32[1024]:w, r:u32[1024]:w, 2147483647:u32
// cgtest: kernel=div_uniform global=1024 args=q:u32[1024]:w, r:u32[1024]:w, 2147483648:u32
// cgtest: kernel=div_uniform global=1024 args=q:u32[1024]:w, r:u32[1024]:w, 2147483649:u32
// cgtest: kernel=div_uniform global=1024 args=q:u32[1024]:w, r:u32[1024]:w, 4294967295:u32
__kernel void div_uniform(__global uint *q, __global uint *r, uint d) {
  uint i = get_global_id(0);
  uint n = i < 4 ? 0xFFFFFFFFu - i : i * 2654435761u;
  q[i] = n / d;
  r[i] = (n % d) ^ 0xA5A5A5A5u; // never all zero (d = 1)
}
