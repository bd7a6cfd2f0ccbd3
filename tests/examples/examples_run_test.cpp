// Every example under examples/ compiled with the real cgc and executed with the real
// cgrun on each backend (cpu, opencl), its outputs checked against values computed here
// in C++, independently of any backend. Plus a graph whose only orderings are a barrier
// node and a subgraph node, so that both node kinds are executed, not only compiled.
// Backends are Catch tags: ctest runs "[cpu]" and "[opencl]" as two tests
// (CMakeLists.txt); the opencl one needs PoCL and is labelled "opencl".
#include "../tools/tool_test_util.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <set>
#include <string>
#include <vector>

using namespace tooltest;

namespace {

fs::path sourceDir() { return CGRAPH_SOURCE_DIR; }

// A scratch directory per example and backend under the build tree, emptied first.
fs::path scratch(const std::string &name) {
  fs::path d = fs::path(CGRAPH_EXAMPLES_WORK_DIR) / name;
  std::error_code ec;
  fs::remove_all(d, ec);
  fs::create_directories(d);
  return d;
}

template <typename T> void writeBin(const fs::path &p, const std::vector<T> &v) {
  std::ofstream out(p, std::ios::binary);
  out.write(reinterpret_cast<const char *>(v.data()), std::streamsize(v.size() * sizeof(T)));
  REQUIRE(out.good());
}

template <typename T> std::vector<T> readBin(const fs::path &p, size_t count) {
  std::string s = slurp(p);
  INFO("output file " << p.string());
  REQUIRE(s.size() == count * sizeof(T));
  std::vector<T> v(count);
  std::memcpy(v.data(), s.data(), s.size());
  return v;
}

// Compiles examples/<dir>/graph.json (or any description) into `work`/graph.cgf.
std::string compile(const fs::path &description, const fs::path &work) {
  Result r = runTool(CGC_PATH, quote(description.string()) + " -o graph.cgf", work, work / "cgc");
  INFO("cgc: " << r.err);
  REQUIRE(r.code == 0);
  return (work / "graph.cgf").string();
}

// cgrun graph.cgf --backend <b> <args>; returns stdout.
std::string run(const std::string &backend, const fs::path &work, const std::string &args) {
  Result r = runTool(CGRUN_PATH, "graph.cgf --backend " + backend + " " + args, work, work / ("cgrun-" + backend));
  INFO("cgrun --backend " << backend << " " << args << "\nstderr: " << r.err);
  REQUIRE(r.code == 0);
  return r.out;
}

// |got - want| <= atol + rtol * |want| for every element; reports the first failure.
void requireClose(const std::vector<float> &got, const std::vector<double> &want, double atol, double rtol,
                  const char *what) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::fabs(double(got[i]) - want[i]) > atol + rtol * std::fabs(want[i])) {
      INFO(what << "[" << i << "] = " << got[i] << ", expected " << want[i]);
      REQUIRE(false);
    }
  }
}

// A deterministic pseudo-random sequence in [lo, hi) (no dependence on <random>'s
// implementation-defined distributions).
struct Lcg {
  uint64_t s;
  explicit Lcg(uint64_t seed) : s(seed) {}
  float next(float lo, float hi) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    return lo + (hi - lo) * float((s >> 40) & 0xffffff) / float(1 << 24);
  }
};

// ---- examples/saxpy: y = 2 * 1 + y, then a checksum host task ----------------------
void saxpy(const std::string &backend) {
  const size_t n = 1 << 20;
  fs::path w = scratch("saxpy-" + backend);
  compile(sourceDir() / "examples/saxpy/graph.json", w);
  std::vector<float> y(n);
  for (size_t i = 0; i < n; ++i) y[i] = float(int(i % 1000) - 500) * 0.25f;
  writeBin(w / "y.bin", y);
  std::string out = run(backend, w, "--input y=y.bin --output y=out.bin");
  std::vector<float> got = readBin<float>(w / "out.bin", n);
  for (size_t i = 0; i < n; ++i) REQUIRE(got[i] == y[i] + 2.0f); // a = 2, x = 1: exact
  CHECK_THAT(out, Catch::Contains("checksum y:"));
}

