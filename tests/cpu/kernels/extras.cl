// Builtins beyond the basic families: upsample, mad_sat, shuffle/shuffle2, half
// loads/stores with every rounding mode, async work-group copies, math functions with
// pointer outputs, and atomic_cmpxchg used as a lock-free add.
// cgtest: kernel=ext_int global=256 args=x:i32[256]:rand(-2000000000..2000000000), y:i32[256]:rand(-2000000000..2000000000), out:i64[4096]:w
// cgtest: kernel=ext_int global=64 local=16 args=x:i32[64]:rand(-70000..70000), y:i32[64]:rand(-70000..70000), out:i64[1024]:w
// cgtest: kernel=ext_shuffle global=64 args=x:i32[1024]:rand(-1000000..1000000), m:u32[1024]:rand(0..4000000000), out:i32[2048]:w
// cgtest: kernel=ext_half global=256 ulp=0 args=x:f32[256]:rand(-70000..70000), h:u16[2560]:w, out:f32[1024]:w
// cgtest: kernel=ext_half global=256 ulp=0 args=x:f32[256]:rand(-0.0001..0.0001), h:u16[2560]:w, out:f32[1024]:w
// cgtest: kernel=ext_half global=128 ulp=0 args=x:f32[128]:rand(-2..2), h:u16[1280]:w, out:f32[512]:w
// cgtest: kernel=ext_half_double global=128 args=x:f64[128]:rand(-70000..70000), h:u16[512]:w
// cgtest: kernel=ext_async global=256 local=64 args=in:f32[1024]:rand, out:f32[512]:w, out2:f32[256]:w
// cgtest: kernel=ext_async global=48 local=16 offset=16 args=in:f32[1024]:rand, out:f32[512]:w, out2:f32[256]:w
// cgtest: kernel=ext_math global=256 ulp=4 args=x:f32[256]:rand(-20..20), y:f32[256]:rand(0.5..3), out:f32[4096]:w, iout:i32[1024]:w
// cgtest: kernel=ext_math_f64 global=128 ulp=4 args=x:f64[128]:rand(-20..20), y:f64[128]:rand(0.5..3), out:f64[1024]:w, iout:i32[256]:w
// cgtest: kernel=cas_add global=1024 local=64 args=c:i32[2]:fill(5):out
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
// remquo defines only the sign and the 3 lowest bits of the quotient
#define CG_QUO(q) ((q) < 0 ? -(-(q) & 7) : ((q) & 7))

__kernel void ext_int(__global const int *x, __global const int *y, __global long *out) {
  size_t i = get_global_id(0);
  int a = x[i], b = y[i];
  __global long *o = out + 16 * i;
  o[0] = upsample((char)a, (uchar)b);
  o[1] = upsample((uchar)a, (uchar)b);
  o[2] = upsample((short)a, (ushort)b);
  o[3] = upsample((ushort)a, (ushort)b);
  o[4] = upsample(a, (uint)b);
  o[5] = (long)upsample((uint)a, (uint)b);
  int4 u4 = upsample((short4)((short)a, (short)b, (short)(a >> 16), (short)(b >> 16)), (ushort4)((ushort)b, (ushort)a, 7, 65535));
  o[6] = u4.x ^ u4.y ^ u4.z ^ u4.w;
  o[7] = mad_sat(a, b, 12345);
  o[8] = mad_sat((uint)a, (uint)b, (uint)a);
  o[9] = mad_sat((long)a * 1000003L, (long)b * 999983L, (long)a);
  o[10] = mad_sat((long)a << 20, (long)b << 20, (long)b);
  o[11] = (long)mad_sat((ulong)(uint)a << 16, (ulong)(uint)b << 16, (ulong)(uint)a << 31);
  o[12] = mad_sat((char)a, (char)b, (char)(a >> 8));
  o[13] = mad_sat((ushort)a, (ushort)b, (ushort)(b >> 16));
  short4 s4 = mad_sat((short4)((short)a, (short)b, 300, -300), (short4)((short)b, 2, (short)(a >> 20), 200), (short4)(1, -1, 2, -2));
  o[14] = s4.x + 3 * s4.y + 5 * s4.z + 7 * s4.w;
  o[15] = (long)mad_sat((ulong)a, (ulong)b, 1UL);
}

__kernel void ext_shuffle(__global const int *x, __global const uint *m, __global int *out) {
  size_t i = get_global_id(0);
  int16 v = vload16(i, x);
  uint16 mk = vload16(i, m);
  __global int *o = out + 32 * i;
  vstore4(shuffle(v.lo.lo, mk.lo.lo), 0, o);
  vstore8(shuffle(v, mk.hi), 0, o + 4);
  vstore4(shuffle2(v.lo.lo, v.hi.hi, mk.s26ae), 0, o + 12);
  vstore2(shuffle(v.s01, mk.s01), 0, o + 16);
  float4 f = shuffle2(convert_float8(v.hi), convert_float8(v.lo), mk.s3579);
  vstore4(as_int4(f), 0, o + 18);
  uchar16 c = shuffle(as_uchar4(v.s0), as_uchar16(mk.s0123));
  vstore4(as_int4(c), 0, o + 22);
  long2 l = shuffle2((long4)(v.s0, v.s1, v.s2, v.s3), (long4)(v.s4, v.s5, v.s6, v.s7), (ulong2)(mk.s4, mk.s5));
  o[26] = (int)l.x; o[27] = (int)l.y;
  vstore4(shuffle((int4)(1, 2, 3, 4), (uint4)(3, 2, 1, 0)), 0, o + 28);
}

