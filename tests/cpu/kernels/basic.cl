// Basic kernels: elementwise, 2D/3D indexing, offsets, scalar args of every width.
// a * x + y is contracted to mad (FP_CONTRACT is on in OpenCL C); ours is a fused
// multiply-add (one rounding), PoCL's may round twice. The inputs keep the results away
// from cancellation, where that difference grows without bound in ulp: <= 2 ulp for axpy,
// a rounding per step of matmul's 16/32-term sums.
// cgtest: kernel=axpy global=4096 args=2.5:f32, x:f32[4096]:rand(0..1), y:f32[4096]:rand(0..1):out
// cgtest: kernel=axpy global=1000 offset=24 args=-0.75:f32, x:f32[1024]:rand(-1000..-10), y:f32[1024]:rand:out
// cgtest: kernel=axpy global=512 local=128 args=3:f32, x:f32[512]:seq, y:f32[512]:fill(1):out
// cgtest: kernel=scale_int global=300 args=v:i32[300]:rand(-100000..100000):out, -3:i32
// cgtest: kernel=scale_int global=128 local=32 offset=64 args=v:i32[192]:rand:out, 7:i32
// ids: with local sizes only (without one, the work-group shape is the implementation's).
// cgtest: kernel=ids global=64 local=16 offset=5 args=out:i32[512]:w
// cgtest: kernel=ids global=12,6 local=4,3 args=out:i32[576]:w
// cgtest: kernel=ids global=12,6 local=4,3 offset=3,7 args=out:i32[576]:w
// cgtest: kernel=ids global=8,4,6 local=2,2,3 offset=1,2,3 args=out:i32[1536]:w
// cgtest: kernel=ids global=4,4,4 local=4,1,2 args=out:i32[512]:w
// cgtest: kernel=scalars global=1 args=out:i64[10]:w, -5:i8, 200:u8, -3000:i16, 60000:u16, -100000:i32, 4000000000:u32, -5000000000:i64, 10000000000000:u64, 1.5:f32, -2.25:f64
// cgtest: kernel=matmul global=32,32 local=8,8 ulp=16 args=a:f32[1024]:rand(0..1), b:f32[1024]:rand(0..1), c:f32[1024]:w, 32:i32
// cgtest: kernel=matmul global=16,16 ulp=16 args=a:f32[256]:rand(0..1), b:f32[256]:rand(0..1), c:f32[256]:w, 16:i32
// long_chain: a loop-free work-item of about 900 instructions, which the cpu backend
// runs with vectors of work-items interleaved (a fused chain's shape; ilp.h): as many
// per trip as fit the registers (4 of this kernel on AVX2), then 4 and 2 where they
// are fewer, then the original loop for the last vector, and the scalar remainder
// two work-items at a time. The backend chooses the groups (the kernel cannot observe
// them): on 2 threads one per thread, 1200 is groups of 608 and 592 work-items (76 and
// 74 vectors), 1003 of 512 and 491 (61 vectors and 3 work-items), 13 one group of 13
// (one vector and 5 work-items); other thread counts give other splits.
// cgtest: kernel=long_chain global=4096 local=64 args=v:u32[4096]:rand:out, x:u32[4096]:rand, 2654435761:u32
// cgtest: kernel=long_chain global=1200 local=200 args=v:u32[1200]:rand:out, x:u32[1200]:rand, 40503:u32
// cgtest: kernel=long_chain global=1003 args=v:u32[1003]:rand:out, x:u32[1003]:rand, 977:u32
// cgtest: kernel=long_chain global=256 local=16 args=v:u32[256]:rand:out, x:u32[256]:rand, 7:u32
// cgtest: kernel=long_chain global=13 args=v:u32[13]:rand:out, x:u32[13]:rand, 31:u32
#define LC_STEP v = v * k + t; v ^= v >> 13; t += v;
#define LC_10 LC_STEP LC_STEP LC_STEP LC_STEP LC_STEP LC_STEP LC_STEP LC_STEP LC_STEP LC_STEP
#define LC_100 LC_10 LC_10 LC_10 LC_10 LC_10 LC_10 LC_10 LC_10 LC_10 LC_10
__kernel void long_chain(__global uint *out, __global const uint *x, uint k) {
  size_t i = get_global_id(0);
  uint v = out[i], t = x[i];
  LC_100 LC_100 LC_100
  out[i] = v ^ t;
}