// ---- examples/chain1000: 1000 dependent y = 0.001 * 1 + y ---------------------------
void chain1000(const std::string &backend) {
  const size_t n = 4096;
  fs::path w = scratch("chain1000-" + backend);
  compile(sourceDir() / "examples/chain1000/graph.json", w);
  std::vector<float> y(n);
  for (size_t i = 0; i < n; ++i) y[i] = float(i) * 0.5f;
  writeBin(w / "y.bin", y);
  run(backend, w, "--input y=y.bin --output y=out.bin");
  std::vector<float> got = readBin<float>(w / "out.bin", n);
  for (size_t i = 0; i < n; ++i) {
    float want = y[i];
    // x = 1, so a * x is exactly a and mad rounds once, like this addition.
    for (int k = 0; k < 1000; ++k) want = want + 0.001f;
    INFO("y[" << i << "]");
    REQUIRE(got[i] == want);
  }
}

// ---- examples/stencil: boundary, 100 Jacobi sweeps (ping-pong), residual -----------
void stencil(const std::string &backend) {
  const uint32_t n = 512;
  const float h2 = 3.8300e-6f, top = 1.0f;
  fs::path w = scratch("stencil-" + backend);
  compile(sourceDir() / "examples/stencil/graph.json", w);
  std::vector<float> f(n * n);
  Lcg rng(7);
  for (float &v : f) v = rng.next(0.0f, 1000.0f);
  writeBin(w / "f.bin", f);
  run(backend, w, "--input f=f.bin --output u0=u0.bin --output r=r.bin");

  std::vector<double> u0(n * n, 0.0), u1(n * n, 0.0), r(n * n);
  for (uint32_t k = 0; k < n; ++k) {
    u0[k] = top;
    u0[(n - 1) * n + k] = 0;
    if (k > 0) u0[k * n] = u0[k * n + n - 1] = 0;
  }
  for (int sweep = 0; sweep < 100; ++sweep) {
    std::vector<double> &in = sweep % 2 ? u1 : u0, &out = sweep % 2 ? u0 : u1;
    for (uint32_t y = 0; y < n; ++y)
      for (uint32_t x = 0; x < n; ++x) {
        size_t i = size_t(y) * n + x;
        if (x == 0 || y == 0 || x == n - 1 || y == n - 1) out[i] = in[i];
        else out[i] = 0.25 * (in[i - 1] + in[i + 1] + in[i - n] + in[i + n] + double(h2) * f[i]);
      }
    for (size_t i = 0; i < r.size(); ++i) r[i] = std::fabs(out[i] - in[i]);
  }
  // After 100 sweeps (the last one odd) the result is in u0.
  requireClose(readBin<float>(w / "u0.bin", n * n), u0, 1e-5, 1e-4, "u0");
  requireClose(readBin<float>(w / "r.bin", n * n), r, 1e-5, 1e-3, "r");
}

// ---- examples/jacobi-converge: a while node until the sweeps stop changing u --------
// The reference runs the same float arithmetic (no contraction is possible: no add
// follows a multiply), so the number of trips and every value match exactly.
void jacobiConverge(const std::string &backend) {
  const uint32_t n = 64;
  fs::path w = scratch("jacobi-converge-" + backend);
  compile(sourceDir() / "examples/jacobi-converge/graph.json", w);
  for (float tol : {1e-4f, 1e-2f}) {
    INFO("tol " << tol);
    char arg[64];
    std::snprintf(arg, sizeof arg, "%.9g", double(tol));
    run(backend, w, std::string("--param tol=") + arg + " --output u0=u0.bin --output stats=stats.bin");
    std::vector<float> u0(n * n, 0.0f), u1;
    for (uint32_t k = 0; k < n; ++k) {
      u0[k] = 1.0f;
      u0[(n - 1) * n + k] = 0.0f;
      if (k > 0) u0[k * n] = u0[k * n + n - 1] = 0.0f;
    }
    u1 = u0;
    auto sweep = [&](std::vector<float> &out, const std::vector<float> &in) {
      for (uint32_t y = 0; y < n; ++y)
        for (uint32_t x = 0; x < n; ++x) {
          size_t i = size_t(y) * n + x;
          if (x == 0 || y == 0 || x == n - 1 || y == n - 1) out[i] = in[i];
          else out[i] = 0.25f * (in[i - 1] + in[i + 1] + in[i - n] + in[i + n]);
        }
    };
    uint32_t checks = 0;
    float change = 0.0f;
    do {
      sweep(u1, u0);
      sweep(u0, u1);
      change = 0.0f;
      for (size_t i = 0; i < u0.size(); ++i) change = std::max(change, std::fabs(u0[i] - u1[i]));
      ++checks;
    } while (change > tol && checks < 20000);
    REQUIRE(checks < 20000);
    std::vector<uint32_t> stats = readBin<uint32_t>(w / "stats.bin", 2);
    CHECK(stats[0] == checks);
    float last;
    std::memcpy(&last, &stats[1], 4);
    CHECK(last == change);
    CHECK(last <= tol);
    std::vector<double> want(u0.begin(), u0.end());
    requireClose(readBin<float>(w / "u0.bin", n * n), want, 1e-6, 0, "u0");
  }
  // A tolerance never met (every change is > -1): the trip limit fails the submission.
  Result r = runTool(CGRUN_PATH, "graph.cgf --backend " + backend + " --param tol=-1", w,
                     w / ("cgrun-tight-" + backend));
  CHECK(r.code != 0);
  CHECK(r.err.find("while node 'converge': the condition is still nonzero after 20000 trips (its maximum)") !=
        std::string::npos);
}

