// A small edge-detection pipeline on a W x H grayscale image (row-major).
// Pixels outside the image read as the nearest edge pixel (clamp-to-edge).

static int clampi(int v, int lo, int hi) { return v < lo ? lo : (v > hi ? hi : v); }

static float at(__global const float *img, int x, int y, int w, int h) {
  return img[clampi(y, 0, h - 1) * w + clampi(x, 0, w - 1)];
}

// 8-bit pixels -> floats in [0, 1].
__kernel void to_float(__global float *restrict out, __global const uchar *restrict in, uint count) {
  uint i = get_global_id(0);
  if (i < count) out[i] = convert_float(in[i]) * (1.0f / 255.0f);
}

// 5x5 Gaussian blur (binomial weights 1 4 6 4 1, separable, normalized by 256).
__kernel void gaussian5(__global float *restrict out, __global const float *restrict in, uint w, uint h) {
  int x = get_global_id(0);
  int y = get_global_id(1);
  if (x >= (int)w || y >= (int)h) return;
  const float k[5] = {1.0f, 4.0f, 6.0f, 4.0f, 1.0f};
  float acc = 0.0f;
  for (int dy = -2; dy <= 2; ++dy)
    for (int dx = -2; dx <= 2; ++dx)
      acc = mad(k[dy + 2] * k[dx + 2], at(in, x + dx, y + dy, w, h), acc);
  out[y * w + x] = acc * (1.0f / 256.0f);
}

// Sobel gradient magnitude.
__kernel void sobel(__global float *restrict mag, __global const float *restrict in, uint w, uint h) {
  int x = get_global_id(0);
  int y = get_global_id(1);
  if (x >= (int)w || y >= (int)h) return;
  float p00 = at(in, x - 1, y - 1, w, h), p10 = at(in, x, y - 1, w, h), p20 = at(in, x + 1, y - 1, w, h);
  float p01 = at(in, x - 1, y, w, h), p21 = at(in, x + 1, y, w, h);
  float p02 = at(in, x - 1, y + 1, w, h), p12 = at(in, x, y + 1, w, h), p22 = at(in, x + 1, y + 1, w, h);
  float gx = (p20 + 2.0f * p21 + p22) - (p00 + 2.0f * p01 + p02);
  float gy = (p02 + 2.0f * p12 + p22) - (p00 + 2.0f * p10 + p20);
  mag[y * w + x] = sqrt(gx * gx + gy * gy);
}

// Binary edge map: 255 where the gradient magnitude exceeds `t`, else 0.
__kernel void threshold(__global uchar *restrict out, __global const float *restrict mag, float t,
                        uint count) {
  uint i = get_global_id(0);
  if (i < count) out[i] = mag[i] > t ? (uchar)255 : (uchar)0;
}
