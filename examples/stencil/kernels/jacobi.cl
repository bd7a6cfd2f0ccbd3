// One Jacobi sweep of the 2D Poisson equation -lap(u) = f on an N x N grid with
// spacing h: u_new = (u_w + u_e + u_n + u_s + h^2 f) / 4 on interior points.
// Boundary points are copied through, so the Dirichlet values persist.
__kernel void jacobi_step(__global float *restrict out, __global const float *restrict in,
                          __global const float *restrict f, uint n, float h2) {
  size_t x = get_global_id(0);
  size_t y = get_global_id(1);
  if (x >= n || y >= n) return;
  size_t i = y * n + x;
  if (x == 0 || y == 0 || x == n - 1 || y == n - 1) {
    out[i] = in[i];
    return;
  }
  out[i] = 0.25f * (in[i - 1] + in[i + 1] + in[i - n] + in[i + n] + h2 * f[i]);
}

// |u_new - u_old| per point, for a convergence check on the host.
__kernel void residual(__global float *restrict r, __global const float *restrict a,
                       __global const float *restrict b, uint count) {
  size_t i = get_global_id(0);
  if (i < count) r[i] = fabs(a[i] - b[i]);
}

// Sets the top edge (y = 0) to a fixed temperature, the other edges to 0.
__kernel void set_boundary(__global float *u, uint n, float top) {
  size_t k = get_global_id(0);
  if (k >= n) return;
  u[k] = top;                 // top row
  u[(n - 1) * n + k] = 0.0f;  // bottom row
  if (k > 0) {
    u[k * n] = 0.0f;          // left column
    u[k * n + n - 1] = 0.0f;  // right column
  }
}