// ---- examples/image: to float, blur, Sobel, threshold, crop -------------------------
void image(const std::string &backend) {
  const int W = 1024, H = 1024;
  const double thresh = 0.25;
  fs::path w = scratch("image-" + backend);
  compile(sourceDir() / "examples/image/graph.json", w);
  // A bright disc and a diagonal ramp on a dark background, plus noise: real edges.
  std::vector<uint8_t> img(size_t(W) * H);
  Lcg rng(11);
  for (int y = 0; y < H; ++y)
    for (int x = 0; x < W; ++x) {
      double d = std::hypot(x - 512.0, y - 480.0);
      double v = (d < 200 ? 200 : 30) + (x > y ? 25 : 0) + rng.next(0, 8);
      img[size_t(y) * W + x] = uint8_t(std::min(255.0, v));
    }
  writeBin(w / "input.bin", img);
  run(backend, w, "--input input=input.bin --output grad=grad.bin --output edges=edges.bin --output crop=crop.bin");

  std::vector<double> gray(img.size()), blur(img.size()), grad(img.size());
  for (size_t i = 0; i < img.size(); ++i) gray[i] = img[i] / 255.0;
  auto at = [&](const std::vector<double> &m, int x, int y) {
    return m[size_t(std::clamp(y, 0, H - 1)) * W + size_t(std::clamp(x, 0, W - 1))];
  };
  const double k[5] = {1, 4, 6, 4, 1};
  for (int y = 0; y < H; ++y)
    for (int x = 0; x < W; ++x) {
      double acc = 0;
      for (int dy = -2; dy <= 2; ++dy)
        for (int dx = -2; dx <= 2; ++dx) acc += k[dy + 2] * k[dx + 2] * at(gray, x + dx, y + dy);
      blur[size_t(y) * W + x] = acc / 256.0;
    }
  for (int y = 0; y < H; ++y)
    for (int x = 0; x < W; ++x) {
      double gx = (at(blur, x + 1, y - 1) + 2 * at(blur, x + 1, y) + at(blur, x + 1, y + 1)) -
                  (at(blur, x - 1, y - 1) + 2 * at(blur, x - 1, y) + at(blur, x - 1, y + 1));
      double gy = (at(blur, x - 1, y + 1) + 2 * at(blur, x, y + 1) + at(blur, x + 1, y + 1)) -
                  (at(blur, x - 1, y - 1) + 2 * at(blur, x, y - 1) + at(blur, x + 1, y - 1));
      grad[size_t(y) * W + x] = std::sqrt(gx * gx + gy * gy);
    }
  requireClose(readBin<float>(w / "grad.bin", grad.size()), grad, 1e-5, 1e-4, "grad");
  std::vector<uint8_t> edges = readBin<uint8_t>(w / "edges.bin", img.size());
  size_t set = 0;
  for (size_t i = 0; i < edges.size(); ++i) {
    set += edges[i] == 255;
    if (std::fabs(grad[i] - thresh) < 1e-5) continue; // float rounding may decide it
    INFO("edges[" << i << "], gradient " << grad[i]);
    REQUIRE(int(edges[i]) == (grad[i] > thresh ? 255 : 0));
  }
  REQUIRE(set > 1000); // the disc's rim and the ramp are found
  // crop: 256 x 256 from (384, 384) of the edge map (src offset 393600 = 384 * 1024 + 384).
  std::vector<uint8_t> crop = readBin<uint8_t>(w / "crop.bin", 256 * 256);
  for (int y = 0; y < 256; ++y)
    for (int x = 0; x < 256; ++x) REQUIRE(crop[y * 256 + x] == edges[size_t(384 + y) * W + 384 + x]);
}

