// Jacobi iteration of the 2D Laplace equation on an N x N grid until it converges
// (examples/stencil runs a fixed number of sweeps instead).

// One sweep: u_new = (u_w + u_e + u_n + u_s) / 4 on interior points; boundary points
// are copied through, so the Dirichlet values persist.
__kernel void jacobi_step(__global float *restrict out, __global const float *restrict in, uint n) {
  size_t x = get_global_id(0);
  size_t y = get_global_id(1);
  if (x >= n || y >= n) return;
  size_t i = y * n + x;
  if (x == 0 || y == 0 || x == n - 1 || y == n - 1) {
    out[i] = in[i];
    return;
  }
  out[i] = 0.25f * (in[i - 1] + in[i + 1] + in[i - n] + in[i + n]);
}

// Top edge (y = 0) at `top`, the other edges at 0, in both buffers.
__kernel void set_boundary(__global float *a, __global float *b, uint n, float top) {
  size_t k = get_global_id(0);
  if (k >= n) return;
  a[k] = b[k] = top;
  a[(n - 1) * n + k] = b[(n - 1) * n + k] = 0.0f;
  if (k > 0) {
    a[k * n] = b[k * n] = 0.0f;
    a[k * n + n - 1] = b[k * n + n - 1] = 0.0f;
  }
}

// The convergence test, one work-group of 256: the largest |a - b| over the grid
// (the change made by the last sweep) decides whether to go on. flag[0] = 1 while it
// is above tol; stats[0] counts the checks, stats[1] holds the last change's bits.
__kernel void check(__global uint *flag, __global uint *stats, __global const float *a,
                    __global const float *b, uint count, float tol) {
  __local float part[256];
  uint lid = get_local_id(0);
  float m = 0.0f;
  for (uint i = lid; i < count; i += 256) m = fmax(m, fabs(a[i] - b[i]));
  part[lid] = m;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint s = 128; s > 0; s >>= 1) {
    if (lid < s) part[lid] = fmax(part[lid], part[lid + s]);
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (lid == 0) {
    flag[0] = part[0] > tol ? 1u : 0u;
    stats[0] += 1u;
    stats[1] = as_uint(part[0]);
  }
}