// Each item stores x[i] (and neighbours) as half with every rounding mode, then reads
// some back: h gets 10 halves per item, out 4 floats per item.
__kernel void ext_half(__global const float *x, __global half *h, __global float *out) {
  size_t i = get_global_id(0);
  float a = x[i];
  vstore_half(a, 10 * i + 0, h);
  vstore_half_rte(a * 3.0f, 10 * i + 1, h);
  vstore_half_rtz(a * 3.0f, 10 * i + 2, h);
  vstore_half_rtp(a * 3.0f, 10 * i + 3, h);
  vstore_half_rtn(a * 3.0f, 10 * i + 4, h);
  vstore_half2_rtz((float2)(a * 7.0f, -a * 1e6f), 5 * i + 3, h); // h[10i+6 .. 10i+7]
  vstorea_half2_rtp((float2)(a * 1e-3f, a * 1e-7f), 5 * i + 4, h); // h[10i+8 .. 10i+9]
  barrier(CLK_GLOBAL_MEM_FENCE);
  out[4 * i + 0] = vload_half(10 * i + 1, h);
  float2 p = vload_half2(5 * i + 4, h);
  out[4 * i + 1] = p.x + p.y;
  float4 q = vloada_half4(0, h + 10 * i);
  out[4 * i + 2] = q.x - q.y + q.z - q.w;
  out[4 * i + 3] = vload_half(10 * i + 6, (const __global half *)h);
}

__kernel void ext_half_double(__global const double *x, __global half *h) {
  size_t i = get_global_id(0);
  double a = x[i] * (1.0 + 0x1p-30);
  vstore_half(a, 4 * i + 0, h);
  vstore_half_rtz(a, 4 * i + 1, h);
  vstore_half_rtp(a * 1e-9, 4 * i + 2, h);
  vstore_half_rtn(a * 1e-9, 4 * i + 3, h);
}

// Group copies in and out of local memory: a plain and a strided copy in, a reversal in
// local memory, then a plain and a strided copy out.
__kernel void ext_async(__global const float *in, __global float *out, __global float *out2) {
  __local float a[64], b[32];
  size_t g = get_group_id(0), n = get_local_size(0), l = get_local_id(0);
  event_t e = async_work_group_copy(a, in + g * n, n, 0);
  event_t e2 = async_work_group_strided_copy(b, in + 512 + g * n, n / 2, 2, 0);
  prefetch(in + 768 + g * n, n);
  wait_group_events(1, &e);
  wait_group_events(1, &e2);
  float v = a[n - 1 - l] + (l < n / 2 ? b[l] : 0.0f);
  barrier(CLK_LOCAL_MEM_FENCE);
  a[l] = v;
  barrier(CLK_LOCAL_MEM_FENCE);
  e = async_work_group_copy(out + g * n, a, n, 0);
  e = async_work_group_strided_copy(out2 + g * (n / 4), b, n / 8, 2, e);
  wait_group_events(1, &e);
}

__kernel void ext_math(__global const float *x, __global const float *y, __global float *out, __global int *iout) {
  size_t i = get_global_id(0);
  float a = x[i], b = y[i], ip, c;
  int e, q;
  __global float *o = out + 16 * i;
  __global int *io = iout + 4 * i;
  o[0] = fract(a, &ip); o[1] = ip;
  o[2] = modf(a, &o[3]);
  o[4] = frexp(a, &e); io[0] = e;
  o[5] = sincos(a, &c); o[6] = c;
  o[7] = remquo(a, b, &q); io[1] = CG_QUO(q);
  io[2] = ilogb(a); io[3] = isnan(nan((uint)i)); // the payload's place is implementation-defined
  o[8] = asinpi(a / 20.0f); o[9] = acospi(a / 20.0f); o[10] = atanpi(a); o[11] = atan2pi(a, b);
  float4 f4 = fract((float4)(a, b, -a, a * b), (__global float4 *)(out + 16 * i + 12));
  o[12] += f4.x + f4.y + f4.z + f4.w;
}

__kernel void ext_math_f64(__global const double *x, __global const double *y, __global double *out, __global int *iout) {
  size_t i = get_global_id(0);
  double a = x[i], b = y[i], ip, c;
  int e, q;
  __global double *o = out + 8 * i;
  o[0] = fract(a, &ip); o[1] = ip;
  o[2] = frexp(a, &e); iout[2 * i] = e;
  o[3] = sincos(a, &c); o[4] = c;
  o[5] = remquo(a, b, &q); iout[2 * i + 1] = CG_QUO(q);
  o[6] = modf(a, &o[7]);
}

// atomic_cmpxchg as a lock-free add: the sum does not depend on the order.
__kernel void cas_add(__global int *c) {
  int i = (int)get_global_id(0), old;
  do { old = c[0]; } while (atomic_cmpxchg(&c[0], old, old + i) != old);
  __local int l;
  if (get_local_id(0) == 0) l = 0;
  barrier(CLK_LOCAL_MEM_FENCE);
  volatile __local int *lp = &l;
  do { old = *lp; } while (atomic_cmpxchg(&l, old, old + 1) != old);
  barrier(CLK_LOCAL_MEM_FENCE);
  if (get_local_id(0) == 0) atomic_add(&c[1], l);
}