// ---- examples/mlp: fc1 + gelu, fc2 + bias + residual, layernorm, head, softmax ------
void mlp(const std::string &backend) {
  const int M = 64, D = 512, F = 2048, C = 256;
  fs::path w = scratch("mlp-" + backend);
  compile(sourceDir() / "examples/mlp/graph.json", w);
  Lcg rng(3);
  auto rnd = [&](size_t count, float scale) {
    std::vector<float> v(count);
    for (float &x : v) x = rng.next(-scale, scale);
    return v;
  };
  std::vector<float> x = rnd(size_t(M) * D, 1.0f), w1 = rnd(size_t(D) * F, 0.05f), b1 = rnd(F, 0.1f),
                     w2 = rnd(size_t(F) * D, 0.03f), b2 = rnd(D, 0.1f), wc = rnd(size_t(D) * C, 0.1f),
                     bc = rnd(C, 0.1f);
  writeBin(w / "x.bin", x);
  writeBin(w / "w1.bin", w1);
  writeBin(w / "b1.bin", b1);
  writeBin(w / "w2.bin", w2);
  writeBin(w / "b2.bin", b2);
  writeBin(w / "wc.bin", wc);
  writeBin(w / "bc.bin", bc);
  run(backend, w,
      "--input x=x.bin --input w1=w1.bin --input b1=b1.bin --input w2=w2.bin --input b2=b2.bin "
      "--input wc=wc.bin --input bc=bc.bin --output probs=probs.bin --output z=z.bin");

  std::vector<double> h(size_t(M) * F), y(size_t(M) * D), z(size_t(M) * D), probs(size_t(M) * C);
  for (int r = 0; r < M; ++r)
    for (int c = 0; c < F; ++c) {
      double acc = 0;
      for (int k = 0; k < D; ++k) acc += double(x[r * D + k]) * w1[size_t(k) * F + c];
      double v = acc + b1[c];
      h[size_t(r) * F + c] = 0.5 * v * (1 + std::tanh(0.7978845608 * (v + 0.044715 * v * v * v)));
    }
  for (int r = 0; r < M; ++r)
    for (int c = 0; c < D; ++c) {
      double acc = 0;
      for (int k = 0; k < F; ++k) acc += h[size_t(r) * F + k] * w2[size_t(k) * D + c];
      y[size_t(r) * D + c] = acc + b2[c] + x[r * D + c];
    }
  for (int r = 0; r < M; ++r) {
    double mean = 0, var = 0;
    for (int c = 0; c < D; ++c) mean += y[size_t(r) * D + c];
    mean /= D;
    for (int c = 0; c < D; ++c) var += (y[size_t(r) * D + c] - mean) * (y[size_t(r) * D + c] - mean);
    double rstd = 1 / std::sqrt(var / D + 1e-5);
    for (int c = 0; c < D; ++c) z[size_t(r) * D + c] = (y[size_t(r) * D + c] - mean) * rstd; // gamma 1, beta 0
  }
  for (int r = 0; r < M; ++r) {
    std::vector<double> logits(C);
    double mx = -INFINITY, sum = 0;
    for (int c = 0; c < C; ++c) {
      double acc = 0;
      for (int k = 0; k < D; ++k) acc += z[size_t(r) * D + k] * wc[size_t(k) * C + c];
      logits[c] = acc + bc[c];
      mx = std::max(mx, logits[c]);
    }
    for (int c = 0; c < C; ++c) sum += std::exp(logits[c] - mx);
    for (int c = 0; c < C; ++c) probs[size_t(r) * C + c] = std::exp(logits[c] - mx) / sum;
  }
  requireClose(readBin<float>(w / "z.bin", z.size()), z, 1e-3, 1e-3, "z");
  std::vector<float> got = readBin<float>(w / "probs.bin", probs.size());
  requireClose(got, probs, 1e-6, 2e-3, "probs");
  for (int r = 0; r < M; ++r) {
    double s = 0;
    for (int c = 0; c < C; ++c) s += got[size_t(r) * C + c];
    REQUIRE(std::fabs(s - 1.0) < 1e-4);
  }
}