// fma_chain: 300 dependent fused multiply-adds per work-item (chain1000's shape after
// cgfuse, two values live per work-item): 7 vectors interleaved per trip on AVX2, 8 on
// AVX-512; on 2 threads 1000 is groups of 512 (9 trips + 1 vector) and 488 (8 trips +
// 4 + 1), 4096 of 2048 (36 trips + 4), 250 of 128 (2 trips + 2) and 122 (2 trips + 1
// and 2 work-items).
// cgtest: kernel=fma_chain global=1000 args=y:f32[1000]:rand(0..1):out, x:f32[1000]:rand(0..1), 0.999:f32
// cgtest: kernel=fma_chain global=4096 local=64 args=y:f32[4096]:rand(0..1):out, x:f32[4096]:rand(0..1), 0.75:f32
// cgtest: kernel=fma_chain global=250 args=y:f32[250]:rand(0..1):out, x:f32[250]:rand(0..1), 0.5:f32
#define FC_STEP v = fma(a, xi, v);
#define FC_10 FC_STEP FC_STEP FC_STEP FC_STEP FC_STEP FC_STEP FC_STEP FC_STEP FC_STEP FC_STEP
#define FC_100 FC_10 FC_10 FC_10 FC_10 FC_10 FC_10 FC_10 FC_10 FC_10 FC_10
__kernel void fma_chain(__global float *y, __global const float *x, float a) {
  size_t i = get_global_id(0);
  float v = y[i], xi = x[i];
  FC_100 FC_100 FC_100
  y[i] = v;
}

__kernel void axpy(float a, __global const float *x, __global float *y) {
  size_t i = get_global_id(0);
  y[i] = a * x[i] + y[i];
}

__kernel void scale_int(__global int *v, int k) {
  size_t i = get_global_id(0);
  v[i] = v[i] * k;
}

// Writes, for every work-item, its ids and sizes (8 ints per item), row-major over
// the global range (offset removed).
__kernel void ids(__global int *out) {
  size_t gx = get_global_id(0) - get_global_offset(0);
  size_t gy = get_global_id(1) - get_global_offset(1);
  size_t gz = get_global_id(2) - get_global_offset(2);
  size_t i = (gz * get_global_size(1) + gy) * get_global_size(0) + gx;
  __global int *o = out + 8 * i;
  o[0] = (int)get_global_id(0);
  o[1] = (int)get_global_id(1);
  o[2] = (int)get_global_id(2);
  o[3] = (int)(get_local_id(0) + 100 * get_local_id(1) + 10000 * get_local_id(2));
  o[4] = (int)(get_group_id(0) + 100 * get_group_id(1) + 10000 * get_group_id(2));
  o[5] = (int)(get_local_size(0) * get_local_size(1) * get_local_size(2));
  o[6] = (int)(get_num_groups(0) * get_num_groups(1) * get_num_groups(2));
  o[7] = (int)get_work_dim();
}

__kernel void scalars(__global long *out, char c, uchar uc, short s, ushort us, int i, uint ui,
                      long l, ulong ul, float f, double d) {
  out[0] = c; out[1] = uc; out[2] = s; out[3] = us; out[4] = i; out[5] = ui;
  out[6] = l; out[7] = (long)ul; out[8] = (long)(f * 1000.0f); out[9] = (long)(d * 1000.0);
}

__kernel void matmul(__global const float *restrict a, __global const float *restrict b,
                     __global float *restrict c, int n) {
  int col = get_global_id(0);
  int row = get_global_id(1);
  float acc = 0.0f;
  for (int k = 0; k < n; ++k) acc += a[row * n + k] * b[k * n + col];
  c[row * n + col] = acc;
}
