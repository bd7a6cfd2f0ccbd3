// Float math builtins: compared within a few ULP (PoCL's libm vs ours).
// cgtest: kernel=float_basic global=512 local=128 ulp=0 args=out:f32[512]:w, a:f32[512]:rand(-100..100), b:f32[512]:rand(0.5..4)
// cgtest: kernel=float_transcendental global=256 ulp=4 args=out:f32[256]:w, a:f32[256]:rand(0.01..10)
// double_ops: PoCL's double exp is the imprecise side. Against (double)expl() over 1M
// inputs in [-10, -0.01] PoCL's exp differs in 98679 cases (1 ulp), glibc's (ours) in
// 855 (the long-double reference's own double rounding). The sum sqrt(x)*x + exp(-x) +
// log(x) cancels near x = 0.4, where 1 ulp of exp(-x) ~ 0.7 is 16 ulp of the result: 32.
// cgtest: kernel=double_ops global=64 ulp=32 args=out:f64[64]:w, a:f64[64]:rand(0.01..10)
__kernel void float_basic(__global float *out, __global const float *a, __global const float *b) {
  size_t i = get_global_id(0);
  float x = a[i], y = b[i];
  float r = x + y;
  r = r * y;
  r = r / (y + 1.0f);
  out[i] = r - x + fmax(x, y) - fmin(x, y) + fabs(x) + floor(x) + ceil(y) + trunc(x) + (float)(int)x;
}

__kernel void float_transcendental(__global float *out, __global const float *a) {
  size_t i = get_global_id(0);
  float x = a[i];
  out[4 * i / 4] = sqrt(x) + exp(x * 0.1f) + log(x) + sin(x) + cos(x);
}

__kernel void double_ops(__global double *out, __global const double *a) {
  size_t i = get_global_id(0);
  double x = a[i];
  out[i] = sqrt(x) * x + exp(-x) + log(x);
}
