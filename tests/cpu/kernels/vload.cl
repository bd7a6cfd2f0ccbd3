// vloadN / vstoreN, N = 2, 3, 4, 8, 16, for float and int, global and local memory.
// cgtest: kernel=vload_float global=64 args=in:f32[2112]:rand, out:f32[2112]:w
// cgtest: kernel=vload_int_offsets global=64 args=in:i32[5200]:rand, out:i32[5200]:w
// cgtest: kernel=vload_local global=256 local=64 args=in:f32[1024]:rand, out:f32[1024]:w, local(1024)
// cgtest: kernel=vload_local global=64 local=16 offset=16 args=in:f32[256]:seq, out:f32[256]:w, local(256)
__kernel void vload_float(__global const float *in, __global float *out) {
  size_t i = get_global_id(0); // each item handles 33 floats: 2 + 3 + 4 + 8 + 16
  __global const float *p = in + 33 * i;
  __global float *q = out + 33 * i;
  vstore2(vload2(0, p) * 2.0f, 0, q);
  vstore3(vload3(0, p + 2) * 2.0f, 0, q + 2);
  vstore4(vload4(0, p + 5) * 2.0f, 0, q + 5);
  vstore8(vload8(0, p + 9) * 2.0f, 0, q + 9);
  vstore16(vload16(0, p + 17) * 2.0f, 0, q + 17);
}

__kernel void vload_int_offsets(__global const int *in, __global int *out) {
  size_t i = get_global_id(0); // item i: vload4 at offset i, vload3 at offset i of in+1000
  vstore4(vload4(i, in) + 1, i, out);
  vstore3(vload3(i, in + 1000) - 1, i, out + 1000);
  vstore16(vload16(i, in + 2000) ^ 5, i, out + 2000);
  vstore8(vload8(i, in + 4000) * 3, i, out + 4000);
  vstore2(vload2(i, in + 5000) << 1, i, out + 5000);
}

__kernel void vload_local(__global const float *in, __global float *out, __local float *tmp) {
  size_t l = get_local_id(0), g = get_group_id(0), n = get_local_size(0);
  vstore4(vload4(g * n + l, in), l, tmp);
  barrier(CLK_LOCAL_MEM_FENCE);
  size_t r = n - 1 - l; // reversed within the group
  vstore4(vload4(r, tmp), g * n + l, out);
}
