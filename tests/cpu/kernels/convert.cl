// Conversions (convert_T[_sat][_rte|_rtz|_rtp|_rtn]) and reinterpretation (as_T).
// cgtest: kernel=conv_from_float global=256 args=x:f32[256]:rand(-300..300), out:i32[3072]:w
// cgtest: kernel=conv_from_int global=256 ulp=0 args=x:i32[256]:rand(-2000000000..2000000000), outf:f32[1024]:w, outi:i32[1024]:w
// cgtest: kernel=conv_from_int global=64 ulp=0 args=x:i32[64]:rand(-300..300), outf:f32[256]:w, outi:i32[256]:w
// cgtest: kernel=conv_vec global=64 args=x:f32[256]:rand(-300..300), out:i32[512]:w
__kernel void conv_from_float(__global const float *x, __global int *out) {
  size_t i = get_global_id(0);
  float a = x[i];
  __global int *o = out + i * 12;
  o[0] = convert_int(a); o[1] = convert_int_sat(a); o[2] = convert_int_rte(a);
  o[3] = convert_int_rtn(a); o[4] = convert_int_rtp(a); o[5] = convert_int_sat_rte(a);
  o[6] = convert_uchar_sat(a); o[7] = convert_char_sat_rtn(a); o[8] = convert_ushort_sat(a);
  o[9] = as_int(a); o[10] = convert_int(convert_short_sat(a * 1000.0f)); o[11] = (int)convert_uint_sat(a);
}

__kernel void conv_from_int(__global const int *x, __global float *outf, __global int *outi) {
  size_t i = get_global_id(0);
  int a = x[i];
  __global float *f = outf + i * 4;
  f[0] = convert_float(a); f[1] = convert_float_rtz(a); f[2] = convert_float_rtp(a); f[3] = convert_float_rtn(a);
  __global int *o = outi + i * 4;
  o[0] = convert_uchar_sat(a); o[1] = convert_char_sat(a); o[2] = convert_short(a); o[3] = convert_ushort_sat(a);
}

__kernel void conv_vec(__global const float *x, __global int *out) {
  size_t i = get_global_id(0);
  float4 a = vload4(i, x);
  vstore4(convert_int4_sat_rte(a), 2 * i, out);
  vstore4(convert_int4(convert_uchar4_sat(a)), 2 * i + 1, out);
}