// ---- examples/gramschmidt: modified Gram-Schmidt QR, 768 dependent launches ---------
void gramschmidt(const std::string &backend) {
  const int m = 256, n = 256;
  fs::path w = scratch("gramschmidt-" + backend);
  compile(sourceDir() / "examples/gramschmidt/graph.json", w);
  // Diagonally dominant: well conditioned, so float MGS stays close to the double one.
  std::vector<float> a(size_t(m) * n);
  Lcg rng(5);
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) a[size_t(i) * n + j] = (i == j ? 4.0f : 0.0f) + rng.next(-0.25f, 0.25f);
  writeBin(w / "a.bin", a);
  run(backend, w, "--input a=a.bin --output q=q.bin --output r=r.bin");

  std::vector<double> A(a.begin(), a.end()), Q(a.size(), 0.0), R(a.size(), 0.0);
  for (int k = 0; k < n; ++k) {
    double s = 0;
    for (int i = 0; i < m; ++i) s += A[size_t(i) * n + k] * A[size_t(i) * n + k];
    R[size_t(k) * n + k] = std::sqrt(s);
    for (int i = 0; i < m; ++i) Q[size_t(i) * n + k] = A[size_t(i) * n + k] / R[size_t(k) * n + k];
    for (int j = k + 1; j < n; ++j) {
      double dot = 0;
      for (int i = 0; i < m; ++i) dot += Q[size_t(i) * n + k] * A[size_t(i) * n + j];
      R[size_t(k) * n + j] = dot;
      for (int i = 0; i < m; ++i) A[size_t(i) * n + j] -= Q[size_t(i) * n + k] * dot;
    }
  }
  std::vector<float> q = readBin<float>(w / "q.bin", Q.size()), r = readBin<float>(w / "r.bin", R.size());
  requireClose(q, Q, 1e-4, 1e-3, "q");
  requireClose(r, R, 1e-4, 1e-3, "r");
  // And the decomposition itself, from the device's own factors: q * r == a.
  for (int i = 0; i < m; i += 17)
    for (int j = 0; j < n; ++j) {
      double s = 0;
      for (int k = 0; k <= j; ++k) s += double(q[size_t(i) * n + k]) * r[size_t(k) * n + j];
      INFO("(q r)[" << i << "][" << j << "]");
      REQUIRE(std::fabs(s - a[size_t(i) * n + j]) < 1e-3);
    }
}

// ---- examples/lu: LU without pivoting, ranges shrinking with k (expressions) -------
void lu(const std::string &backend) {
  const int n = 256;
  fs::path w = scratch("lu-" + backend);
  compile(sourceDir() / "examples/lu/graph.json", w);
  // Diagonally dominant, so no pivoting is needed and float stays close to double.
  std::vector<float> a(size_t(n) * n);
  Lcg rng(11);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j)
      a[size_t(i) * n + j] = (i == j ? float(n) : 0.0f) + rng.next(-1.0f, 1.0f);
  writeBin(w / "a.bin", a);
  run(backend, w, "--input a=a.bin --output a=lu.bin");

  // Doolittle, right-looking, as the kernels do it, in double.
  std::vector<double> A(a.begin(), a.end());
  for (int k = 0; k + 1 < n; ++k) {
    for (int i = k + 1; i < n; ++i)
      A[size_t(i) * n + k] /= A[size_t(k) * n + k];
    for (int i = k + 1; i < n; ++i)
      for (int j = k + 1; j < n; ++j)
        A[size_t(i) * n + j] -= A[size_t(i) * n + k] * A[size_t(k) * n + j];
  }
  std::vector<float> got = readBin<float>(w / "lu.bin", A.size());
  requireClose(got, A, 1e-5, 1e-4, "lu");
  // And the factorization itself, from the device's own factors: L * U == a, with every
  // step's range having covered exactly its rows and columns (a missed element breaks
  // this, an element touched twice too).
  for (int i = 0; i < n; i += 7)
    for (int j = 0; j < n; ++j) {
      double s = 0;
      for (int k = 0; k <= std::min(i, j); ++k) {
        const double l = k == i ? 1.0 : double(got[size_t(i) * n + k]);
        s += l * got[size_t(k) * n + j];
      }
      INFO("(L U)[" << i << "][" << j << "]");
      REQUIRE(std::fabs(s - a[size_t(i) * n + j]) < 1e-3);
    }
}

