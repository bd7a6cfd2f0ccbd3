// Needs -D FACTOR=... and -I <dir with opt.h> from the cgc command line.
#include "opt.h"

__kernel void affine(__global float *y) {
  size_t i = get_global_id(0);
  y[i] = FACTOR * y[i] + OFFSET;
}
