// Relational builtins: classification, comparisons, select, any/all, bitselect.
// cgtest: kernel=rel_ops global=256 args=x:f32[256]:rand(-2..2), y:f32[256]:rand(-2..2), out:i32[3072]:w
// cgtest: kernel=rel_ops global=16 args=x:f32[16]:fill(nan), y:f32[16]:rand, out:i32[192]:w
// cgtest: kernel=rel_ops global=16 args=x:f32[16]:fill(-inf), y:f32[16]:fill(inf), out:i32[192]:w
// cgtest: kernel=rel_vec global=64 args=x:f32[256]:rand(-2..2), y:f32[256]:rand(-2..2), out:i32[768]:w
// cgtest: kernel=rel_vec global=4 args=x:f32[16]:fill(nan), y:f32[16]:rand, out:i32[48]:w
__kernel void rel_ops(__global const float *x, __global const float *y, __global int *out) {
  size_t i = get_global_id(0);
  float a = x[i], b = y[i];
  __global int *o = out + i * 12;
  o[0] = isnan(a); o[1] = isinf(a); o[2] = isfinite(a); o[3] = signbit(a);
  o[4] = isequal(a, b); o[5] = isless(a, b); o[6] = isgreater(a, b); o[7] = isunordered(a, b);
  o[8] = as_int(select(a, b, (int)(a < b)));
  int4 v = (int4)((int)a, (int)b, -1, 0);
  o[9] = any(v < 0); o[10] = all(v >= 0);
  o[11] = as_int(bitselect(a, b, as_float(0x0000ffff)));
}

__kernel void rel_vec(__global const float *x, __global const float *y, __global int *out) {
  size_t i = get_global_id(0);
  float4 a = vload4(i, x), b = vload4(i, y);
  vstore4(isnan(a), 3 * i + 0, out);
  vstore4(as_int4(select(a, b, isless(a, b))), 3 * i + 1, out);
  int4 s = signbit(a);
  out[12 * i + 8] = any(s); out[12 * i + 9] = all(s);
  out[12 * i + 10] = any(isgreater(a, b)); out[12 * i + 11] = all(isfinite(a));
}