// ---- examples/lu/lu_n.json: one file for every n <= 256 (stored expressions) --------
void luN(const std::string &backend) {
  fs::path w = scratch("lu_n-" + backend);
  compile(sourceDir() / "examples/lu/lu_n.json", w);
  for (int n : {256, 100, 17}) {
    INFO("n = " << n);
    std::vector<float> a(256 * 256, 0.0f); // the n x n matrix packed at the start
    Lcg rng{uint64_t(n)};
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j)
        a[size_t(i) * n + j] = (i == j ? float(n) : 0.0f) + rng.next(-1.0f, 1.0f);
    writeBin(w / "a.bin", a);
    run(backend, w, "--param n=" + std::to_string(n) + " --input a=a.bin --output a=lu.bin");
    std::vector<double> A(a.begin(), a.end());
    for (int k = 0; k + 1 < n; ++k) {
      for (int i = k + 1; i < n; ++i)
        A[size_t(i) * n + k] /= A[size_t(k) * n + k];
      for (int i = k + 1; i < n; ++i)
        for (int j = k + 1; j < n; ++j)
          A[size_t(i) * n + j] -= A[size_t(i) * n + k] * A[size_t(k) * n + j];
    }
    // Everything past the n x n matrix is untouched.
    requireClose(readBin<float>(w / "lu.bin", A.size()), A, 1e-5, 1e-4, "lu_n");
  }
}

// ---- examples/mlp/mlp_batch.json: the MLP block for any batch size (.cgf 2.2) -------
// Slot sizes, nd-ranges, arguments and a copy depend on $batch; one file runs at every
// batch size, each checked against a double-precision C++ reference.
void mlpBatch(const std::string &backend) {
  const int D = 512, F = 2048, C = 256;
  fs::path w = scratch("mlp_batch-" + backend);
  compile(sourceDir() / "examples/mlp/mlp_batch.json", w);
  Lcg rng(5);
  auto rnd = [&](size_t count, float scale) {
    std::vector<float> v(count);
    for (float &x : v)
      x = rng.next(-scale, scale);
    return v;
  };
  const std::vector<float> w1 = rnd(size_t(D) * F, 0.05f), b1 = rnd(F, 0.1f),
                           w2 = rnd(size_t(F) * D, 0.03f), b2 = rnd(D, 0.1f),
                           wc = rnd(size_t(D) * C, 0.1f), bc = rnd(C, 0.1f);
  writeBin(w / "w1.bin", w1);
  writeBin(w / "b1.bin", b1);
  writeBin(w / "w2.bin", w2);
  writeBin(w / "b2.bin", b2);
  writeBin(w / "wc.bin", wc);
  writeBin(w / "bc.bin", bc);
  for (int M : {37, 1, 64}) {
    INFO("batch = " << M);
    const std::vector<float> x = rnd(size_t(M) * D, 1.0f);
    writeBin(w / "x.bin", x); // exactly batch x 512 floats: the slot's size in this run
    run(backend, w,
        "--param batch=" + std::to_string(M) +
            " --input x=x.bin --input w1=w1.bin --input b1=b1.bin --input w2=w2.bin --input "
            "b2=b2.bin "
            "--input wc=wc.bin --input bc=bc.bin --output probs=probs.bin --output "
            "logits_out=logits.bin");
    std::vector<double> h(size_t(M) * F), y(size_t(M) * D), z(size_t(M) * D), logits(size_t(M) * C),
        probs(size_t(M) * C);
    for (int r = 0; r < M; ++r)
      for (int c = 0; c < F; ++c) {
        double acc = 0;
        for (int k = 0; k < D; ++k)
          acc += double(x[size_t(r) * D + k]) * w1[size_t(k) * F + c];
        const double v = acc + b1[c];
        h[size_t(r) * F + c] = 0.5 * v * (1 + std::tanh(0.7978845608 * (v + 0.044715 * v * v * v)));
      }
    for (int r = 0; r < M; ++r)
      for (int c = 0; c < D; ++c) {
        double acc = 0;
        for (int k = 0; k < F; ++k)
          acc += h[size_t(r) * F + k] * w2[size_t(k) * D + c];
        y[size_t(r) * D + c] = acc + b2[c] + x[size_t(r) * D + c];
      }
    for (int r = 0; r < M; ++r) {
      double mean = 0, var = 0;
      for (int c = 0; c < D; ++c)
        mean += y[size_t(r) * D + c];
      mean /= D;
      for (int c = 0; c < D; ++c)
        var += (y[size_t(r) * D + c] - mean) * (y[size_t(r) * D + c] - mean);
      const double rstd = 1 / std::sqrt(var / D + 1e-5);
      for (int c = 0; c < D; ++c)
        z[size_t(r) * D + c] = (y[size_t(r) * D + c] - mean) * rstd;
    }
    for (int r = 0; r < M; ++r) {
      double mx = -INFINITY, sum = 0;
      for (int c = 0; c < C; ++c) {
        double acc = 0;
        for (int k = 0; k < D; ++k)
          acc += z[size_t(r) * D + k] * wc[size_t(k) * C + c];
        logits[size_t(r) * C + c] = acc + bc[c];
        mx = std::max(mx, logits[size_t(r) * C + c]);
      }
      for (int c = 0; c < C; ++c)
        sum += std::exp(logits[size_t(r) * C + c] - mx);
      for (int c = 0; c < C; ++c)
        probs[size_t(r) * C + c] = std::exp(logits[size_t(r) * C + c] - mx) / sum;
    }
    // The outputs have batch rows: a file of exactly that size.
    REQUIRE(fs::file_size(w / "probs.bin") == size_t(M) * C * 4);
    requireClose(readBin<float>(w / "logits.bin", logits.size()), logits, 2e-3, 2e-3, "logits");
    requireClose(readBin<float>(w / "probs.bin", probs.size()), probs, 1e-6, 2e-3, "probs");
  }
}

