// Work-group tiles in 2-D and 3-D ranges (local internalization per dimension): the
// consumers read other work-items' elements of t, but only inside their own
// work-group's tile, whose rows lie `w` elements apart in global memory. A linearized
// `index % (tile elements)` would mix the rows of such a tile; each dimension is taken
// apart on its own (index / row length % tile height, index % row length % tile width).
__kernel void produce2(__global float *t, __global const float *x) {
  size_t w = get_global_size(0);
  size_t i = get_global_id(1) * w + get_global_id(0);
  t[i] = x[i] * 3.0f + 1.0f;
}
// square tiles: the work-item (lx, ly) reads the tile's element (ly, lx)
__kernel void transpose_tile(__global float *y, __global const float *t) {
  size_t w = get_global_size(0);
  size_t lx = get_local_id(0), ly = get_local_id(1);
  size_t bx = get_group_id(0) * get_local_size(0), by = get_group_id(1) * get_local_size(1);
  y[get_global_id(1) * w + get_global_id(0)] = t[(by + lx) * w + bx + ly];
}
// the next element of the row, wrapping inside the tile (w: a literal argument)
__kernel void shift_row(__global float *y, __global const float *t, int w) {
  int lx = get_local_id(0), n = get_local_size(0);
  int row = get_global_id(1);
  int col = get_group_id(0) * n + (lx + 1) % n;
  y[row * w + get_global_id(0)] += t[row * w + col];
}
// a row 8 rows further down: another work-group's tile
__kernel void far_row(__global float *y, __global const float *t, int h) {
  size_t w = get_global_size(0);
  size_t row = (get_global_id(1) + 8) % h;
  y[get_global_id(1) * w + get_global_id(0)] = t[row * w + get_global_id(0)];
}
// 3-D, integers (bit-exact): planes of w * h elements
__kernel void produce3(__global int *t, __global const int *x) {
  size_t w = get_global_size(0), h = get_global_size(1);
  size_t i = (get_global_id(2) * h + get_global_id(1)) * w + get_global_id(0);
  t[i] = x[i] * 5 + 3;
}
// the next plane of the work-group's tile, wrapping inside it
__kernel void rot3(__global int *y, __global const int *t) {
  size_t w = get_global_size(0), h = get_global_size(1), n = get_local_size(2);
  size_t z = get_group_id(2) * n + (get_local_id(2) + 1) % n;
  size_t i = (get_global_id(2) * h + get_global_id(1)) * w + get_global_id(0);
  y[i] = t[(z * h + get_global_id(1)) * w + get_global_id(0)] ^ t[i];
}
// rows `w` elements apart (a literal argument): another row length than produce2's
__kernel void produce2w(__global float *t, __global const float *x, int w) {
  int i = get_global_id(1) * w + get_global_id(0);
  t[i] = x[i] * 3.0f + 1.0f;
}