// ---- barrier and subgraph nodes (tests/examples/data/barrier_subgraph) ---------------
void barrierSubgraph(const std::string &backend) {
  const size_t n = 4096;
  fs::path w = scratch("barrier_subgraph-" + backend);
  compile(sourceDir() / "tests/examples/data/barrier_subgraph/graph.json", w);
  std::vector<float> a(n), b(n), c(n);
  for (size_t i = 0; i < n; ++i) {
    a[i] = float(i % 7);
    b[i] = float(i % 5);
    c[i] = float(i % 3);
  }
  writeBin(w / "a.bin", a);
  writeBin(w / "b.bin", b);
  writeBin(w / "c.bin", c);
  run(backend, w, "--input a=a.bin --input b=b.bin --input c=c.bin --output a=a-out.bin --output c=c-out.bin");
  std::vector<float> ga = readBin<float>(w / "a-out.bin", n), gc = readBin<float>(w / "c-out.bin", n);
  for (size_t i = 0; i < n; ++i) {
    const float a1 = a[i] + 1, b1 = b[i] + 1;
    const float c1 = (2 * a1 + c[i]) * 10 + a1; // the subgraph, after the barrier
    INFO("element " << i);
    REQUIRE(ga[i] == a1);
    REQUIRE(gc[i] == c1 * 10 + b1); // `last`, after the subgraph node
  }
}

// A backend without collective nodes refuses graph.cgf in `w` at finalize, naming itself.
void refusesCollectives(const std::string &backend, const fs::path &w) {
  Result r = runTool(CGRUN_PATH, "graph.cgf --backend " + backend, w, w / ("cgrun-" + backend));
  INFO(r.err);
  CHECK(r.code == 1);
  CHECK_THAT(r.err, Catch::Contains("collective nodes are not supported by the " + backend + " backend"));
}

// ---- examples/data-parallel: one SGD step as a world of one -------------------------
// (tests/mpi runs it on 2 ranks.) From w = 0: y = 0, so g[j] = 2 / 16 * sum_r -t[r] x[r][j]
// and w = -lr * g with lr = 0.5. opencl refuses collective nodes, naming the backend.
void dataParallel(const std::string &backend) {
  fs::path w = scratch("data-parallel-" + backend);
  compile(sourceDir() / "examples/data-parallel/graph.json", w);
  if (backend != "cpu") return refusesCollectives(backend, w);
  run(backend, w, "--output w=w.bin");
  const int rows = 16, d = 16;
  std::vector<double> want(d, 0.0);
  for (int j = 0; j < d; ++j) {
    double acc = 0;
    for (int r = 0; r < rows; ++r) {
      double t = 0;
      for (int k = 0; k < d; ++k) t += (double((r * 7 + k * 3) % 11) / 11.0 - 0.5) * double((k % 5) - 2);
      acc += (0.0 - t) * (double((r * 7 + j * 3) % 11) / 11.0 - 0.5);
    }
    want[j] = -0.5 * acc * 2.0 / rows;
  }
  requireClose(readBin<float>(w / "w.bin", d), want, 1e-6, 1e-5, "w");
}

// ---- examples/pipeline: a world of one runs stage 0 on every microbatch ------------
// (tests/mpi runs 2 and 3 ranks against reference.py.) The sends and receives move no
// elements there; opencl refuses collective nodes, naming the backend.
void pipeline(const std::string &backend) {
  fs::path w = scratch("pipeline-" + backend);
  compile(sourceDir() / "examples/pipeline/graph.json", w);
  if (backend != "cpu") return refusesCollectives(backend, w);
  run(backend, w, "--output result=result.bin");
  const int rows = 32, d = 64; // 4 microbatches of 8 rows, one after another
  std::vector<double> want(size_t(rows) * d);
  for (int row = 0; row < rows; ++row)
    for (int j = 0; j < d; ++j) {
      double acc = double((0 * 5 + j) % 7 - 3) / 16.0;
      for (int k = 0; k < d; ++k) {
        const int i = row * d + k;
        acc += double((0 * 31 + j * 7 + k * 3) % 17 - 8) / (8.0 * d) * (double((i * 13) % 29 - 14) / 14.0);
      }
      want[size_t(row) * d + j] = acc > 0 ? acc : 0.125 * acc;
    }
  requireClose(readBin<float>(w / "result.bin", want.size()), want, 1e-5, 1e-4, "result");
}

struct ExampleRun {
  const char *name;
  void (*fn)(const std::string &);
};
const ExampleRun kExamples[] = {
    {"saxpy", saxpy}, {"chain1000", chain1000},     {"stencil", stencil}, {"image", image},
    {"mlp", mlp},     {"gramschmidt", gramschmidt}, {"lu", lu},
    {"jacobi-converge", jacobiConverge}, {"data-parallel", dataParallel}, {"pipeline", pipeline},
};

void runExample(const char *name, const std::string &backend) {
  // An example another change is still adding (or has removed) is not in every checkout;
  // the test above keeps the list and the folder in step.
  if (!fs::exists(sourceDir() / "examples" / name / "graph.json")) {
    WARN("examples/" << name << " is not in this checkout");
    return;
  }
  for (const ExampleRun &e : kExamples)
    if (std::string(e.name) == name) return e.fn(backend);
  FAIL("no reference for example " << name);
}

} // namespace

TEST_CASE("every example under examples/ has a reference here", "[cpu]") {
  std::set<std::string> known;
  for (const ExampleRun &e : kExamples) known.insert(e.name);
  size_t found = 0;
  for (const auto &d : fs::directory_iterator(sourceDir() / "examples")) {
    if (!fs::exists(d.path() / "graph.json")) continue;
    ++found;
    INFO("examples/" << d.path().filename().string() << " has no check in tests/examples/examples_run_test.cpp");
    CHECK(known.count(d.path().filename().string()) == 1);
  }
  REQUIRE(found >= 5);
}

#define EXAMPLE_ON_BOTH(name)                                                                         \
  TEST_CASE("example " name " runs on cpu and matches the reference", "[cpu][example]") {         \
    runExample(name, "cpu");                                                                        \
  }                                                                                                 \
  TEST_CASE("example " name " runs on opencl and matches the reference", "[opencl][example]") {   \
    runExample(name, "opencl");                                                                     \
  }

EXAMPLE_ON_BOTH("saxpy")
EXAMPLE_ON_BOTH("chain1000")
EXAMPLE_ON_BOTH("stencil")
EXAMPLE_ON_BOTH("image")
EXAMPLE_ON_BOTH("mlp")
EXAMPLE_ON_BOTH("gramschmidt")
EXAMPLE_ON_BOTH("lu")
EXAMPLE_ON_BOTH("jacobi-converge")
EXAMPLE_ON_BOTH("data-parallel")
EXAMPLE_ON_BOTH("pipeline")

TEST_CASE("examples/lu/lu_n.json runs at several n on cpu", "[cpu][example][expr]") { luN("cpu"); }
TEST_CASE("examples/lu/lu_n.json runs at several n on opencl", "[opencl][example][expr]") { luN("opencl"); }

TEST_CASE("examples/mlp/mlp_batch.json runs at several batch sizes on cpu",
          "[cpu][example][expr]") {
  mlpBatch("cpu");
}
TEST_CASE("examples/mlp/mlp_batch.json runs at several batch sizes on opencl",
          "[opencl][example][expr]") {
  mlpBatch("opencl");
}

TEST_CASE("barrier and subgraph nodes execute on cpu", "[cpu][barrier][subgraph]") { barrierSubgraph("cpu"); }
TEST_CASE("barrier and subgraph nodes execute on opencl", "[opencl][barrier][subgraph]") {
  barrierSubgraph("opencl");
}
